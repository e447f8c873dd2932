"""The tinygrad adapter: every variant on real calls against the reference engine, the device that ran, the
findings of docs/mapping/tinygrad.md (Tensor.gather reads zeros for a negative index, indexing wraps it)."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from _installed import require

from gather_scatter_conformance.adapters import tinygrad as tg
from gather_scatter_conformance.adapters.base import CaseData, Unsupported
from gather_scatter_conformance.harness.reference import compute
from gather_scatter_conformance.vocab.ops import with_defaults

require("tinygrad")  # looked up, not imported: tests/_installed.py

pytestmark = pytest.mark.framework  # make check runs none of these (docs/development.md)

tg.device()  # DEV before tinygrad's first import, which reads it once (without clang: PYTHON, not a failing CPU)

ADAPTER = tg.ADAPTER
DATA = np.arange(12, dtype=np.float32).reshape(3, 4)


def _case(op: str, attrs: dict[str, Any] | None = None, **inputs: Any) -> CaseData:
    return CaseData(op=op, inputs={k: np.asarray(v) for k, v in inputs.items()}, attrs=with_defaults(op, attrs))


def _run(case: CaseData, variant: str) -> np.ndarray:
    return ADAPTER.to_numpy(ADAPTER.prepare(case, variant).run())


IDX = np.array([[0, 3], [1, 1], [2, 0]], np.int64)
UPD = np.full((3, 2), 10, np.float32)


@pytest.mark.parametrize("case,variant", [
    (_case("Gather", {"axis": 1}, data=DATA, indices=np.array([[3, 0]], np.int64)), "indexing"),
    (_case("Take", {"axis": None}, data=DATA, indices=np.array([11, 0], np.int64)), "indexing"),
    (_case("GatherElements", {"axis": 1}, data=DATA, indices=IDX), "gather"),
    (_case("GatherND", data=DATA, indices=np.array([[2, 3], [0, 1]], np.int64)), "indexing"),
    (_case("ScatterElements", {"axis": 1}, data=DATA, indices=np.array([[0, 3], [1, 2], [2, 0]]), updates=UPD),
     "scatter"),
    (_case("ScatterElements", {"axis": 1, "reduction": "add"}, data=DATA, indices=IDX, updates=UPD),
     "scatter_reduce"),
    (_case("ScatterElements", {"axis": 1, "reduction": "max"}, data=DATA, indices=IDX, updates=UPD),
     "scatter_reduce"),
    (_case("ScatterND", data=DATA, indices=np.array([[2], [0]], np.int64), updates=DATA[:2] + 100), "setitem"),
])
def test_in_range_calls_equal_the_reference(case: CaseData, variant: str) -> None:
    np.testing.assert_array_equal(_run(case, variant), compute(case.op, case.inputs, case.attrs))


def test_the_device_that_ran_is_recorded() -> None:
    call = ADAPTER.prepare(_case("Gather", data=DATA, indices=[0]), "indexing")
    call.run()
    assert call.device_name == tg.device() in ("CPU", "PYTHON")


def test_negative_index_gather_reads_zero_indexing_wraps() -> None:
    """Finding: Tensor.gather does not count -1 from the end (the one-hot match finds no position: 0)."""
    case = _case("GatherElements", {"axis": 1}, data=DATA, indices=np.full((3, 1), -1, np.int64))
    np.testing.assert_array_equal(_run(case, "gather"), np.zeros((3, 1), np.float32))
    gather = _case("Gather", {"axis": 0}, data=DATA, indices=np.array([-1], np.int64))
    np.testing.assert_array_equal(_run(gather, "indexing"), DATA[-1:])


def test_what_the_api_cannot_say_is_unsupported() -> None:
    with pytest.raises(Unsupported, match="scalar src"):
        ADAPTER.prepare(_case("ScatterElements", {"reduction": "add"}, data=DATA, indices=IDX, updates=UPD),
                        "scatter")
    with pytest.raises(Unsupported, match="no mode"):
        ADAPTER.prepare(_case("Take", {"mode": "clip"}, data=DATA, indices=[0]), "indexing")
    with pytest.raises(Unsupported, match="string"):
        ADAPTER.prepare(_case("Gather", data=np.array(["a"], object), indices=[0]), "indexing")


def test_repro_source_runs_the_same_call() -> None:
    case = _case("ScatterND", data=DATA, indices=np.array([[1]], np.int64), updates=DATA[:1])
    call = ADAPTER.prepare(case, "setitem")
    scope: dict[str, Any] = {"np": np, **case.inputs}
    exec(call.source, scope)
    np.testing.assert_array_equal(scope["result"], ADAPTER.to_numpy(call.run()))


# The seed cases against known/tinygrad.yaml: tests/test_known_deviations.py's plan for tinygrad (each pair once in
# make test).


def test_bfloat16_comes_back_as_bfloat16() -> None:
    """numpy() of a bfloat16 Tensor is float32 (the dtype's name is '__bf16'): the adapter casts the values back."""
    import ml_dtypes

    data = np.array([0.0078125, 384.0, 1.5, -2.0], ml_dtypes.bfloat16)
    for case, variant in ((_case("Gather", {"axis": 0}, data=data, indices=np.array([1, 0])), "indexing"),
                          (_case("GatherElements", {"axis": 0}, data=data, indices=np.array([3, 0])), "gather")):
        out = _run(case, variant)
        assert out.dtype == ml_dtypes.bfloat16
        np.testing.assert_array_equal(out, compute(case.op, case.inputs, case.attrs))


def test_bool_data_indexed_by_two_tensors_comes_back_as_weakint() -> None:
    """Finding: t[i0, i1] of a bool Tensor is dtypes.weakint (0/1); t[i0] stays bool."""
    data = np.array([[True, False], [False, True]])
    out = _run(_case("GatherND", data=data, indices=np.array([[0, 1], [1, 1]], np.int64)), "indexing")
    assert out.dtype != np.bool_
    np.testing.assert_array_equal(out, [0, 1])
    assert _run(_case("Gather", {"axis": 0}, data=data, indices=np.array([1], np.int64)), "indexing").dtype == np.bool_
