"""Run many standalone scripts of one framework without importing the framework once per script (issue #38).

Importing TensorFlow, torch + ExecuTorch or paddle takes 2-5 s; a repro script's own work takes milliseconds. One
server process of the framework's interpreter imports the modules the scripts import (at the top, and inside
``run()``, where a repro script imports its framework), then forks a child per script
that runs it as ``__main__`` (``runpy.run_path``): a fresh process and namespace for each, whose imports find the
modules loaded. A module that a script imports after setting an environment variable (Keras reads
``KERAS_BACKEND`` at import) is left for each child to import itself. Forking after the imports is safe for every
framework here: the harness's templates do the same (harness/run/forkrun.py).
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

_SERVER = r'''
import ast, json, os, runpy, sys, time, traceback

paths, timeout, parallel = json.loads(sys.argv[1]), float(sys.argv[2]), int(sys.argv[3])
after_env = set()
before_env = []
def imported(node):
    return ([a.name for a in node.names] if isinstance(node, ast.Import) else
            [node.module] if isinstance(node, ast.ImportFrom) and node.module and not node.level else [])

def sets_env(node):
    return isinstance(node, (ast.Assign, ast.AugAssign)) and "environ" in ast.dump(node)

for path in paths:
    tree = ast.parse(open(path).read())
    env_set = False
    for node in tree.body:
        env_set = env_set or sets_env(node)
        (after_env.update if env_set else before_env.extend)(imported(node))
    # A repro script imports its framework inside run(): those imports happen when it is called, after any
    # environment the script sets anywhere (Keras's backend is set inside run()).
    env_anywhere = any(sets_env(n) for n in ast.walk(tree))
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            for inner in ast.walk(node):
                (after_env.update if env_anywhere else before_env.extend)(imported(inner))
for name in dict.fromkeys(before_env):
    if name.split(".")[0] not in {n.split(".")[0] for n in after_env}:
        try:
            __import__(name)
        except BaseException:
            pass  # the script's own import fails, in its child, as it would alone

def child(path, log):
    fd = os.open(log, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    os.dup2(fd, 1)
    os.dup2(fd, 2)
    sys.argv = [path]
    code = 0
    try:
        runpy.run_path(path, run_name="__main__")
    except SystemExit as exc:
        code = exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 1)
        if not isinstance(exc.code, (int, type(None))):
            print(exc.code, file=sys.stderr)
    except BaseException:
        traceback.print_exc()
        code = 1
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(code)

results, running, todo = {}, {}, list(paths)
while todo or running:
    while todo and len(running) < parallel:
        path = todo.pop(0)
        pid = os.fork()
        if pid == 0:
            child(path, path + ".log")
        running[pid] = (path, time.monotonic())
    time.sleep(0.01)
    for pid, (path, start) in list(running.items()):
        done, status = os.waitpid(pid, os.WNOHANG)
        if not done and time.monotonic() - start > timeout:
            os.kill(pid, 9)
            done, status = os.waitpid(pid, 0)
        if done:
            code = -os.WTERMSIG(status) if os.WIFSIGNALED(status) else os.WEXITSTATUS(status)
            results[path] = code
            del running[pid]
print(json.dumps(results))
'''


def run_scripts(python: str, paths: list[str], cwd: Path, timeout: float = 300.0, parallel: int = 2
                ) -> dict[str, str]:
    """Each script in ``paths`` run in a child of one server process of ``python`` (see the module): path -> "ok",
    or "exit N: <the end of its output>"."""
    proc = subprocess.run([python, "-c", _SERVER, json.dumps(paths), str(timeout), str(parallel)],
                          capture_output=True, text=True, cwd=cwd, timeout=timeout * len(paths) + 600)
    try:
        codes = json.loads(proc.stdout.strip().splitlines()[-1])
    except (IndexError, ValueError):
        return {p: f"the script server failed ({proc.returncode}): {proc.stderr[-600:]}" for p in paths}
    out = {}
    for path in paths:
        code = codes.get(path)
        log = Path(path + ".log")
        said = log.read_text(errors="replace")[-600:] if log.exists() else ""
        out[path] = "ok" if code == 0 else f"exit {code}: {said}"
    return out
