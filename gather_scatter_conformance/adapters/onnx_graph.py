"""One-node ONNX models for a case, built with onnx.helper; shared by onnx-reference, onnxruntime, OpenVINO's
ONNX frontend, TensorRT, DirectML, the ONNX backends (adapters.onnx_backend) and the ONNX converter paths.

Every model passes ``onnx.checker.check_model(full_check=True)`` wherever ONNX's operator schemas admit its element
types (tests/test_onnx_models.py): its inputs and its output carry their shapes (:func:`declare_output_shape`).

onnx 1.23 writes IR version 14, which onnxruntime 1.31 rejects, so the IR version is set explicitly.
Graph inputs carry ONNX's input names (``past_cache``, ``update``, ``write_indices`` for TensorScatter), which the
vocabulary maps from the case's (``data``, ``updates``, ``indices``); an optional input a case leaves out is left
out of the node.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import Any

import numpy as np

from gather_scatter_conformance.adapters.base import CaseData, Unsupported
from gather_scatter_conformance.vocab.ops import SPECS, onnx_input_name
from gather_scatter_conformance.vocab.variants import CONSTANT_MODE, constant_parent, dynamic_parent

# The one table of ONNX operator versions (ONNX changelog): every version a run may select, oldest first. The
# deprecated Scatter-9/11 is ScatterElements' ancestor. onnxruntime's and DirectML's variants are these versions.
VERSIONS = {
    "Gather": (1, 11, 13),
    "GatherElements": (11, 13),
    "GatherND": (11, 12, 13),
    "ScatterElements": (11, 13, 16, 18),
    "ScatterND": (11, 13, 16, 18),
    "Scatter": (9, 11),
    "TensorScatter": (24,),
}
# Newest version of each operator, the canonical semantics.
NEWEST = {op: max(versions) for op, versions in VERSIONS.items()}
# Case operators that ONNX spells with another operator: Take is Gather (mode raise only; Reshape first for no axis).
ONNX_TYPE = {"Take": "Gather"}
IR_VERSION = 10  # accepted by onnxruntime 1.31 and OpenVINO 2026; onnx 1.23's default (14) is not
# Older runtimes accept older IR versions only (onnxruntime 1.16/1.17: 9): a release sweep's environment names its
# runtime's in this variable (gather_scatter_conformance.harness.history.pins), and every model built here carries it.
IR_VERSION_ENV = "GSC_ONNX_IR_VERSION"


def ir_version() -> int:
    """The IR version models are written with: ``$GSC_ONNX_IR_VERSION`` where set, else :data:`IR_VERSION`."""
    return int(os.environ.get(IR_VERSION_ENV) or IR_VERSION)


def onnx_op(case: CaseData, onnx_type: str | None = None) -> tuple[str, int, dict[str, Any]]:
    """Map a case to (ONNX op type, opset version, node attributes); raise Unsupported where ONNX cannot say it.

    An attribute in ``case.omit`` is left off the node, so ONNX's own default applies (axis 0 for Gather,
    GatherElements, ScatterElements and Scatter; batch_dims 0 for GatherND-12/13).
    """
    a = case.attrs
    omit_axis = "axis" in case.omit
    op = onnx_type or ONNX_TYPE.get(case.op, case.op)
    if case.op == "Take" and a["mode"] != "raise":
        raise Unsupported(f"ONNX has no Take; Gather has no mode {a['mode']!r} (out-of-range is an error)")
    version = case.opset or NEWEST[op]
    if version not in VERSIONS[op]:
        version = max(v for v in VERSIONS[op] if v <= version) if any(v <= version for v in VERSIONS[op]) else 0
        if not version:
            raise Unsupported(f"{op} does not exist at opset {case.opset}")
    attrs: dict[str, Any] = {}
    if op == "Gather":
        if case.op == "Gather" and a.get("batch_dims", 0) and "batch_dims" not in case.omit:
            raise Unsupported("ONNX Gather has no batch_dims (OpenVINO and TensorFlow do)")
        if not omit_axis:
            attrs["axis"] = 0 if case.op == "Take" and a["axis"] is None else int(a["axis"])
    elif op in ("GatherElements", "ScatterElements", "Scatter"):
        if not omit_axis:
            attrs["axis"] = int(a["axis"])
    elif op == "GatherND":
        omit_batch = "batch_dims" in case.omit
        if a["batch_dims"] and version < 12 and not omit_batch:
            raise Unsupported("GatherND-11 has no batch_dims (added in GatherND-12)")
        if version >= 12 and not omit_batch:
            attrs["batch_dims"] = int(a["batch_dims"])
    reduction = a.get("reduction", "none")
    if op in ("ScatterElements", "ScatterND"):
        if reduction != "none":
            if version < 16 or (reduction in ("max", "min") and version < 18):
                raise Unsupported(f"{op}-{version} has no reduction={reduction!r}")
            attrs["reduction"] = reduction
    elif op == "Scatter" and reduction != "none":
        raise Unsupported("Scatter-9/11 has no reduction")
    elif op not in _TRANSLATED:  # an operator the case names as ONNX does: its attributes are ONNX's own
        attrs = {k: v for k, v in a.items() if k not in case.omit}
    return op, version, attrs


# The ONNX operators whose attributes onnx_op translates from the case's; any other takes the case's as they are.
_TRANSLATED = ("Gather", "GatherElements", "ScatterElements", "Scatter", "GatherND", "ScatterND")


def flattens(case: CaseData) -> bool:
    """True for Take with axis None (flattened data: Reshape, then Gather). Not when the axis is omitted: a Gather
    node without ``axis`` uses ONNX's default 0, which is what a user relying on the default gets."""
    return case.op == "Take" and case.attrs["axis"] is None and "axis" not in case.omit


