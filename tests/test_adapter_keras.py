"""The Keras 3 adapter: the translation to keras.ops calls, one worker process per backend, the record of a call
that writes into the caller's arrays, and the findings, each shown by a real call."""

from __future__ import annotations

import importlib.util
import warnings
from collections.abc import Iterator
from typing import Any

import numpy as np
import pytest

# Not imported at collection: keras imports its default backend, TensorFlow, and importing paddle 3.3.1 after
# TensorFlow 2.21 in one process is a segfault (tests/test_adapter_paddle.py imports paddle when collected).
if importlib.util.find_spec("keras") is None:
    pytest.skip("keras is not installed", allow_module_level=True)

from gather_scatter_conformance.adapters import keras as keras_adapter
from gather_scatter_conformance.adapters import keras_calls as calls
from gather_scatter_conformance.adapters.base import CaseData, Unsupported
from gather_scatter_conformance.harness.reference import compute
from gather_scatter_conformance.harness.reference.compare import compare
from gather_scatter_conformance.harness.run.worker import run_case
from gather_scatter_conformance.vocab import wire
from gather_scatter_conformance.vocab.ops import with_defaults

pytestmark = pytest.mark.framework  # make check runs none of these (docs/development.md)

ADAPTER = keras_adapter.ADAPTER


def _case(op: str, attrs: dict[str, Any] | None = None, **inputs: Any) -> CaseData:
    return CaseData(op=op, inputs={k: np.asarray(v) for k, v in inputs.items()}, attrs=with_defaults(op, attrs))


def _run(case: CaseData, variant: str) -> np.ndarray:
    return ADAPTER.to_numpy(ADAPTER.prepare(case, variant).run())


@pytest.fixture(scope="module", autouse=True)
def _restore_backend() -> Iterator[None]:
    """Tests that run a backend in this process switch Keras to it; the process's own backend is put back after."""
    import keras

    before = keras.config.backend()
    yield
    keras_adapter._keras(before)


# --- variants and the translation (no framework) ---------------------------------------------------------------


def test_variants_are_the_keras_function_on_each_backend_tensorflow_first() -> None:
    assert ADAPTER.variants("Gather") == ["take/tensorflow", "take/jax", "take/torch", "take/numpy"]
    assert ADAPTER.variants("ScatterND")[::4] == ["scatter_update/tensorflow", "scatter/tensorflow",
                                                  "slice_update/tensorflow"]
    assert ADAPTER.variants("GatherND") == [] and ADAPTER.variants("ScatterElements") == []  # not mapped
    assert ADAPTER.worker_env("take/torch") == {"KERAS_BACKEND": "torch"}


def test_scatter_nd_indices_become_rows_and_updates_follow() -> None:
    inputs = {"data": np.zeros((2, 3, 4)), "indices": np.zeros((2, 2, 2), np.int64), "updates": np.zeros((2, 2, 4))}
    assert calls.expression("ScatterND", "scatter_update", inputs, {"reduction": "mul"}) == (
        "keras.ops.scatter_update(data, indices.reshape(-1, 2), updates.reshape(4, 4), reduction='mul')")


def test_slice_update_expresses_one_index_tuple_only() -> None:
    one = {"data": np.zeros((3, 4)), "indices": np.array([[-1]]), "updates": np.ones((1, 4))}
    assert calls.expression("ScatterND", "slice_update", one, {"reduction": "none"}) == (
        "keras.ops.slice_update(data, [-1, 0], updates)")
    two = {**one, "indices": np.array([[0], [1]]), "updates": np.ones((2, 4))}
    with pytest.raises(Unsupported, match="one index tuple"):
        calls.expression("ScatterND", "slice_update", two, {"reduction": "none"})
    with pytest.raises(Unsupported, match="no reduction"):
        calls.expression("ScatterND", "slice_update", one, {"reduction": "add"})


def test_scatter_is_scatter_update_of_zeros_so_it_needs_zero_data() -> None:
    inputs = {"data": np.zeros(4), "indices": np.array([[1]]), "updates": np.ones(1)}
    assert calls.expression("ScatterND", "scatter", inputs, {"reduction": "none"}) == (
        "keras.ops.scatter(indices, updates, (4,))")
    with pytest.raises(Unsupported, match="not all zeros"):
        calls.expression("ScatterND", "scatter", {**inputs, "data": np.ones(4)}, {"reduction": "none"})


def test_what_keras_ops_take_cannot_say_is_unsupported() -> None:
    with pytest.raises(Unsupported, match="no mode"):
        ADAPTER.prepare(_case("Take", {"axis": 0, "mode": "wrap"}, data=[1.0, 2.0], indices=[0]), "take/numpy")
    with pytest.raises(Unsupported, match="batch_dims"):
        ADAPTER.prepare(_case("Gather", {"axis": 1, "batch_dims": 1}, data=np.ones((2, 2)), indices=[[0], [1]]),
                        "take/numpy")
    with pytest.raises(Unsupported, match="no string tensors"):
        ADAPTER.prepare(_case("Gather", data=np.array(["a"], dtype=object), indices=[0]), "take/jax")


