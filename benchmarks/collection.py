"""Part 3: ``pytest --collect-only`` over the whole suite (cases/, about 8,850 items), in a fresh process each time.

Claim: at most 1.5 s of wall time for the command, with no framework imported. The import check runs pytest
in a subprocess through a small wrapper that lists, after collection, which framework modules are in
sys.modules. Timed three ways, each the median of interleaved repetitions:

- ``bytecode``: Python's default, compiled modules cached (here under a private PYTHONPYCACHEPREFIX, so the
  shared environments are not written to), case files answered by the parse cache;
- ``as-is``: this process's environment unchanged (this machine sets PYTHONDONTWRITEBYTECODE=1, so the
  project's own modules and pytest's assertion-rewritten ones are compiled from source on every run);
- ``cold parse cache`` (context): bytecode cached, GSC_CASE_CACHE=off, so every case file is parsed and validated.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import tempfile
import time

from benchmarks.common import ROOT, Row, interleaved, median

LIMIT = 1.5
COMMAND = [sys.executable, "-m", "pytest", "cases", "--collect-only", "-q", "-p", "no:cacheprovider"]
_PROBE = """
import json, sys
import pytest
code = pytest.main(sys.argv[2:])
roots = {m.split(".")[0] for m in sys.modules}
json.dump({"code": int(code), "frameworks": sorted(roots & set(json.loads(sys.argv[1]))),
           "yaml": "yaml" in roots, "pydantic": "pydantic" in roots}, sys.stderr)
"""


def _env(bytecode: bool, parse_cache: bool, pycache: str) -> dict[str, str]:
    env = dict(os.environ)
    if bytecode:
        env.pop("PYTHONDONTWRITEBYTECODE", None)
        env["PYTHONPYCACHEPREFIX"] = pycache
    if not parse_cache:
        env["GSC_CASE_CACHE"] = "off"
    return env


def _run(env: dict[str, str]) -> tuple[float, int]:
    start = time.perf_counter()
    proc = subprocess.run(COMMAND, cwd=ROOT, env=env, capture_output=True, text=True, timeout=600)
    elapsed = time.perf_counter() - start
    found = re.search(r"(\d+) tests? collected", proc.stdout)
    if proc.returncode != 0 or not found:
        raise RuntimeError(f"collection failed ({proc.returncode}): {proc.stdout[-500:]} {proc.stderr[-500:]}")
    return elapsed, int(found.group(1))


def imported(env: dict[str, str]) -> dict[str, object]:
    """What a collection imports: the framework modules (should be none), and whether YAML/pydantic were needed."""
    from gather_scatter_conformance import adapters

    # Every registered adapter's framework modules (numpy is the harness's own dependency, not one of them).
    args = [sys.executable, "-c", _PROBE, json.dumps(adapters.framework_modules()), *COMMAND[3:]]
    proc = subprocess.run(args, cwd=ROOT, env=env, capture_output=True, text=True, timeout=600)
    return json.loads(proc.stderr.strip().splitlines()[-1])


def run(reps: int = 7) -> list[Row]:
    """Rows: wall seconds per mode (bytecode and as-is against the limit), and the framework-import check."""
    with tempfile.TemporaryDirectory(prefix="gsc-pycache-") as pycache:
        envs = {
            "bytecode": _env(True, True, pycache),
            "as-is": _env(False, True, pycache),
            "cold parse cache": _env(True, False, pycache),
        }
        items = {}
        for name, env in envs.items():  # warm-up: bytecode written, parse cache filled
            items[name] = _run(env)[1]
        times = interleaved({name: (lambda e=env: _run(e)[0]) for name, env in envs.items()}, reps)
        probe = imported(envs["bytecode"])
    rows = []
    for name in envs:
        t = median(times[name])
        limit = None if name == "cold parse cache" else LIMIT
        rows.append(Row("collection", f"{name} ({items[name]} items)", t, "" if limit is None else f"<= {LIMIT:g} s",
                        None if limit is None else t <= limit, "s",
                        f"median of {reps}, min {min(times[name]):.2f} s, max {max(times[name]):.2f} s"))
    frameworks = probe["frameworks"]
    rows.append(Row("collection", "frameworks imported", float(len(frameworks)), "none", not frameworks, "modules",
                    f"{', '.join(frameworks) or 'none'} (exit {probe['code']}); yaml imported: {probe['yaml']}, "
                    f"pydantic imported: {probe['pydantic']}"))
    return rows

