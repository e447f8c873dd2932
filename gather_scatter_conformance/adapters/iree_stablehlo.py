"""A case as a StableHLO module in MLIR text: one ``stablehlo.gather`` or ``stablehlo.scatter`` in ``func.func @main``.

This is what JAX and TensorFlow lower their gathers and scatters to. The translation follows the StableHLO spec
(https://openxla.org/stablehlo/spec#gather, #scatter): the ONNX operator becomes the op's dimension numbers, and the
case's indices are passed to it as they are. Where an ONNX operator indexes every dimension (GatherElements,
ScatterElements) or has batch dimensions (GatherND's and Gather's batch_dims), the other coordinates are
``stablehlo.iota`` tensors concatenated with the indices, as JAX builds them. Nothing is normalised: a negative or
out-of-range index reaches the op, whose spec clamps gather start indices and skips out-of-bound scatter updates.

Imports nothing beyond NumPy; the text is compiled by adapters/iree.py.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from gather_scatter_conformance.adapters.attrs import axis_index, batch_dims_count, required
from gather_scatter_conformance.adapters.base import CaseData, Unsupported

# NumPy dtype name -> MLIR element type (StableHLO's unsigned integers are ui<N>).
ELEMENT_TYPES = {
    "bool": "i1", "int8": "i8", "int16": "i16", "int32": "i32", "int64": "i64",
    "uint8": "ui8", "uint16": "ui16", "uint32": "ui32", "uint64": "ui64",
    "float16": "f16", "bfloat16": "bf16", "float32": "f32", "float64": "f64",
    "complex64": "complex<f32>", "complex128": "complex<f64>",
}
# ONNX reduction -> the op of the scatter's update computation (None: the update replaces the element).
UPDATE_OPS = {"none": None, "add": "stablehlo.add", "mul": "stablehlo.multiply", "max": "stablehlo.maximum",
              "min": "stablehlo.minimum"}
_TAKE_MODES = ("raise", "clip")  # stablehlo.gather clamps: Take's clip, and the mode that ONNX's Gather is


def element_type(arr: np.ndarray, name: str) -> str:
    """The MLIR element type of ``arr``; Unsupported for a dtype StableHLO has no type for (strings)."""
    kind = str(arr.dtype)
    if kind not in ELEMENT_TYPES:
        raise Unsupported(f"StableHLO has no element type for {name} of dtype {arr.dtype}")
    return ELEMENT_TYPES[kind]


def tensor_type(shape: tuple[int, ...], elem: str) -> str:
    """``tensor<2x3xf32>`` (``tensor<f32>`` for a scalar)."""
    return "tensor<" + "".join(f"{d}x" for d in shape) + elem + ">"


def _ints(values: list[int]) -> str:
    return "[" + ", ".join(map(str, values)) + "]"


@dataclass
class _Body:
    """A ``@main`` being written: its lines and a counter for fresh SSA names."""

    lines: list[str] = field(default_factory=list)
    count: int = 0

    def emit(self, text: str) -> str:
        """Append ``%vN = <text>`` and return ``%vN``."""
        name = f"%v{self.count}"
        self.count += 1
        self.lines.append(f"  {name} = {text}")
        return name


def _coordinates(body: _Body, indices: str, shape: tuple[int, ...], elem: str, dims: list[int | None]) -> str:
    """A tensor of shape ``shape + (len(dims),)``: for each entry of ``dims``, the indices (None) or the iota along
    that dimension of ``shape``, concatenated along the last (index vector) dimension."""
    one = tensor_type((*shape, 1), elem)
    reshaped = body.emit(f"stablehlo.reshape {indices} : ({tensor_type(shape, elem)}) -> {one}")
    parts = [reshaped if d is None else body.emit(f"stablehlo.iota dim = {d} : {one}") for d in dims]
    if len(parts) == 1:
        return parts[0]
    out = tensor_type((*shape, len(parts)), elem)
    return body.emit(f"stablehlo.concatenate {', '.join(parts)}, dim = {len(shape)} : "
                     f"({', '.join([one] * len(parts))}) -> {out}")


@dataclass
class Plan:
    """An ONNX operator as one StableHLO op: its start indices (built in ``body``) and dimension numbers."""

    body: _Body
    start: str  # the SSA value of the start indices
    start_shape: tuple[int, ...]
    index_vector_dim: int
    point_dims: list[int]  # start_index_map / scatter_dims_to_operand_dims; also collapsed / inserted dims
    out_shape: tuple[int, ...]  # the gather's result shape, or the scatter's updates shape
    window_dims: list[int]  # offset_dims / update_window_dims
    elem: str  # the indices' element type (the iotas share it)


def _gather_plan(case: CaseData, body: _Body, data_shape: tuple[int, ...]) -> Plan:
    a, op = case.attrs, case.op
    ishape = tuple(case.inputs["indices"].shape)
    ielem = element_type(case.inputs["indices"], "indices")
    r, q = len(data_shape), len(ishape)
    if op == "GatherElements":
        axis = axis_index(0 if "axis" in case.omit else int(a["axis"]), r)
        dims: list[int | None] = [None if d == axis else d for d in range(r)]
        start = _coordinates(body, "%indices", ishape, ielem, dims)
        return Plan(body, start, (*ishape, r), q, list(range(r)), ishape, [], ielem)
    if op == "GatherND":
        b = 0 if "batch_dims" in case.omit else int(a["batch_dims"])
        if not 0 <= b < q:
            raise ValueError(f"batch_dims={b} is out of range for GatherND with indices of rank {q}")
        k = ishape[-1]
        start = "%indices"
        if b:
            # the batch coordinates first: iotas over indices' shape without its index vector, then the indices
            start = _batched_nd(body, ishape, ielem, b)
        lead = q - 1
        points = list(range(b + k))
        out = (*ishape[:-1], *data_shape[b + k:])
        return Plan(body, start, (*ishape[:-1], b + k), lead, points, out, list(range(lead, lead + r - b - k)), ielem)
    # Gather (and Take, whose data has been flattened where its axis is None)
    if "axis" in case.omit:
        axis = 0
    else:
        axis = axis_index(int(a["axis"] if a.get("axis") is not None else 0), r)
    b = 0 if op == "Take" or "batch_dims" in case.omit else batch_dims_count(int(a["batch_dims"]), q)
    if b and "axis" in case.omit:
        raise required(f"stablehlo.gather with batch_dims={b}")
    if b > axis:
        raise ValueError(f"batch_dims={b} must not exceed axis={axis}")
    out = (*data_shape[:axis], *ishape[b:], *data_shape[axis + 1:])
    windows = [*range(b, axis), *range(axis + q - b, len(out))]
    # Each index becomes a start vector of its own (a trailing dimension of 1, as JAX writes it), after the batch
    # coordinates where there are batch dims.
    start = _coordinates(body, "%indices", ishape, ielem, [*range(b), None])
    return Plan(body, start, (*ishape, b + 1), q, [*range(b), axis], out, windows, ielem)


def _batched_nd(body: _Body, ishape: tuple[int, ...], elem: str, b: int) -> str:
    """GatherND's indices with the batch coordinates (iotas over the batch dims) in front of each index vector."""
    outer = ishape[:-1]
    one = tensor_type((*outer, 1), elem)
    parts = [body.emit(f"stablehlo.iota dim = {d} : {one}") for d in range(b)]
    out = tensor_type((*outer, b + ishape[-1]), elem)
    types = ", ".join([one] * b + [tensor_type(ishape, elem)])
    return body.emit(f"stablehlo.concatenate {', '.join([*parts, '%indices'])}, dim = {len(outer)} : "
                     f"({types}) -> {out}")