# The variant mode that makes a case's indices part of the model (an initializer: ONNX's constant) instead of an
# input fed at run time (issue #40, index provenance): runtimes fold, check or specialise constants at compile time.
CONSTANT = CONSTANT_MODE  # one definition, in the vocabulary, where the report reads it too
CONSTANT_INPUTS = ("indices",)  # the case inputs that mode makes constant


def constant_inputs(variant: str) -> tuple[str, ...]:
    """The case inputs ``variant`` makes part of the model: :data:`CONSTANT_INPUTS` for a constant twin
    (``Gather-13/constant``, ``read_model/constant``), else ()."""
    return CONSTANT_INPUTS if constant_parent(variant) is not None else ()


def dynamic_shapes(variant: str) -> bool:
    """Whether ``variant`` is a dynamic-shapes twin (``Gather-13/dynamic``): its model's inputs have symbolic
    dimensions (dim_params), not the case's (issue #40)."""
    return dynamic_parent(variant) is not None


def static_dims(op: str, name: str, ndim: int) -> set[int]:
    """The dimensions of input ``name`` a dynamic-shapes twin keeps at the case's size: the index depth (the last
    dimension of GatherND's and ScatterND's indices), which says how the indices are read and fixes GatherND's output
    rank, as an exporter keeps it. With it symbolic, OpenVINO 2026.4.1's CPU plugin refuses every GatherND model
    ("Check '!shape.rank().is_dynamic()' failed"), and IREE 3.13.0's ONNX lowering ("failed to legalize operation
    'torch.operator' ... onnx.ScatterND") and TVM 0.27's Relax build ("CodeGenVM cannot emit this Relax operator
    directly") every ScatterND one (2026-11-30): not how programs meet the operators."""
    return {ndim - 1} if op in ("GatherND", "ScatterND") and name == "indices" and ndim else set()


def declared_shapes(op: str, shapes: Mapping[str, tuple[int, ...]], dynamic: bool) -> dict[str, list[Any]]:
    """The graph inputs' declared shapes, by case input: the case's, or with ``dynamic`` a dim_param per dimension
    (``data_d0``, ``data_d1``) but :func:`static_dims`, so the runtime plans for any size of that rank. Where the
    operator ties one input's dimensions to another's, they share the name, as an exporter's symbolic shapes do:
    ScatterElements' updates have the indices' shape, ScatterND's are ``indices.shape[:-1] + data.shape[K:]``. A
    compiler that checks the tie when it builds the model can then prove it (TVM 0.27's Relax ScatterND refuses
    ``updates_d0`` against ``indices_d0``: "ScatterND op requires the updates tensor to have the shape with
    constraint")."""
    if not dynamic:
        return {name: list(shape) for name, shape in shapes.items()}
    out = {name: [size if i in static_dims(op, name, len(shape)) else f"{name}_d{i}" for i, size in enumerate(shape)]
           for name, shape in shapes.items()}
    if "indices" not in out or "updates" not in out:
        return out
    sizes = {name: tuple(shape) for name, shape in shapes.items()}
    if op == "ScatterElements":
        tied = (sizes["indices"], out["indices"])
    elif op == "ScatterND" and sizes["indices"] and "data" in out:
        depth = int(sizes["indices"][-1])
        tied = (sizes["indices"][:-1] + sizes["data"][depth:], out["indices"][:-1] + out["data"][depth:])
    else:
        return out
    if tied[0] == sizes["updates"]:  # a case whose shapes break the tie (a probe of it) keeps names of its own
        out["updates"] = list(tied[1])
    return out


