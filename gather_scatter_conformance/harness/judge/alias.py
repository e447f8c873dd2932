"""What an implementation that never bounds-checks would compute: each index turned into a flat offset into data.

An out-of-range index then reads (or, for scatters, writes) whichever element lies at that offset in row-major
memory. When every offset stays inside the buffer, the result is well defined, and a framework that produces it
is labelled ``alias``; offsets outside the buffer read memory we cannot predict (``garbage``).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from gather_scatter_conformance.harness.reference import unchecked

# The operators whose unchecked offsets this module computes; any other's are its reference module's
# (harness.reference.unchecked), so a new operator models them there.
_MODELLED = ("Gather", "GatherElements", "GatherND", "Take", "ScatterElements", "ScatterND")


def _strides(shape: tuple[int, ...]) -> np.ndarray:
    out = np.ones(len(shape), dtype=np.int64)
    for i in range(len(shape) - 2, -1, -1):
        out[i] = out[i + 1] * shape[i + 1]
    return out


def _gather_coords(op: str, data: np.ndarray, indices: np.ndarray, attrs: dict[str, Any]) -> list[np.ndarray]:
    """Per output element, the (unchecked) coordinates into data it reads, one array per data dimension."""
    idx = indices.astype(np.int64)
    r = data.ndim
    if op in ("Gather", "Take"):
        axis = attrs.get("axis")
        if op == "Take" and axis is None:
            return [idx.reshape(-1)]  # flattened: the index is the offset
        a = int(axis) % r
        b = int(attrs.get("batch_dims", 0) or 0)
        b = b + idx.ndim if b < 0 else b
        out_shape = data.shape[:a] + idx.shape[b:] + data.shape[a + 1 :]
        grid = np.indices(out_shape, sparse=False)
        q = idx.ndim - b
        ind = idx[tuple(grid[:b]) + tuple(grid[a : a + q])] if idx.ndim else np.broadcast_to(idx, out_shape)
        return [c.reshape(-1) for c in [*grid[:a], ind, *grid[a + q :]]]
    if op == "GatherElements":
        a = int(attrs.get("axis", 0)) % r
        grid = list(np.indices(idx.shape))
        grid[a] = idx
        return [c.reshape(-1) for c in grid]
    # GatherND
    b = int(attrs.get("batch_dims", 0) or 0)
    m = idx.shape[-1]
    out_shape = idx.shape[:-1] + data.shape[b + m :]
    grid = np.indices(out_shape)
    lead = tuple(grid[: idx.ndim - 1])
    comps = [idx[lead + (j,)] for j in range(m)]
    return [c.reshape(-1) for c in [*grid[:b], *comps, *grid[idx.ndim - 1 :]]]


def _offsets(shape: tuple[int, ...], coords: list[np.ndarray]) -> np.ndarray:
    if len(coords) == 1 and len(shape) != 1:
        return coords[0]
    strides = _strides(shape)
    return sum((c * s for c, s in zip(coords, strides, strict=True)), np.zeros_like(coords[0]))


def unchecked_gather(op: str, inputs: dict[str, np.ndarray], attrs: dict[str, Any]) -> np.ndarray | None:
    """The output of a gather that adds up unchecked offsets; None if any offset falls outside the buffer, or for an
    operator whose unchecked offsets are not modelled here."""
    if op not in _MODELLED:  # an operator whose reference module models its unchecked kernel, if any
        return unchecked(op, inputs, attrs)
    data, indices = inputs["data"], inputs["indices"]
    if op in ("ScatterElements", "ScatterND"):
        return _unchecked_scatter(op, inputs, attrs)
    coords = _gather_coords(op, data, indices, attrs)
    off = _offsets(data.shape, coords)
    if off.size and (off.min() < 0 or off.max() >= data.size):
        return None
    out_shape = _gather_shape(op, data, indices, attrs)
    return data.reshape(-1)[off].reshape(out_shape)


def _gather_shape(op: str, data: np.ndarray, indices: np.ndarray, attrs: dict[str, Any]) -> tuple[int, ...]:
    if op == "GatherElements" or (op == "Take" and attrs.get("axis") is None):
        return indices.shape
    if op == "GatherND":
        b = int(attrs.get("batch_dims", 0) or 0)
        return indices.shape[:-1] + data.shape[b + indices.shape[-1] :]
    a = int(attrs["axis"]) % data.ndim
    b = int(attrs.get("batch_dims", 0) or 0)
    b = b + indices.ndim if b < 0 else b
    return data.shape[:a] + indices.shape[b:] + data.shape[a + 1 :]


def _unchecked_scatter(op: str, inputs: dict[str, np.ndarray], attrs: dict[str, Any]) -> np.ndarray | None:
    """A scatter (reduction none, last write wins) that writes at unchecked offsets."""
    if attrs.get("reduction", "none") != "none":
        return None
    data, indices, updates = inputs["data"], inputs["indices"], inputs["updates"]
    idx = indices.astype(np.int64)
    if op == "ScatterElements":
        grid = list(np.indices(idx.shape))
        grid[int(attrs.get("axis", 0)) % data.ndim] = idx
        coords = [c.reshape(-1) for c in grid]
    else:
        m = idx.shape[-1]
        slice_shape = data.shape[m:]
        grid = np.indices(idx.shape[:-1] + slice_shape)
        lead = tuple(grid[: idx.ndim - 1])
        coords = [idx[lead + (j,)].reshape(-1) for j in range(m)] + [g.reshape(-1) for g in grid[idx.ndim - 1 :]]
    off = _offsets(data.shape, coords)
    if off.size and (off.min() < 0 or off.max() >= data.size):
        return None
    out = data.copy().reshape(-1)
    out[off] = updates.reshape(-1)
    return out.reshape(data.shape)
