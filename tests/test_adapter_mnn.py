"""The MNN adapter (MNN.expr) and the onnx~mnnconvert~mnn path: real calls, values against the reference engine, the
findings of docs/mapping/mnn.md (negative indices read zeros, data[:, indices] ignores the index, the converter's
ScatterElements drops its reduction), and the backend the path reads from the session."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from _installed import require

from gather_scatter_conformance import adapters
from gather_scatter_conformance.adapters import mnn
from gather_scatter_conformance.adapters.base import CaseData, Unsupported
from gather_scatter_conformance.harness.reference import compute
from gather_scatter_conformance.vocab.ops import with_defaults

require("MNN")  # looked up, not imported: tests/_installed.py

pytestmark = pytest.mark.framework  # make check runs none of these (docs/development.md)

ADAPTER = mnn.ADAPTER
PATH = "onnx~mnnconvert~mnn"
DATA = np.arange(12, dtype=np.float32).reshape(3, 4)


def _case(op: str, attrs: dict[str, Any] | None = None, **inputs: Any) -> CaseData:
    return CaseData(op=op, inputs={k: np.asarray(v) for k, v in inputs.items()}, attrs=with_defaults(op, attrs))


def _run(case: CaseData, variant: str, name: str = "mnn") -> tuple[np.ndarray, dict[str, Any]]:
    adapter = adapters.get(name)
    call = adapter.prepare(case, variant)
    return adapter.to_numpy(call.run()), call.facts


def test_variants() -> None:
    assert {op: ADAPTER.variants(op) for op in ("Gather", "GatherElements", "GatherND", "ScatterElements",
                                                "ScatterND", "Take")} == {
        "Gather": ["expr.gather", "indexing"], "GatherElements": [], "GatherND": ["expr.gather_nd"],
        "ScatterElements": [], "ScatterND": ["expr.scatter_nd"], "Take": ["expr.gather"]}


@pytest.mark.parametrize("case,variant", [
    (_case("Gather", {"axis": 0}, data=DATA, indices=np.array([[2, 0]], np.int64)), "expr.gather"),
    (_case("Gather", {"axis": 0}, data=DATA, indices=np.array([1, 1], np.int32)), "indexing"),
    (_case("Take", {"axis": None}, data=DATA, indices=np.array([11, 0, 5], np.int64)), "expr.gather"),
    (_case("GatherND", data=DATA, indices=np.array([[2, 3], [0, 1]], np.int64)), "expr.gather_nd"),
    (_case("ScatterND", data=np.zeros((3, 4), np.float32), indices=np.array([[2], [0]], np.int64),
           updates=DATA[:2]), "expr.scatter_nd"),
])
def test_in_range_calls_equal_the_reference(case: CaseData, variant: str) -> None:
    out, _ = _run(case, variant)
    np.testing.assert_array_equal(out, compute(case.op, case.inputs, case.attrs))


def test_negative_index_reads_zeros() -> None:
    """Finding: expr.gather and Var indexing do not count -1 from the end; the row reads zeros."""
    case = _case("Gather", {"axis": 0}, data=DATA, indices=np.array([-1], np.int64))
    for variant in ("expr.gather", "indexing"):
        out, _ = _run(case, variant)
        np.testing.assert_array_equal(out, np.zeros((1, 4), np.float32))


def test_indexing_after_a_slice_ignores_the_index() -> None:
    """Finding: data[:, indices] with a Var index returns data unchanged."""
    case = _case("Gather", {"axis": 1}, data=DATA, indices=np.array([3, 0], np.int64))
    call = ADAPTER.prepare(case, "indexing")
    assert call.api.startswith("data[:, indices]")
    np.testing.assert_array_equal(ADAPTER.to_numpy(call.run()), DATA)


def test_what_the_python_api_cannot_say_is_unsupported() -> None:
    with pytest.raises(Unsupported, match="no axis"):
        ADAPTER.prepare(_case("Gather", {"axis": 1}, data=DATA, indices=[0]), "expr.gather")
    with pytest.raises(Unsupported, match="float64"):
        ADAPTER.prepare(_case("Gather", data=DATA.astype(np.float64), indices=[0]), "expr.gather")
    with pytest.raises(Unsupported, match="do not fit in int32"):
        ADAPTER.prepare(_case("Gather", data=DATA, indices=np.array([2**40], np.int64)), "expr.gather")
    with pytest.raises(Unsupported, match="not all zeros"):
        ADAPTER.prepare(_case("ScatterND", data=DATA, indices=[[0]], updates=DATA[:1]), "expr.scatter_nd")


def test_repro_source_runs_the_same_call() -> None:
    case = _case("GatherND", data=DATA, indices=np.array([[2, 3]], np.int64))
    call = ADAPTER.prepare(case, "expr.gather_nd")
    scope: dict[str, Any] = {"np": np, **case.inputs}
    exec(call.source, scope)
    np.testing.assert_array_equal(scope["result"], ADAPTER.to_numpy(call.run()))


# The seed cases against known/mnn.yaml: tests/test_known_deviations.py's plan for mnn (each pair once in
# make test).


# --- onnx~mnnconvert~mnn ---------------------------------------------------------------------------------------


@pytest.mark.slow
def test_path_converts_and_runs_gather_elements_with_the_cpu_backend() -> None:
    case = _case("GatherElements", {"axis": 1}, data=DATA, indices=np.array([[0], [1], [3]], np.int64))
    out, facts = _run(case, adapters.get(PATH).variants("GatherElements")[0], PATH)
    np.testing.assert_array_equal(out, compute(case.op, case.inputs, case.attrs))
    assert "GatherElements" in facts["ops"]
    assert facts["providers"] and set(facts["providers"].values()) <= {"CPU", "CPU_EXTENSION"}
    assert facts["fallback"] is False


@pytest.mark.slow
def test_path_gather_normalises_indices_with_mod_and_scatter_elements_drops_its_reduction() -> None:
    """Findings: the converter rewrites Gather's indices as (i + n) mod n (an out-of-range index wraps), and the
    converted ScatterElements(reduction=add) assigns."""
    variant = adapters.get(PATH).variants("Gather")[0]
    gather = _case("Gather", {"axis": 0}, data=DATA, indices=np.array([4], np.int64))
    out, facts = _run(gather, variant, PATH)
    assert "MOD" in facts["ops"] and facts["ops"][-1] == "GatherV2"
    np.testing.assert_array_equal(out, DATA[1:2])
    scatter = _case("ScatterElements", {"axis": 1, "reduction": "add"}, data=DATA,
                    indices=np.array([[1], [1], [1]], np.int64), updates=np.ones((3, 1), np.float32))
    out, _ = _run(scatter, variant, PATH)
    assigned = DATA.copy()
    assigned[:, 1] = 1
    np.testing.assert_array_equal(out, assigned)


@pytest.mark.slow
def test_path_reports_a_failed_run_and_refuses_what_python_cannot_copy() -> None:
    """uint8 indices: the converted model fails to size itself (MNN prints 'Can't run session because not resized' and
    runSession returns ErrorCode 3), which the path raises instead of reading the empty output; int8 data: MNN's
    Python API has no int8 tensor type, so the case is Unsupported, not a framework error."""
    variant = adapters.get(PATH).variants("Gather")[0]
    uint8 = _case("Gather", {"axis": 1}, data=DATA, indices=np.array([[1, 2], [0, 0]], np.uint8))
    with pytest.raises(RuntimeError, match=r"ErrorCode 3 \(COMPUTE_SIZE_ERROR\)"):
        _run(uint8, variant, PATH)
    int8 = _case("Gather", {"axis": 0}, data=DATA.astype(np.int8), indices=np.array([1], np.int64))
    with pytest.raises(Unsupported, match="no int8"):
        _run(int8, variant, PATH)


@pytest.mark.slow
def test_path_converts_in_a_process_that_has_imported_tensorflow() -> None:
    """MNN's converter module registers TensorFlow's protobuf messages: imported into a process that has TensorFlow,
    it aborts that process (what crashed three pytest workers in CI). The path converts in a child process."""
    pytest.importorskip("tensorflow")
    case = _case("Gather", {"axis": 0}, data=DATA, indices=np.array([2], np.int64))
    out, _ = _run(case, adapters.get(PATH).variants("Gather")[0], PATH)
    np.testing.assert_array_equal(out, DATA[2:3])


def test_a_failed_conversion_says_what_the_converter_printed() -> None:
    from gather_scatter_conformance.adapters.convert import onnx_mnn

    with pytest.raises(RuntimeError, match=r"reported failure \(exit \d\); no \.mnn written: .*read onnx model "
                                           r"failed: model\.onnx .*Model file is not onnx model"):
        onnx_mnn.mnnconvert(b"not an onnx model")
