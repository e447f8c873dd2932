"""The PaddlePaddle adapter's translation: a case (operator, variant, input shapes, attributes) -> one paddle call.

Expressions name the inputs ``data``, ``indices`` and ``updates`` and the module ``paddle``, with attribute values
(and, where a call reshapes, the shapes) filled in as literals, so they read and paste as the call a user writes.
This module imports no framework: :func:`function` is handed the paddle module.

:func:`function` turns an expression into a real ``def`` whose source is registered with :mod:`linecache`, because
``paddle.jit.to_static`` (and so ``paddle.jit.save``, the first step of paddle -> paddle2onnx) reads the source of
the function it converts and refuses lambdas ("could not get source code"). The function is a pure function of
paddle tensors, one argument per input, attributes bound, traceable by ``paddle.jit.to_static`` with one
``paddle.static.InputSpec`` per argument (``full_graph=True``).
"""

from __future__ import annotations

import hashlib
import linecache
from collections.abc import Callable
from typing import Any

from gather_scatter_conformance.adapters.attrs import batch_dims_count, required, valid_axis
from gather_scatter_conformance.adapters.base import Unsupported
from gather_scatter_conformance.vocab import variants

STATIC = "static"  # the mode of the variants run through paddle.jit.to_static (a static graph, PIR interpreter)
_DYNAMIC: dict[str, tuple[str, ...]] = {
    "Gather": ("gather", "index_select"),
    "GatherElements": ("take_along_axis", "gather"),
    "GatherND": ("gather_nd",),
    "ScatterElements": ("put_along_axis", "scatter"),
    "ScatterND": ("index_put", "scatter_nd_add", "scatter"),
    "Take": ("take", "gather"),
}
# Every dynamic-graph (eager) variant, then the same calls under paddle.jit.to_static; the first is the default.
VARIANTS: dict[str, tuple[str, ...]] = {
    op: dyn + tuple(variants.join(v, STATIC) for v in dyn) for op, dyn in _DYNAMIC.items()
}

# ONNX reduction -> put_along_axis's reduce (docs: 'assign', 'add', 'mul'/'multiply', 'mean', 'amin', 'amax').
PUT_REDUCE = {"none": "assign", "add": "add", "mul": "mul", "max": "amax", "min": "amin"}

Shapes = dict[str, tuple[int, ...]]


def arg_names(op: str) -> tuple[str, ...]:
    """The inputs of ``op``'s function, in order: ``data, indices`` and, for the scatters, ``updates``."""
    return ("data", "indices", "updates") if op.startswith("Scatter") else ("data", "indices")


def expression(op: str, variant: str, shapes: Shapes, attrs: dict[str, Any], omit: tuple[str, ...] = ()) -> str:
    """The paddle expression for ``op`` in ``variant`` (its ``/static`` twin has the same one); raise Unsupported
    where paddle's API cannot say the case.

    Attributes in ``omit`` are left out as a user relying on the default would: ``paddle.gather`` and
    ``paddle.index_select`` default to axis 0, ``paddle.take`` is always flat; take_along_axis, put_along_axis and
    the PyTorch-style ``paddle.gather(data, dim, index)`` / ``paddle.scatter(data, dim, index, src)`` need one.
    batch_dims is no paddle argument, so leaving it out is the unbatched spelling.
    """
    base = variants.split(variant)[0]
    if variant not in VARIANTS.get(op, ()):
        raise ValueError(f"paddle has no variant {variant!r} for {op}; known: {', '.join(VARIANTS.get(op, ()))}")
    omit_axis = "axis" in omit
    if op == "Gather":
        b = 0 if "batch_dims" in omit else int(attrs.get("batch_dims", 0))
        if batch_dims_count(b, len(shapes["indices"])) != 0:
            raise Unsupported(f"paddle.{base} has no batch_dims")
        return _select(base, shapes, None if omit_axis else int(attrs["axis"]))
    if op == "Take":
        mode, axis = attrs["mode"], None if omit_axis else attrs["axis"]
        if base == "take":
            # On 1-D data, axis 0 (or -1) reads the same elements as the flattened input: paddle.take says it.
            if axis is not None and not (len(shapes["data"]) == 1 and int(axis) in (0, -1)):
                raise Unsupported(f"paddle.take has no axis (it reads the input flattened); axis={axis} is the "
                                  "'gather' variant's")
            if mode not in ("raise", "wrap", "clip"):
                raise Unsupported(f"paddle.take has no mode={mode!r} (modes: raise, wrap, clip)")
            return f"paddle.take(data, indices, mode={mode!r})"
        if mode != "raise":
            raise Unsupported(f"paddle.gather has no mode={mode!r} (it checks the index range)")
        if axis is None and not omit_axis:
            raise Unsupported("paddle.gather needs an axis; Take with axis=None (flattened) is paddle.take's")
        return _select("gather", shapes, None if omit_axis else int(axis))
    if op == "GatherElements":
        if base == "take_along_axis":
            if omit_axis:
                raise required("paddle.take_along_axis(arr, indices, axis)")
            return f"paddle.take_along_axis(data, indices, axis={int(attrs['axis'])})"
        if omit_axis:
            raise required("paddle.gather(input, dim, index)")
        return f"paddle.gather(data, {int(attrs['axis'])}, indices)"
    if op == "GatherND":
        b = 0 if "batch_dims" in omit else int(attrs.get("batch_dims", 0))
        if b != 0:
            raise Unsupported("paddle.gather_nd has no batch_dims")
        return "paddle.gather_nd(data, indices)"
    if op == "ScatterElements":
        return _scatter_elements(base, shapes, None if omit_axis else int(attrs["axis"]), attrs["reduction"])
    if op == "ScatterND":
        return _scatter_nd(base, shapes, attrs["reduction"])
    raise ValueError(f"unknown operator {op!r}")


