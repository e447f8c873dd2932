"""The tensorflow adapter: every shipped case on its variants, and the translation in detail."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import ml_dtypes
import numpy as np
import pytest
from _installed import require

import gather_scatter_conformance.adapters.tensorflow as tf_adapter
from gather_scatter_conformance.adapters.base import CaseData, Unsupported
from gather_scatter_conformance.adapters.tensorflow import ADAPTER, from_tensor, split_variant, to_tensor
from gather_scatter_conformance.harness.reference import compute

require("tensorflow")  # looked up, not imported: tests/_installed.py

pytestmark = pytest.mark.framework  # make check runs none of these (docs/development.md)



class _TensorFlow:
    """TensorFlow, imported by the first test that uses it, not while the suite is collected (every xdist worker
    collects this module)."""

    def __getattr__(self, name: str) -> Any:
        if name.startswith("_") or name == "pytestmark":  # what collection asks of every module attribute
            raise AttributeError(name)
        return getattr(tf_adapter.tf_module(), name)


tf = _TensorFlow()
ROOT = Path(__file__).resolve().parents[1]

# ---------------------------------------------------------------------------------------------------------------
# Translation
# ---------------------------------------------------------------------------------------------------------------


def _case(op: str, attrs: dict, **inputs: np.ndarray) -> CaseData:
    from gather_scatter_conformance.vocab.ops import with_defaults

    return CaseData(op, inputs, with_defaults(op, attrs))


def _run(case: CaseData, variant: str) -> np.ndarray:
    call = ADAPTER.prepare(case, variant)
    return ADAPTER.to_numpy(call.run())


def test_variants_are_api_times_mode_with_eager_primary_first() -> None:
    assert ADAPTER.variants("Gather") == ["gather/eager", "gather/function", "gather/xla", "gather/function_constant",
                                          "gather/xla_constant", "gather/function_dynamic", "gather/xla_dynamic"]
    assert ADAPTER.variants("Take")[:3] == ["take/eager", "take/function", "take/xla"]
    assert ADAPTER.variants("Take")[3:] == ["gather/eager", "gather/function", "gather/xla", "take/function_constant",
                                            "take/xla_constant", "gather/function_constant", "gather/xla_constant",
                                            "take/function_dynamic", "take/xla_dynamic", "gather/function_dynamic",
                                            "gather/xla_dynamic"]
    assert ADAPTER.variants("ScatterND") == [
        "tensor_scatter_nd/eager", "tensor_scatter_nd/function", "tensor_scatter_nd/xla",
        "scatter_nd/eager", "scatter_nd/function", "scatter_nd/xla",
        "tensor_scatter_nd/function_constant", "tensor_scatter_nd/xla_constant",
        "scatter_nd/function_constant", "scatter_nd/xla_constant",
        "tensor_scatter_nd/function_dynamic", "tensor_scatter_nd/xla_dynamic",
        "scatter_nd/function_dynamic", "scatter_nd/xla_dynamic",
    ]
    # The emulated ScatterElements and TensorScatter build their grids from static shapes: no dynamic twin.
    assert not [v for op in tf_adapter.NO_DYNAMIC_TWIN for v in ADAPTER.variants(op) if "dynamic" in v]
    assert "tensor_scatter_nd/xla_constant" in ADAPTER.variants("ScatterElements")
    assert split_variant("gather_nd/xla") == ("gather_nd", "xla")
    assert split_variant("gather_nd/xla_constant") == ("gather_nd", "xla")
    assert split_variant("gather_nd/function_dynamic") == ("gather_nd", "function")
    assert all(ADAPTER.is_slow(v) == ("_" in v.split("/")[1]) for op in tf_adapter.APIS for v in ADAPTER.variants(op))
    with pytest.raises(ValueError):
        split_variant("gather")
    with pytest.raises(ValueError):
        ADAPTER.prepare(_case("Gather", {}, data=np.ones(2), indices=np.zeros(1, np.int64)), "gather_nd/eager")


def test_api_strings_carry_attributes_and_mode() -> None:
    data, idx = np.arange(6, dtype=np.float32).reshape(2, 3), np.array([[0, 2], [1, 1]])
    gather = _case("Gather", {"axis": 1, "batch_dims": 1}, data=data, indices=idx)
    assert ADAPTER.prepare(gather, "gather/eager").api == "tf.gather(data, indices, axis=1, batch_dims=1)"
    assert ADAPTER.prepare(gather, "gather/function").api == (
        "tf.function(lambda data, indices: tf.gather(data, indices, axis=1, batch_dims=1))(data, indices)"
    )
    assert ADAPTER.prepare(gather, "gather/xla").api.endswith(", jit_compile=True)(data, indices)")
    gnd = _case("GatherND", {"batch_dims": 1}, data=data, indices=idx[:, :1])
    assert ADAPTER.prepare(gnd, "gather_nd/eager").api == "tf.gather_nd(data, indices, batch_dims=1)"
    ge = _case("GatherElements", {"axis": -1}, data=data, indices=idx)
    assert ADAPTER.prepare(ge, "take_along_axis/eager").api == (
        "tf.experimental.numpy.take_along_axis(data, indices, axis=-1)"
    )
    take = _case("Take", {"axis": None, "mode": "wrap"}, data=data, indices=idx)
    want = "tf.experimental.numpy.take(data, indices, axis=None, mode='wrap')"
    assert ADAPTER.prepare(take, "take/eager").api == want
    raise_flat = _case("Take", {"axis": None, "mode": "raise"}, data=data, indices=idx)
    assert ADAPTER.prepare(raise_flat, "gather/eager").api == "tf.gather(tf.reshape(data, [-1]), indices)"
    raise_axis = _case("Take", {"axis": 1, "mode": "raise"}, data=data, indices=idx)
    assert ADAPTER.prepare(raise_axis, "gather/eager").api == "tf.gather(data, indices, axis=1)"


def test_gather_batch_dims_and_take_modes_compute_the_reference() -> None:
    rng = np.random.default_rng(0)
    data = rng.standard_normal((2, 3, 4)).astype(np.float32)
    idx = rng.integers(0, 4, (2, 5))
    case = _case("Gather", {"axis": 2, "batch_dims": 1}, data=data, indices=idx)
    np.testing.assert_array_equal(_run(case, "gather/eager"), compute("Gather", case.inputs, case.attrs))
    wild = np.array([-7, -1, 0, 3, 11])
    for mode in ("clip", "wrap"):
        take = _case("Take", {"axis": 1, "mode": mode}, data=data, indices=wild)
        np.testing.assert_array_equal(_run(take, "take/eager"), compute("Take", take.inputs, take.attrs))


def test_take_modes_that_have_no_tensorflow_call_are_unsupported() -> None:
    data, idx = np.arange(3.0), np.array([0])
    with pytest.raises(Unsupported, match="rejects mode='raise'"):
        ADAPTER.prepare(_case("Take", {"mode": "raise"}, data=data, indices=idx), "take/eager")
    with pytest.raises(Unsupported, match="no mode='fill'"):
        ADAPTER.prepare(_case("Take", {"mode": "fill"}, data=data, indices=idx), "take/xla")
    with pytest.raises(Unsupported, match=r"tf\.gather has no mode argument"):
        ADAPTER.prepare(_case("Take", {"mode": "clip"}, data=data, indices=idx), "gather/eager")
    # The claim in the 'raise' reason must stay true of the installed TensorFlow.
    with pytest.raises(ValueError, match="'raise' mode to take is not supported"):
        tf.experimental.numpy.take(data, idx, mode="raise")


def test_execution_modes_differ_on_out_of_range_gather() -> None:
    case = _case("Gather", {}, data=np.array([10.0, 20.0, 30.0], np.float32), indices=np.array([0, 7]))
    for variant in ("gather/eager", "gather/function"):
        with pytest.raises(tf.errors.InvalidArgumentError, match="is not in"):
            _run(case, variant)
    np.testing.assert_array_equal(_run(case, "gather/xla"), [10.0, 30.0])  # clamped to the last element


@pytest.mark.parametrize("axis", [0, 1, -1])
@pytest.mark.parametrize("reduction", ["none", "add", "max", "min"])
def test_scatter_elements_coordinates_match_the_reference(axis: int, reduction: str) -> None:
    rng = np.random.default_rng(1)
    data = rng.standard_normal((3, 4)).astype(np.float32)
    # Distinct targets along the axis on each line (for 'none', ONNX leaves the order of duplicates open);
    # indices are smaller than data on both dims, so the coordinates must come from indices' own shape.
    if axis == 0:
        idx = np.argsort(rng.random((3, 3)), axis=0)[:2]  # (2, 3), values in [0, 3)
    else:
        idx = np.argsort(rng.random((2, 4)), axis=1)[:, :3]  # (2, 3), values in [0, 4)
    upd = rng.standard_normal(idx.shape).astype(np.float32)
    case = _case("ScatterElements", {"axis": axis, "reduction": reduction}, data=data, indices=idx, updates=upd)
    want = compute("ScatterElements", case.inputs, case.attrs)
    np.testing.assert_allclose(_run(case, "tensor_scatter_nd/eager"), want, rtol=1e-6)
    call = ADAPTER.prepare(case, "tensor_scatter_nd/eager")
    assert f"coords[{axis}] = indices" in call.api
    assert "tf.cast(tf.range(n), indices.dtype)" in call.api


def test_multiplying_scatter_is_unsupported() -> None:
    data, idx, upd = np.ones((2, 2), np.float32), np.array([[0]]), np.ones((1, 2), np.float32)
    nd = _case("ScatterND", {"reduction": "mul"}, data=data, indices=idx, updates=upd)
    with pytest.raises(Unsupported, match="no multiplying scatter"):
        ADAPTER.prepare(nd, "tensor_scatter_nd/eager")
    assert not hasattr(tf, "tensor_scatter_nd_mul")
    el = _case("ScatterElements", {"reduction": "mul"}, data=data, indices=np.zeros((1, 2), np.int64),
               updates=upd)
    with pytest.raises(Unsupported, match="no multiplying scatter"):
        ADAPTER.prepare(el, "tensor_scatter_nd/xla")


def test_scatter_nd_runs_every_case_a_zero_tensor_can_express() -> None:
    zeros, upd = np.zeros(4, np.float32), np.array([1.0, 2.0], np.float32)
    dup = np.array([[1], [1]])
    added = _case("ScatterND", {"reduction": "add"}, data=zeros, indices=dup, updates=upd)
    assert ADAPTER.prepare(added, "scatter_nd/eager").api == "tf.scatter_nd(indices, updates, shape=[4])"
    np.testing.assert_array_equal(_run(added, "scatter_nd/eager"), [0.0, 3.0, 0.0, 0.0])  # duplicates summed
    unique = _case("ScatterND", {}, data=zeros, indices=np.array([[3], [0]]), updates=upd)
    np.testing.assert_array_equal(_run(unique, "scatter_nd/xla"), [2.0, 0.0, 0.0, 1.0])
    strings = np.array(["", ""], dtype=object)
    set_str = _case("ScatterND", {}, data=strings, indices=np.array([[1]]), updates=np.array(["é"], dtype=object))
    assert _run(set_str, "scatter_nd/eager").tolist() == ["", "é"]
    # Without a reduction and with a repeated index tuple, tf.scatter_nd still runs and sums: that is measured.
    repeated = _case("ScatterND", {}, data=zeros, indices=dup, updates=upd)
    np.testing.assert_array_equal(_run(repeated, "scatter_nd/eager"), [0.0, 3.0, 0.0, 0.0])
    gaps = [
        (_case("ScatterND", {"reduction": "add"}, data=zeros + 1, indices=dup, updates=upd), "not all zeros"),
        (_case("ScatterND", {"reduction": "max"}, data=zeros, indices=dup, updates=upd), "reduction='max'"),
        (_case("ScatterND", {}, data=np.array(["a", ""], dtype=object), indices=np.array([[1]]),
               updates=np.array(["x"], dtype=object)), "not all empty strings"),
    ]
    for case, why in gaps:
        with pytest.raises(Unsupported, match=r"tf\.scatter_nd has no data input") as info:
            ADAPTER.prepare(case, "scatter_nd/function")
        assert why in str(info.value)


def test_dtype_conversion_round_trips() -> None:
    bf = np.array([1.5, -2.0, 3.0], dtype=ml_dtypes.bfloat16)
    assert to_tensor(tf, bf).dtype == tf.bfloat16
    out = from_tensor(to_tensor(tf, bf))
    assert out.dtype == np.dtype(ml_dtypes.bfloat16)
    np.testing.assert_array_equal(out, bf)
    strs = np.array([["a", "ü"], ["", "日本"]], dtype=object)
    back = from_tensor(to_tensor(tf, strs))
    assert back.dtype == object and back.tolist() == strs.tolist()
    empty = np.empty((0, 2), dtype=object)
    assert to_tensor(tf, empty).dtype == tf.string  # nothing to infer from: named explicitly
    assert from_tensor(tf.constant("x")).tolist() == "x"  # 0-d string
    gathered = _run(_case("Gather", {}, data=strs, indices=np.array([1])), "gather/eager")
    assert gathered.dtype == object and gathered.tolist() == [["", "日本"]]


def test_index_dtypes_reach_tensorflow_uncast() -> None:
    data = np.arange(4.0)
    case = _case("Gather", {}, data=data, indices=np.array([1], np.uint32))
    with pytest.raises(tf.errors.InvalidArgumentError, match="uint32"):
        _run(case, "gather/eager")
    ok = _case("Gather", {}, data=data, indices=np.array([3], np.int16))
    np.testing.assert_array_equal(_run(ok, "gather/eager"), [3.0])


def test_tf_functions_are_cached_per_call_text_and_traced_per_shape() -> None:
    tf_adapter._FUNCTIONS.clear()
    small = _case("GatherND", {}, data=np.arange(4.0).reshape(2, 2), indices=np.array([[1, 0]]))
    large = _case("GatherND", {}, data=np.arange(9.0).reshape(3, 3), indices=np.array([[2, 2], [0, 1]]))
    assert _run(small, "gather_nd/function").tolist() == [2.0]
    assert _run(large, "gather_nd/function").tolist() == [8.0, 1.0]
    assert len(tf_adapter._FUNCTIONS) == 1  # one tf.function, two traces
    (fn,) = tf_adapter._FUNCTIONS.values()
    assert fn.experimental_get_tracing_count() == 2
    _run(large, "gather_nd/xla")
    _run(_case("GatherND", {"batch_dims": 1}, data=np.arange(4.0).reshape(2, 2), indices=np.array([[1], [0]])),
         "gather_nd/function")
    assert len(tf_adapter._FUNCTIONS) == 3
    _run(small, "gather_nd/eager")
    assert len(tf_adapter._FUNCTIONS) == 3  # eager wraps nothing


@pytest.mark.parametrize("mode", ["eager", "function"])
def test_the_repro_of_a_scalar_string_result_runs(mode: str) -> None:
    """A 0-d tf.string result's .numpy() is bytes, not an array: the repro script's decoding must take it too."""
    data = np.empty(3, dtype=object)
    data[:] = ["a", "bb", "ccc"]
    case = _case("Gather", {"axis": 0}, data=data, indices=np.array(1))
    call = ADAPTER.prepare(case, f"gather/{mode}")
    scope: dict = {"np": np, "data": data, "indices": np.array(1)}
    exec(call.source, scope)
    assert scope["result"].shape == () and scope["result"].item() == "bb" == ADAPTER.to_numpy(call.run()).item()


@pytest.mark.parametrize("mode", ["function", "xla"])
def test_a_constant_twin_makes_the_indices_a_const_of_the_traced_graph(mode: str) -> None:
    """Index provenance (#40): the twin traces a function of the data alone, the indices a Const node made inside
    it; the value agrees with the parent's, and the repro runs."""
    import tensorflow as tf

    data, indices = np.arange(5, dtype=np.float32), np.array([3, 1])
    case = CaseData("Gather", {"data": data, "indices": indices}, {"axis": 0, "batch_dims": 0})
    call = ADAPTER.prepare(case, f"gather/{mode}_constant")
    assert call.api.startswith("tf.function(lambda data: f(data, tf.constant(indices))")
    np.testing.assert_array_equal(call.run().numpy(), [3, 1])
    scope: dict = {"np": np, "data": data, "indices": indices}
    exec(call.source, scope)
    np.testing.assert_array_equal(scope["result"], [3, 1])
    from gather_scatter_conformance.adapters import tensorflow as adapter

    graph = adapter._closing_over(tf, adapter.build_spec(tf, case, "gather"), mode, indices, 1).get_concrete_function(
        tf.TensorSpec([5], tf.float32)).graph
    assert [op.type for op in graph.get_operations() if op.type == "Const"] and len(graph.inputs) == 1


def _shapes(concrete: object) -> list[list[int | None]]:
    """The shapes a concrete function was traced for (its structured input signature, the positional inputs)."""
    args, _ = concrete.structured_input_signature  # type: ignore[attr-defined]
    return [spec.shape.as_list() for spec in args]


@pytest.mark.parametrize("mode", ["function", "xla"])
def test_a_dynamic_twin_is_traced_for_unknown_dimensions(mode: str) -> None:
    """Dynamic shapes (#40): the twin's tf.function has an input_signature of every input's rank with each dimension
    None (a scalar's shape stays []), traced once for any sizes; the parent's is traced for the case's shapes. Both
    give the reference value, and the twin's repro builds the same signature."""
    tf_adapter._FUNCTIONS.clear()
    data = np.arange(12, dtype=np.float32).reshape(3, 4)
    case = _case("Gather", {"axis": 1}, data=data, indices=np.array([[3, 0], [1, 1]]))
    want = compute("Gather", case.inputs, case.attrs)
    parent, twin = ADAPTER.prepare(case, f"gather/{mode}"), ADAPTER.prepare(case, f"gather/{mode}_dynamic")
    sig = "input_signature=[tf.TensorSpec([None, None], tf.float32), tf.TensorSpec([None, None], tf.int64)]"
    assert sig in twin.api and "input_signature" not in parent.api
    for call in (parent, twin):
        np.testing.assert_array_equal(ADAPTER.to_numpy(call.run()), want)
    static = tf_adapter._FUNCTIONS[(mode, parent.api)]
    dynamic = tf_adapter._FUNCTIONS[(mode, twin.api)]
    assert _shapes(static.get_concrete_function(tf.constant(data), tf.constant(case.inputs["indices"]))) == [
        [3, 4], [2, 2]]
    assert _shapes(dynamic.get_concrete_function()) == [[None, None], [None, None]]
    placeholders = [t.shape.as_list() for t in dynamic.get_concrete_function().graph.inputs]
    assert placeholders == [[None, None], [None, None]]
    # Another size of the same ranks and dtypes reuses the one trace.
    other = _case("Gather", {"axis": 1}, data=np.ones((2, 5), np.float32), indices=np.array([[4]]))
    assert ADAPTER.prepare(other, f"gather/{mode}_dynamic").api == twin.api
    np.testing.assert_array_equal(_run(other, f"gather/{mode}_dynamic"), [[[1.0]], [[1.0]]])
    assert dynamic.experimental_get_tracing_count() == 1
    scope: dict = {"np": np, **case.inputs}
    exec(twin.source, scope)
    assert f"{sig})(data, indices)" in twin.source
    np.testing.assert_array_equal(scope["result"], want)


def test_a_dynamic_twin_s_signature_keeps_scalars_strings_and_python_attributes() -> None:
    """A 0-d input's TensorSpec has shape [] (no dimension to leave open), a string input's dtype is tf.string, and
    the attributes stay Python constants of the call, not inputs."""
    strs = np.array([["a", "ü"], ["", "日本"]], dtype=object)
    case = _case("Gather", {"axis": 1, "batch_dims": 0}, data=strs, indices=np.array(1, np.int32))
    call = ADAPTER.prepare(case, "gather/function_dynamic")
    assert call.api == ("tf.function(lambda data, indices: tf.gather(data, indices, axis=1, batch_dims=0), "
                        "input_signature=[tf.TensorSpec([None, None], tf.string), tf.TensorSpec([], tf.int32)])"
                        "(data, indices)")
    assert ADAPTER.to_numpy(call.run()).tolist() == ["ü", "日本"]
    fn = tf_adapter._FUNCTIONS[("function", call.api)]
    assert _shapes(fn.get_concrete_function()) == [[None, None], []]


def test_a_dynamic_twin_runs_through_the_harness_to_the_reference() -> None:
    from gather_scatter_conformance.harness.cases.load import load_file
    from gather_scatter_conformance.harness.run.runner import InProcess, execute

    (case,) = [c for c in load_file(ROOT / "cases" / "gather_nd.yaml", "cases/gather_nd.yaml")
               if c.id == "gathernd-batch-dims-1-elements"]
    for variant in ("gather_nd/function_dynamic", "gather_nd/xla_dynamic"):
        record = execute(case, "tensorflow", variant, InProcess())
        assert record.outcome == "ok" and record.verdict == "conforms", (variant, record.reason, record.error_message)
        assert "input_signature=[tf.TensorSpec([None, None" in record.api