def _scatter_plan(case: CaseData, body: _Body) -> Plan:
    data, indices = case.inputs["data"], case.inputs["indices"]
    r, ishape = data.ndim, tuple(indices.shape)
    ielem = element_type(indices, "indices")
    if case.op == "ScatterElements":
        if "axis" in case.omit:
            # stablehlo.scatter has no axis, so no default one: the coordinates name every dimension
            raise required("stablehlo.scatter (ScatterElements' coordinates name the axis)")
        axis = axis_index(int(case.attrs["axis"]), r)
        start = _coordinates(body, "%indices", ishape, ielem, [None if d == axis else d for d in range(r)])
        return Plan(body, start, (*ishape, r), len(ishape), list(range(r)), ishape, [], ielem)
    k = ishape[-1]
    lead = len(ishape) - 1
    return Plan(body, "%indices", ishape, lead, list(range(k)), (*ishape[:-1], *data.shape[k:]),
                list(range(lead, lead + r - k)), ielem)


def module(case: CaseData) -> str:
    """The StableHLO module of ``case``: ``@main(%data, %indices[, %updates])`` returning the op's result.

    Raises Unsupported where StableHLO cannot say the case (string tensors, Take's wrap and fill modes) and
    ValueError (attrs.InvalidAttribute) for an invalid axis or batch_dims, as the reference engine does.
    """
    data, indices = case.inputs["data"], case.inputs["indices"]
    delem = element_type(data, "data")
    ielem = element_type(indices, "indices")
    if indices.dtype.kind not in "iu":
        raise Unsupported(f"stablehlo start indices must be integers (indices are {indices.dtype})")
    body = _Body()
    params = [f"%data: {tensor_type(data.shape, delem)}", f"%indices: {tensor_type(indices.shape, ielem)}"]
    operand, operand_shape = "%data", tuple(data.shape)
    if case.op.startswith("Scatter"):
        updates = case.inputs["updates"]
        params.append(f"%updates: {tensor_type(updates.shape, element_type(updates, 'updates'))}")
        plan = _scatter_plan(case, body)
        result = _scatter(case, plan, delem)
    else:
        if case.op == "Take":
            mode = case.attrs["mode"]
            if "mode" not in case.omit and mode not in _TAKE_MODES:
                raise Unsupported(f"stablehlo.gather has no mode {mode!r}: it clamps start indices (Take's clip)")
            if case.attrs["axis"] is None and "axis" not in case.omit and data.ndim != 1:
                operand_shape = (int(data.size),)
                operand = body.emit(f"stablehlo.reshape %data : ({tensor_type(data.shape, delem)}) -> "
                                    f"{tensor_type(operand_shape, delem)}")
        plan = _gather_plan(case, body, operand_shape)
        result = _gather(plan, operand, operand_shape, delem)
    out_type = tensor_type(data.shape if case.op.startswith("Scatter") else plan.out_shape, delem)
    return "\n".join([f"func.func @main({', '.join(params)}) -> {out_type} {{", *body.lines,
                      f"  return {result} : {out_type}", "}"])


