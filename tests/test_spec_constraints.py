"""Verdicts respect the canonical type constraints: outside the spec a refusal conforms, the reference's value is an
extension, and only another value deviates; inside it, a refused type is a dtype deviation."""

from __future__ import annotations

import textwrap
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from gather_scatter_conformance.harness.cases.load import Case, load_file
from gather_scatter_conformance.harness.judge import verdict
from gather_scatter_conformance.harness.reference import InvalidInput, compute
from gather_scatter_conformance.harness.reference.constraints import CONSTRAINTS, outside_spec
from gather_scatter_conformance.vocab import wire


def _case(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, op: str, body: str) -> Case:
    monkeypatch.setenv("GSC_CASE_CACHE", "off")
    path = tmp_path / "c.yaml"
    path.write_text(f"op: {op}\ncases:\n" + textwrap.indent(textwrap.dedent(body), "  "))
    case = load_file(path)[0]
    assert isinstance(case, Case), case
    return case


GATHER_ND_INT32 = """\
- id: nd32
  source: test
  inputs:
    data: {value: [[1, 2], [3, 4]], dtype: float32}
    indices: {value: [[1, 0]], dtype: int32}
"""


def _ok(value: np.ndarray) -> dict[str, Any]:
    return {"outcome": "ok", "value": wire.encode(value)}


def _error() -> dict[str, Any]:
    return {"outcome": "error", "error_type": "TypeError", "error_message": "int32 not supported"}


@pytest.mark.parametrize(
    ("op", "index", "inside"),
    [
        ("Gather", "int32", True), ("Gather", "int64", True), ("Gather", "int8", False), ("Gather", "uint64", False),
        ("GatherElements", "int32", True), ("GatherElements", "uint8", False),
        ("GatherND", "int64", True), ("GatherND", "int32", False),
        ("ScatterElements", "int32", True), ("ScatterElements", "int16", False),
        ("ScatterND", "int64", True), ("ScatterND", "int32", False),
        ("Take", "int32", True), ("Take", "int8", False), ("Take", "uint32", False),
    ],
)
def test_index_types_follow_the_newest_opsets(op: str, index: str, inside: bool) -> None:
    inputs = {"data": np.zeros((2, 2), np.float32), "indices": np.zeros((1, 1), index)}
    got = outside_spec(op, inputs, {})
    assert (got is None) is inside
    if not inside:
        assert got is not None and got.extension == f"{index}-indices" and CONSTRAINTS[op].source in got.reason


@pytest.mark.parametrize(
    ("reduction", "data", "inside"),
    [("add", "float16", True), ("add", "bool", True), ("mul", "bool", True), ("add", "string", True),
     ("mul", "string", False), ("max", "bool", True), ("max", "complex64", False), ("mul", "complex64", True),
     ("min", "string", False), ("none", "string", True)],
)
def test_reductions_are_defined_where_the_reference_engine_computes_them(reduction: str, data: str,
                                                                         inside: bool) -> None:
    arr = np.array(["a", "b"], object) if data == "string" else np.zeros(2, data)
    inputs = {"data": arr, "indices": np.array([[0]], np.int64), "updates": arr[:1].copy()}
    assert (outside_spec("ScatterND", inputs, {"reduction": reduction}) is None) is inside
    # One table decides both: the engine raises exactly where the constraint says "outside".
    try:
        compute("ScatterND", inputs, {"reduction": reduction})
        computed = True
    except InvalidInput:
        computed = False
    assert computed is inside


SCATTER_ND_BOOL_ADD = """\
- id: ndbool
  source: test
  inputs:
    data: {value: [false, false], dtype: bool}
    indices: {value: [[1], [1]], dtype: int64}
    updates: {value: [true, false], dtype: bool}
  attrs: {reduction: add}
"""


def test_a_bool_reduction_is_open_and_onnx_references_reading_conforms(tmp_path: Path,
                                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    # #40: `+` on bool is not defined by ONNX's text; onnx.reference, ONNX Runtime and OpenVINO compute logical or.
    # That value and a refusal conform; the same values in int32 (tinygrad) deviate by type, another value by value.
    case = _case(tmp_path, monkeypatch, "ScatterND", SCATTER_ND_BOOL_ADD)
    expected = case.reference()
    assert expected.tolist() == [False, True]
    fields = verdict.judge(case, _ok(np.array([False, True])), expected)
    assert fields["verdict"] == "conforms" and fields["spec"] == "inside", fields
    assert "onnx.reference: logical or" in fields["reason"]
    assert verdict.judge(case, _error(), expected)["verdict"] == "conforms"
    as_int = verdict.judge(case, _ok(np.array([0, 1], np.int32)), expected)
    assert (as_int["verdict"], as_int["deviation"]) == ("deviates", "output-dtype"), as_int
    xor = verdict.judge(case, _ok(np.array([False, False])), expected)  # true + true + false as addition mod 2
    assert (xor["verdict"], xor["deviation"]) == ("deviates", "value"), xor


def test_refusing_an_input_outside_the_spec_conforms(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    case = _case(tmp_path, monkeypatch, "GatherND", GATHER_ND_INT32)
    fields = verdict.judge(case, _error(), case.reference())
    assert fields["verdict"] == "conforms"
    assert fields["spec"] == "outside (int32 indices (ONNX GatherND-13 allows int64))"
    assert "deviation" not in fields


def test_the_reference_value_outside_the_spec_is_an_extension(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    case = _case(tmp_path, monkeypatch, "GatherND", GATHER_ND_INT32)
    fields = verdict.judge(case, _ok(np.array([3.0], np.float32)), case.reference())
    assert fields["verdict"] == "conforms" and fields["extension"] == "int32-indices"


def test_another_value_outside_the_spec_deviates(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    case = _case(tmp_path, monkeypatch, "GatherND", GATHER_ND_INT32)
    fields = verdict.judge(case, _ok(np.array([2.0], np.float32)), case.reference())
    assert fields["verdict"] == "deviates" and fields["deviation"] == "value" and "extension" not in fields


def test_a_crash_outside_the_spec_still_deviates(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    case = _case(tmp_path, monkeypatch, "GatherND", GATHER_ND_INT32)
    fields = verdict.judge(case, {"outcome": "crash", "signal": "SIGSEGV"}, case.reference())
    assert fields["verdict"] == "deviates" and fields["deviation"] == "crash"


def test_refusing_an_allowed_type_is_a_dtype_deviation(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    case = _case(tmp_path, monkeypatch, "ScatterElements", """\
        - id: f16add
          source: test
          inputs:
            data: {value: [1, 2], dtype: float16}
            indices: {value: [0], dtype: int64}
            updates: {value: [1], dtype: float16}
          attrs: {reduction: add}
        """)
    fields = verdict.judge(case, _error(), case.reference())
    assert fields["spec"] == "inside"
    assert fields["verdict"] == "deviates" and fields["deviation"] == "dtype"


def test_refusing_a_default_typed_case_is_an_error_deviation(tmp_path: Path,
                                                             monkeypatch: pytest.MonkeyPatch) -> None:
    case = _case(tmp_path, monkeypatch, "Gather", """\
        - id: neg
          source: test
          inputs: {data: [1, 2, 3], indices: [-1]}
        """)
    fields = verdict.judge(case, _error(), case.reference())
    assert fields["verdict"] == "deviates" and fields["deviation"] == "error" and fields["spec"] == "inside"
