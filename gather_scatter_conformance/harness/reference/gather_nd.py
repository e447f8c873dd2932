"""GatherND (ONNX GatherND-13, with batch_dims)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from gather_scatter_conformance.harness.reference.indices import (
    check_int_attr,
    fill_dropped,
    full_of_fill,
    prod,
    resolve,
)
from gather_scatter_conformance.harness.reference.policy import InvalidInput, Policy


def flat_rows(idx: np.ndarray, dims: tuple[int, ...]) -> np.ndarray:
    """Row-major offsets of the index tuples along the last axis of ``idx`` (in range) into an array of ``dims``."""
    if len(dims) <= 1:  # k = 0 (ScatterND only) addresses the whole tensor: every tuple is row 0
        return idx[..., 0] if dims else np.zeros(idx.shape[:-1], dtype=np.int64)
    rows = idx[..., -1].copy()
    stride = dims[-1]
    for j in range(len(dims) - 2, -1, -1):
        rows += idx[..., j] * stride
        stride *= dims[j]
    return rows


def gather_nd(data: np.ndarray, indices: np.ndarray, batch_dims: Any, policy: Policy) -> np.ndarray:
    """Gather the slices addressed by index tuples along the last dim of ``indices``.

    With b = batch_dims and k = indices.shape[-1] (1 <= k <= data.rank - b), the output shape is
    ``indices.shape[:-1] + data.shape[b+k:]`` and batch i reads only batch i of data; the first b dims of data
    and indices must be equal. Raises InvalidInput / IndexOutOfRange.
    """
    b = check_int_attr(batch_dims, "batch_dims")
    if indices.ndim == 0:
        raise InvalidInput("indices must have rank >= 1 (the last dim holds index tuples)")
    if not 0 <= b < indices.ndim:
        raise InvalidInput(f"batch_dims={b} must be in [0, {indices.ndim - 1}] for indices of rank {indices.ndim}")
    if data.shape[:b] != indices.shape[:b]:
        raise InvalidInput(
            f"batch dims differ: data.shape[:{b}]={data.shape[:b]} but indices.shape[:{b}]={indices.shape[:b]}"
        )
    k = indices.shape[-1]
    if not 1 <= k <= data.ndim - b:
        raise InvalidInput(
            f"index tuple length indices.shape[-1]={k} must be in [1, {data.ndim - b}] (data rank {data.ndim}"
            f" minus batch_dims {b})"
        )
    dims = data.shape[b : b + k]
    out_shape = indices.shape[:-1] + data.shape[b + k :]
    idx, dropped = resolve(indices, dims, b, policy)
    if dropped is not None and 0 in dims:
        return full_of_fill(out_shape, data.dtype, policy)
    batch, per_batch = prod(data.shape[:b]), prod(indices.shape[b:-1])
    rows = flat_rows(idx, dims).reshape(batch, per_batch)
    slice_size = prod(data.shape[b + k :])
    if batch > 1:
        # Rows of batch i are offset into the whole flattened data, so one np.take serves every batch: it is much
        # faster than the broadcast fancy indexing of take_along_axis.
        rows = rows + (np.arange(batch, dtype=np.int64) * prod(dims))[:, None]
    out = np.take(data.reshape(batch * prod(dims), slice_size), rows.reshape(-1), axis=0)
    out = out.reshape(batch, per_batch, slice_size)
    if dropped is not None:
        fill_dropped(out, dropped.any(axis=-1).reshape(batch, per_batch, 1), policy)
    return out.reshape(out_shape)


def reference(arrays: Mapping[str, np.ndarray], attrs: Mapping[str, Any], policy: Policy) -> np.ndarray:
    """The engine's entry (harness.reference.compute): GatherND-13 of the case's named inputs and attributes."""
    return gather_nd(arrays["data"], arrays["indices"], attrs["batch_dims"], policy)
