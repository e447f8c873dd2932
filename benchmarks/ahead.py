"""A run's IREE cases compiled ahead, many to a module (Adapter.ahead, adapters/iree_batch.py), against
each compiled alone (``--no-ahead``), side by side.

Both sides run at the same time, one pytest process each (``-p no:xdist``), every cache empty (result cache off,
conversion cache a new directory each): ``gsc run --framework iree`` over the case files (default: every shipped
case file but the probes; ``--quick``: GatherND and ScatterND). The claim: the side with the ahead compile takes
less than 2/3 of the other's wall time, and no record differs in outcome, verdict, label, observed value or
dispatches (``ops``) but those of memory-unsafe cells (a read past the operand gives another draw each run; for a
deviating value without a label, everything but the value is compared).
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from benchmarks.common import ROOT, Row, records_of

LIMIT = 2 / 3
COMPARED = ("outcome", "verdict", "label", "observed", "ops", "error_message")
QUICK_CASES = ("cases/gather_nd.yaml", "cases/scatter_nd.yaml")


def _cases(quick: bool) -> list[str]:
    if quick:
        return list(QUICK_CASES)
    return sorted(str(p.relative_to(ROOT)) for p in (ROOT / "cases").glob("*.yaml"))


def _start(results: Path, conversions: Path, cases: list[str], *extra: str) -> tuple[subprocess.Popen[str], float]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PYTEST_", "GSC_"))}
    env["GSC_CONVERSION_CACHE"] = str(conversions)
    env["PYTHONPATH"] = os.pathsep.join([str(ROOT), *filter(None, [os.environ.get("PYTHONPATH")])])
    cmd = [sys.executable, "-m", "gather_scatter_conformance", "run", "--framework", "iree", "--results",
           str(results), *cases, "--no-cache", "-p", "no:xdist", *extra]
    return subprocess.Popen(cmd, cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                            text=True), time.perf_counter()


def _compared(rec: dict[str, Any]) -> tuple[str, ...]:
    """The fields compared: the value only where it conforms. A deviating value of a case without a label (a spec
    case's negative index, which IREE's StableHLO gather reads past its operand) is a new draw each run, as the
    probes' ``garbage`` is: its outcome, verdict and dispatches are compared, not its bytes."""
    return COMPARED if rec.get("verdict") == "conforms" else tuple(f for f in COMPARED if f != "observed")


def _unsafe(rec: dict[str, Any]) -> bool:
    from gather_scatter_conformance.vocab.dimensions import is_memory_unsafe

    return is_memory_unsafe(rec.get("label"))


def run(quick: bool = False) -> list[Row]:
    """The two runs side by side: wall times, their ratio, and the records that differ."""
    cases = _cases(quick)
    with tempfile.TemporaryDirectory(prefix="gsc-bench-ahead-") as tmp:
        base = Path(tmp)
        runs = {"ahead": _start(base / "ahead.jsonl", base / "conv-ahead", cases),
                "alone": _start(base / "alone.jsonl", base / "conv-alone", cases, "--no-ahead")}
        walls = {}
        for name, (proc, start) in runs.items():
            out, _ = proc.communicate(timeout=7200)
            walls[name] = time.perf_counter() - start
            if proc.returncode not in (0, 1):  # 1: a deviation in the corpus is a result, not a failed benchmark
                raise RuntimeError(f"{name} run exited {proc.returncode}: {out[-1500:]}")
        ahead, alone = records_of(base / "ahead.jsonl"), records_of(base / "alone.jsonl")
    differing = [key for key, rec in alone.items() if key in ahead and not _unsafe(rec) and not _unsafe(ahead[key])
                 and any(rec.get(f) != ahead[key].get(f) for f in _compared(rec))]
    ratio = walls["ahead"] / walls["alone"]
    detail = f"ahead {walls['ahead']:.0f} s, alone {walls['alone']:.0f} s; {len(alone)} records, {len(cases)} files"
    return [
        Row("ahead", "iree: compiled ahead / each compiled alone (wall, side by side)", ratio, f"< {LIMIT:.2f}",
            ratio < LIMIT, detail=detail),
        Row("ahead", "iree: records differing (outcome, verdict, label, value, dispatches; memory-unsafe aside)",
            float(len(differing)), "0", not differing, unit="records",
            detail=", ".join(f"{k[0]} [{k[2]}]" for k in differing[:5]) or "none"),
        Row("ahead", "iree: records only on one side", float(len(set(ahead) ^ set(alone))), "0",
            set(ahead) == set(alone), unit="records"),
    ]
