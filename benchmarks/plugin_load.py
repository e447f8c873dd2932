"""Part 8: what the plugin costs a pytest run that has nothing to do with it (issue #24).

Installed, the plugin is loaded into every pytest run of its environment. Claim: an unrelated one-test run takes at
most 0.02 s longer with it than without it. Each run is a fresh ``python -m pytest test_unrelated.py`` in an empty
folder, bytecode cached (as an installed package has it), timed two ways, each side by side with its baseline:

- ``plugin alone``: plugin autoloading off, the plugin loaded with ``-p`` against no plugin at all (its own cost);
- ``as installed`` (where its entry point is registered): every plugin of the environment against the same with
  ``-p no:gather_scatter_conformance`` (what a user of this environment sees).

Each way gives the seconds added in wall time (the claim) and in CPU time (user + system of the pytest process, a
context row: on a loaded machine it wanders far less than wall time).
"""

from __future__ import annotations

import importlib.metadata
import os
import resource
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from benchmarks.common import ROOT, Row, interleaved, median

LIMIT = 0.02  # seconds added
PLUGIN = "gather_scatter_conformance.harness.run.pytest_plugin"
ENTRY_POINT = "gather_scatter_conformance"  # its name in the pytest11 group: what -p no:NAME blocks
TEST = "def test_sum():\n    assert sum([1, 2]) == 3\n"


def _runner(folder: Path, env: dict[str, str], args: list[str], cpu: list[float]) -> Callable[[], float]:
    """A function that runs the unrelated test once and returns its wall seconds (its CPU seconds go to ``cpu``)."""
    command = [sys.executable, "-m", "pytest", "test_unrelated.py", "-q", "-p", "no:cacheprovider", *args]

    def once() -> float:
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        start = time.perf_counter()
        proc = subprocess.run(command, cwd=folder, env=env, capture_output=True, text=True, timeout=120)
        elapsed = time.perf_counter() - start
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        if proc.returncode != 0 or "1 passed" not in proc.stdout:
            raise RuntimeError(f"{' '.join(command)} failed ({proc.returncode}): {proc.stdout[-500:]}")
        cpu.append(after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime)
        return elapsed

    return once


def _registered() -> bool:
    return any(e.name == ENTRY_POINT for e in importlib.metadata.entry_points(group="pytest11"))


def run(reps: int = 31, code: Path = ROOT) -> list[Row]:
    """Rows per way: wall seconds added (against the limit, with the ratio) and CPU seconds added (context).
    ``code`` is the checkout whose package is measured (put first on PYTHONPATH)."""
    with tempfile.TemporaryDirectory(prefix="gsc-plugin-load-") as tmp:
        folder = Path(tmp) / "project"
        folder.mkdir()
        (folder / "test_unrelated.py").write_text(TEST)
        env = {k: v for k, v in os.environ.items() if k not in ("PYTHONDONTWRITEBYTECODE",)
               and not k.startswith(("PYTEST_", "GSC_"))}
        env["PYTHONPYCACHEPREFIX"] = str(Path(tmp) / "pycache")
        env["PYTHONPATH"] = os.pathsep.join([str(code), *filter(None, [os.environ.get("PYTHONPATH")])])
        alone = {**env, "PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1"}
        ways = {"plugin alone": (alone, ["-p", PLUGIN], [])}
        if _registered():
            ways["as installed"] = (env, [], ["-p", f"no:{ENTRY_POINT}"])
        cpu: dict[str, list[float]] = {f"{way} {side}": [] for way in ways for side in ("with", "without")}
        sides = {f"{way} {side}": _runner(folder, environ, args, cpu[f"{way} {side}"])
                 for way, (environ, with_args, without_args) in ways.items()
                 for side, args in (("with", with_args), ("without", without_args))}
        for fn in sides.values():  # warm-up: bytecode written
            fn()
        for times in cpu.values():
            times.clear()
        wall = interleaved(sides, reps)
    rows = []
    for way in ways:
        with_, without = median(wall[f"{way} with"]), median(wall[f"{way} without"])
        added = with_ - without
        rows.append(Row("plugin", f"{way}: seconds added", added, f"<= {LIMIT:g} s", added <= LIMIT, "s",
                        f"with {with_:.3f} s, without {without:.3f} s (medians of {reps}), "
                        f"ratio {with_ / without:.3f}"))
        c_with, c_without = median(cpu[f"{way} with"]), median(cpu[f"{way} without"])
        rows.append(Row("plugin", f"{way}: CPU seconds added", c_with - c_without, "", None, "s",
                        f"with {c_with:.3f} s, without {c_without:.3f} s of CPU (medians of {reps})"))
    return rows
