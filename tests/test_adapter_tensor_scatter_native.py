"""TensorScatter-24 beyond the ONNX runtimes (issue #26): the emulations of frameworks without the operator (torch
index_copy, tf.tensor_scatter_nd_update, jax dynamic_update_slice and .at[].set), the importers that have no converter
for it (OpenVINO's ONNX frontend, TVM's Relax frontend, iree-import-onnx), and the ``shift`` behaviour
(dynamic_update_slice moves a block whole to fit) that the classifier and judge read from the reference module.

Expected values come from the reference engine; the emulations are run for real on the pinned releases."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from gather_scatter_conformance.adapters import emulation, onnx_graph
from gather_scatter_conformance.adapters.base import CaseData, Unsupported, lacks_converter
from gather_scatter_conformance.harness.judge.classify import label
from gather_scatter_conformance.harness.reference import alternatives, compute
from gather_scatter_conformance.vocab import wire
from gather_scatter_conformance.vocab.record import Record

pytestmark = pytest.mark.framework  # make check runs none of these (docs/development.md)

F = np.float32
CACHE = np.arange(10, dtype=F).reshape(2, 5, 1) * 10  # batch 2, max_sequence_length 5
ROWS = -np.arange(1, 5, dtype=F).reshape(2, 2, 1)  # two rows per batch


def _case(write: list[int] | None, mode: str = "linear", axis: int = -2, **inputs: np.ndarray) -> CaseData:
    arrays = {"data": CACHE, "updates": ROWS, **inputs}
    if write is not None:
        arrays["indices"] = np.array(write, np.int64)
    return CaseData("TensorScatter", arrays, {"mode": mode, "axis": axis})


def _run(adapter_name: str, variant: str, case: CaseData) -> np.ndarray:
    from gather_scatter_conformance import adapters

    adapter = adapters.get(adapter_name)
    if not adapters.is_available(adapter_name):
        pytest.skip(f"{adapter_name} is not installed")
    call = adapter.prepare(case, variant)
    return adapter.to_numpy(call.run())


def _expected(case: CaseData) -> np.ndarray:
    return np.asarray(compute("TensorScatter", case.inputs, case.attrs))


EMULATIONS = [("torch", "emulated.index_copy"), ("torch", "emulated.index_copy/compile"),
              ("tensorflow", "emulated.tensor_scatter_nd_update/eager"),
              ("tensorflow", "emulated.tensor_scatter_nd_update/xla"),
              ("jax", "emulated.at"), ("jax", "emulated.at/jit"), ("jax", "emulated.dynamic_update_slice")]


@pytest.mark.parametrize(("framework", "variant"), EMULATIONS)
@pytest.mark.parametrize(("write", "mode"), [([1, 3], "linear"), (None, "linear"), ([4, 2], "circular")])
def test_each_emulation_writes_what_the_reference_writes_in_range(framework: str, variant: str,
                                                                   write: list[int] | None, mode: str) -> None:
    case = _case(write, mode)
    if variant.startswith("emulated.dynamic_update_slice") and mode == "circular":
        with pytest.raises(Unsupported, match="no circular wrap-around"):
            _run(framework, variant, case)
        return
    np.testing.assert_array_equal(_run(framework, variant, case), _expected(case))


def test_an_emulation_cannot_stand_for_an_input_tensor_scatter_refuses() -> None:
    shapes = {"data": (2, 5, 1), "updates": (2, 2, 1), "indices": (2,)}
    assert emulation.tensor_scatter_axis(shapes, -2) == 1
    for bad, why in [({"indices": (3,)}, "write_indices shape"), ({"updates": (2, 6, 1)}, "exceeds"),
                     ({"updates": (2, 2, 2)}, "off the sequence axis")]:
        with pytest.raises(Unsupported, match=why):
            emulation.tensor_scatter_axis({**shapes, **bad}, -2)
    with pytest.raises(Unsupported, match="batch axis 0"):
        emulation.tensor_scatter_axis(shapes, 0)


def test_torch_eager_refuses_a_negative_position_and_inductor_wraps_it() -> None:
    # Measured on torch 2.13.0 (CPU): index_copy raises for -2, the compiled kernel counts it from the end.
    case = _case([-2, 0])
    with pytest.raises(IndexError, match="out of bounds"):
        _run("torch", "emulated.index_copy", case)
    np.testing.assert_array_equal(_run("torch", "emulated.index_copy/compile", case), _expected(case))


def test_dynamic_update_slice_moves_a_block_past_the_end_back_to_fit_and_the_classifier_says_shift() -> None:
    case = _case([4, 0])  # batch 0's block [4, 5] runs past the end (5): XLA moves it to [3, 4]
    out = _run("jax", "emulated.dynamic_update_slice", case)
    moved = CACHE.copy()
    moved[0, 3:5] = ROWS[0]
    moved[1, 0:2] = ROWS[1]
    np.testing.assert_array_equal(out, moved)
    assert [lab for lab, _ in alternatives("TensorScatter", case.inputs, case.attrs)] == ["shift", "shift"]
    record = Record.read({"case": "t.yaml::overflow", "framework": "", "outcome": "ok", "verdict": "conforms"})
    assert label("write-index-overflow", "TensorScatter", case.inputs, case.attrs, record, out) == "shift"
    # Dropping the row past the end (a partial write) is the policy skip, not a shift.
    skipped = CACHE.copy()
    skipped[0, 4] = ROWS[0, 0]
    skipped[1, 0:2] = ROWS[1]
    assert label("write-index-overflow", "TensorScatter", case.inputs, case.attrs, record, skipped) == "skip"


def test_the_judge_lets_a_shift_conform_on_the_open_overflow_and_nothing_unexplained(tmp_path: Path) -> None:
    from gather_scatter_conformance.harness.cases.load import Case, load_file
    from gather_scatter_conformance.harness.judge.verdict import judge
    from gather_scatter_conformance.vocab.record import Result

    (tmp_path / "t.yaml").write_text(
        "op: TensorScatter\ncases:\n  - id: overflow\n    source: test\n    inputs:\n"
        f"      data: {{value: {CACHE.tolist()}, dtype: float32}}\n"
        f"      updates: {{value: {ROWS.tolist()}, dtype: float32}}\n"
        "      indices: {value: [4, 0], dtype: int64}\n", encoding="utf-8")
    (case,) = load_file(tmp_path / "t.yaml", "t.yaml")
    assert isinstance(case, Case)
    moved = _run("jax", "emulated.dynamic_update_slice", _case([4, 0]))
    verdict = judge(case, Result.of({"outcome": "ok", "value": wire.encode(moved)}), None)
    assert verdict["verdict"] == "conforms" and "'shift'" in verdict["reason"]
    garbage = moved.copy()
    garbage[1, 4] = 12345
    assert judge(case, Result.of({"outcome": "ok", "value": wire.encode(garbage)}), None)["verdict"] == "deviates"


@pytest.mark.parametrize(("framework", "variant", "importer"), [
    ("openvino", "read_model", "OpenVINO's ONNX frontend"),
    ("tvm", "from_onnx", "TVM's Relax ONNX frontend"),
])
def test_an_importer_without_a_converter_makes_the_case_unsupported_with_its_own_words(
        framework: str, variant: str, importer: str) -> None:
    # Measured on openvino 2026.4.1 and apache-tvm 0.27.0.post1: neither converts TensorScatter-24. The day one does,
    # this test fails and the importer's answers become measurements.
    with pytest.raises(Unsupported, match=f"{importer}.* has no converter for ONNX TensorScatter"):
        _run(framework, variant, _case([1, 3]))


def test_iree_s_importer_refusal_stays_an_error() -> None:
    # torch-mlir leaves the node unconverted and iree-compile refuses it with the words it also uses for a node form
    # it does not convert (ScatterElements reduction max, a listed deviation): no run can tell them apart.
    with pytest.raises(Exception, match=r"failed to legalize operation 'torch.operator'.*onnx\.TensorScatter"):
        _run("iree", "import_onnx", _case([1, 3]))


def test_tinygrad_s_onnx_importer_refuses_a_tensor_scatter_node_that_spells_its_axis() -> None:
    # Measured on tinygrad 0.14.0: its kernel's signature has no axis (tinygrad/nn/onnx.py), so ONNX's own default,
    # written out, is a TypeError; known/tinygrad.yaml lists the cases.
    with pytest.raises(TypeError, match="unexpected keyword argument 'axis'"):
        _run("tinygrad", "nn.onnx.OnnxRunner", _case([1, 3]))


def test_lacks_converter_matches_only_the_importer_s_missing_operator_message() -> None:
    says = r"not supported for frontend ONNX: [^\n]*\b{op}\b"
    missing = RuntimeError("The following operators are not supported for frontend ONNX: TensorScatter")
    found = lacks_converter(missing, "TVM", says, "TensorScatter")
    assert isinstance(found, Unsupported) and "TVM has no converter for ONNX TensorScatter" in str(found)
    assert lacks_converter(missing, "TVM", says, "Gather") is None  # another operator's gap
    assert lacks_converter(ValueError("index 7 out of range"), "TVM", says, "TensorScatter") is None


def test_a_converter_path_feeds_the_converted_model_the_inputs_in_the_order_it_was_exported_with(
        monkeypatch: pytest.MonkeyPatch) -> None:
    # TensorScatter's inputs come as data, updates, indices; the exported torch function must take them so (it took
    # data, indices, updates, and the converted model was fed updates where it wanted indices).
    from gather_scatter_conformance import adapters

    monkeypatch.setenv("GSC_CONVERSION_CACHE", "off")
    case = _case([1, 3])
    case.progress = None
    np.testing.assert_array_equal(_run("torch~onnx-dynamo~onnxruntime", "emulated.index_copy", case), _expected(case))
    assert adapters.get("torch~onnx-dynamo~onnxruntime").variants("TensorScatter") == ["emulated.index_copy"]


def test_inputs_are_fed_under_the_names_a_model_converted_from_onnx_accepts() -> None:
    inputs = {"data": CACHE, "updates": ROWS, "indices": np.array([1, 3])}
    named = onnx_graph.named_as(inputs, {"past_cache", "update", "write_indices"})
    assert list(named) == ["past_cache", "update", "write_indices"] and named["update"] is ROWS
    assert onnx_graph.named_as(inputs, {"data", "indices", "updates"}) is inputs
