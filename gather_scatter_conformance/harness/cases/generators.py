"""Seeded generators for inputs, so that large cases stay short in YAML.

Index generators know the operator: they draw values from the extent of the axis being indexed (Gather,
GatherElements, ScatterElements, Take) or, for the ND operators, from the extent of each indexed dimension.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from gather_scatter_conformance.harness.cases.errors import InputValueError
from gather_scatter_conformance.vocab import dtypes

_WORDS = np.array(["alpha", "beta", "gamma", "delta", "eps", "zeta", "eta", "theta"], dtype=object)


def random_array(shape: list[int], dtype_name: str, low: float, high: float, seed: int) -> np.ndarray:
    """Return a reproducible array of ``shape`` and ``dtype_name`` with values in [low, high)."""
    rng = np.random.default_rng(seed)
    shape = tuple(shape)
    if dtype_name == "string":
        return rng.choice(_WORDS, size=shape)
    if dtype_name == "bool":
        return rng.integers(0, 2, size=shape).astype(bool)
    if dtype_name in dtypes.INDEX_DTYPES:
        info = np.iinfo(np.dtype(dtype_name))
        lo, hi = max(int(low), int(info.min)), min(int(high), int(info.max) + 1)
        if lo >= hi:
            raise InputValueError(f"[low, high) = [{low}, {high}) is empty for {dtype_name}", "random")
        return rng.integers(lo, hi, size=shape, dtype=np.int64 if dtype_name != "uint64" else np.uint64).astype(
            dtype_name
        )
    values = rng.uniform(low, high, size=shape)
    if dtype_name in dtypes.COMPLEX_DTYPES:
        values = values + 1j * rng.uniform(low, high, size=shape)
    return values.astype(dtypes.to_numpy(dtype_name))


def _extents(op: str, attrs: dict[str, Any], data_shape: tuple[int, ...], shape: tuple[int, ...]) -> list[int]:
    """The extent each index component ranges over: one for axis ops, indices.shape[-1] for the ND ops."""
    rank = len(data_shape)
    if op in ("GatherND", "ScatterND"):
        if not shape:
            raise InputValueError("ND indices need at least one dimension", "generate.shape")
        batch = int(attrs.get("batch_dims", 0) or 0)
        m = shape[-1]
        if batch + m > rank:
            raise InputValueError(f"index tuples of length {m} exceed data rank {rank} - batch_dims", "generate.shape")
        return [data_shape[batch + j] for j in range(m)]
    axis = attrs.get("axis", 0)
    if op == "Take" and axis is None:
        return [int(np.prod(data_shape, dtype=np.int64))]
    if not -rank <= int(axis) < rank:
        raise InputValueError(f"axis {axis} is out of range for data rank {rank}", "generate")
    return [data_shape[int(axis) % rank]]


def _unique_along(rng: np.random.Generator, shape: tuple[int, ...], extent: int, axis: int) -> np.ndarray:
    """Indices that never repeat along ``axis``: each line along the axis is a prefix of a permutation."""
    if shape[axis] > extent:
        raise InputValueError(f"cannot draw {shape[axis]} unique indices from an axis of {extent}", "generate")
    keys = rng.random(shape[:axis] + (extent,) + shape[axis + 1 :])
    perm = np.argsort(keys, axis=axis)
    return np.take(perm, np.arange(shape[axis]), axis=axis)


def unique_scratch(op: str, attrs: dict[str, Any], data_shape: tuple[int, ...], shape: tuple[int, ...]) -> int:
    """The bytes :func:`generate_indices` takes beyond its result to draw ``unique`` indices of ``shape``: a sort
    key and an argsort per place along the axis (axis ops), a permutation of every place (ND ops, unless they draw
    few of many). 0 where the arguments are invalid: generating says why."""
    try:
        extents = _extents(op, attrs, data_shape, shape)
    except (InputValueError, IndexError, TypeError, ValueError):
        return 0
    if op in ("GatherND", "ScatterND"):
        total, count = math.prod(extents), math.prod(shape[:-1])
        return 8 * total if total <= 10_000 or count > total // 50 else 16 * count  # numpy's Generator.choice
    if not shape:
        return 0
    axis = int(attrs.get("axis", 0) or 0) % len(shape) if op != "Take" else 0
    return 16 * math.prod(shape[:axis] + shape[axis + 1:]) * max(extents[0], 0)


def generate_indices(
    kind: str, shape: list[int], dtype_name: str, seed: int, op: str, attrs: dict[str, Any], data_shape: tuple[int, ...]
) -> np.ndarray:
    """Return reproducible indices of ``kind`` for ``op`` over data of ``data_shape``.

    in-range: [0, s); with-negatives: [-s, s); with-duplicates: a small range so repeats are certain;
    unique: no two updates hit the same place (scatters); out-of-bounds: in range except some entries >= s.
    """
    rng = np.random.default_rng(seed)
    shp = tuple(shape)
    extents = _extents(op, attrs, tuple(data_shape), shp)
    nd = op in ("GatherND", "ScatterND")
    comp_shape = shp[:-1] if nd else shp
    if any(e == 0 for e in extents) and kind != "out-of-bounds" and int(np.prod(comp_shape, dtype=np.int64)) > 0:
        raise InputValueError("cannot index into an empty dimension", "generate")
    if kind == "unique":
        if nd:
            total = int(np.prod(extents, dtype=np.int64))
            count = int(np.prod(comp_shape, dtype=np.int64))
            if count > total:
                raise InputValueError(f"cannot draw {count} unique index tuples from {total} places", "generate")
            flat = rng.choice(total, size=count, replace=False)
            out = np.stack(np.unravel_index(flat, extents), axis=-1).reshape(shp)
        else:
            axis = int(attrs.get("axis", 0) or 0) % max(len(shp), 1) if op != "Take" else 0
            out = _unique_along(rng, shp, extents[0], axis) if shp else np.asarray(rng.integers(0, extents[0]))
    else:
        cols = []
        for extent in extents:
            if kind == "in-range":
                cols.append(rng.integers(0, extent, size=comp_shape))
            elif kind == "with-negatives":
                cols.append(rng.integers(-extent, extent, size=comp_shape))
            elif kind == "with-duplicates":
                cols.append(rng.integers(0, min(extent, 2), size=comp_shape))
            elif kind == "out-of-bounds":
                col = rng.integers(0, max(extent, 1), size=comp_shape)
                mask = rng.random(comp_shape) < 0.3
                col = np.where(mask, extent + rng.integers(0, 3, size=comp_shape), col)
                cols.append(col)
            else:
                raise InputValueError(f"unknown index kind {kind!r}", "generate.kind")
        out = np.stack(cols, axis=-1) if nd else cols[0]
    arr = np.asarray(out, dtype=np.int64)
    if dtype_name in dtypes.UNSIGNED_DTYPES and (arr < 0).any():
        raise InputValueError(f"{kind} indices include negatives, which {dtype_name} cannot hold", "generate.dtype")
    info = np.iinfo(np.dtype(dtype_name))
    if arr.size and (arr.max() > info.max or arr.min() < info.min):
        raise InputValueError(f"generated indices do not fit {dtype_name}", "generate.dtype")
    return arr.astype(dtype_name)


def derived_updates_shape(op: str, data_shape: tuple[int, ...], indices_shape: tuple[int, ...]) -> tuple[int, ...]:
    """The shape ``updates`` must have for a scatter: indices' shape (elements) or indices.shape[:-1] + slice (ND);
    InputValueError for a scatter whose updates' shape is not determined by them (TensorScatter)."""
    if op == "ScatterElements":
        return indices_shape
    if op == "ScatterND":
        m = indices_shape[-1] if indices_shape else 0
        return indices_shape[:-1] + tuple(data_shape[m:])
    # TensorScatter: the update's sequence length is its own, not a function of data and write indices.
    raise InputValueError(f"{op}'s updates shape does not follow from data and indices: give it a shape", "random")
