"""Part 8: what the plugin costs a pytest run that has nothing to do with it (issue #24).

Installed, the plugin is loaded into every pytest run of its environment. Claim: an unrelated one-test run takes at
most 0.02 s longer with it than without it. Each run is a fresh ``python -m pytest test_unrelated.py`` in an empty
folder, bytecode cached (as an installed package has it), timed two ways, each side by side with its baseline:

- ``plugin alone``: plugin autoloading off, the plugin loaded with ``-p`` against no plugin at all (its own cost);
- ``as installed`` (where its entry point is registered): every plugin of the environment against the same with
  ``-p no:gather_scatter_conformance`` (what a user of this environment sees).
"""

from __future__ import annotations

import importlib.metadata
import os
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


def _runner(folder: Path, env: dict[str, str], args: list[str]) -> Callable[[], float]:
    command = [sys.executable, "-m", "pytest", "test_unrelated.py", "-q", "-p", "no:cacheprovider", *args]

    def once() -> float:
        start = time.perf_counter()
        proc = subprocess.run(command, cwd=folder, env=env, capture_output=True, text=True, timeout=120)
        elapsed = time.perf_counter() - start
        if proc.returncode != 0 or "1 passed" not in proc.stdout:
            raise RuntimeError(f"{' '.join(command)} failed ({proc.returncode}): {proc.stdout[-500:]}")
        return elapsed

    return once


def _registered() -> bool:
    return any(e.name == ENTRY_POINT for e in importlib.metadata.entry_points(group="pytest11"))


def run(reps: int = 31, code: Path = ROOT) -> list[Row]:
    """Rows: seconds added per way (against the limit), and each way's ratio. ``code`` is the checkout whose
    package is measured (put first on PYTHONPATH)."""
    with tempfile.TemporaryDirectory(prefix="gsc-plugin-load-") as tmp:
        folder = Path(tmp) / "project"
        folder.mkdir()
        (folder / "test_unrelated.py").write_text(TEST)
        env = {k: v for k, v in os.environ.items() if k not in ("PYTHONDONTWRITEBYTECODE",)
               and not k.startswith(("PYTEST_", "GSC_"))}
        env["PYTHONPYCACHEPREFIX"] = str(Path(tmp) / "pycache")
        env["PYTHONPATH"] = os.pathsep.join([str(code), *filter(None, [os.environ.get("PYTHONPATH")])])
        alone = {**env, "PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1"}
        ways = {"plugin alone": (_runner(folder, alone, ["-p", PLUGIN]), _runner(folder, alone, []))}
        if _registered():
            ways["as installed"] = (_runner(folder, env, []), _runner(folder, env, ["-p", f"no:{ENTRY_POINT}"]))
        sides = {f"{way} {side}": fn for way, (with_, without) in ways.items()
                 for side, fn in (("with", with_), ("without", without))}
        for fn in sides.values():  # warm-up: bytecode written
            fn()
        times = interleaved(sides, reps)
    rows = []
    for way in ways:
        with_, without = median(times[f"{way} with"]), median(times[f"{way} without"])
        added = with_ - without
        rows.append(Row("plugin", f"{way}: seconds added", added, f"<= {LIMIT:g} s", added <= LIMIT, "s",
                        f"with {with_:.3f} s, without {without:.3f} s (medians of {reps}; minima "
                        f"{min(times[f'{way} with']):.3f} s, {min(times[f'{way} without']):.3f} s), "
                        f"ratio {with_ / without:.3f}"))
    return rows
