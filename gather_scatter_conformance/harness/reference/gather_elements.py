"""GatherElements (ONNX GatherElements-13)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from gather_scatter_conformance.harness.reference.indices import (
    fast_path_ok,
    fill_dropped,
    full_of_fill,
    normalize_axis,
    resolve,
)
from gather_scatter_conformance.harness.reference.policy import InvalidInput, Policy


def check_elementwise_shapes(data: np.ndarray, indices: np.ndarray, axis: int) -> None:
    """Raise InvalidInput unless indices has data's rank and is no larger than data outside ``axis``."""
    if data.ndim == 0:
        raise InvalidInput("data must have rank >= 1")
    if indices.ndim != data.ndim:
        raise InvalidInput(f"indices rank {indices.ndim} differs from data rank {data.ndim}")
    for d, (n_i, n_d) in enumerate(zip(indices.shape, data.shape, strict=True)):
        if d != axis and n_i > n_d:
            raise InvalidInput(
                f"indices.shape[{d}]={n_i} exceeds data.shape[{d}]={n_d} (only the axis dim may be larger)"
            )


def gather_elements(data: np.ndarray, indices: np.ndarray, axis: Any, policy: Policy) -> np.ndarray:
    """``out[p] = data[p with p[axis] replaced by indices[p]]``; the output has the shape of ``indices``.

    indices must have data's rank; outside ``axis`` its dims may be smaller than data's (the leading part of
    data is used, as in PyTorch's gather) but not larger. Raises InvalidInput / IndexOutOfRange.
    """
    if data.ndim == 0:
        raise InvalidInput("data must have rank >= 1")
    axis = normalize_axis(axis, data.ndim)
    check_elementwise_shapes(data, indices, axis)
    view = data[tuple(slice(None) if d == axis else slice(0, n) for d, n in enumerate(indices.shape))]
    if fast_path_ok(indices, policy):
        try:
            return np.take_along_axis(view, indices, axis=axis)
        except IndexError:
            pass
    idx, dropped = resolve(indices, data.shape[axis], axis, policy)
    if dropped is None:
        return np.take_along_axis(view, idx, axis=axis)
    if data.shape[axis] == 0:
        return full_of_fill(indices.shape, data.dtype, policy)
    return fill_dropped(np.take_along_axis(view, idx, axis=axis), dropped, policy)


def reference(arrays: Mapping[str, np.ndarray], attrs: Mapping[str, Any], policy: Policy) -> np.ndarray:
    """The engine's entry (harness.reference.compute): GatherElements-13 of the case's named inputs and attributes."""
    return gather_elements(arrays["data"], arrays["indices"], attrs["axis"], policy)