def build_variant(case: CaseData, variant: str) -> tuple[Any, str, tuple[str, ...]]:
    """(:func:`build`'s model of ``variant``, its node in one line, the case inputs it holds as initializers): the
    indices an initializer for a constant twin (:func:`constant_inputs`), symbolic dimensions for a dynamic one
    (:func:`dynamic_shapes`), the case as it is otherwise."""
    held = constant_inputs(variant)
    model, _, text = build(case, None, held, dynamic_shapes(variant))
    return model, text, held


def build(case: CaseData, onnx_type: str | None = None, constants: tuple[str, ...] = (),
          dynamic: bool = False) -> tuple[Any, list[str], str]:
    """Return (ModelProto, graph input names, a one-line description of the node) for ``case``. The case inputs
    named in ``constants`` become initializers holding their values, not graph inputs (nor among the names); with
    ``dynamic``, the graph inputs' dimensions are symbolic (:func:`input_shape`)."""
    import onnx
    from onnx import helper, numpy_helper

    op, version, attrs = onnx_op(case, onnx_type)
    names = input_names(case)
    shapes = declared_shapes(case.op, {n: v.shape for n, v in case.inputs.items()}, dynamic)
    graph_inputs = [
        helper.make_tensor_value_info(n, helper.np_dtype_to_tensor_dtype(v.dtype), shapes[case_name])
        for (case_name, v), n in zip(case.inputs.items(), names, strict=True) if case_name not in constants
    ]
    held = [numpy_helper.from_array(v, n) for (case_name, v), n in zip(case.inputs.items(), names, strict=True)
            if case_name in constants]
    nodes = []
    node_inputs = list(names)
    if flattens(case):
        # Take with no axis gathers from the flattened data: Reshape(data, [-1]) then Gather(axis=0).
        shape_init = helper.make_tensor("flat_shape", onnx.TensorProto.INT64, [1], [-1])
        nodes.append(helper.make_node("Reshape", ["data", "flat_shape"], ["flat"]))
        node_inputs = ["flat", "indices"]
        initializers = [shape_init]
    else:
        initializers = []
    nodes.append(helper.make_node(op, node_inputs, ["output"], **attrs))
    data = case.inputs["data"]
    out = helper.make_tensor_value_info("output", helper.np_dtype_to_tensor_dtype(data.dtype), None)
    graph = helper.make_graph(nodes, "case", graph_inputs, [out], initializer=initializers + held)
    # Reshape with a shape input exists since opset 5; the model must stay at the Gather version asked for.
    opsets = [helper.make_opsetid("", max(version, 5) if initializers else version)]
    model = helper.make_model(graph, opset_imports=opsets)
    model.ir_version = ir_version()
    declare_output_shape(model)
    shown = [f"{n}=constant" if n in {names[i] for i, c in enumerate(case.inputs) if c in constants} else n
             for n in node_inputs]
    text = f"{op}-{version}({', '.join(shown)}{''.join(f', {k}={v!r}' for k, v in attrs.items())})"
    if dynamic:
        text += " [inputs' dimensions symbolic]"
    return model, [n for n, c in zip(names, case.inputs, strict=True) if c not in constants], text


def declare_output_shape(model: Any) -> None:
    """Declare the graph output's shape as ONNX's own shape inference infers it (in place).

    The checker requires a shape on every input and output of a main graph (``Field 'shape' of 'type' is
    required``), and a backend that checks its models (``onnxruntime.backend``) refuses a model without one. The
    shape is ONNX's inference, not a formula of ours, so ``check_model(full_check=True)``, whose strict inference
    merges with it, agrees. Where inference sets no shape the output is declared a scalar: GatherND with a scalar
    output (its inference adds no dimension, so never sets a shape), and inputs whose shapes the operator rejects
    (that model is invalid whatever its output says; the checker's structural checks still pass it to the runtime,
    whose answer is the finding). Type errors are left to the runtime too: inference here checks no types.
    """
    from onnx import shape_inference

    inferred = shape_inference.infer_shapes(model).graph.output[0].type.tensor_type
    declared = model.graph.output[0].type.tensor_type
    if inferred.HasField("shape"):
        declared.shape.CopyFrom(inferred.shape)
    else:
        declared.shape.SetInParent()  # present with no dimension: rank 0


