"""The OpenVINO adapter: every shipped case on every variant, and the translation in detail."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import ml_dtypes
import numpy as np
import pytest
from _inprocess import crash_risk
from _installed import require

from gather_scatter_conformance.adapters.base import CaseData, Unsupported
from gather_scatter_conformance.adapters.openvino import (
    ADAPTER,
    OpenVinoAdapter,
    build_model,
    element_type,
    from_tensor,
    native_spec,
    to_tensor,
)
from gather_scatter_conformance.harness.cases.load import Case, load_file
from gather_scatter_conformance.vocab.ops import with_defaults

require("openvino")  # looked up, not imported: tests/_installed.py

pytestmark = pytest.mark.framework  # make check runs none of these (docs/development.md)

ROOT = Path(__file__).resolve().parents[1]
ONNX = "read_model"


def test_crash_risk_names_the_known_crashers(tmp_path: Path) -> None:
    def case(op: str, text: str) -> Case:
        path = tmp_path / "c.yaml"
        path.write_text(f"op: {op}\ncases:\n  - id: c\n    source: test\n    inputs: {text}\n", encoding="utf-8")
        (entry,) = load_file(path)
        assert isinstance(entry, Case)
        return entry

    empty = case("Gather", "{data: [1, 2, 3], indices: {value: [], shape: [0]}}")
    assert "SIGFPE" in (crash_risk(empty, "Gather-8") or "")
    below = case("ScatterElements", "{data: [1, 2, 3], indices: [-4], updates: [9]}")
    assert "out of bounds" in (crash_risk(below, "ScatterElementsUpdate-12") or "")
    fine = case("ScatterElements", "{data: [1, 2, 3], indices: [-3], updates: [9]}")
    assert crash_risk(fine, "ScatterElementsUpdate-12") is None


# --- variants --------------------------------------------------------------------------------------------------


def test_variants_newest_node_first_and_onnx_frontend_last() -> None:
    twins = ["{}/constant", f"{ONNX}/constant", "{}/dynamic", f"{ONNX}/dynamic"]
    assert ADAPTER.variants("Gather") == ["Gather-8", "Gather-7", "Gather-1", ONNX,
                                          *(t.format("Gather-8") for t in twins)]
    assert ADAPTER.variants("GatherElements") == ["GatherElements-6", ONNX,
                                                  *(t.format("GatherElements-6") for t in twins)]
    assert ADAPTER.variants("GatherND") == ["GatherND-8", "GatherND-5", ONNX, *(t.format("GatherND-8") for t in twins)]
    assert ADAPTER.variants("ScatterElements") == ["ScatterElementsUpdate-12", "ScatterElementsUpdate-3", ONNX,
                                                   *(t.format("ScatterElementsUpdate-12") for t in twins),
                                                   "ScatterElementsUpdate-12/one_thread"]
    assert ADAPTER.variants("ScatterND") == ["ScatterNDUpdate-15", "ScatterNDUpdate-3", "ScatterUpdate-3", ONNX,
                                             *(t.format("ScatterNDUpdate-15") for t in twins),
                                             "ScatterNDUpdate-15/one_thread"]
    assert ADAPTER.variants("Take") == ["Gather-8", ONNX, *(t.format("Gather-8") for t in twins)]
    assert ADAPTER.variants("TensorScatter") == [ONNX, f"{ONNX}/constant", f"{ONNX}/dynamic"]
    assert [v for v in ADAPTER.variants("Gather") if ADAPTER.is_slow(v)] == [
        "Gather-8/constant", f"{ONNX}/constant", "Gather-8/dynamic", f"{ONNX}/dynamic"]


@pytest.mark.parametrize("variant", ["Gather-8/constant", f"{ONNX}/constant"])
def test_the_constant_variants_hold_the_indices_in_the_model(variant: str) -> None:
    """Index provenance (#40): the indices are an ov Constant (an initializer through the ONNX frontend), the data
    the one input; the repro builds the same model."""
    data = np.arange(12, dtype=np.float32).reshape(3, 4)
    case = CaseData("Gather", {"data": data, "indices": np.array([2, 0])}, {"axis": 0, "batch_dims": 0})
    ADAPTER.cache.clear()
    call = ADAPTER.prepare(case, variant)
    expected = data[[2, 0]]
    np.testing.assert_array_equal(call.run(), expected)
    (compiled,) = ADAPTER.cache.values()
    assert [p.get_any_name() for p in compiled.inputs] == ["data"]
    scope: dict = {"np": np, "data": data, "indices": np.array([2, 0])}
    exec(call.source, scope)
    np.testing.assert_array_equal(scope["result"], expected)


@pytest.mark.parametrize("variant", ["Gather-8/dynamic", f"{ONNX}/dynamic"])
def test_the_dynamic_variants_compile_for_any_size_of_the_rank(variant: str) -> None:
    """Dynamic shapes (#40): every input dimension is dynamic (a Parameter of shape [-1, -1]; dim_params through the
    ONNX frontend), so the compiled model takes other sizes; the repro builds the same model."""
    data = np.arange(12, dtype=np.float32).reshape(3, 4)
    case = CaseData("Gather", {"data": data, "indices": np.array([2, 0])}, {"axis": 0, "batch_dims": 0})
    ADAPTER.cache.clear()
    call = ADAPTER.prepare(case, variant)
    np.testing.assert_array_equal(call.run(), data[[2, 0]])
    (compiled,) = ADAPTER.cache.values()
    assert [p.get_partial_shape().is_dynamic for p in compiled.inputs] == [True, True]
    bigger = np.arange(30, dtype=np.float32).reshape(6, 5)
    np.testing.assert_array_equal(ADAPTER._infer(compiled, [bigger, np.array([5, 1, 0])]), bigger[[5, 1, 0]])
    scope: dict = {"np": np, "data": data, "indices": np.array([2, 0])}
    exec(call.source, scope)
    np.testing.assert_array_equal(scope["result"], data[[2, 0]])


@pytest.mark.parametrize("variant", ["GatherND-8/dynamic", f"{ONNX}/dynamic"])
def test_a_dynamic_gathernd_keeps_its_index_depth(variant: str) -> None:
    """GatherND's output rank depends on the indices' last dimension: a dynamic twin keeps it at the case's size, as
    an exporter does (onnx_graph.static_dims). With it dynamic, 2026.4.1's CPU plugin refuses every such model
    ("Check '!shape.rank().is_dynamic()' failed"), which says nothing of how programs meet GatherND."""
    data = np.arange(12, dtype=np.float32).reshape(3, 4)
    case = CaseData("GatherND", {"data": data, "indices": np.array([[2, 1], [0, 3]])}, {"batch_dims": 0})
    np.testing.assert_array_equal(ADAPTER.prepare(case, variant).run(), [9, 3])


def test_an_empty_constant_is_unsupported_with_openvinos_reason() -> None:
    case = CaseData("Gather", {"data": np.ones((2, 3), np.float32), "indices": np.zeros(0, np.int64)},
                    {"axis": 0, "batch_dims": 0})
    with pytest.raises(Unsupported, match="empty Constant"):
        ADAPTER.prepare(case, "Gather-8/constant")


def test_warm_imports_what_the_onnx_frontend_variant_needs() -> None:
    # The template for risky cases is forked right after warm(): a child that imports onnx itself can hang.
    code = ("import sys; from gather_scatter_conformance.harness.run.worker import describe; describe('openvino'); "
            "missing = [m for m in ('openvino', 'onnx', 'onnx.helper') if m not in sys.modules]; "
            "assert not missing, missing")
    subprocess.run([sys.executable, "-c", code], cwd=ROOT, check=True)


@pytest.mark.parametrize(
    ("variant", "op", "type_name", "version"),
    [
        ("Gather-8", "Gather", "Gather", "opset8"),
        ("Gather-7", "Gather", "Gather", "opset7"),
        ("Gather-1", "Gather", "Gather", "opset1"),
        ("GatherElements-6", "GatherElements", "GatherElements", "opset6"),
        ("GatherND-8", "GatherND", "GatherND", "opset8"),
        ("GatherND-5", "GatherND", "GatherND", "opset5"),
        ("ScatterElementsUpdate-12", "ScatterElements", "ScatterElementsUpdate", "opset12"),
        ("ScatterElementsUpdate-3", "ScatterElements", "ScatterElementsUpdate", "opset3"),
        ("ScatterNDUpdate-15", "ScatterND", "ScatterNDUpdate", "opset15"),
        ("ScatterNDUpdate-3", "ScatterND", "ScatterNDUpdate", "opset4"),  # v3 class, registered in opset4
        ("ScatterUpdate-3", "ScatterND", "ScatterUpdate", "opset3"),
    ],
)
def test_each_variant_builds_its_node_version(variant: str, op: str, type_name: str, version: str) -> None:
    data = np.arange(6, dtype=np.float32).reshape(2, 3)
    inputs = {
        "Gather": {"data": data, "indices": np.array([1, 0])},
        "GatherElements": {"data": data, "indices": np.zeros((2, 3), np.int64)},
        "GatherND": {"data": data, "indices": np.array([[1], [0]])},
        "ScatterElements": {"data": data, "indices": np.zeros((1, 3), np.int64), "updates": data[:1]},
        "ScatterND": {"data": data, "indices": np.array([[1]]), "updates": data[:1]},
    }[op]
    model = build_model(native_spec(CaseData(op, inputs, with_defaults(op, {})), variant))
    nodes = [n for n in model.get_ordered_ops() if n.get_type_name() == type_name]
    assert len(nodes) == 1
    assert nodes[0].get_type_info().version_id == version


# --- attribute translation -------------------------------------------------------------------------------------


def _spec(op: str, variant: str, inputs: dict[str, np.ndarray], **attrs: object):
    return native_spec(CaseData(op, inputs, with_defaults(op, attrs)), variant)


_D = np.arange(6, dtype=np.float32).reshape(2, 3)
_I = np.array([[0, 1]])


def test_gather_axis_and_batch_dims() -> None:
    spec = _spec("Gather", "Gather-8", {"data": _D, "indices": _I}, axis=1, batch_dims=-1)
    assert spec.kwargs == {"axis": 1, "batch_dims": -1}
    assert spec.api().startswith("ov.opset8.gather(data, indices, axis=1, batch_dims=-1)")
    assert _spec("Gather", "Gather-1", {"data": _D, "indices": _I}, axis=-1).kwargs == {"axis": -1}
    with pytest.raises(Unsupported, match="batch_dims"):
        _spec("Gather", "Gather-1", {"data": _D, "indices": _I}, axis=1, batch_dims=1)


def test_take_flattens_without_axis_and_supports_raise_only() -> None:
    spec = _spec("Take", "Gather-8", {"data": _D, "indices": np.array([5, 0])})
    assert spec.flatten and spec.kwargs == {"axis": 0, "batch_dims": 0}
    assert "ov.opset8.reshape(data, [-1], special_zero=False)" in spec.api()
    out = ADAPTER.prepare(CaseData("Take", {"data": _D, "indices": np.array([5, 0])}, with_defaults("Take", {})),
                          "Gather-8").run()
    np.testing.assert_array_equal(out, [5.0, 0.0])
    for mode in ("wrap", "clip", "fill"):
        with pytest.raises(Unsupported, match=mode):
            _spec("Take", "Gather-8", {"data": _D, "indices": _I}, mode=mode)


@pytest.mark.parametrize(("reduction", "native"), [("none", "none"), ("add", "sum"), ("mul", "prod"),
                                                   ("max", "max"), ("min", "min")])
def test_scatter_reductions_map_to_openvino_names(reduction: str, native: str) -> None:
    se = {"data": _D, "indices": np.zeros((1, 3), np.int64), "updates": _D[:1]}
    spec = _spec("ScatterElements", "ScatterElementsUpdate-12", se, axis=-1, reduction=reduction)
    assert spec.kwargs == {"axis": -1, "reduction": native, "use_init_val": True}
    sn = {"data": _D, "indices": np.array([[1]]), "updates": _D[:1]}
    assert _spec("ScatterND", "ScatterNDUpdate-15", sn, reduction=reduction).kwargs == {"reduction": native}
    if reduction != "none":
        for op, variant, inputs in (("ScatterElements", "ScatterElementsUpdate-3", se),
                                    ("ScatterND", "ScatterNDUpdate-3", sn), ("ScatterND", "ScatterUpdate-3", sn)):
            with pytest.raises(Unsupported, match="no reduction"):
                _spec(op, variant, inputs, reduction=reduction)


def test_scatter_elements_12_reduction_runs_with_duplicates() -> None:
    inputs = {"data": np.ones(3, np.float32), "indices": np.array([1, 1, -1]), "updates": np.array([2, 3, 4], "f4")}
    case = CaseData("ScatterElements", inputs, with_defaults("ScatterElements", {"reduction": "add"}))
    np.testing.assert_array_equal(ADAPTER.prepare(case, "ScatterElementsUpdate-12").run(), [1, 6, 5])


def test_scatter_update_only_for_one_tuples_and_slices_the_last_index_dim() -> None:
    inputs = {"data": _D, "indices": np.array([[1], [0]]), "updates": _D[::-1]}
    spec = _spec("ScatterND", "ScatterUpdate-3", inputs)
    assert spec.kwargs == {"axis": 0}
    np.testing.assert_array_equal(spec.inputs["indices"], [1, 0])
    assert spec.api().startswith("ov.opset3.scatter_update(data, indices[..., 0], updates, axis=0)")
    out = ADAPTER.prepare(CaseData("ScatterND", inputs, with_defaults("ScatterND", {})), "ScatterUpdate-3").run()
    np.testing.assert_array_equal(out, _D)
    with pytest.raises(Unsupported, match="length 1"):
        _spec("ScatterND", "ScatterUpdate-3", {"data": _D, "indices": np.array([[1, 2]]), "updates": np.ones(1)})


def test_node_inputs_follow_operator_order_not_dict_order() -> None:
    inputs = {"updates": _D[:1], "data": _D, "indices": np.array([[1]])}
    assert list(_spec("ScatterND", "ScatterNDUpdate-15", inputs).inputs) == ["data", "indices", "updates"]


# --- element types ---------------------------------------------------------------------------------------------


def test_element_types() -> None:
    import openvino as ov

    assert element_type(np.zeros(1, ml_dtypes.bfloat16)) == ov.Type.bf16
    assert element_type(np.array(["a"], dtype=object)) == ov.Type.string
    assert element_type(np.zeros(1, np.uint64)) == ov.Type.u64
    assert element_type(np.zeros(1, bool)) == ov.Type.boolean
    with pytest.raises(Unsupported, match="complex"):
        element_type(np.zeros(1, np.complex64))


@pytest.mark.parametrize(
    "arr",
    [
        np.array([1.5, -2.25, 3.0], dtype=ml_dtypes.bfloat16),
        np.array([[True, False]]),
        np.array(7, dtype=np.int32),  # 0-d stays 0-d (np.ascontiguousarray would make it (1,))
        np.array([2**63 + 1], dtype=np.uint64),
        np.array([[1.0, 2.0]], dtype=np.float16)[:, ::-1],  # non-contiguous
    ],
)
def test_tensor_round_trip_keeps_element_type_and_shape(arr: np.ndarray) -> None:
    back = from_tensor(to_tensor(arr))
    assert back.dtype == arr.dtype and back.shape == arr.shape
    np.testing.assert_array_equal(back.astype(np.float64) if arr.dtype.name == "bfloat16" else back,
                                  arr.astype(np.float64) if arr.dtype.name == "bfloat16" else arr)


def test_string_tensor_round_trip_gives_object_array() -> None:
    arr = np.empty((2, 1), dtype=object)
    arr[:, 0] = ["ab", "é"]
    back = from_tensor(to_tensor(arr))
    assert back.dtype == object and back.shape == (2, 1) and back.tolist() == [["ab"], ["é"]]


def test_bfloat16_gather_returns_bfloat16() -> None:
    data = np.array([1.5, 2.0, -3.0], dtype=ml_dtypes.bfloat16)
    out = ADAPTER.prepare(CaseData("Gather", {"data": data, "indices": np.array([2, 0])},
                                   with_defaults("Gather", {})), "Gather-8").run()
    assert out.dtype == ml_dtypes.bfloat16
    assert out.astype(np.float32).tolist() == [-3.0, 1.5]


# --- compiled-model cache ---------------------------------------------------------------------------------------


def test_compiled_models_are_cached_by_node_attrs_shapes_and_types() -> None:
    adapter = OpenVinoAdapter()
    inputs = {"data": _D, "indices": np.array([1, 0])}
    case = CaseData("Gather", inputs, with_defaults("Gather", {"axis": 0}))
    first = adapter.prepare(case, "Gather-8")
    assert (adapter.cache.misses, adapter.cache.hits) == (1, 0)
    other_values = CaseData("Gather", {"data": _D + 1, "indices": np.array([0, 0])}, case.attrs)
    second = adapter.prepare(other_values, "Gather-8")  # same node, attrs, shapes, types: no recompile
    assert (adapter.cache.misses, adapter.cache.hits) == (1, 1)
    assert len(adapter.cache) == 1
    np.testing.assert_array_equal(first.run(), _D[[1, 0]])
    np.testing.assert_array_equal(second.run(), (_D + 1)[[0, 0]])
    adapter.prepare(CaseData("Gather", inputs, with_defaults("Gather", {"axis": 1})), "Gather-8")  # attrs
    adapter.prepare(CaseData("Gather", {"data": _D, "indices": np.array([1, 0], np.int32)}, case.attrs), "Gather-8")
    adapter.prepare(case, "Gather-7")  # node version
    assert (adapter.cache.misses, adapter.cache.hits) == (4, 1)


def test_onnx_frontend_reads_the_model_from_memory_and_caches_it() -> None:
    adapter = OpenVinoAdapter()
    case = CaseData("GatherElements", {"data": _D, "indices": np.array([[2, 0, 1], [0, 0, 0]])},
                    with_defaults("GatherElements", {"axis": 1}), opset=13)
    call = adapter.prepare(case, ONNX)
    assert "core.read_model(model.SerializeToString())" in call.api and "GatherElements-13" in call.api
    np.testing.assert_array_equal(call.run(), [[2.0, 0.0, 1.0], [3.0, 3.0, 3.0]])
    adapter.prepare(case, ONNX)
    assert (adapter.cache.misses, adapter.cache.hits) == (1, 1)


def test_version_is_openvinos() -> None:
    import openvino as ov

    assert ADAPTER.version() == ov.__version__ and ADAPTER.version().startswith("20")


def test_an_opset_the_release_lacks_is_unsupported_not_an_error() -> None:
    # Release sweeps run OpenVINO releases older than a node version (ScatterNDUpdate-15 needs opset15): such a
    # variant cannot express the case there, which is no behaviour of the operator.
    from gather_scatter_conformance.adapters.openvino import opset

    assert opset(8).gather is not None
    with pytest.raises(Unsupported, match="has no opset99 module"):
        opset(99)


def test_a_node_without_a_python_function_is_made_by_the_node_factory() -> None:
    """OpenVINO 2023.0-2023.2 register ScatterNDUpdate-3 in opset4 but have no Python scatter_nd_update (it came in
    2023.3): the node factory makes the same node, which is what the function itself calls where it exists."""
    import openvino as ov

    from gather_scatter_conformance.adapters.openvino import node_function, opset

    params = [opset(8).parameter(s, ov.Type.f32 if n != "i" else ov.Type.i64, name=n)
              for n, s in (("d", [2, 3]), ("i", [1, 1]), ("u", [1, 3]))]
    node = node_function(4, "no_such_function", "ScatterNDUpdate")(*params)
    assert node.get_type_name() == "ScatterNDUpdate" and node.get_type_info().version_id == "opset4"
    with pytest.raises(Unsupported, match="has no no_such_function in opset4 or below"):
        node_function(4, "no_such_function")  # no node type: nothing to fall back on


def test_the_api_module_is_top_level_openvino_here() -> None:
    """From 2023.1 on the API is top-level; ov_module() falls back to openvino.runtime only where it is not (2023.0,
    measured by the release sweep, history/openvino.jsonl)."""
    import openvino as ov

    from gather_scatter_conformance.adapters.openvino import ov_module

    assert ov_module() is ov


def test_the_release_check_reaches_core_and_version() -> None:
    """The sweep's import check (ReleaseRules.check) runs here too: it must pass on the pinned release."""
    code = OpenVinoAdapter.releases.check_code()
    subprocess.run([sys.executable, "-c", code], check=True, timeout=120)


@pytest.mark.parametrize("message", [
    "Check 'unknown_operators.empty()' failed at src/frontends/onnx/frontend/src/core/graph.cpp:226:\n"
    "OpenVINO does not support the following ONNX operations: TensorScatter\n",  # 2023.0.2, as it said it
    "No conversion rule found for operations: TensorScatter-24",  # 2026.4.1
])
def test_the_onnx_frontend_s_missing_converter_is_unsupported_in_either_release_s_words(message: str) -> None:
    from gather_scatter_conformance.adapters.base import lacks_converter
    from gather_scatter_conformance.adapters.openvino import NO_CONVERTER

    found = lacks_converter(RuntimeError(message), "OpenVINO's ONNX frontend", NO_CONVERTER, "TensorScatter")
    assert isinstance(found, Unsupported) and "TensorScatter" in str(found)
    assert lacks_converter(RuntimeError(message), "OpenVINO's ONNX frontend", NO_CONVERTER, "Scatter") is None
