"""The Keras 3 adapter's translation: a case (operator, API, input shapes, attributes) -> one ``keras.ops`` expression.

Expressions name the inputs ``data``, ``indices`` and ``updates`` (the caller's NumPy arrays, as a Keras user passes
them) and the module ``keras``, with attribute values filled in, so they read (and paste) as the call a user would
write. The backend is not part of the expression: Keras chooses it once, at import (``KERAS_BACKEND``). This module
imports no framework.
"""

from __future__ import annotations

from math import prod
from typing import Any

import numpy as np

from gather_scatter_conformance.adapters.attrs import batch_dims_count
from gather_scatter_conformance.adapters.base import Unsupported

# The backends a variant can name, Keras's own default (no KERAS_BACKEND, no keras.json) first.
BACKENDS = ("tensorflow", "jax", "torch", "numpy")
# Operator -> the keras.ops functions that express it, the default first.
APIS: dict[str, tuple[str, ...]] = {
    "Gather": ("take",),
    "GatherElements": ("take_along_axis",),
    "ScatterND": ("scatter_update", "scatter", "slice_update"),
    "Take": ("take",),
}
# ONNX ScatterND reduction -> keras.ops.scatter_update's `reduction` (its docstring: None, "add", "max", "min", "mul").
REDUCTIONS = {"none": None, "add": "add", "max": "max", "min": "min", "mul": "mul"}


def expression(op: str, api: str, inputs: dict[str, np.ndarray], attrs: dict[str, Any],
               omit: tuple[str, ...] = ()) -> str:
    """The keras.ops expression for ``op`` through ``api``; Unsupported where that function cannot say the case.

    Attributes in ``omit`` are left out of the call, so Keras's own default applies (``axis=None``: the flattened
    input, for take and take_along_axis). batch_dims is no Keras argument: only batch_dims=0 is expressed.
    """
    axis = "" if "axis" in omit else f", axis={attrs.get('axis')!r}"
    if op == "Gather":
        batch_dims = 0 if "batch_dims" in omit else int(attrs.get("batch_dims", 0))
        if batch_dims_count(batch_dims, inputs["indices"].ndim) != 0:
            raise Unsupported(f"keras.ops.take has no batch_dims (batch_dims={batch_dims})")
        return f"keras.ops.take(data, indices{axis})"
    if op == "Take":
        # keras.ops.take (keras.ops.numpy.take) has no mode argument: it is NumPy's take, whose default is 'raise'.
        if attrs["mode"] != "raise":
            raise Unsupported(f"keras.ops.take has no mode argument (mode={attrs['mode']!r}); only NumPy's default, "
                              "'raise', is expressed")
        return f"keras.ops.take(data, indices{axis})"
    if op == "GatherElements":
        return f"keras.ops.take_along_axis(data, indices{axis})"
    if op == "ScatterND":
        return _scatter_nd(api, inputs, attrs["reduction"])
    raise ValueError(f"unknown operator {op!r}")


def _shape(shape: tuple[int, ...]) -> str:
    return "(" + ", ".join(map(str, shape)) + ("," if len(shape) == 1 else "") + ")"


def _rows(inputs: dict[str, np.ndarray]) -> tuple[str, str]:
    """(indices, updates) as keras.ops.scatter_update / scatter take them: indices of shape (N, k), updates of shape
    (N,) + data.shape[k:]. ONNX's (..., k) indices and their updates are reshaped so, as a user would; 2-D indices
    and updates already of that shape are passed as they are."""
    data, indices, updates = inputs["data"], inputs["indices"], inputs["updates"]
    k = indices.shape[-1] if indices.ndim else 0
    rows = prod(indices.shape[:-1])
    idx = "indices" if indices.ndim == 2 else f"indices.reshape(-1, {k})"
    want = (rows, *data.shape[k:])
    upd = "updates" if updates.shape == want else f"updates.reshape{_shape(want)}"
    return idx, upd


def _scatter_nd(api: str, inputs: dict[str, np.ndarray], reduction: str) -> str:
    """ScatterND through scatter_update (every reduction), scatter (documented as scatter_update of zeros: data all
    zeros, no reduction) or slice_update (one index tuple, no reduction: a slice of the update's shape)."""
    data, indices = inputs["data"], inputs["indices"]
    if indices.ndim == 0:
        raise Unsupported("ScatterND needs indices of rank >= 1")
    if api == "scatter_update":
        idx, upd = _rows(inputs)
        red = REDUCTIONS[reduction]
        return f"keras.ops.scatter_update(data, {idx}, {upd}" + ("" if red is None else f", reduction={red!r}") + ")"
    if reduction != "none":
        raise Unsupported(f"keras.ops.{api} has no reduction (reduction={reduction!r}); scatter_update's is the one")
    if api == "scatter":
        # Its docstring: "equivalent to zeros = keras.ops.zeros(shape); keras.ops.scatter_update(zeros, indices,
        # values)": it writes into zeros, so it expresses ScatterND only where data is all zeros.
        if data.dtype == object or np.any(data != 0):
            raise Unsupported("keras.ops.scatter writes into zeros of a given shape; data is not all zeros")
        idx, upd = _rows(inputs)
        return f"keras.ops.scatter({idx}, {upd}, {_shape(data.shape)})"
    if api == "slice_update":
        k = indices.shape[-1]
        if prod(indices.shape[:-1]) != 1:
            raise Unsupported("keras.ops.slice_update writes one contiguous slice: it expresses ScatterND only for "
                              f"one index tuple, not {prod(indices.shape[:-1])}")
        # The start indices are a list of ints (its docstring): the index tuple, then 0 for the sliced dims.
        start = [int(i) for i in indices.reshape(-1)] + [0] * (data.ndim - k)
        block = (1,) * k + data.shape[k:]
        upd = "updates" if inputs["updates"].shape == block else f"updates.reshape{_shape(block)}"
        return f"keras.ops.slice_update(data, {start!r}, {upd})"
    raise ValueError(f"unknown ScatterND api {api!r}")
