"""ScatterND (ONNX ScatterND-18) and the row-scatter core shared with ScatterElements."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from gather_scatter_conformance.harness.reference.allowed import AllowedOutputs, any_of
from gather_scatter_conformance.harness.reference.constraints import open_reduction, reduction_defined
from gather_scatter_conformance.harness.reference.gather_nd import flat_rows
from gather_scatter_conformance.harness.reference.indices import prod, resolve
from gather_scatter_conformance.harness.reference.policy import InvalidInput, Policy, PolicyNotApplicable
from gather_scatter_conformance.vocab import dtypes
from gather_scatter_conformance.vocab.ops import REDUCTIONS

_UFUNCS = {"add": np.add, "mul": np.multiply, "max": np.maximum, "min": np.minimum}


def check_reduction(reduction: str, dtype: np.dtype) -> None:
    """Raise InvalidInput if ``reduction`` is unknown or not defined for ``dtype`` (harness.reference.constraints:
    strings allow none and add, complex no max/min)."""
    if reduction not in REDUCTIONS:
        raise InvalidInput(f"reduction={reduction!r} is not one of {', '.join(REDUCTIONS)}")
    name = dtypes.name_of(dtype)
    if not reduction_defined(reduction, name):
        raise InvalidInput(f"reduction={reduction!r} is not defined for {name} data")


def undecided(arrays: Mapping[str, np.ndarray], attrs: Mapping[str, Any]) -> str | None:
    """What the text leaves open on this input (harness.reference.undecided): a reduction whose combining it does not
    define for the data's type (constraints.open_reduction); ScatterElements shares it."""
    data = arrays.get("data")
    return None if data is None else open_reduction(str(attrs.get("reduction", "none")), np.asarray(data).dtype)


def check_updates(data: np.ndarray, updates: np.ndarray, expected_shape: tuple[int, ...]) -> None:
    """Raise InvalidInput unless updates has data's dtype and the expected shape."""
    if updates.dtype != data.dtype:
        raise InvalidInput(
            f"updates dtype {dtypes.name_of(updates.dtype)} differs from data dtype {dtypes.name_of(data.dtype)}"
        )
    if updates.shape != expected_shape:
        raise InvalidInput(f"updates shape {updates.shape} must be {expected_shape}")


def _reduce_at(out: np.ndarray, rows: np.ndarray, updates: np.ndarray, reduction: str) -> None:
    ufunc = _UFUNCS[reduction]
    # NaN and overflow results are the answer here, not an accident worth a warning.
    with np.errstate(all="ignore"):
        try:
            # Applies updates one at a time in row-major order, rounding after each like a sequential kernel.
            ufunc.at(out, rows, updates)
        except TypeError:  # a dtype without an ufunc.at loop (possible for ml_dtypes types): go through float32
            wide = out.astype(np.float32)
            ufunc.at(wide, rows, updates.astype(np.float32))
            out[...] = wide.astype(out.dtype)


def scatter_rows(
    out: np.ndarray,
    rows: np.ndarray,
    updates: np.ndarray,
    reduction: str,
    policy: Policy,
    shape: tuple[int, ...],
) -> np.ndarray | AllowedOutputs:
    """Write ``updates[i]`` (M, Q) into row ``rows[i]`` of ``out`` (N, Q, modified in place), then reshape.

    With a reduction, duplicates combine through it in row-major order. Without one, duplicate rows are
    resolved by ``policy.duplicates``; 'any-of' returns AllowedOutputs only if some row really is duplicated.
    """
    m = rows.shape[0]
    if out.shape[1] == 1:  # NumPy's fast paths for ufunc.at and fancy assignment are 1-D only
        flat_out, flat_updates = out.reshape(-1), updates.reshape(-1)
    else:
        flat_out, flat_updates = out, updates
    if reduction != "none":
        _reduce_at(flat_out, rows, flat_updates, reduction)
        return out.reshape(shape)
    seen = np.zeros(out.shape[0], dtype=bool)
    seen[rows] = True
    if np.count_nonzero(seen) == m:
        flat_out[rows] = flat_updates
        return out.reshape(shape)
    del seen
    mode = policy.duplicates
    if mode == "any-of":
        return any_of(out, rows, updates, shape)
    if mode == "first":
        targets, first = np.unique(rows, return_index=True)
        out[targets] = updates[first]
    elif mode == "last":
        targets, first_reversed = np.unique(rows[::-1], return_index=True)
        out[targets] = updates[m - 1 - first_reversed]
    else:
        if out.dtype == object:
            raise PolicyNotApplicable("duplicates='accumulate' is not meaningful for string data")
        targets, which = np.unique(rows, return_inverse=True)
        sums = np.zeros((targets.shape[0], out.shape[1]), dtype=out.dtype)
        _reduce_at(sums, which.reshape(-1), updates, "add")
        out[targets] = sums
    return out.reshape(shape)


def scatter_nd(
    data: np.ndarray, indices: np.ndarray, updates: np.ndarray, reduction: str, policy: Policy
) -> np.ndarray | AllowedOutputs:
    """Copy ``data`` and write ``updates[i]`` at the index tuple ``indices[i]`` (last dim of ``indices``).

    k = indices.shape[-1] <= data.rank; updates must have shape ``indices.shape[:-1] + data.shape[k:]``.
    ``reduction`` none|add|mul|max|min combines with the current value. Returns AllowedOutputs when duplicate
    targets without reduction make the result order-dependent under policy duplicates='any-of'.
    """
    check_reduction(reduction, data.dtype)
    if data.ndim == 0:
        raise InvalidInput("data must have rank >= 1")
    if indices.ndim == 0:
        raise InvalidInput("indices must have rank >= 1 (the last dim holds index tuples)")
    k = indices.shape[-1]
    if k > data.ndim:
        raise InvalidInput(f"index tuple length indices.shape[-1]={k} exceeds data rank {data.ndim}")
    check_updates(data, updates, indices.shape[:-1] + data.shape[k:])
    dims = data.shape[:k]
    idx, dropped = resolve(indices, dims, 0, policy)
    rows = flat_rows(idx, dims).reshape(-1)
    upd = updates.reshape(rows.shape[0], prod(data.shape[k:]))
    if dropped is not None:
        keep = ~dropped.any(axis=-1).reshape(-1)
        rows, upd = rows[keep], upd[keep]
    out = data.copy().reshape(prod(dims), prod(data.shape[k:]))
    return scatter_rows(out, rows, upd, reduction, policy, data.shape)


def reference(
    arrays: Mapping[str, np.ndarray], attrs: Mapping[str, Any], policy: Policy
) -> np.ndarray | AllowedOutputs:
    """The engine's entry (harness.reference.compute): ScatterND-18 of the case's named inputs and attributes."""
    return scatter_nd(arrays["data"], arrays["indices"], arrays["updates"], attrs["reduction"], policy)
