"""Part 9: what the result cache saves (harness.run.cache, docs/cache.md), and that what it gives back is right.

Each repetition, in a fresh empty cache directory: ``gsc run`` over a subset of the corpus (default the Gather and
ScatterElements probes, ``cases/probes/{gather,scatter_elements}.yaml``, 61 cases, on numpy, onnxruntime and torch
with every variant: torch.compile's included, as on every probe), then the same command again: the first run
measures everything and fills the cache, the second reuses what it may. The two runs of a repetition are timed back
to back (whole commands, wall time); the claim is median(second) / median(first) < 1/3. A context row counts the
records the second run reused. The whole of ``cases/probes`` takes about 13 minutes a first run here: the subset
keeps the part to minutes (``--quick``: the Gather probes alone).

Then a ``--no-cache`` run of the same cases: every record the second run reused must equal the record measured
again, field by field but time, duration, host and the ``cached`` mark (a claim: 0 records differ).
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from benchmarks.common import ROOT, Row, median, records_of

LIMIT = 1 / 3
VOLATILE = {"time", "duration_s", "host", "cached"}
FRAMEWORKS = "numpy,onnxruntime,torch"
CASES = ("cases/probes/gather.yaml", "cases/probes/scatter_elements.yaml")
QUICK_CASES = ("cases/probes/gather.yaml",)


def _gsc(results: Path, cache_dir: Path, frameworks: str, cases: tuple[str, ...], *extra: str) -> float:
    """Wall seconds of one ``gsc run`` over ``cases`` writing ``results``, with its result cache in ``cache_dir``."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PYTEST_", "GSC_RESULT_CACHE"))}
    env["PYTHONPATH"] = os.pathsep.join([str(ROOT), *filter(None, [os.environ.get("PYTHONPATH")])])
    cmd = [sys.executable, "-m", "gather_scatter_conformance", "run", "--framework", frameworks, "--results",
           str(results), *cases, "--gsc-cache-dir", str(cache_dir), "-p", "no:xdist", *extra]
    start = time.perf_counter()
    proc = subprocess.run(cmd, cwd=ROOT, env=env, capture_output=True, text=True, timeout=3600)
    elapsed = time.perf_counter() - start
    if proc.returncode != 0:
        raise RuntimeError(f"{' '.join(cmd)} exited {proc.returncode}: {proc.stdout[-1500:]}{proc.stderr[-1500:]}")
    return elapsed


def _stable(rec: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in rec.items() if k not in VOLATILE}


def run(reps: int = 1, frameworks: str = "", cases: tuple[str, ...] = CASES) -> list[Row]:
    """Rows: second / first run (the claim), records reused (context), and reused records that differ from a
    ``--no-cache`` measurement (the claim: none)."""
    frameworks = frameworks or FRAMEWORKS
    firsts: list[float] = []
    seconds: list[float] = []
    with tempfile.TemporaryDirectory(prefix="gsc-bench-cache-") as name:
        tmp = Path(name)
        for i in range(reps):
            cache_dir = tmp / f"cache{i}"  # empty: the first run measures everything
            firsts.append(_gsc(tmp / "first.jsonl", cache_dir, frameworks, cases))
            seconds.append(_gsc(tmp / "second.jsonl", cache_dir, frameworks, cases))
        _gsc(tmp / "fresh.jsonl", tmp / "unused", frameworks, cases, "--no-cache")
        second, fresh = records_of(tmp / "second.jsonl"), records_of(tmp / "fresh.jsonl")
    reused = [k for k, r in second.items() if r.get("cached")]
    differ = [k for k in reused if k not in fresh or _stable(second[k]) != _stable(fresh[k])]
    a, b = median(seconds), median(firsts)
    ratio = a / b if b > 0 else float("inf")
    what = f"{' '.join(cases)} on {frameworks}"
    return [
        Row("cache", f"second run / first run ({what})", ratio, f"< {LIMIT:.2g}", ratio < LIMIT, "x",
            f"second {a:.1f} s, first (empty cache) {b:.1f} s (medians of {reps})"),
        Row("cache", "  records reused by the second run", float(len(reused)), "", None, "records",
            f"of {len(second)}; the rest are never reused (memory-unsafe, flipping, crash, timeout...)"),
        Row("cache", "reused records differing from a --no-cache run", float(len(differ)), "0", not differ, "records",
            ", ".join("::".join(k[:3]) for k in differ[:3])),
    ]
