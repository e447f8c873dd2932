"""How each operator is written in TensorFlow: the call as a user would type it, and a function of tensors.

This module imports no framework itself; the builders receive the ``tensorflow`` module. Each builder returns a
:class:`Spec` whose ``fn`` is a plain Python function of tensors, so the adapter can run it eagerly or wrap it
in ``tf.function`` (optionally with XLA) without any change to what is computed.

Every builder takes ``omit``, the attributes the case leaves to TensorFlow's own default (the default-axis probe):
they are left out of the call and its text; where the API has no default the builder raises Unsupported.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from gather_scatter_conformance.adapters.attrs import required
from gather_scatter_conformance.adapters.base import Unsupported, fmt_attrs
from gather_scatter_conformance.adapters.emulation import tensor_scatter_axis

# The tensor_scatter_nd_* function per ONNX reduction; TensorFlow has no multiplying variant.
SCATTER_FN = {"none": "update", "add": "add", "max": "max", "min": "min"}
NO_MUL = (
    "TensorFlow has no multiplying scatter: tf.tensor_scatter_nd_* exists only as update/add/sub/min/max,"
    " so reduction='mul' cannot be expressed"
)
TNP = "tf.experimental.numpy"
EMULATED_SCATTER = "emulated.tensor_scatter_nd_update"  # TensorScatter through computed coordinates


@dataclass
class Spec:
    """One native call: ``body`` is what a user types (``prelude`` statements, if any, come first)."""

    args: tuple[str, ...]  # the input names the call takes, in order
    body: str  # the call expression, with attribute values filled in
    fn: Callable[..., Any]  # the same call as a function of tensors named by ``args``
    prelude: str = ""  # statements that must run before ``body`` (the ScatterElements coordinate grid)


def _kwargs(attrs: dict[str, Any], omit: tuple[str, ...], *names: str) -> dict[str, Any]:
    """The named attributes that are not omitted (axis None stays None: it is a value, not an omission)."""
    return {n: attrs[n] if attrs[n] is None else int(attrs[n]) for n in names if n not in omit}


def gather(tf: Any, attrs: dict[str, Any], omit: tuple[str, ...] = ()) -> Spec:
    """Gather -> tf.gather(data, indices, axis=, batch_dims=): TensorFlow's own batch_dims, negative ones too.

    An omitted axis defaults to batch_dims (the first non-batch dimension); an omitted batch_dims to 0."""
    kw = _kwargs(attrs, omit, "axis", "batch_dims")
    return Spec(
        ("data", "indices"),
        f"tf.gather(data, indices{', ' if kw else ''}{fmt_attrs(**kw)})",
        lambda data, indices: tf.gather(data, indices, **kw),
    )


def take(tf: Any, attrs: dict[str, Any], omit: tuple[str, ...] = ()) -> Spec:
    """Take -> tf.experimental.numpy.take(data, indices, axis=, mode=) for modes 'clip' and 'wrap'.

    tnp.take accepts mode 'raise' in its signature but raises ValueError("The 'raise' mode to take is not
    supported.") for it, and has no 'fill': both are Unsupported here (the gather/* variants take 'raise').
    """
    axis, mode = attrs["axis"], attrs["mode"]
    if mode == "raise":
        raise Unsupported(
            f"{TNP}.take rejects mode='raise' (ValueError: The 'raise' mode to take is not supported);"
            " Take with mode='raise' is run by the gather/* variants"
        )
    if mode not in ("clip", "wrap"):
        raise Unsupported(f"{TNP}.take has no mode={mode!r} (modes: 'clip', 'wrap'; 'raise' is rejected)")
    tnp = tf.experimental.numpy
    kw = {"mode": mode} if "axis" in omit else {"axis": axis, "mode": mode}  # tnp.take's default axis=None flattens
    return Spec(
        ("data", "indices"),
        f"{TNP}.take(data, indices, {fmt_attrs(**kw)})",
        lambda data, indices: tnp.take(data, indices, **kw),
    )


def take_as_gather(tf: Any, attrs: dict[str, Any], omit: tuple[str, ...] = ()) -> Spec:
    """Take with mode='raise' -> tf.gather (which raises on out-of-range indices on CPU); axis None flattens first.

    An omitted axis is tf.gather's own default (batch_dims, here 0), not Take's flattening."""
    axis, mode = attrs["axis"], attrs["mode"]
    if mode != "raise":
        raise Unsupported(
            f"tf.gather has no mode argument, so only Take mode='raise' maps to it; mode={mode!r} is"
            + (" run by the take/* variants (tf.experimental.numpy.take)" if mode in ("clip", "wrap") else " not")
        )
    if "axis" in omit:
        return Spec(("data", "indices"), "tf.gather(data, indices)", lambda data, indices: tf.gather(data, indices))
    if axis is None:
        return Spec(
            ("data", "indices"),
            "tf.gather(tf.reshape(data, [-1]), indices)",
            lambda data, indices: tf.gather(tf.reshape(data, [-1]), indices),
        )
    axis = int(axis)
    return Spec(
        ("data", "indices"),
        f"tf.gather(data, indices, axis={axis})",
        lambda data, indices: tf.gather(data, indices, axis=axis),
    )


def take_along_axis(tf: Any, attrs: dict[str, Any], omit: tuple[str, ...] = ()) -> Spec:
    """GatherElements -> tf.experimental.numpy.take_along_axis(data, indices, axis=) (axis has no default)."""
    if "axis" in omit:
        raise required(f"{TNP}.take_along_axis")
    axis = int(attrs["axis"])
    tnp = tf.experimental.numpy
    return Spec(
        ("data", "indices"),
        f"{TNP}.take_along_axis(data, indices, axis={axis})",
        lambda data, indices: tnp.take_along_axis(data, indices, axis=axis),
    )


def gather_nd(tf: Any, attrs: dict[str, Any], omit: tuple[str, ...] = ()) -> Spec:
    """GatherND -> tf.gather_nd(data, indices, batch_dims=) (an omitted batch_dims defaults to 0)."""
    kw = _kwargs(attrs, omit, "batch_dims")
    return Spec(
        ("data", "indices"),
        f"tf.gather_nd(data, indices{', ' if kw else ''}{fmt_attrs(**kw)})",
        lambda data, indices: tf.gather_nd(data, indices, **kw),
    )


def tensor_scatter_nd(tf: Any, attrs: dict[str, Any], omit: tuple[str, ...] = ()) -> Spec:
    """ScatterND -> tf.tensor_scatter_nd_{update,add,max,min}(data, indices, updates)."""
    name = _scatter_name(attrs["reduction"])
    scatter = getattr(tf, name)
    return Spec(
        ("data", "indices", "updates"),
        f"tf.{name}(data, indices, updates)",
        lambda data, indices, updates: scatter(data, indices, updates),
    )


def scatter_elements(tf: Any, attrs: dict[str, Any], omit: tuple[str, ...] = ()) -> Spec:
    """ScatterElements -> tf.tensor_scatter_nd_* with the full coordinate of every element of ``indices``.

    TensorFlow has no element-wise scatter along an axis; users build coordinates from aranges over the
    indices' shape with ``indices`` itself on ``axis``. The aranges are cast to the indices' dtype (tf.stack
    needs one dtype; tf.range has no int16/uint kernels), so the scatter op alone decides which index dtypes
    it accepts; ``indices`` is never cast.
    """
    name = _scatter_name(attrs["reduction"])
    if "axis" in omit:  # the coordinates put indices on a stated axis: there is no default to fall back on
        raise required(f"tf.{name} with per-axis coordinates")
    scatter = getattr(tf, name)
    axis = int(attrs["axis"])

    def fn(data: Any, indices: Any, updates: Any) -> Any:
        coords = tf.meshgrid(*[tf.cast(tf.range(n), indices.dtype) for n in indices.shape], indexing="ij")
        coords[axis] = indices  # a list: an axis outside [-rank, rank-1] raises IndexError, as for a user
        return scatter(data, tf.stack(coords, axis=-1), updates)

    return Spec(
        ("data", "indices", "updates"),
        f"tf.{name}(data, tf.stack(coords, axis=-1), updates)",
        fn,
        prelude=(
            "coords = tf.meshgrid(*[tf.cast(tf.range(n), indices.dtype) for n in indices.shape], indexing='ij');"
            f" coords[{axis}] = indices"
        ),
    )


def scatter_nd(tf: Any, attrs: dict[str, Any], data: np.ndarray, indices: np.ndarray) -> Spec:
    """ScatterND -> tf.scatter_nd(indices, updates, shape=data.shape), where that computes the same thing.

    tf.scatter_nd has no data input: it scatters into zeros ("" for strings) and sums duplicate indices. So it
    expresses every ScatterND case with all-zero data and reduction 'none' or 'add'; the values go to TensorFlow
    unchanged, and what it does with duplicates, negative or out-of-range indices is measured.
    """
    reduction = attrs["reduction"]
    why = _scatter_nd_gap(reduction, data, indices)
    if why:
        raise Unsupported(f"tf.scatter_nd has no data input (it scatters into zeros, summing duplicates): {why}")
    shape = [int(n) for n in data.shape]
    return Spec(
        ("indices", "updates"),
        f"tf.scatter_nd(indices, updates, shape={shape})",
        lambda indices, updates: tf.scatter_nd(indices, updates, shape),
    )


def tensor_scatter(tf: Any, attrs: dict[str, Any], shapes: dict[str, tuple[int, ...]]) -> Spec:
    """TensorScatter -> tf.tensor_scatter_nd_update(data, coords, updates) with the coordinate of every update
    element computed as a KV-cache update computes it: its own, with write index + sequence position on ``axis``
    (``tf.math.floormod`` by max_sequence_length in circular mode). TensorFlow has no TensorScatter, so the variant
    is named an emulation. The coordinates take the write indices' dtype (as for ScatterElements), so the scatter
    alone decides which index dtypes it accepts and what it does with a position outside the cache."""
    axis = tensor_scatter_axis(shapes, int(attrs["axis"]))
    has_write = "indices" in shapes
    circular = attrs["mode"] == "circular"
    args = ("data", "updates", "indices") if has_write else ("data", "updates")
    start = "tf.reshape(indices, [-1] + [1] * (len(updates.shape) - 1))" if has_write else "0"

    def fn(data: Any, updates: Any, indices: Any = None) -> Any:
        dtype = indices.dtype if indices is not None else tf.int64
        coords = tf.meshgrid(*[tf.cast(tf.range(n), dtype) for n in updates.shape], indexing="ij")
        if indices is not None:
            coords[axis] = coords[axis] + tf.reshape(indices, [-1] + [1] * (len(updates.shape) - 1))
        if circular:
            coords[axis] = tf.math.floormod(coords[axis], tf.cast(data.shape[axis], dtype))
        return tf.tensor_scatter_nd_update(data, tf.stack(coords, axis=-1), updates)

    wrap = f"; coords[{axis}] = tf.math.floormod(coords[{axis}], data.shape[{axis}])" if circular else ""
    dtype = "indices.dtype" if has_write else "tf.int64"
    return Spec(
        args,
        "tf.tensor_scatter_nd_update(data, tf.stack(coords, axis=-1), updates)",
        fn,
        prelude=(f"coords = tf.meshgrid(*[tf.cast(tf.range(n), {dtype}) for n in updates.shape], indexing='ij');"
                 f" coords[{axis}] += {start}{wrap}"),
    )


def _scatter_name(reduction: str) -> str:
    if reduction == "mul":
        raise Unsupported(NO_MUL)
    if reduction not in SCATTER_FN:
        raise Unsupported(f"no tf.tensor_scatter_nd_* function for reduction={reduction!r}")
    return f"tensor_scatter_nd_{SCATTER_FN[reduction]}"


def _scatter_nd_gap(reduction: str, data: np.ndarray, indices: np.ndarray) -> str:
    """Why tf.scatter_nd cannot express this ScatterND case, or "" if it can: it has no data input, so it expresses
    every case whose data is all zeros ("" for strings) and whose reduction is 'none' or 'add'. With 'none' and a
    repeated index tuple it sums the updates: that is TensorFlow's documented behaviour, measured as such."""
    if reduction not in ("none", "add"):
        return f"reduction={reduction!r} needs the data values, only 'add' and 'none' fit"
    zero = "" if data.dtype == object else 0
    if not bool(np.all(data == zero)):
        return "data is not all zeros" if zero == 0 else "data is not all empty strings"
    return ""
