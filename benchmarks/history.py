"""Release sweeps (harness.history): what sweeping a release costs beyond its two unavoidable parts.

Claims (issue #16):
- one release's sweep costs at most 1.3 x (creating its environment from a warm package cache + running the same
  cases on the pinned release). Side A is ``sweep_release`` into a fresh environment folder; side B creates the
  same environment (uv, from the same warm cache) and runs the same cases on the pinned onnxruntime in this
  interpreter. The two alternate, three rounds each;
- the full onnxruntime sweep (every minor release from 1.16, 17 releases) takes at most 10 minutes on 2 cores with
  a warm cache: every environment created afresh (new folder), packages from uv's cache.
"""

from __future__ import annotations

import shutil
import sys
import tempfile
import time
from pathlib import Path

from benchmarks.common import ROOT, Row, interleaved, median

RELEASE = "1.24.4"  # a swept release, not the pinned one: its packages are in uv's cache
ALL = ">=1.16,<1.33"


def _sweep_one(release: str) -> float:
    from gather_scatter_conformance.harness.history.sweep import sweep_release

    root = Path(tempfile.mkdtemp(prefix="gsc-bench-envs-"))
    try:
        start = time.perf_counter()
        result = sweep_release("onnxruntime", release, root=root)
        took = time.perf_counter() - start
        if result.status != "ok":
            raise RuntimeError(f"sweep of {release} failed: {result.records[0].get('reason')}")
        return took
    finally:
        shutil.rmtree(root, ignore_errors=True)


def _floor(release: str) -> float:
    """Creating the release's environment from the warm cache, plus the same cases on the pinned release."""
    from gather_scatter_conformance.harness.history import envs, pins
    from gather_scatter_conformance.harness.history.sweep import DEFAULT_TAGS, run_cases

    root = Path(tempfile.mkdtemp(prefix="gsc-bench-floor-"))
    try:
        start = time.perf_counter()
        envs._create(root / "env", pins.requirements("onnxruntime", release))
        env_s = time.perf_counter() - start
        results = root / "r.jsonl"
        start = time.perf_counter()
        run_cases("onnxruntime", sys.executable, [str(ROOT / "cases")], DEFAULT_TAGS, results, {})
        return env_s + (time.perf_counter() - start)
    finally:
        shutil.rmtree(root, ignore_errors=True)


def run(reps: int = 3, full: bool = True) -> list[Row]:
    """The two claims as rows (the full sweep only when ``full``)."""
    from gather_scatter_conformance.harness.history import releases

    _sweep_one(RELEASE)  # warm uv's cache and the case parse cache before timing either side
    times = interleaved({"sweep": lambda: _sweep_one(RELEASE), "floor": lambda: _floor(RELEASE)}, reps)
    a, b = median(times["sweep"]), median(times["floor"])
    rows = [Row("history", f"one release sweep (onnxruntime {RELEASE}) vs env + same cases on the pinned release",
                a / b, "<= 1.3x", a / b <= 1.3, detail=f"sweep {a:.1f} s, floor {b:.1f} s (medians of {reps})")]
    if full:
        wanted = releases.resolve("onnxruntime", ALL)
        root = Path(tempfile.mkdtemp(prefix="gsc-bench-full-"))
        try:
            from gather_scatter_conformance.harness.history.sweep import sweep

            start = time.perf_counter()
            sweep("onnxruntime", wanted, root / "history", root=root / "envs", say=lambda _line: None)
            took = time.perf_counter() - start
        finally:
            shutil.rmtree(root, ignore_errors=True)
        rows.append(Row("history", f"full onnxruntime sweep ({len(wanted)} releases, warm cache)", took, "<= 600 s",
                        took <= 600, unit="s", detail=f"{took / len(wanted):.1f} s a release"))
    return rows
