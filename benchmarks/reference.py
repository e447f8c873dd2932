"""Part 4: the reference engine on inputs of 10^7 elements against NumPy's own primitive for the same job.

Each configuration pairs ``harness.reference.compute`` with the NumPy call a user would write for that input
(np.take, np.take_along_axis, fancy indexing, fancy assignment on a copy, ufunc.at on a copy). Claims: time <= 2x
the primitive's (medians of interleaved repetitions), and peak traced memory (tracemalloc, which sees NumPy's
buffers) <= 3x the inputs' size.
"""

from __future__ import annotations

import gc
import tracemalloc
from collections.abc import Callable
from typing import Any

import numpy as np

from benchmarks.common import Row, interleaved, median, timed

TIME_LIMIT = 2.0
MEMORY_LIMIT = 3.0
Config = tuple[str, str, dict[str, np.ndarray], dict[str, Any], Callable[[], Any]]


def _scatter(data: np.ndarray, write: Callable[[np.ndarray], None]) -> Callable[[], np.ndarray]:
    def run() -> np.ndarray:
        out = data.copy()  # the reference never modifies its inputs, so the primitive works on a copy too
        write(out)
        return out

    return run


def configs(n: int, seed: int = 0) -> list[Config]:
    """(name, op, inputs, attrs, primitive) with data of ``n`` elements (n divisible by 10^4 keeps shapes round)."""
    rng = np.random.default_rng(seed)
    rows, cols = n // 10_000, 10_000
    d2 = rng.random((rows, cols), dtype=np.float32)
    flat = d2.reshape(-1)
    d3 = d2.reshape(rows, 100, 100)
    g0 = rng.integers(0, rows, size=rows)
    g1 = rng.integers(0, cols, size=cols)
    ge0 = rng.integers(0, rows, size=(rows, cols))
    ge1 = rng.integers(0, cols, size=(rows, cols))
    take_idx = rng.integers(-n, n, size=n)
    nd_rows = rng.integers(0, rows, size=(rows, 1))
    perm = rng.permutation(n)
    nd_el = np.stack(np.unravel_index(perm, (rows, cols)), axis=-1)
    nd_b = rng.integers(0, 100, size=(rows, 100, 1))
    upd = rng.random(n, dtype=np.float32)
    dup = rng.integers(0, n, size=n)
    dup_el = np.stack(np.unravel_index(dup, (rows, cols)), axis=-1)
    row_perm = rng.permutation(rows)[:, None]
    upd_rows = rng.random((rows, cols), dtype=np.float32)
    per_row = np.argsort(rng.random((rows, cols)), axis=1)
    dup_rows = rng.integers(0, rows, size=(rows, 1))
    batch = np.arange(rows)[:, None]
    return [
        ("Gather axis=0", "Gather", {"data": d2, "indices": g0}, {"axis": 0}, lambda: np.take(d2, g0, axis=0)),
        ("Gather axis=1", "Gather", {"data": d2, "indices": g1}, {"axis": 1}, lambda: np.take(d2, g1, axis=1)),
        ("Gather batch_dims=1", "Gather", {"data": d2, "indices": ge1}, {"axis": 1, "batch_dims": 1},
         lambda: np.take_along_axis(d2, ge1, axis=1)),
        ("GatherElements axis=0", "GatherElements", {"data": d2, "indices": ge0}, {"axis": 0},
         lambda: np.take_along_axis(d2, ge0, axis=0)),
        ("GatherElements axis=1", "GatherElements", {"data": d2, "indices": ge1}, {"axis": 1},
         lambda: np.take_along_axis(d2, ge1, axis=1)),
        ("GatherND rows (k=1)", "GatherND", {"data": d2, "indices": nd_rows}, {}, lambda: d2[nd_rows[:, 0]]),
        ("GatherND elements (k=2)", "GatherND", {"data": d2, "indices": nd_el}, {},
         lambda: d2[nd_el[:, 0], nd_el[:, 1]]),
        ("GatherND batch_dims=1", "GatherND", {"data": d3, "indices": nd_b}, {"batch_dims": 1},
         lambda: d3[batch, nd_b[..., 0]]),
        ("Take axis=None raise", "Take", {"data": d2, "indices": take_idx}, {"axis": None},
         lambda: np.take(d2, take_idx)),
        ("Take axis=None wrap", "Take", {"data": d2, "indices": take_idx}, {"axis": None, "mode": "wrap"},
         lambda: np.take(d2, take_idx, mode="wrap")),
        ("Take axis=None clip", "Take", {"data": d2, "indices": take_idx}, {"axis": None, "mode": "clip"},
         lambda: np.take(d2, take_idx, mode="clip")),
        ("ScatterElements unique", "ScatterElements", {"data": flat, "indices": perm, "updates": upd}, {"axis": 0},
         _scatter(flat, lambda o: o.__setitem__(perm, upd))),
        ("ScatterElements axis=1", "ScatterElements",
         {"data": d2, "indices": per_row, "updates": upd_rows}, {"axis": 1},
         _scatter(d2, lambda o: np.put_along_axis(o, per_row, upd_rows, axis=1))),
        ("ScatterElements add dups", "ScatterElements", {"data": flat, "indices": dup, "updates": upd},
         {"axis": 0, "reduction": "add"}, _scatter(flat, lambda o: np.add.at(o, dup, upd))),
        ("ScatterElements max dups", "ScatterElements", {"data": flat, "indices": dup, "updates": upd},
         {"axis": 0, "reduction": "max"}, _scatter(flat, lambda o: np.maximum.at(o, dup, upd))),
        ("ScatterElements none dups", "ScatterElements", {"data": flat, "indices": dup, "updates": upd},
         {"axis": 0}, _scatter(flat, lambda o: o.__setitem__(dup, upd))),
        ("ScatterND rows (k=1)", "ScatterND", {"data": d2, "indices": row_perm, "updates": upd_rows}, {},
         _scatter(d2, lambda o: o.__setitem__(row_perm[:, 0], upd_rows))),
        ("ScatterND elements (k=2)", "ScatterND", {"data": d2, "indices": nd_el, "updates": upd}, {},
         _scatter(d2, lambda o: o.__setitem__((nd_el[:, 0], nd_el[:, 1]), upd))),
        ("ScatterND mul dups (k=2)", "ScatterND", {"data": d2, "indices": dup_el, "updates": upd},
         {"reduction": "mul"}, _scatter(d2, lambda o: np.multiply.at(o, (dup_el[:, 0], dup_el[:, 1]), upd))),
        ("ScatterND none dup rows", "ScatterND", {"data": d2, "indices": dup_rows, "updates": upd_rows}, {},
         _scatter(d2, lambda o: o.__setitem__(dup_rows[:, 0], upd_rows))),
    ]