# --- real calls on the NumPy backend (switching to it in this process is cheap) ------------------------------------


@pytest.mark.parametrize(("op", "attrs", "inputs"), [
    ("Gather", {"axis": 1}, {"data": np.arange(6.0).reshape(2, 3), "indices": np.array([[2, -1], [0, 1]])}),
    ("GatherElements", {"axis": 0}, {"data": np.arange(6.0).reshape(2, 3), "indices": np.array([[1, 0, -1]])}),
    ("Take", {"axis": None, "mode": "raise"}, {"data": np.arange(6.0).reshape(2, 3), "indices": np.array([5, -6])}),
    ("ScatterND", {"reduction": "add"}, {"data": np.arange(4.0), "indices": np.array([[1], [1], [3]]),
                                         "updates": np.array([1.0, 2.0, 3.0])}),
])
def test_numpy_backend_values_equal_the_reference(op: str, attrs: dict[str, Any], inputs: dict[str, Any]) -> None:
    case = _case(op, attrs, **inputs)
    for variant in ADAPTER.variants(op):
        if variant.endswith("/numpy") and variant.split("/")[0] != "slice_update":
            try:
                observed = _run(case, variant)
            except Unsupported:
                continue
            result = compare(observed, compute(op, case.inputs, case.attrs))
            assert result.equal, f"{variant}: {result.reason}"


def test_numpy_backend_scatter_update_writes_into_the_callers_data_and_the_call_says_so() -> None:
    data = np.zeros(4, np.float32)
    case = _case("ScatterND", data=data, indices=[[1]], updates=np.array([5.0], np.float32))
    call = ADAPTER.prepare(case, "scatter_update/numpy")
    out = ADAPTER.to_numpy(call.run())
    assert out.tolist() == [0.0, 5.0, 0.0, 0.0]
    assert call.facts == {"mutates_inputs": ["data"]}
    assert case.inputs["data"].tolist() == [0.0] * 4  # the adapter gave Keras a copy: the case's array is intact

    # The same call made directly: the caller's own array is overwritten.
    keras = keras_adapter._keras("numpy")
    mine = np.zeros(4, np.float32)
    keras.ops.scatter_update(mine, np.array([[1]]), np.array([5.0], np.float32))
    assert mine.tolist() == [0.0, 5.0, 0.0, 0.0]
    keras.ops.slice_update(mine, [3], np.array([7.0], np.float32))
    assert mine.tolist() == [0.0, 5.0, 0.0, 7.0]


def test_a_mutating_call_is_recorded_by_the_worker_and_its_reason_says_so() -> None:
    from gather_scatter_conformance.harness.cases.load import load_file
    from gather_scatter_conformance.harness.run.runner import InProcess, execute

    root = __import__("pathlib").Path(__file__).resolve().parents[1]
    case = next(c for c in load_file(root / "cases" / "scatter_nd.yaml", "cases/scatter_nd.yaml")
                if getattr(c, "op", None) == "ScatterND" and c.attrs.get("reduction") == "none")
    record = execute(case, "keras", "scatter_update/numpy", InProcess())
    assert record.outcome == "ok" and record.mutates_inputs == ["data"]
    assert "wrote into the caller's data" in record.reason
    payload = {"op": "ScatterND", "attrs": {"reduction": "none"}, "inputs": {
        "data": wire.encode(np.zeros(3)), "indices": wire.encode(np.array([[0]])), "updates": wire.encode(np.ones(1))}}
    assert run_case("keras", "scatter_update/numpy", payload)["mutates_inputs"] == ["data"]
    assert "mutates_inputs" not in run_case("keras", "scatter/numpy", payload)  # scatter builds its own zeros


def test_numpy_backend_scatter_narrows_int64_values_to_int32() -> None:
    keras = keras_adapter._keras("numpy")
    out = keras.ops.scatter(np.array([[1]]), np.array([2**53 + 1], np.int64), (2,))
    assert out.dtype == np.int32 and out.tolist() == [0, 1]  # Keras's own conversion, not NumPy's


# --- one worker process per backend (the adapter's worker_env), and each backend's findings ---------------------


@pytest.fixture(scope="module")
def isolated() -> Iterator[Any]:
    from gather_scatter_conformance.harness.run.isolation import Isolated

    ex = Isolated(timeout=120.0, fork=False)
    yield ex
    ex.close()


def _payload(op: str, attrs: dict[str, Any], **inputs: np.ndarray) -> dict[str, Any]:
    return {"op": op, "attrs": with_defaults(op, attrs), "inputs": {k: wire.encode(v) for k, v in inputs.items()}}


@pytest.mark.slow
def test_each_backend_runs_in_a_worker_of_its_own(isolated: Any) -> None:
    # Out-of-range take: each backend answers its own way, so the answers show which backend ran.
    payload = _payload("Take", {"axis": 0, "mode": "raise"}, data=np.arange(3.0), indices=np.array([3]))
    got = {b: isolated.run("keras", f"take/{b}", payload) for b in calls.BACKENDS}
    assert np.isnan(wire.decode(got["jax"]["value"])).all()  # jnp.take's 'fill'
    assert got["numpy"]["error_type"] == "IndexError"
    assert got["torch"]["error_type"] == "IndexError"  # index_select: "index out of range in self"
    assert "InvalidArgumentError" in got["tensorflow"]["error_type"]
    assert sorted(isolated._workers) == sorted(("keras", (("KERAS_BACKEND", b),)) for b in calls.BACKENDS)


