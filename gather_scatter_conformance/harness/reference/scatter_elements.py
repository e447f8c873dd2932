"""ScatterElements (ONNX ScatterElements-18; the deprecated Scatter-9/11 is the same without reduction)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from gather_scatter_conformance.harness.reference.allowed import AllowedOutputs
from gather_scatter_conformance.harness.reference.gather_elements import check_elementwise_shapes
from gather_scatter_conformance.harness.reference.indices import normalize_axis, resolve
from gather_scatter_conformance.harness.reference.policy import InvalidInput, Policy
from gather_scatter_conformance.harness.reference.scatter_nd import (  # noqa: F401 (undecided: this operator's too)
    check_reduction,
    check_updates,
    scatter_rows,
    undecided,
)


def scatter_elements(
    data: np.ndarray, indices: np.ndarray, updates: np.ndarray, axis: Any, reduction: str, policy: Policy
) -> np.ndarray | AllowedOutputs:
    """Copy ``data`` and write ``updates[p]`` at ``p`` with ``p[axis]`` replaced by ``indices[p]``.

    indices and updates share one shape, of data's rank and no larger than data outside ``axis``.
    ``reduction`` none|add|mul|max|min combines with the current value. Returns AllowedOutputs when duplicate
    targets without reduction make the result order-dependent under policy duplicates='any-of'.
    """
    check_reduction(reduction, data.dtype)
    if data.ndim == 0:
        raise InvalidInput("data must have rank >= 1")
    axis = normalize_axis(axis, data.ndim)
    check_elementwise_shapes(data, indices, axis)
    check_updates(data, updates, indices.shape)
    idx, dropped = resolve(indices, data.shape[axis], axis, policy)
    strides = [1] * data.ndim
    for d in range(data.ndim - 2, -1, -1):
        strides[d] = strides[d + 1] * data.shape[d + 1]
    # Flat offsets into data. idx may be the caller's indices array: write into it only once it is our own copy.
    offsets, owned = (idx * strides[axis], True) if strides[axis] != 1 else (idx, idx is not indices)
    for d, n in enumerate(indices.shape):
        if d != axis and n > 1:
            step = (np.arange(n, dtype=np.int64) * strides[d]).reshape((n,) + (1,) * (data.ndim - d - 1))
            if owned:
                offsets += step
            else:
                offsets, owned = offsets + step, True
    rows = offsets.reshape(-1)
    upd = updates.reshape(-1, 1)
    if dropped is not None:
        keep = ~dropped.reshape(-1)
        rows, upd = rows[keep], upd[keep]
    out = data.copy().reshape(-1, 1)
    return scatter_rows(out, rows, upd, reduction, policy, data.shape)


def reference(
    arrays: Mapping[str, np.ndarray], attrs: Mapping[str, Any], policy: Policy
) -> np.ndarray | AllowedOutputs:
    """The engine's entry (harness.reference.compute): ScatterElements-18 of the case's named inputs and attributes."""
    return scatter_elements(arrays["data"], arrays["indices"], arrays["updates"], attrs["axis"], attrs["reduction"],
                            policy)