def _peak(fn: Callable[[], Any]) -> int:
    gc.collect()
    tracemalloc.start()
    try:
        result = fn()
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    del result
    return peak


def run(n: int = 10**7, reps: int = 5, only: str = "") -> list[Row]:
    """One time row and one memory row per configuration (``only``: a substring of the names to keep)."""
    from gather_scatter_conformance.harness.reference import compute

    rows: list[Row] = []
    for name, op, inputs, attrs, primitive in configs(n):
        if only and only not in name:
            continue
        size = sum(a.nbytes for a in inputs.values())

        def reference(op: str = op, inputs: dict[str, np.ndarray] = inputs, attrs: dict[str, Any] = attrs) -> Any:
            return compute(op, inputs, attrs)

        times = interleaved({"ref": lambda f=reference: timed(f), "np": lambda p=primitive: timed(p)}, reps)
        t_ref, t_np = median(times["ref"]), median(times["np"])
        ratio = t_ref / t_np
        rows.append(Row("reference", f"{name} time", ratio, f"<= {TIME_LIMIT:g}", ratio <= TIME_LIMIT, "x",
                        f"engine {t_ref:.3f} s, numpy {t_np:.3f} s"))
        mem_ref, mem_np = _peak(reference), _peak(primitive)
        rows.append(Row("reference", f"{name} memory", mem_ref / size, f"<= {MEMORY_LIMIT:g}",
                        mem_ref / size <= MEMORY_LIMIT, "x",
                        f"peak {mem_ref / 2**20:.0f} MiB for {size / 2**20:.0f} MiB of inputs; "
                        f"numpy {mem_np / size:.2f}x"))
    return rows