def _shape(shape: tuple[int, ...] | list[int]) -> str:
    return "[" + ", ".join(str(int(s)) for s in shape) + "]"


def _select(api: str, shapes: Shapes, axis: int | None) -> str:
    """``paddle.gather`` / ``paddle.index_select`` along ``axis`` (None: the API's default, 0).

    paddle.gather takes 0-d or 1-D indices (a 0-d index drops the dim), index_select 1-D only; other ranks are
    flattened and the output reshaped to data.shape[:axis] + indices.shape + data.shape[axis+1:], as users do.
    """
    data, idx = shapes["data"], shapes["indices"]
    kw = "" if axis is None else f", axis={axis}"
    if len(idx) == 1 or (api == "gather" and len(idx) == 0):
        return f"paddle.{api}(data, indices{kw})"
    ax = valid_axis(0 if axis is None else axis, len(data))
    call = f"paddle.{api}(data, indices.reshape([-1]){kw})"
    if ax is None:  # an invalid axis: paddle judges it, there is no output shape to restore
        return call
    return f"{call}.reshape({_shape([*data[:ax], *idx, *data[ax + 1:]])})"


def _scatter_elements(api: str, shapes: Shapes, axis: int | None, reduction: str) -> str:
    """ScatterElements as ``paddle.put_along_axis`` (reduce per PUT_REDUCE, include_self's default True: ONNX
    combines with the data's value) or the PyTorch-style ``paddle.scatter(data, dim, index, src, reduce=...)``,
    which is put_along_axis with broadcast=False. ``axis`` None: the case omits it; neither has a default."""
    reduce = PUT_REDUCE[reduction]
    extra = "" if reduce == "assign" else f", reduce={reduce!r}"
    if api == "put_along_axis":
        if axis is None:
            raise required("paddle.put_along_axis(arr, indices, values, axis)")
        return f"paddle.put_along_axis(data, indices, updates, axis={axis}{extra})"
    if axis is None:
        raise required("paddle.scatter(input, dim, index, src)")
    return f"paddle.scatter(data, {axis}, indices, updates{extra})"


def _scatter_nd(api: str, shapes: Shapes, reduction: str) -> str:
    """ScatterND as ``paddle.index_put`` (the index columns unbound; accumulate=False assigns, True adds),
    ``paddle.scatter_nd_add`` (add only) or the row scatter ``paddle.scatter`` (indices of last dim 1 only:
    overwrite=True assigns; overwrite=False zeroes the rows before summing, which no ONNX reduction does)."""
    if api == "index_put":
        if reduction not in ("none", "add"):
            raise Unsupported(f"paddle.index_put only assigns or adds (accumulate=True); no reduction={reduction!r}")
        return f"paddle.index_put(data, tuple(indices.unbind(-1)), updates, accumulate={reduction == 'add'})"
    if api == "scatter_nd_add":
        if reduction != "add":
            raise Unsupported(f"paddle.scatter_nd_add only adds; reduction={reduction!r} is another API's")
        return "paddle.scatter_nd_add(data, indices, updates)"
    if reduction != "none":
        raise Unsupported(f"paddle.scatter assigns (overwrite=True) or replaces rows by the sum of their updates "
                          f"(overwrite=False); no reduction={reduction!r}")
    idx, data, upd = shapes["indices"], shapes["data"], shapes["updates"]
    if len(idx) == 0 or idx[-1] != 1 or len(data) == 0:
        raise Unsupported("paddle.scatter updates whole rows of axis 0: it needs indices of shape [..., 1]")
    if len(idx) == 2:
        return "paddle.scatter(data, indices.reshape([-1]), updates)"
    rows = 1
    for s in idx[:-1]:
        rows *= int(s)
    if len(upd) != len(idx) - 1 + len(data) - 1:  # not the ScatterND shape: paddle judges the updates as given
        return "paddle.scatter(data, indices.reshape([-1]), updates)"
    return f"paddle.scatter(data, indices.reshape([-1]), updates.reshape({_shape([rows, *data[1:]])}))"


def function(paddle: Any, op: str, variant: str, shapes: Shapes, attrs: dict[str, Any],
             omit: tuple[str, ...] = ()) -> tuple[tuple[str, ...], Callable[..., Any]]:
    """``(arg_names, fn)``: the dynamic-graph function of ``variant``'s call (its ``/static`` twin: the same one),
    a pure function of paddle tensors named ``arg_names`` with the attributes bound. It can be handed to
    ``paddle.jit.to_static(fn, input_spec=[InputSpec per argument], full_graph=True)`` and ``paddle.jit.save``.
    Raises Unsupported as :func:`expression` does."""
    names = arg_names(op)
    return names, define(paddle, expression(op, variant, shapes, attrs, omit), names)


def define(paddle: Any, expr: str, names: tuple[str, ...]) -> Callable[..., Any]:
    """``def fn(<names>): return <expr>`` with only ``paddle`` in its namespace, its source findable by inspect."""
    src = f"def fn({', '.join(names)}):\n    return {expr}\n"
    # One file name per source: linecache keeps it for inspect.getsource (paddle.jit.to_static reads it). A digest,
    # not hash(): paddle's errors quote the name, and a record must not change with the process's hash seed.
    filename = f"<paddle_calls:{hashlib.sha256(src.encode()).hexdigest()[:12]}>"
    linecache.cache[filename] = (len(src), None, src.splitlines(True), filename)
    namespace: dict[str, Any] = {"paddle": paddle}
    # Safe to exec: the expression is built above from fixed text plus integers, shapes and reduction names that
    # were validated, never from strings taken out of a case file.
    exec(compile(src, filename, "exec"), namespace)
    return namespace["fn"]
