"""Gather (ONNX Gather-13) with TensorFlow/OpenVINO-style ``batch_dims``."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from gather_scatter_conformance.harness.reference.indices import (
    check_int_attr,
    fast_path_ok,
    fill_dropped,
    full_of_fill,
    normalize_axis,
    prod,
    resolve,
)
from gather_scatter_conformance.harness.reference.policy import InvalidInput, Policy


def gather(data: np.ndarray, indices: np.ndarray, axis: Any, batch_dims: Any, policy: Policy) -> np.ndarray:
    """Gather slices of ``data`` along ``axis``: output shape is
    ``data.shape[:axis] + indices.shape[batch_dims:] + data.shape[axis+1:]``.

    With ``batch_dims = b > 0`` the first b dims of data and indices must be equal and batch i of the output
    reads only from batch i of data. Negative ``batch_dims`` counts from the indices rank; ``b <= axis``.
    Raises InvalidInput for bad axis/batch_dims/shapes, IndexOutOfRange per ``policy``.
    """
    axis = normalize_axis(axis, data.ndim)
    given = check_int_attr(batch_dims, "batch_dims")
    b = given + indices.ndim if given < 0 else given
    if not 0 <= b <= indices.ndim:
        raise InvalidInput(f"batch_dims={given} is out of range for indices of rank {indices.ndim}")
    if b > axis:
        raise InvalidInput(f"batch_dims={b} must not exceed axis={axis}")
    if data.shape[:b] != indices.shape[:b]:
        raise InvalidInput(
            f"batch dims differ: data.shape[:{b}]={data.shape[:b]} but indices.shape[:{b}]={indices.shape[:b]}"
        )
    if b == 0:
        return take_along(data, indices, axis, policy)

    out_shape = data.shape[:axis] + indices.shape[b:] + data.shape[axis + 1 :]
    size = data.shape[axis]
    batch, inner, outer = prod(data.shape[:b]), prod(data.shape[b:axis]), prod(data.shape[axis + 1 :])
    per_batch = prod(indices.shape[b:])
    # Size-1 inner/outer dims are dropped: take_along_axis is markedly faster on fewer broadcast dims.
    data_dims = [batch] + [inner] * (inner != 1) + [size] + [outer] * (outer != 1)
    index_dims = [batch] + [1] * (inner != 1) + [per_batch] + [1] * (outer != 1)
    along = 1 + (inner != 1)
    data_r = data.reshape(data_dims)
    if fast_path_ok(indices, policy):
        try:  # fancy indexing has the canonical rules itself, and raises before writing anything
            return np.take_along_axis(data_r, indices.reshape(index_dims), axis=along).reshape(out_shape)
        except IndexError:
            pass
    idx, dropped = resolve(indices, size, axis, policy)
    if dropped is not None and size == 0:
        return full_of_fill(out_shape, data.dtype, policy)
    out = np.take_along_axis(data_r, idx.reshape(index_dims), axis=along)
    if dropped is not None:
        fill_dropped(out, dropped.reshape(index_dims), policy)
    return out.reshape(out_shape)


def take_along(data: np.ndarray, indices: np.ndarray, axis: int, policy: Policy) -> np.ndarray:
    """np.take(data, indices, axis) with ``policy`` applied to the index values (``axis`` already normalised)."""
    if fast_path_ok(indices, policy):
        try:
            # In-range indices (the common case) cost one np.take; NumPy raises before writing anything otherwise.
            return _array(np.take(data, indices, axis=axis), data.dtype)
        except IndexError:
            pass
    idx, dropped = resolve(indices, data.shape[axis], axis, policy)
    if dropped is None:
        return _array(np.take(data, idx, axis=axis), data.dtype)
    out_shape = data.shape[:axis] + indices.shape + data.shape[axis + 1 :]
    if data.shape[axis] == 0:
        return full_of_fill(out_shape, data.dtype, policy)
    out = _array(np.take(data, idx, axis=axis), data.dtype)
    mask_shape = (1,) * axis + indices.shape + (1,) * (data.ndim - axis - 1)
    return fill_dropped(out, dropped.reshape(mask_shape), policy)


def _array(result: object, dtype: np.dtype) -> np.ndarray:
    # np.take with 0-d indices on 1-D data returns a scalar (a bare str for object arrays); keep the dtype.
    return result if isinstance(result, np.ndarray) else np.array(result, dtype=dtype)


def reference(arrays: Mapping[str, np.ndarray], attrs: Mapping[str, Any], policy: Policy) -> np.ndarray:
    """The engine's entry (harness.reference.compute): Gather-13 (with batch_dims) of the case's named inputs and
    attributes."""
    return gather(arrays["data"], arrays["indices"], attrs["axis"], attrs["batch_dims"], policy)
