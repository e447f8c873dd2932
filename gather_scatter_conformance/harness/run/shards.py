"""A run split into shards of equal recorded time (issue #38), as PyTorch shards its CI by test times.

Each test of a run is a cell (case, framework, variant, device), and the records of an earlier run say how long each
cell took (``duration_s``). :func:`assign` deals the cells to ``n`` shards longest first, each to the shard with the
least time so far (LPT: no shard ends more than one cell's time after the mean); a cell no record times counts as
the median of those that are. Every shard of a run computes the same assignment from the same records and keeps its
own part, so the shards together run every cell once and `gsc merge` puts them back together (their manifests
say ``shard: K/N``; a missing shard is named).
"""

from __future__ import annotations

import heapq
import os
import statistics
from collections.abc import Iterable, Sequence

Cell = tuple[str, str, str, str]  # Record.key: case, framework, variant, device


def parse(text: str) -> tuple[int, int]:
    """``K/N`` as (K, N), 1 <= K <= N; ValueError with a one-line reason otherwise."""
    k, sep, n = text.partition("/")
    if not (sep and k.isdigit() and n.isdigit() and 1 <= int(k) <= int(n)):
        raise ValueError(f"--shard {text!r}: K/N with 1 <= K <= N (the K-th of N shards)")
    return int(k), int(n)


def durations(paths: Iterable[str | os.PathLike[str]]) -> dict[Cell, float]:
    """Seconds per cell in the records of ``paths`` (results files; the later file's record wins). Files that do
    not exist are left out: the first night of a matrix has no times."""
    from gather_scatter_conformance.harness.run.records import read

    present = [p for p in paths if os.path.exists(p)]
    return {rec.key: float(rec.duration_s or 0.0) for rec in read(present)} if present else {}


def _unknown(cells: Sequence[Cell], seconds: dict[Cell, float]) -> float:
    """What a cell no record times weighs: the median of those that are timed (1 s when none is)."""
    known = [seconds[c] for c in cells if c in seconds]
    return statistics.median(known) if known else 1.0


def assign(cells: Sequence[Cell], seconds: dict[Cell, float], n: int) -> dict[Cell, int]:
    """Each cell's shard (0 to n-1): longest first to the least loaded shard, ties by cell and shard index, so that
    the result depends on nothing but the arguments."""
    default = _unknown(cells, seconds)
    order = sorted(set(cells), key=lambda c: (-seconds.get(c, default), c))
    loads = [(0.0, i) for i in range(n)]
    out: dict[Cell, int] = {}
    for cell in order:
        load, i = heapq.heappop(loads)
        out[cell] = i
        heapq.heappush(loads, (load + seconds.get(cell, default), i))
    return out


def loads(cells: Sequence[Cell], seconds: dict[Cell, float], n: int) -> list[float]:
    """The seconds each of ``n`` shards would take (the sum of its cells' recorded or assumed times)."""
    default = _unknown(cells, seconds)
    out = [0.0] * n
    for cell, shard in assign(cells, seconds, n).items():
        out[shard] += seconds.get(cell, default)
    return out
