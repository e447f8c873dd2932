"""TensorScatter-24 through the ONNX adapters (onnx-reference, onnxruntime): the one-node model ONNX's names and
version, its repro, and what each does on every shipped TensorScatter case (measured on onnx 1.23.2 and onnxruntime
1.31.1, CPU)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import onnx
import pytest
from _installed import require

from gather_scatter_conformance.adapters import onnx_graph
from gather_scatter_conformance.adapters.base import CaseData
from gather_scatter_conformance.adapters.onnx_reference import ADAPTER as REFERENCE
from gather_scatter_conformance.adapters.onnxruntime import ADAPTER as ORT
from gather_scatter_conformance.harness.cases.load import Case, load_file
from gather_scatter_conformance.harness.run.runner import InProcess, execute

require("onnxruntime")  # looked up, not imported: tests/_installed.py

pytestmark = pytest.mark.framework  # make check runs none of these (docs/development.md)

ROOT = Path(__file__).resolve().parents[1]
F = np.float32
FILES = ["cases/tensor_scatter.yaml", "cases/imported/onnx_node_tensor_scatter.yaml",
         "cases/probes/tensor_scatter.yaml"]
CASES = [c for f in FILES for c in load_file(ROOT / f, f) if isinstance(c, Case)]


def _case(**inputs: np.ndarray) -> CaseData:
    base = {"data": np.arange(8, dtype=F).reshape(1, 4, 2), "updates": -np.ones((1, 1, 2), F),
            "indices": np.array([2])}
    merged = {k: v for k, v in {**base, **inputs}.items() if v is not None}
    return CaseData("TensorScatter", merged, {"mode": "linear", "axis": -2})


def test_variants() -> None:
    assert ORT.variants("TensorScatter") == ["TensorScatter-24", "TensorScatter-24/constant",
                                             "TensorScatter-24/dynamic"]
    assert REFERENCE.variants("TensorScatter") == ["ReferenceEvaluator"]


def test_the_model_has_onnx_names_opset_24_and_passes_the_checker() -> None:
    model, names, text = onnx_graph.build(_case())
    node = model.graph.node[0]
    assert node.op_type == "TensorScatter" and list(node.input) == ["past_cache", "update", "write_indices"]
    assert names == ["past_cache", "update", "write_indices"]
    assert [o.version for o in model.opset_import] == [24] and model.ir_version == onnx_graph.IR_VERSION
    assert {a.name: onnx_graph.helper_value(a) for a in node.attribute} == {"mode": "linear", "axis": -2}
    assert text == "TensorScatter-24(past_cache, update, write_indices, mode='linear', axis=-2)"
    onnx.checker.check_model(model, full_check=True)


def test_absent_write_indices_leave_the_node_two_inputs_and_omit_leaves_the_attribute_off() -> None:
    model, names, _ = onnx_graph.build(_case(indices=None))
    assert list(model.graph.node[0].input) == ["past_cache", "update"] == names
    omitted = CaseData("TensorScatter", _case().inputs, {"mode": "linear", "axis": -2}, omit=("axis",))
    assert [a.name for a in onnx_graph.build(omitted)[0].graph.node[0].attribute] == ["mode"]


@pytest.mark.parametrize(("adapter", "variant"), [(REFERENCE, "ReferenceEvaluator"), (ORT, "TensorScatter-24")])
def test_the_repro_source_runs_to_the_same_result(adapter, variant: str) -> None:
    case = _case()
    call = adapter.prepare(case, variant)
    scope = {"np": np, "data": case.inputs["data"], "updates": case.inputs["updates"],
             "indices": case.inputs["indices"]}
    exec(call.source, scope)
    want = np.asarray(call.run())
    assert np.array_equal(scope["result"], want)
    assert want[0, :, 0].tolist() == [0, 2, -1, 6]


# What each adapter answered on the shipped cases where it does not conform, measured (the rest conform).
DEVIATIONS = {
    "onnx-reference": {
        # onnx.reference never checks write_indices' shape (docs/reference-engine.md)
        "ts-write-indices-not-one-per-batch-is-an-error": "no-error",
    },
    "onnxruntime": {
        # onnxruntime registers no complex64 tensor type; its TensorScatter CPU kernel has no string type
        "probe-data-dtype-complex64": "dtype",
        "probe-data-dtype-string": "dtype",
    },
}
# The labels of TensorScatter's behaviour probes on onnx-reference (the pseudocode run as Python) ...
REFERENCE_LABELS = {
    "probe-write-index-negative": "wrap", "probe-write-index-negative-below": "error",
    "probe-write-index-negative-alias": "wrap", "probe-write-index-overflow": "error",
    "probe-write-index-overflow-past-end": "error", "probe-write-index-overflow-alias": "error",
    "probe-circular-wrap": "wrap", "probe-circular-wrap-past-end": "wrap",
    "probe-circular-negative": "wrap", "probe-circular-negative-below": "wrap",
    "probe-empty-update": "ok", "probe-sequence-axis-0": "error", "probe-sequence-axis-last": "ok",
}
LABELS = {
    "onnx-reference": REFERENCE_LABELS,
    # ... and where onnxruntime differs: it refuses every negative write index, in both modes (tensorscatter.cc:81)
    "onnxruntime": {**REFERENCE_LABELS, "probe-write-index-negative": "error", "probe-write-index-negative-alias":
                    "error", "probe-circular-negative": "error", "probe-circular-negative-below": "error"},
}


@pytest.mark.parametrize(("framework", "variant"), [("onnx-reference", "ReferenceEvaluator"),
                                                    ("onnxruntime", "TensorScatter-24")])
def test_every_shipped_case(framework: str, variant: str) -> None:
    executor = InProcess()
    records = {c.id: execute(c, framework, variant, executor) for c in CASES}
    deviating = {cid: r.deviation for cid, r in records.items() if r.verdict == "deviates"}
    assert deviating == DEVIATIONS[framework]
    labels = {cid: r.label for cid, r in records.items() if cid in LABELS[framework]}
    assert labels == LABELS[framework]
