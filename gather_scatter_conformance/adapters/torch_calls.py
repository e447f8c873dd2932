"""The torch adapter's translation: a case (operator, variant, input shapes, attributes) -> one torch expression.

Expressions name the inputs ``data``, ``indices`` and ``updates`` and the module ``torch``, with attribute values
filled in, so they read (and paste) as the call a user would write. This module imports no framework.
"""

from __future__ import annotations

from typing import Any

from gather_scatter_conformance.adapters.attrs import InvalidAttribute, axis_index, batch_dims_count, required
from gather_scatter_conformance.adapters.base import Unsupported
from gather_scatter_conformance.adapters.emulation import tensor_scatter_axis
from gather_scatter_conformance.vocab import variants

COMPILE = "compile"  # the mode of the variants run through torch.compile
# torch has no TensorScatter: the KV-cache write users make is index_copy_ on the sequence dim (one position vector
# per batch here, computed by the harness; hence "emulated" in the name).
EMULATED_INDEX_COPY = "emulated.index_copy"
_EAGER: dict[str, tuple[str, ...]] = {
    "Gather": ("index_select", "indexing"),
    "GatherElements": ("gather", "take_along_dim"),
    "GatherND": ("indexing",),
    "ScatterElements": ("scatter", "scatter_reduce"),
    "ScatterND": ("index_put",),
    "Take": ("take", "index_select"),
    "TensorScatter": (EMULATED_INDEX_COPY,),
}
# Every eager variant, then the same ones under torch.compile, then the compiled ones with the indices a constant of
# the compiled function (index provenance, #40: ``index_select/compile_constant``), then compiled for symbolic
# shapes (dynamic=True, #40: ``index_select/compile_dynamic``); the first is the default.
VARIANTS: dict[str, tuple[str, ...]] = {
    op: eager + tuple(variants.join(v, COMPILE) for v in eager)
    + tuple(variants.twin(variants.join(v, COMPILE), kind) for kind in variants.TWIN_MODES for v in eager)
    for op, eager in _EAGER.items()
}

# ScatterElements reduction -> Tensor.scatter_reduce's name for it (docs: "sum", "prod", "mean", "amax", "amin").
SCATTER_REDUCE = {"add": "sum", "mul": "prod", "max": "amax", "min": "amin"}

Shapes = dict[str, tuple[int, ...]]


def expression(op: str, variant: str, shapes: Shapes, attrs: dict[str, Any], omit: tuple[str, ...] = ()) -> str:
    """The torch expression for ``op`` in eager ``variant``; raise Unsupported where torch's API cannot say it.

    Attributes in ``omit`` are left out as a user relying on the default would: torch.take is always flat,
    ``data[indices]`` indexes the first dim, and index_select / gather / scatter* have no default dim (Unsupported).
    batch_dims is no torch argument, so leaving it out is the unbatched spelling.
    """
    omit_axis = "axis" in omit
    batch_dims = 0 if "batch_dims" in omit else int(attrs.get("batch_dims", 0))
    if op == "Gather":
        if variant == "index_select":
            if batch_dims_count(batch_dims, len(shapes["indices"])) != 0:
                raise Unsupported("torch.index_select has no batch_dims (see the 'indexing' variant)")
            if omit_axis:
                raise required("torch.index_select(input, dim, index)")
            return index_select(int(attrs["axis"]), len(shapes["indices"]))
        if omit_axis:
            if batch_dims_count(batch_dims, len(shapes["indices"])) != 0:
                raise required(f"advanced indexing with batch_dims={batch_dims} (indices at a stated dim)")
            return "data[indices]"
        return gather_indexing(int(attrs["axis"]), batch_dims, shapes)
    if op == "Take":
        if attrs["mode"] != "raise":
            raise Unsupported(f"torch.take / torch.index_select have no mode={attrs['mode']!r} "
                              "(out-of-range indices raise)")
        axis = None if omit_axis else attrs["axis"]
        if variant == "take":  # torch.take has no dim: it always reads the flattened input
            if axis is not None:
                raise Unsupported(f"torch.take has no dim (it indexes the flattened input); axis={axis} is the "
                                  "'index_select' variant's")
            return "torch.take(data, indices)"
        if omit_axis:
            raise required("torch.index_select(input, dim, index)")
        if axis is None:
            raise Unsupported("torch.index_select needs a dim; Take with axis=None (flattened) is torch.take's")
        return index_select(int(axis), len(shapes["indices"]))
    if op == "GatherElements":
        if variant == "take_along_dim":
            if omit_axis:  # without dim, take_along_dim reads the flattened input: no GatherElements default
                raise required("torch.take_along_dim(input, indices, dim)")
            return f"torch.take_along_dim(data, indices, dim={int(attrs['axis'])})"
        if omit_axis:
            raise required("torch.gather(input, dim, index)")
        return f"torch.gather(data, {int(attrs['axis'])}, indices)"
    if op == "GatherND":
        return gather_nd(batch_dims, len(shapes["indices"]))
    if op == "ScatterElements":
        return scatter_elements(variant, None if omit_axis else int(attrs["axis"]), attrs["reduction"])
    if op == "ScatterND":
        return scatter_nd(attrs["reduction"])
    if op == "TensorScatter":
        return tensor_scatter(shapes, attrs)
    raise ValueError(f"unknown operator {op!r}")


