"""Part: what reading results strictly costs (issue #37).

Every line of a results file is now checked as a record (pydantic's ``Record``, the fields that become paths, markup
or code against what the harness writes), bounded in length and nesting, and counted against its manifest. Side
by side, alternating, on the committed run of 2026-11-24 (10,818 records of 8 frameworks, tests/data/runs):

- ``strict read``: ``harness.run.records.read`` as every command now reads;
- ``plain read``: what the reader did before, ``json.loads`` of each line.

The ratio is context, not a gate: a report of a full run (about 28,000 records) reads its files once.
"""

from __future__ import annotations

import json
import lzma
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
