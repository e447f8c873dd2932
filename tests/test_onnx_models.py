"""The ONNX models of adapters/onnx_graph.py (onnxruntime, OpenVINO's ONNX frontend, onnx-reference, TensorRT,
DirectML, the ONNX backends and the converter paths run them) pass ``onnx.checker.check_model(full_check=True)``.

Every case of the shipped corpus (cases/, probes, found, imported and regression cases included) is built at every
variant of the onnxruntime adapter. A model must pass the checker exactly where ONNX's own operator schemas admit
it: cases that test a runtime's answer to a type outside an operator's constraints (uint32 indices, bfloat16 before
opset 13) or to the deprecated Scatter-11 make models ONNX itself calls invalid, and the runtime's answer to those
is the finding. Which ones those are is read from ``onnx.defs`` here, not from the checker.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("onnx")

import onnx

from gather_scatter_conformance.adapters import onnx_graph
from gather_scatter_conformance.adapters.base import CaseData, Unsupported
from gather_scatter_conformance.adapters.onnxruntime import ADAPTER, variant_model
from gather_scatter_conformance.harness.cases.load import Case, ExpectedError, load_file

ROOT = Path(__file__).resolve().parents[1]


def _corpus() -> list[Case]:
    out = []
    for path in sorted((ROOT / "cases").rglob("*.yaml")):
        out += [e for e in load_file(path, path.relative_to(ROOT).as_posix()) if isinstance(e, Case)]
    return out


def _case_data(case: Case) -> CaseData:
    return CaseData(case.op, case.inputs(), case.attrs, case.spec.opset, tuple(case.spec.omit))


def _schema_rejects(model: object) -> str | None:
    """Why ONNX's operator schemas reject ``model`` (a deprecated operator, an element type outside a type
    constraint), or None where they admit it."""
    graph = model.graph
    version = {o.domain: o.version for o in model.opset_import}
    types = {v.name: v.type.tensor_type.elem_type for v in graph.input}
    types.update({t.name: t.data_type for t in graph.initializer})
    for node in graph.node:
        schema = onnx.defs.get_schema(node.op_type, version[node.domain], node.domain)
        if schema.deprecated:
            return f"{node.op_type}-{schema.since_version} is deprecated"
        allowed = {c.type_param_str: c.allowed_type_strs for c in schema.type_constraints}
        for formal, name in zip(schema.inputs, node.input, strict=False):
            actual = f"tensor({onnx.TensorProto.DataType.Name(types[name]).lower()})"
            if actual not in allowed.get(formal.type_str, [formal.type_str]):
                return f"{node.op_type}-{schema.since_version} {formal.name}: {actual}"
        types.update({out: types[node.input[0]] for out in node.output})  # each node here passes its data's type on
    return None


def _checker(model: object) -> str | None:
    try:
        onnx.checker.check_model(model, full_check=True)
    except (onnx.checker.ValidationError, onnx.shape_inference.InferenceError) as exc:
        return str(exc).splitlines()[0]
    return None


def _invalid_shapes(case: Case) -> bool:
    """True for a case the reference engine refuses whatever its index values (InvalidInput: shapes, axis)."""
    expected = case.reference()
    return isinstance(expected, ExpectedError) and expected.reason.startswith("InvalidInput")


def test_every_model_passes_the_full_checker_where_onnx_schemas_admit_it() -> None:
    passed, rejected, wrong = 0, 0, []
    for case in _corpus():
        data = _case_data(case)
        for variant in ADAPTER.variants(case.op):
            try:
                model = variant_model(data, variant)[0]
            except Unsupported:
                continue  # ONNX cannot say this case at all: no model is built
            schema, checker = _schema_rejects(model), _checker(model)
            if checker and schema is None and _invalid_shapes(case):
                rejected += 1  # an input whose shapes or axis the operator refuses: ONNX's inference may say so
                continue
            if (schema is None) != (checker is None):
                wrong.append(f"{case.nodeid} [{variant}]: schemas: {schema or 'admit'}; checker: {checker or 'pass'}")
            passed += checker is None
            rejected += checker is not None
    assert not wrong, "\n".join(wrong[:20])
    # Measured on onnx 1.23.2: 1324 of 1622 models pass; the 298 others break a type constraint or are Scatter-11.
    assert passed > 1000 and rejected < passed, (passed, rejected)


@pytest.mark.framework
def test_the_declared_output_is_the_shape_the_runtime_returns() -> None:
    """The output's declared shape (ONNX's shape inference) is what onnxruntime computes, on every seed case."""
    checked = 0
    for path in sorted((ROOT / "cases").glob("*.yaml")):
        for case in (e for e in load_file(path, path.name) if isinstance(e, Case)):
            data = _case_data(case)
            try:
                model = variant_model(data, ADAPTER.variants(case.op)[0])[0]
                out = np.asarray(ADAPTER.prepare(data, ADAPTER.variants(case.op)[0]).run())
            except Exception:  # Unsupported, or onnxruntime refuses the case: no output to compare
                continue
            declared = [d.dim_value for d in model.graph.output[0].type.tensor_type.shape.dim]
            assert declared == list(out.shape), (case.nodeid, declared, out.shape)
            checked += 1
    assert checked > 100, checked


def test_a_scalar_gather_nd_output_is_declared_with_rank_zero() -> None:
    # GatherND's shape inference adds no dimension for a scalar output, so it never sets a shape.
    case = CaseData("GatherND", {"data": np.array([1.0, 2.0], np.float32), "indices": np.array([1])},
                    {"batch_dims": 0})
    model, _, _ = onnx_graph.build(case)
    shape = model.graph.output[0].type.tensor_type.shape
    assert model.graph.output[0].type.tensor_type.HasField("shape") and len(shape.dim) == 0
    assert _checker(model) is None


def test_models_for_old_runtimes_keep_their_ir_version_and_pass(monkeypatch: pytest.MonkeyPatch) -> None:
    case = CaseData("ScatterND", {"data": np.zeros(3, np.float32), "indices": np.array([[1]]),
                                  "updates": np.ones(1, np.float32)}, {"reduction": "add"})
    monkeypatch.setenv(onnx_graph.IR_VERSION_ENV, "9")  # what onnxruntime 1.16/1.17 read (history sweeps)
    model, _, _ = onnx_graph.build(case)
    assert model.ir_version == 9 and _checker(model) is None
    monkeypatch.delenv(onnx_graph.IR_VERSION_ENV)
    assert onnx_graph.build(case)[0].ir_version == onnx_graph.IR_VERSION


def test_the_repro_source_builds_the_same_model() -> None:
    """model_source writes the declared output shape too: exec of it gives the same bytes (a rank-0 one included)."""
    for indices in (np.array([1]), np.array([[1], [0]])):
        case = CaseData("GatherND", {"data": np.array([1.0, 2.0], np.float32), "indices": indices}, {"batch_dims": 0})
        model, _, _ = onnx_graph.build(case)
        scope: dict = {}
        exec(onnx_graph.model_source(model), scope)
        assert scope["model"].SerializeToString() == model.SerializeToString()
