"""The TensorRT adapter: the case -> layer translation (pure, runs anywhere), the whole-framework skip without a GPU,
and engines on a real GPU.

What ran where (see docs/mapping/tensorrt.md):
- Here (no NVIDIA GPU): the translation tests and the skip test below. Every TensorRT name the adapter uses was
  checked by introspection of tensorrt-cu12-bindings 11.4.0.106 (the bindings' own pybind11 module, loaded in a
  scratch venv; the tensorrt-cu12-libs wheel could not be downloaded, so nothing was built or run), and cuda-python
  12.9 (cuda.bindings.runtime) names likewise; ``INTROSPECTED`` records that API surface and the adapter is checked
  against it.
- Needs an NVIDIA GPU with tensorrt-cu12 and cuda-python (``tox -e tensorrt``): the tests marked ``gpu``, which check
  ``INTROSPECTED`` against the live module, run the seed cases through engines, and check the engine cache.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import ml_dtypes
import numpy as np
import pytest
from _cases import records_of
from _shipped import shipped_cases

from gather_scatter_conformance.adapters.base import CaseData, Unsupported
from gather_scatter_conformance.adapters.tensorrt import ADAPTER, PARSER, LayerSpec, layer_spec, signature, trt_dtype
from gather_scatter_conformance.adapters.tensorrt_engine import NO_GPU, gpu_problem
from gather_scatter_conformance.adapters.tensorrt_types import DTYPES
from gather_scatter_conformance.harness.cases.load import Case

ROOT = Path(__file__).resolve().parents[1]

# The API surface of tensorrt 11.4.0.106 the adapter relies on, read from the bindings by dir() and __doc__.
INTROSPECTED: dict[str, set[str]] = {
    "INetworkDefinition": {"add_gather_v2", "add_gather", "add_scatter", "add_input", "add_shuffle", "mark_output"},
    "IGatherLayer": {"axis", "mode", "num_elementwise_dims", "get_output"},
    "IScatterLayer": {"axis", "mode", "get_output"},
    "GatherMode": {"DEFAULT", "ELEMENT", "ND"},
    "ScatterMode": {"ELEMENT", "ND"},
    "DataType": {"FLOAT", "HALF", "BF16", "INT8", "INT32", "INT64", "BOOL", "UINT8", "FP8", "INT4", "FP4", "E8M0"},
    "IShuffleLayer": {"reshape_dims"},
    "Builder": {"create_network", "create_builder_config", "build_serialized_network"},
    "Runtime": {"deserialize_cuda_engine"},
    "ICudaEngine": {"create_execution_context", "get_tensor_dtype"},
    "IExecutionContext": {"set_tensor_address", "get_tensor_shape", "execute_async_v3"},
    "OnnxParser": {"parse", "num_errors", "get_error"},
    "ParserError": {"desc", "node_operator"},
    "ILogger": {"log"},
}
gpu = pytest.mark.skipif(gpu_problem() is not None, reason=gpu_problem() or "")


def _seed(case_id: str, file: str = "cases/gather_nd.yaml") -> Case:
    (case,) = [c for c in shipped_cases() if c.file == file and c.id == case_id]
    return case


def _data(case: Case) -> CaseData:
    return CaseData(case.op, case.inputs(), case.attrs, case.spec.opset, tuple(case.spec.omit))


def _case(op: str, attrs: dict, omit: tuple[str, ...] = (), **inputs: np.ndarray) -> CaseData:
    return CaseData(op, inputs, attrs, None, omit)


F = np.arange(24, dtype=np.float32).reshape(2, 3, 4)
IDX = np.array([[0, 2]], dtype=np.int32)


# --- the seed's ND-mode examples (003_15be58bb1ab6011e.txt) --------------------------------------------------------

SEED_ND = {  # case id -> num_elementwise_dims the seed sets
    "trt-gathernd-elementwise-dims-1": 1,
    "trt-gathernd-elementwise-dims-2": 2,
    "trt-gathernd-elementwise-dims-3": 3,
    "trt-gathernd-elementwise-dims-2-slices": 2,
}


@pytest.mark.parametrize(("case_id", "n"), sorted(SEED_ND.items()))
def test_seed_nd_examples_map_to_nd_mode_with_their_num_elementwise_dims(case_id: str, n: int) -> None:
    case = _seed(case_id)
    spec = layer_spec(_data(case), ADAPTER.variants("GatherND")[0])
    assert (spec.method, spec.mode, spec.attrs) == ("add_gather_v2", "ND", (("num_elementwise_dims", n),))
    assert spec.api() == ("layer = network.add_gather_v2(data, indices, trt.GatherMode.ND); "
                          f"layer.num_elementwise_dims = {n}")
    # The seed's output rank, q + r - index.shape[-1] - 1 - nB, is the case's expected (canonical) rank: the
    # mapping num_elementwise_dims <-> batch_dims agrees with TensorRT's own formula.
    q, r, k = case.inputs()["indices"].ndim, case.inputs()["data"].ndim, case.inputs()["indices"].shape[-1]
    assert np.ndim(case.spec.expected) == q + r - k - 1 - n


def test_seed_nd_examples_keep_their_int32_indices_and_float_data() -> None:
    for case_id in SEED_ND:
        inputs = _seed(case_id).inputs()
        assert (trt_dtype(inputs["data"]), trt_dtype(inputs["indices"])) == ("FLOAT", "INT32")


# --- the other modes -----------------------------------------------------------------------------------------------

def test_variants_are_layer_modes_then_the_onnx_parser() -> None:
    assert ADAPTER.variants("Gather") == ["add_gather_v2/DEFAULT", "add_gather", PARSER]
    assert ADAPTER.variants("Take") == ["add_gather_v2/DEFAULT", "add_gather", PARSER]
    assert ADAPTER.variants("GatherElements") == ["add_gather_v2/ELEMENT", PARSER]
    assert ADAPTER.variants("GatherND") == ["add_gather_v2/ND", PARSER]
    assert ADAPTER.variants("ScatterElements") == ["add_scatter/ELEMENT", PARSER]
    assert ADAPTER.variants("ScatterND") == ["add_scatter/ND", PARSER]
    with pytest.raises(ValueError):
        layer_spec(_case("Gather", {"axis": 0, "batch_dims": 0}, data=F, indices=IDX), PARSER)


def test_gather_default_mode_axis_and_batch_dims() -> None:
    case = _case("Gather", {"axis": 2, "batch_dims": 1}, data=F, indices=IDX.reshape(2, 1))
    v2 = layer_spec(case, "add_gather_v2/DEFAULT")
    assert (v2.mode, v2.attrs) == ("DEFAULT", (("axis", 2), ("num_elementwise_dims", 1)))
    old = layer_spec(case, "add_gather")
    assert (old.method, old.mode, old.call_axis, old.attrs) == ("add_gather", None, 2, (("num_elementwise_dims", 1),))
    assert old.api() == "layer = network.add_gather(data, indices, axis=2); layer.num_elementwise_dims = 1"
    plain = layer_spec(_case("Gather", {"axis": -1, "batch_dims": 0}, data=F, indices=IDX), "add_gather_v2/DEFAULT")
    assert plain.attrs == (("axis", -1),)  # passed as given: whether TensorRT takes a negative axis is measured


def test_gather_elements_is_element_mode_with_its_axis_only() -> None:
    spec = layer_spec(_case("GatherElements", {"axis": 1}, data=F, indices=np.zeros((2, 1, 4), np.int64)),
                      "add_gather_v2/ELEMENT")
    assert (spec.mode, spec.attrs) == ("ELEMENT", (("axis", 1),))


def test_scatters_are_scatter_layers_without_reductions() -> None:
    upd = np.ones((1, 2), np.float32)
    se = layer_spec(_case("ScatterElements", {"axis": 1, "reduction": "none"}, data=F[0], indices=IDX, updates=upd),
                    "add_scatter/ELEMENT")
    assert se.api() == "layer = network.add_scatter(data, indices, updates, trt.ScatterMode.ELEMENT); layer.axis = 1"
    snd = layer_spec(_case("ScatterND", {"reduction": "none"}, data=F, indices=IDX, updates=np.ones(4, np.float32)),
                     "add_scatter/ND")
    assert (snd.mode, snd.attrs, snd.inputs) == ("ND", (), ("data", "indices", "updates"))
    for reduction in ("add", "mul", "max", "min"):
        with pytest.raises(Unsupported, match="IScatterLayer has no reduction"):
            layer_spec(_case("ScatterND", {"reduction": reduction}, data=F, indices=IDX, updates=upd), "add_scatter/ND")


def test_take_flattens_through_a_shuffle_and_has_no_index_modes() -> None:
    spec = layer_spec(_case("Take", {"axis": None, "mode": "raise"}, data=F, indices=IDX), "add_gather_v2/DEFAULT")
    assert (spec.flatten, spec.attrs) == (True, (("axis", 0),))
    assert spec.api().startswith("flat = network.add_shuffle(data); flat.reshape_dims = (-1,); "
                                 "layer = network.add_gather_v2(flat, indices, trt.GatherMode.DEFAULT)")
    for mode in ("wrap", "clip", "fill"):
        with pytest.raises(Unsupported, match="no index mode"):
            layer_spec(_case("Take", {"axis": 0, "mode": mode}, data=F, indices=IDX), "add_gather_v2/DEFAULT")


def test_omitted_attributes_are_left_to_tensorrt_defaults() -> None:
    omit = ("axis", "batch_dims")
    spec = layer_spec(_case("Gather", {"axis": 1, "batch_dims": 1}, omit, data=F, indices=IDX), "add_gather_v2/DEFAULT")
    assert spec.attrs == () and "axis" not in spec.api()
    with pytest.raises(Unsupported, match="axis is required"):
        layer_spec(_case("Gather", {"axis": 1, "batch_dims": 0}, ("axis",), data=F, indices=IDX), "add_gather")
    take = layer_spec(_case("Take", {"axis": None, "mode": "raise"}, ("axis",), data=F, indices=IDX),
                      "add_gather_v2/DEFAULT")
    assert (take.flatten, take.attrs) == (False, ())


def test_dtypes_without_a_tensorrt_type_are_unsupported() -> None:
    assert trt_dtype(F.astype(ml_dtypes.bfloat16)) == "BF16"
    assert trt_dtype(np.array([True])) == "BOOL"
    for arr in (F.astype(np.float64), IDX.astype(np.int16), IDX.astype(np.uint32), IDX.astype(np.uint64),
                F.astype(np.complex64), np.array(["a"], dtype=object)):
        with pytest.raises(Unsupported, match="TensorRT has no"):
            trt_dtype(arr)
    with pytest.raises(Unsupported, match="float64"):
        ADAPTER.prepare(_case("Gather", {"axis": 0, "batch_dims": 0}, data=F.astype(np.float64), indices=IDX), PARSER)


def test_prepare_needs_no_gpu_and_keys_engines_by_signature() -> None:
    case = _case("GatherND", {"batch_dims": 0}, data=F, indices=IDX)
    call = ADAPTER.prepare(case, "add_gather_v2/ND")
    assert call.device == "gpu" and "execute_async_v3" in call.api
    parsed = ADAPTER.prepare(case, PARSER)
    assert parsed.api.startswith("trt.OnnxParser(network, logger).parse(") and "GatherND-13(" in parsed.api
    assert signature(case.inputs) == (("data", (2, 3, 4), "float32"), ("indices", (1, 2), "int32"))


def test_every_name_the_adapter_uses_exists_in_tensorrt_11_4() -> None:
    specs: list[LayerSpec] = []
    for op, attrs in (("Gather", {"axis": 1, "batch_dims": 1}), ("GatherElements", {"axis": 1}),
                      ("GatherND", {"batch_dims": 1}), ("ScatterElements", {"axis": 1, "reduction": "none"}),
                      ("ScatterND", {"reduction": "none"}), ("Take", {"axis": None, "mode": "raise"})):
        for variant in ADAPTER.variants(op)[:-1]:
            specs.append(layer_spec(_case(op, attrs, data=F, indices=IDX, updates=F), variant))
    assert {s.method for s in specs} <= INTROSPECTED["INetworkDefinition"]
    assert {s.mode for s in specs if s.method == "add_gather_v2"} <= INTROSPECTED["GatherMode"]
    assert {s.mode for s in specs if s.method == "add_scatter"} <= INTROSPECTED["ScatterMode"]
    assert {k for s in specs if s.method != "add_scatter" for k, _ in s.attrs} <= INTROSPECTED["IGatherLayer"]
    assert {k for s in specs if s.method == "add_scatter" for k, _ in s.attrs} <= INTROSPECTED["IScatterLayer"]
    assert set(DTYPES.values()) <= INTROSPECTED["DataType"]


# --- without a GPU: the whole framework skips, once per test, with the reason ------------------------------------

def test_without_a_gpu_every_case_skips_with_the_reason_and_nothing_is_recorded(tmp_path: Path) -> None:
    reason = gpu_problem()
    if reason is None:
        pytest.skip("this machine has a CUDA device: the cases run instead")
    assert reason.startswith(NO_GPU) and "\n" not in reason
    results = tmp_path / "r.jsonl"
    cmd = [sys.executable, "-m", "pytest", "cases/gather_nd.yaml", "-q", "-rs", "-p", "no:cacheprovider",
           "--framework", "tensorrt", "-k", "trt-gathernd", "--results", str(results)]
    out = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stdout + out.stderr
    # 4 seed cases x 2 variants (the network layer and the ONNX parser), each one pytest skip with the reason
    assert "8 skipped" in out.stdout
    assert "SKIPPED [8] gather_scatter_conformance/harness/run/pytest_plugin.py" in out.stdout
    assert reason in out.stdout
    assert records_of(results) == []  # a missing device is not a result: no record, no deviation


# --- on an NVIDIA GPU (tox -e tensorrt) -------------------------------------------------------------------------

@gpu
def test_introspected_names_exist_in_the_installed_tensorrt() -> None:
    trt = pytest.importorskip("tensorrt")
    missing = [f"{cls}.{name}" for cls, names in INTROSPECTED.items() for name in names
               if not hasattr(getattr(trt, cls), name)]
    assert not missing


@gpu
@pytest.mark.parametrize("case_id", sorted(SEED_ND))
def test_seed_nd_examples_conform_on_the_gpu(case_id: str) -> None:
    pytest.importorskip("tensorrt")
    from gather_scatter_conformance.harness.run.runner import InProcess, execute

    record = execute(_seed(case_id), "tensorrt", "add_gather_v2/ND", InProcess(), "gpu")
    assert (record.outcome, record.verdict, record.device) == ("ok", "conforms", "gpu"), record


@gpu
def test_cases_differing_only_in_values_share_one_engine() -> None:
    pytest.importorskip("tensorrt")
    a = _case("GatherElements", {"axis": 0}, data=F[0], indices=np.array([[0, 1, 2, 0]]))
    b = _case("GatherElements", {"axis": 0}, data=F[0] + 100, indices=np.array([[2, 2, 2, 2]]))
    engines = ADAPTER.runner.engines
    before = (len(engines), engines.hits, engines.misses)
    np.testing.assert_array_equal(ADAPTER.prepare(a, "add_gather_v2/ELEMENT").run(), [[0, 5, 10, 3]])
    np.testing.assert_array_equal(ADAPTER.prepare(b, "add_gather_v2/ELEMENT").run(), [[108, 109, 110, 111]])
    assert (len(engines), engines.hits, engines.misses) == (before[0] + 1, before[1] + 1, before[2] + 1)


@gpu
def test_every_shipped_case_gives_a_result_on_every_variant() -> None:
    pytest.importorskip("tensorrt")
    from gather_scatter_conformance.harness.run.runner import InProcess, execute

    problems = []
    for case in shipped_cases():
        for variant in ADAPTER.variants(case.op):
            record = execute(case, "tensorrt", variant, InProcess(), "gpu")
            if record.outcome not in ("ok", "error", "unsupported") or (
                    record.outcome == "unsupported" and not record.reason):
                problems.append((case.nodeid, variant, record.outcome))
    assert not problems
