"""Take, after np.take / mxnet take / jnp.take: the ``mode`` attribute, not the policy, handles indices."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from gather_scatter_conformance.harness.reference.gather import _array, take_along
from gather_scatter_conformance.harness.reference.indices import normalize_axis
from gather_scatter_conformance.harness.reference.policy import InvalidInput, Policy
from gather_scatter_conformance.vocab.ops import TAKE_MODES

# What each mode does, expressed as a gather policy: raise = ONNX rules; wrap = mod s for every index;
# clip = clip into [0, s-1] (so -1 becomes 0, as in NumPy); fill = in-range negatives wrap, the rest is filled.
MODE_POLICIES = {
    "raise": Policy(out_of_bounds="error", negative="wrap"),
    "wrap": Policy(out_of_bounds="wrap", negative="oob"),
    "clip": Policy(out_of_bounds="clamp", negative="oob"),
    "fill": Policy(out_of_bounds="fill", negative="wrap"),
}


def take(data: np.ndarray, indices: np.ndarray, axis: Any, mode: Any) -> np.ndarray:
    """``np.take(data, indices, axis, mode)`` plus JAX's 'fill' mode.

    axis None takes from the flattened data (output shape = indices.shape); otherwise the output shape is
    ``data.shape[:axis] + indices.shape + data.shape[axis+1:]``. Modes: raise (valid range [-s, s-1], else
    IndexOutOfRange), wrap (mod s), clip (into [0, s-1]), fill (out of range gives NaN / most negative int /
    max unsigned / True / ""). Raises InvalidInput for an unknown mode or bad axis.
    """
    if mode not in TAKE_MODES:
        raise InvalidInput(f"mode={mode!r} is not one of {', '.join(TAKE_MODES)}")
    if axis is None:
        data, axis = data.reshape(-1), 0
    else:
        axis = normalize_axis(axis, data.ndim)
    if mode in ("wrap", "clip") and data.shape[axis] and (indices.dtype.kind == "i" or indices.dtype.itemsize < 8):
        # np.take's own wrap (index mod s) and clip (into [0, s-1], negatives to 0) are these modes exactly, with
        # no int64 copy of the indices; an empty axis and uint64 (which NumPy casts to intp) take the general path.
        return _array(np.take(data, indices, axis=axis, mode=mode), data.dtype)
    return take_along(data, indices, axis, MODE_POLICIES[mode])


def reference(arrays: Mapping[str, np.ndarray], attrs: Mapping[str, Any], policy: Policy) -> np.ndarray:
    """The engine's entry (harness.reference.compute): Take of the case's named inputs and attributes (its
    mode handles the indices; the policy is ignored)."""
    return take(arrays["data"], arrays["indices"], attrs["axis"], attrs["mode"])
