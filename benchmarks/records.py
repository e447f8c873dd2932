"""Part: what reading results strictly costs (issue #37).

Every line of a results file is now checked as a record (pydantic's ``Record``, the fields that become paths, markup
or code against what the harness writes), bounded in length and nesting, and counted against its manifest. Side
by side, alternating, on the committed run of 2026-11-24 (10,818 records of 8 frameworks, tests/data/runs):

- ``strict read``: ``harness.run.records.read`` as every command now reads;
- ``plain read``: what the reader did before, ``json.loads`` of each line.

The ratio is context, not a gate: a report of a full run (about 28,000 records) reads its files once.

Second row, the worker memory limit (``GSC_WORKER_MEMORY``): while a case runs, its worker's processes are checked
against the limit between short waits (harness.run.isolation). Side by side, two warm NumPy workers, one with the
limit and one without, on a case that runs long enough to be checked (np.take of 64 rows of 1 MiB: a 64 MiB answer,
about 1.5 s here, most of it carrying the answer back) and on a suite-sized case (answered before the first check).
"""

from __future__ import annotations

import json
import lzma
import os
import tempfile
from pathlib import Path

from benchmarks.common import ROOT, Row, interleaved, ratio_row, timed

RUN = ROOT / "tests" / "data" / "runs" / "2026-11-24T21-00.jsonl.xz"


def run(reps: int = 7) -> list[Row]:
    """The strict reader against plain JSON parsing of the same file."""
    from gather_scatter_conformance.harness.run import records

    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "r.jsonl"
        path.write_bytes(lzma.open(RUN).read())
        n = sum(1 for _ in records.read([path]))

        def strict() -> None:
            assert sum(1 for _ in records.read([path])) == n

        def plain() -> None:
            with open(path, encoding="utf-8") as fh:
                assert sum(1 for line in fh if line.strip() and json.loads(line)) == n

        times = interleaved({"strict": lambda: timed(strict), "plain": lambda: timed(plain)}, reps)
    row = ratio_row("records", f"strict read of {n:,} records vs json.loads per line", times["strict"],
                    times["plain"], None, what=("strict", "plain"))
    per = 1e6 * min(times["strict"]) / n
    row.detail += f"; {per:.0f} us per record"
    return [row]


def memory_watch(reps: int = 7) -> list[Row]:
    """Cases through a worker under the memory limit against the same worker without one."""
    import numpy as np

    from gather_scatter_conformance.harness.run.isolation import MEMORY_ENV, Isolated
    from gather_scatter_conformance.vocab import wire

    def job(data: np.ndarray, rows: int) -> dict:
        return {"op": "Gather", "attrs": {"axis": 0, "batch_dims": 0}, "fresh": False,
                "inputs": {"data": wire.encode(data), "indices": wire.encode(np.zeros(rows, np.int64))}}

    long_case = job(np.ones((2, 1 << 18), np.float32), 64)
    small_case = job(np.arange(8.0), 4)
    saved = os.environ.get(MEMORY_ENV)
    executors = {}
    try:
        for side, value in (("limit", "8"), ("none", "0")):
            os.environ[MEMORY_ENV] = value
            executors[side] = Isolated(timeout=120, fork=False)
            assert executors[side].run("numpy", "take", small_case)["outcome"] == "ok"  # warm
    finally:
        if saved is None:
            os.environ.pop(MEMORY_ENV, None)
        else:
            os.environ[MEMORY_ENV] = saved
    rows = []
    try:
        for name, payload, n in (("a 64 MiB answer", long_case, 1), ("50 suite-sized cases", small_case, 50)):
            def side(ex: Isolated, payload: dict = payload, n: int = n) -> float:
                return timed(lambda: [ex.run("numpy", "take", payload) for _ in range(n)])

            times = interleaved({k: (lambda ex=ex: side(ex)) for k, ex in executors.items()}, reps)
            rows.append(ratio_row("records", f"memory limit on a worker: {name}, checked vs unchecked",
                                  times["limit"], times["none"], None, what=("checked", "unchecked")))
    finally:
        for ex in executors.values():
            ex.close()
    return rows
