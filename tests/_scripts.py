"""Run many standalone scripts of one framework without importing the framework once per script (issue #38).

Importing TensorFlow, torch + ExecuTorch or paddle takes 2-5 s; a repro script's own work takes milliseconds. One
server process of the framework's interpreter imports the modules the scripts import (at the top, and inside
``run()``, where a repro script imports its framework), then forks a child per script
that runs it as ``__main__`` (``runpy.run_path``): a fresh process and namespace for each, whose imports find the
modules loaded. Scripts that set an environment variable before an import (Keras reads ``KERAS_BACKEND`` at import)
are grouped by what they set, literally: a process of the server's with that environment imports their modules and
forks them; a script that sets it otherwise imports those modules in its own child. Forking after the imports is
safe for every framework here: the harness's templates do the same (harness/run/forkrun.py).
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

_SERVER = r'''
import ast, json, os, runpy, sys, time, traceback

paths, timeout, parallel = json.loads(sys.argv[1]), float(sys.argv[2]), int(sys.argv[3])

def imported(node):
    return ([a.name for a in node.names] if isinstance(node, ast.Import) else
            [node.module] if isinstance(node, ast.ImportFrom) and node.module and not node.level else [])

def sets_env(node):
    return isinstance(node, (ast.Assign, ast.AugAssign)) and "environ" in ast.dump(node)

def literal_env(tree):
    # The variables a script sets as os.environ["K"] = "V", sorted; None when it sets the environment otherwise.
    found = {}
    for n in ast.walk(tree):
        if not sets_env(n):
            continue
        target = n.targets[0] if isinstance(n, ast.Assign) and len(n.targets) == 1 else None
        key = getattr(getattr(target, "slice", None), "value", None)
        value = getattr(n.value, "value", None) if isinstance(n.value, ast.Constant) else None
        if not (isinstance(target, ast.Subscript) and isinstance(key, str) and isinstance(value, str)):
            return None
        found[key] = value
    return tuple(sorted(found.items()))

def modules(tree):
    # (imports before the script changes the environment, imports after it); a repro script imports its framework
    # inside run(), when it is called: after any environment the script sets anywhere (Keras's backend).
    before, after = [], []
    env_set = False
    for node in tree.body:
        env_set = env_set or sets_env(node)
        (after if env_set else before).extend(imported(node))
    env_anywhere = any(sets_env(n) for n in ast.walk(tree))
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            for inner in ast.walk(node):
                (after if env_anywhere else before).extend(imported(inner))
    return before, after

def preimport(names):
    for name in dict.fromkeys(names):
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

def serve(todo):
    results, running = {}, {}
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
    return results

# Scripts that set the same literal environment form a group: a process of the server's, with that environment
# set, imports everything they import (Keras then reads the backend they ask for) and forks them. A script that
# sets it otherwise gets nothing imported after its setting.
groups, before, after = {}, [], set()
for path in paths:
    tree = ast.parse(open(path).read())
    env = literal_env(tree)
    first, then = modules(tree)
    before.extend(first)
    after.update(then)
    groups.setdefault(env, []).append((path, then))
# What any script imports after setting its environment is imported by its group's process only, never here.
preimport(n for n in before if n.split(".")[0] not in {m.split(".")[0] for m in after})
results = {}
for env, members in groups.items():
    if not env:  # no environment set (nothing imported after it), or set otherwise (each child imports its own)
        results.update(serve([p for p, _ in members]))
        continue
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:
        os.close(read)
        os.environ.update(dict(env))
        preimport(name for _, then in members for name in then)
        with os.fdopen(write, "w") as out:
            out.write(json.dumps(serve([p for p, _ in members])))
        os._exit(0)
    os.close(write)
    with os.fdopen(read) as answer:
        said = answer.read()
    os.waitpid(pid, 0)
    results.update(json.loads(said) if said else {p: -1 for p, _ in members})
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