def _gather(plan: Plan, operand: str, operand_shape: tuple[int, ...], delem: str) -> str:
    # An indexed (collapsed) dimension's slice is 1, or 0 where that dimension is empty: the spec requires
    # slice_sizes[collapsed_slice_dims...] <= 1 (C9) and slice_sizes no larger than the operand.
    sizes = [min(1, s) if d in plan.point_dims else s for d, s in enumerate(operand_shape)]
    numbers = [f"offset_dims = {_ints(plan.window_dims)}"] if plan.window_dims else []
    numbers += [f"collapsed_slice_dims = {_ints(plan.point_dims)}", f"start_index_map = {_ints(plan.point_dims)}",
                f"index_vector_dim = {plan.index_vector_dim}"]
    return plan.body.emit(
        f'"stablehlo.gather"({operand}, {plan.start}) {{dimension_numbers = #stablehlo.gather<{", ".join(numbers)}>, '
        f"slice_sizes = array<i64: {', '.join(map(str, sizes))}>, indices_are_sorted = false}} : "
        f"({tensor_type(operand_shape, delem)}, {_start_type(plan)}) -> {tensor_type(plan.out_shape, delem)}")


def _start_type(plan: Plan) -> str:
    return tensor_type(plan.start_shape, plan.elem)


def _scatter(case: CaseData, plan: Plan, delem: str) -> str:
    data, updates = case.inputs["data"], case.inputs["updates"]
    scalar = tensor_type((), delem)
    op = UPDATE_OPS[case.attrs["reduction"]]
    region = ["^bb0(%old: " + scalar + ", %new: " + scalar + "):"]
    if op is None:
        region.append(f"    stablehlo.return %new : {scalar}")
    else:
        region += [f"    %r = {op} %old, %new : {scalar}", f"    stablehlo.return %r : {scalar}"]
    numbers = [f"update_window_dims = {_ints(plan.window_dims)}"] if plan.window_dims else []
    numbers += [f"inserted_window_dims = {_ints(plan.point_dims)}",
                f"scatter_dims_to_operand_dims = {_ints(plan.point_dims)}",
                f"index_vector_dim = {plan.index_vector_dim}"]
    head = f'"stablehlo.scatter"(%data, {plan.start}, %updates) ({{'
    tail = (f"}}) {{scatter_dimension_numbers = #stablehlo.scatter<{', '.join(numbers)}>, "
            f"indices_are_sorted = false, unique_indices = false}} : ({tensor_type(data.shape, delem)}, "
            f"{_start_type(plan)}, {tensor_type(updates.shape, delem)}) -> {tensor_type(data.shape, delem)}")
    return plan.body.emit("\n".join([head, *(f"  {line}" for line in region), "  " + tail]))
