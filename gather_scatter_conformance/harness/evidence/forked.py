"""Repro scripts run one after another, each in a forked child of one warm interpreter: the driver ``gsc memcheck``
runs under valgrind, so that a framework's import (a minute or more under memcheck for TVM, paddle, OpenVINO) is
paid once per batch instead of once per cell. Valgrind follows each child into an XML file of its own
(``--xml-file=...%p.xml``, ``--child-silent-after-fork=no``), so every error is charged to the script that made it.

Standard library only: it runs with the framework's interpreter, which need not have the harness installed
(``.venv-mxnet``).

Usage: ``python forked.py PLAN.json STATUS.jsonl``. PLAN is ``{"scripts": [path, ...], "timeout": seconds}``;
STATUS gets one line per script when its child ends: ``{"script", "pid", "exit", "seconds", "timed_out"}`` (``exit``
negative: the signal that ended it; null on a timeout, after which the child is killed).
"""

from __future__ import annotations

import ast
import json
import os
import runpy
import signal
import sys
import time
import traceback

CHILD_ARG = "--child"  # the scripts' own switch: make the call in this process (see checkers.CHILD_ARG)


def warm(scripts: list[str]) -> None:
    """Import what the scripts import, once, before any fork: each distinct absolute import statement, in the order
    met, wherever it stands (a repro imports its framework inside ``run``). One that fails is left to the script
    whose run then reports it."""
    seen: set[str] = set()
    for path in scripts:
        try:
            with open(path, encoding="utf-8") as fh:
                tree = ast.parse(fh.read())
        except (OSError, SyntaxError):
            continue
        for node in ast.walk(tree):
            if isinstance(node, ast.Import) or (isinstance(node, ast.ImportFrom) and node.level == 0):
                source = ast.unparse(node)
                if source not in seen:
                    seen.add(source)
                    try:
                        exec(compile(source, "<warm>", "exec"), {})
                    except BaseException:  # the script's own run reports what its import does
                        pass


def child(path: str) -> None:
    """In the forked child: run ``path`` as ``__main__`` with ``--child``, its output to ``<path>.out``; never
    returns."""
    code = 0
    try:
        fd = os.open(path + ".out", os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
        os.dup2(fd, 1)
        os.dup2(fd, 2)
        sys.argv = [path, CHILD_ARG]
        runpy.run_path(path, run_name="__main__")
    except SystemExit as exc:
        code = exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 1)
    except BaseException:  # a failing script is a result, its traceback in its .out
        traceback.print_exc()
        code = 1
    finally:
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(code)


def wait(pid: int, timeout: float) -> tuple[int | None, bool]:
    """(exit, timed_out) of child ``pid``; killed (SIGKILL) once ``timeout`` seconds have passed."""
    deadline = time.monotonic() + timeout
    while True:
        done, status = os.waitpid(pid, os.WNOHANG)
        if done:
            return os.waitstatus_to_exitcode(status), False
        if time.monotonic() >= deadline:
            os.kill(pid, signal.SIGKILL)
            os.waitpid(pid, 0)
            return None, True
        time.sleep(0.2)


def main(plan_path: str, status_path: str) -> int:
    """Run the plan; 0 once every script has had its turn."""
    with open(plan_path, encoding="utf-8") as fh:
        plan = json.load(fh)
    scripts, timeout = plan["scripts"], float(plan["timeout"])
    warm(scripts)
    for path in scripts:
        start = time.monotonic()
        sys.stdout.flush()
        sys.stderr.flush()
        pid = os.fork()
        if pid == 0:
            child(path)
        code, timed_out = wait(pid, timeout)
        line = {"script": path, "pid": pid, "exit": code, "seconds": round(time.monotonic() - start, 1),
                "timed_out": timed_out}
        with open(status_path, "a", encoding="utf-8") as fh:
            fh.write(json.dumps(line) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1], sys.argv[2]))