def preload() -> None:
    """Build one tiny model, so onnx and everything :func:`build` uses is imported now.

    For an adapter's ``warm()``: the template that runs risky cases is forked right after it, and forked children
    that imported onnx themselves hung until their timeout (OpenVINO, in full runs).
    """
    build(CaseData("Gather", {"data": np.zeros(2, np.float32), "indices": np.zeros(1, np.int64)},
                   {"axis": 0, "batch_dims": 0}, opset=13))


def input_names(case: CaseData) -> list[str]:
    """The graph input names of ``case``'s inputs, in their order: ONNX's names (vocab.ops.onnx_input_name)."""
    return [onnx_input_name(case.op, n) for n in case.inputs]


def feeds(case: CaseData, constants: tuple[str, ...] = ()) -> dict[str, np.ndarray]:
    """The input arrays keyed by graph input name (less the case inputs ``constants`` made initializers)."""
    return {n: v for n, (c, v) in zip(input_names(case), case.inputs.items(), strict=True) if c not in constants}


def model_source(model: Any) -> str:
    """Statements that build ``model`` again with onnx.helper and assign it to ``model`` (for Call.source).

    Written from the ModelProto itself (nodes, attributes, typed inputs, initializers, opsets, IR version), so the
    repro builds exactly the model that ran: ``exec`` of the text gives a model that serialises to the same bytes.
    """
    import onnx
    from onnx import numpy_helper

    def tensor_type(elem: int) -> str:
        return f"TensorProto.{onnx.TensorProto.DataType.Name(elem)}"

    def value_info(vi: Any) -> str:
        t = vi.type.tensor_type
        shape = [d.dim_param if d.HasField("dim_param") else d.dim_value for d in t.shape.dim] \
            if t.HasField("shape") else None
        return f"helper.make_tensor_value_info({vi.name!r}, {tensor_type(t.elem_type)}, {shape!r})"

    g = model.graph
    lines = ["import onnx", "from onnx import TensorProto, helper", "nodes = ["]
    for n in g.node:
        attrs = "".join(f", {a.name}={helper_value(a)!r}" for a in n.attribute)
        lines.append(f"    helper.make_node({n.op_type!r}, {list(n.input)!r}, {list(n.output)!r}{attrs}),")
    lines.append("]")
    inits = [f"helper.make_tensor({t.name!r}, {tensor_type(t.data_type)}, {list(t.dims)!r}, "
             f"{numpy_helper.to_array(t).reshape(-1).tolist()!r})" for t in g.initializer]
    lines += [f"graph = helper.make_graph(nodes, {g.name!r}, [{', '.join(value_info(v) for v in g.input)}],",
              f"                          [{', '.join(value_info(v) for v in g.output)}],",
              f"                          initializer=[{', '.join(inits)}])",
              "model = helper.make_model(graph, opset_imports=[" + ", ".join(
                  f"helper.make_opsetid({o.domain!r}, {o.version})" for o in model.opset_import) + "])",
              f"model.ir_version = {model.ir_version}"]
    return "\n".join(lines)


def helper_value(attr: Any) -> Any:
    """An AttributeProto's value as onnx.helper.make_node takes it (ints, floats, strings and their lists)."""
    from onnx import helper

    value = helper.get_attribute_value(attr)
    if isinstance(value, bytes):
        return value.decode()
    if isinstance(value, list) and value and isinstance(value[0], bytes):
        return [v.decode() for v in value]
    return value


def feeds_source(names: list[str], op: str | None = None) -> str:
    """``{"data": data, "indices": indices}``: the feeds of a model's run, as source (the case's input variables
    under ``op``'s ONNX input names: ``{"past_cache": data, ...}`` for TensorScatter)."""
    return "{" + ", ".join(f"{onnx_input_name(op, n) if op else n!r}: {n}" for n in names) + "}"



def named_as(inputs: dict[str, np.ndarray], accepted: set[str]) -> dict[str, np.ndarray]:
    """``inputs`` (keyed by the case's names) under the names a converted model's signature ``accepted``: as they
    are, or under ONNX's names where an operator spells them otherwise (TensorScatter's ``past_cache``, ``update``,
    ``write_indices``, which onnx2tf keeps as its SavedModel's argument names)."""
    if set(inputs) <= accepted:
        return inputs
    for spec in SPECS.values():
        renamed = {spec.onnx_inputs.get(n, n): v for n, v in inputs.items()}
        if set(renamed) <= accepted:
            return renamed
    return inputs