@pytest.mark.slow
def test_torch_backend_take_counts_flat_negative_indices_from_the_first_dim(isolated: Any) -> None:
    # keras.ops.take(x, [-1]) with the default axis (flattened): Keras's torch backend adds x.shape[0] (2), not
    # x.size (6), so -1 reads element 1; the other backends read element 5.
    payload = _payload("Take", {"axis": None, "mode": "raise"}, data=np.arange(6.0).reshape(2, 3),
                       indices=np.array([-1]))
    for backend, want in {"torch": [1.0], "numpy": [5.0], "tensorflow": [5.0], "jax": [5.0]}.items():
        assert wire.decode(isolated.run("keras", f"take/{backend}", payload)["value"]).tolist() == want, backend


@pytest.mark.slow
def test_slice_update_backends_disagree_on_an_out_of_range_start(isolated: Any) -> None:
    payload = _payload("ScatterND", {"reduction": "none"}, data=np.zeros(4), indices=np.array([[4]]),
                       updates=np.array([5.0]))
    got = {b: isolated.run("keras", f"slice_update/{b}", payload) for b in calls.BACKENDS}
    assert wire.decode(got["tensorflow"]["value"]).tolist() == [0, 0, 0, 5.0]  # clamped start
    assert wire.decode(got["jax"]["value"]).tolist() == [0, 0, 0, 5.0]
    assert wire.decode(got["torch"]["value"]).tolist() == [0, 0, 0, 0]  # nothing written, no error
    assert got["numpy"]["error_type"] == "IndexError"


@pytest.mark.slow
def test_scatter_sums_duplicates_though_documented_as_scatter_update_of_zeros(isolated: Any) -> None:
    payload = _payload("ScatterND", {"reduction": "none"}, data=np.zeros(3), indices=np.array([[1], [1]]),
                       updates=np.array([5.0, 7.0]))
    for backend in calls.BACKENDS:
        assert wire.decode(isolated.run("keras", f"scatter/{backend}", payload)["value"]).tolist() == [0, 12.0, 0]
        assert wire.decode(isolated.run("keras", f"scatter_update/{backend}", payload)["value"]).tolist() == [
            0, 7.0, 0]  # last write wins, as scatter_update's docstring says


@pytest.mark.slow
def test_torch_backend_scatter_takes_uint8_indices_as_a_mask(isolated: Any) -> None:
    payload = _payload("ScatterND", {"reduction": "none"}, data=np.zeros(4), indices=np.array([[3], [1]], np.uint8),
                       updates=np.array([5.0, 6.0]))
    assert wire.decode(isolated.run("keras", "scatter/torch", payload)["value"]).tolist() == [11.0] * 4
    assert wire.decode(isolated.run("keras", "scatter/numpy", payload)["value"]).tolist() == [0, 6.0, 0, 5.0]


def test_switching_backends_in_process_is_the_fallback() -> None:
    """Without worker processes (--isolation none) the adapter switches Keras's backend itself."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        case = _case("Gather", {"axis": 0}, data=np.arange(3.0), indices=[-1])
        assert _run(case, "take/numpy").tolist() == [2.0]
        assert keras_adapter._keras().config.backend() == "numpy"


def test_a_reduction_the_release_lacks_is_unsupported_not_an_error(monkeypatch: pytest.MonkeyPatch) -> None:
    """keras.ops.scatter_update takes ``reduction`` from 3.14; 3.13.2 and older raise TypeError on it, which is no
    behaviour of theirs (a release sweep counts it where the API arrived). The pinned release has the argument, so
    the release before it is given here by scatter_update's 3.13 signature; without reduction the call runs as
    ever."""
    case = _case("ScatterND", {"reduction": "add"}, data=np.zeros(3, np.float32), indices=np.array([[1], [1]]),
                 updates=np.array([1.0, 2.0], np.float32))
    plain = _case("ScatterND", data=np.zeros(3, np.float32), indices=np.array([[1]]),
                  updates=np.array([5.0], np.float32))
    assert _run(case, "scatter_update/numpy").tolist() == [0.0, 3.0, 0.0]  # 3.14 and later: the reduction is there
    keras = keras_adapter._keras("numpy")  # the module the adapter runs on (set_backend re-imports Keras)
    old = keras.ops.scatter_update

    def scatter_update_3_13(inputs: Any, indices: Any, updates: Any) -> Any:  # 3.13.2's signature
        return old(inputs, indices, updates)

    monkeypatch.setattr(keras.ops, "scatter_update", scatter_update_3_13)
    with pytest.raises(Unsupported, match="has no reduction argument"):
        _run(case, "scatter_update/numpy")
    assert _run(plain, "scatter_update/numpy").tolist() == [0.0, 5.0, 0.0]