def index_select(axis: int, indices_rank: int) -> str:
    """torch.index_select along ``axis``. It takes 1-D indices only (a 0-d index keeps its dim), so other ranks are
    flattened and the output reshaped to data.shape[:axis] + indices.shape + data.shape[axis+1:], as users do."""
    if indices_rank == 1:
        return f"torch.index_select(data, {axis}, indices)"
    tail = "" if axis == -1 else f" + data.shape[{axis + 1}:]"
    return f"torch.index_select(data, {axis}, indices.reshape(-1)).reshape(data.shape[:{axis}] + indices.shape{tail})"


def _subscript(axis: int, index: str) -> str:
    """``data[:, :, index]`` for axis 2, ``data[..., index, :]`` for axis -2 (the way users spell it)."""
    if axis >= 0:
        return "data[" + ":, " * axis + index + "]"
    return "data[..., " + index + ", :" * (-axis - 1) + "]"


def _arange(dim: int, trailing: int) -> str:
    """An arange over data's dim ``dim``, shaped to broadcast against ``trailing`` more dims."""
    shape = ", ".join(["-1"] + ["1"] * trailing)
    return f"torch.arange(data.shape[{dim}]).reshape({shape})"


def gather_indexing(axis: int, batch_dims: int, shapes: Shapes) -> str:
    """Gather as advanced indexing ``data[:, ..., indices]``. torch has no batch_dims; a user writes batched gathers
    with aranges over every dim before ``axis`` and places the indices over the batch dims and at ``axis``."""
    rank, q = len(shapes["data"]), len(shapes["indices"])
    if batch_dims_count(batch_dims, q) == 0:
        return _subscript(axis, "indices")
    ax = axis_index(axis, rank)
    b = batch_dims_count(batch_dims, q, ax)
    lead = ax + q - b  # dims of the broadcast index: data.shape[:ax] + indices.shape[b:]
    grid = [_arange(i, lead - 1 - i) for i in range(ax)]
    idx = "indices"
    if ax > b:  # leave room for the data dims between the batch dims and axis
        ones = "(1,)" if ax - b == 1 else f"(1,) * {ax - b}"
        idx = f"indices.reshape(indices.shape[:{b}] + {ones} + indices.shape[{b}:])"
    return "data[" + ", ".join([*grid, idx]) + "]"


def gather_nd(batch_dims: int, indices_rank: int) -> str:
    """GatherND as ``data[tuple(indices.unbind(-1))]``, with batch aranges in front for batch_dims."""
    if batch_dims == 0:
        return "data[tuple(indices.unbind(-1))]"
    if not 0 < batch_dims < indices_rank:
        raise InvalidAttribute(f"batch_dims={batch_dims} is out of range for GatherND with indices of rank "
                               f"{indices_rank} (valid: [0, {indices_rank - 1}])")
    grid = ", ".join(_arange(i, indices_rank - 2 - i) for i in range(batch_dims))
    comma = "," if batch_dims == 1 else ""  # a one-element tuple needs its comma
    return f"data[({grid}{comma}) + tuple(indices.unbind(-1))]"


def scatter_elements(variant: str, axis: int | None, reduction: str) -> str:
    """ScatterElements: Tensor.scatter (none), scatter_add (add), scatter_reduce (the other reductions; the
    'scatter_reduce' variant uses it for add too). include_self=True: ONNX combines with the data's value.
    ``axis`` None: the case omits it, and none of these has a default dim."""
    if variant == "scatter":
        if reduction in ("none", "add") and axis is None:
            raise required(f"Tensor.{'scatter' if reduction == 'none' else 'scatter_add'}(dim, index, src)")
        if reduction == "none":
            return f"data.scatter({axis}, indices, updates)"
        if reduction == "add":
            return f"data.scatter_add({axis}, indices, updates)"
    elif reduction == "none":
        raise Unsupported("Tensor.scatter_reduce has no plain assignment (reduce is sum|prod|mean|amax|amin); "
                          "the 'scatter' variant uses Tensor.scatter")
    if axis is None:
        raise required("Tensor.scatter_reduce(dim, index, src, reduce)")
    return f"data.scatter_reduce({axis}, indices, updates, reduce={SCATTER_REDUCE[reduction]!r}, include_self=True)"


def scatter_nd(reduction: str) -> str:
    """ScatterND as Tensor.index_put with the index tuples unbound: accumulate=False assigns, True adds."""
    if reduction not in ("none", "add"):
        raise Unsupported(f"Tensor.index_put only assigns or adds (accumulate=True); no reduction={reduction!r}")
    return f"data.index_put(tuple(indices.unbind(-1)), updates, accumulate={reduction == 'add'})"


def tensor_scatter(shapes: Shapes, attrs: dict[str, Any]) -> str:
    """TensorScatter as ``Tensor.index_copy`` on each batch's sequence dim, stacked. The positions are computed as a
    KV-cache update computes them: write index + arange(sequence_length), in circular mode ``% max_sequence_length``
    (torch's ``%`` is the floor modulo); absent write indices start every batch at 0. What index_copy does with a
    position outside the cache (negative, past the end) is torch's answer. An empty batch is the cache itself."""
    axis = tensor_scatter_axis(shapes, int(attrs["axis"]))
    start = "indices[b] + " if "indices" in shapes else ""
    # device= as a KV-cache update writes it: torch.compile ignores the torch.device('cuda') context the GPU runs
    # use for factory calls (pytorch#151202), and the arange stayed on the CPU (the H200 run of 2026-11-28)
    pos = f"{start}torch.arange(updates.shape[{axis}], device=updates.device)"
    if attrs["mode"] == "circular":
        pos = f"({pos}) % data.shape[{axis}]"
    rows = f"data[b].index_copy({axis - 1}, {pos}, updates[b])"
    return f"torch.stack([{rows} for b in range(data.shape[0])]) if data.shape[0] else data.clone()"
