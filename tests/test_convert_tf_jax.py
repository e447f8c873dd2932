"""The tensorflow and jax converter paths (adapters/convert/tf_onnx.py, jax_onnx.py): seed examples preserved and
conforming, the converted graphs' operators, and what each conversion measurably changes (issue #18)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest
from _installed import require

from gather_scatter_conformance import adapters
from gather_scatter_conformance.adapters.base import CaseData, Unsupported
from gather_scatter_conformance.adapters.convert.path import ConversionFailed
from gather_scatter_conformance.harness.cases.load import Case, ExpectedError, load_file
from gather_scatter_conformance.harness.reference import compute
from gather_scatter_conformance.harness.reference.compare import compare
from gather_scatter_conformance.vocab.ops import with_defaults

require("tensorflow", "tf2onnx", "jax2onnx", "openvino")  # looked up, not imported: tests/_installed.py

pytestmark = pytest.mark.framework  # make check runs none of these (docs/development.md)

ROOT = Path(__file__).resolve().parents[1]
TF2ONNX = "tensorflow~tf2onnx~onnxruntime"
TF_OV = "tensorflow~ov-convert~openvino"
JAX2ONNX = "jax~jax2onnx~onnxruntime"
PATHS = (TF2ONNX, TF_OV, JAX2ONNX)
SEEDS_PER_FILE = 3


@pytest.fixture(autouse=True)
def _no_disk_cache(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("GSC_CONVERSION_CACHE", "off")  # a test converts for real


def _case(op: str, attrs: dict[str, Any] | None = None, **inputs: Any) -> CaseData:
    return CaseData(op=op, inputs={k: np.asarray(v) for k, v in inputs.items()}, attrs=with_defaults(op, attrs))


def _run(path: str, case: CaseData, variant: str) -> tuple[Any, dict[str, Any]]:
    """(the converted model's result, or the exception it raised; the run's facts)."""
    call = adapters.get(path).prepare(case, variant)
    try:
        return adapters.get(path).to_numpy(call.run()), call.facts
    except Exception as exc:  # a result here: the tests say which
        return exc, call.facts


def _source(path: str, case: CaseData, variant: str) -> Any:
    """What the source API does natively (its value, or the exception)."""
    source = adapters.get(adapters.get(path).source)  # type: ignore[attr-defined]
    try:
        return source.to_numpy(source.prepare(case, variant).run())
    except Exception as exc:
        return exc


def _same(a: np.ndarray, b: np.ndarray) -> bool:
    return a.dtype == b.dtype and a.shape == b.shape and compare(a, b).equal


# --- registry and variants -------------------------------------------------------------------------------------


def test_paths_are_registered_after_every_framework_in_name_order() -> None:
    names = adapters.names()
    assert all(adapters.is_path(p) and adapters.is_available(p) for p in PATHS)
    assert names.index(TF2ONNX) < names.index("torch~ov-convert~openvino")  # the report's order: paths by name
    assert min(names.index(p) for p in PATHS) > max(names.index(n) for n in names if not adapters.is_path(n))
    assert [adapters.get(p).name for p in PATHS] == list(PATHS)


def test_variants_are_the_sources_graph_and_eager_calls() -> None:
    assert adapters.get(TF2ONNX).variants("ScatterND") == ["tensor_scatter_nd/function", "scatter_nd/function"]
    assert adapters.get(TF_OV).variants("Take") == ["take/function", "gather/function"]
    assert adapters.get(JAX2ONNX).variants("Gather") == ["take", "indexing"]  # no /jit: jax2onnx traces itself
    assert adapters.get(JAX2ONNX).variants("ScatterND") == ["at"]


# --- seed examples: preserved and conforming -------------------------------------------------------------------


def _seeds() -> list[tuple[str, Case]]:
    """The first few cases of each operator's seed file whose canonical result is a value, with indices in
    [0, dim) (TensorFlow raises on negative ones: a change the probes measure, not a seed's business)."""
    out = []
    for name in ("gather", "gather_elements", "gather_nd", "scatter_elements", "scatter_nd", "take"):
        cases = [c for c in load_file(ROOT / "cases" / f"{name}.yaml") if isinstance(c, Case)]
        good = [c for c in cases if isinstance(c.reference(), np.ndarray) and "mul" not in str(c.attrs)
                and bool((c.inputs()["indices"] >= 0).all())]
        out += [(name, c) for c in good[:SEEDS_PER_FILE]]
    return out


@pytest.mark.parametrize("path", PATHS)
@pytest.mark.parametrize(("file", "seed"), _seeds(), ids=lambda v: v.id if isinstance(v, Case) else v)
def test_seed_examples_are_preserved_and_conform(path: str, file: str, seed: Case) -> None:
    case = CaseData(op=seed.op, inputs=seed.inputs(), attrs=seed.attrs, opset=seed.spec.opset)
    ran, unsupported = 0, []
    for variant in adapters.get(path).variants(case.op):
        try:
            target, facts = _run(path, case, variant)
        except Unsupported as exc:  # the source API cannot write the case (tf.scatter_nd on non-zero data)
            unsupported.append(f"{variant}: {exc}")
            continue
        if path == TF2ONNX and variant == "tensor_scatter_nd/function" and case.attrs["reduction"] != "none":
            # tf2onnx 1.17.0 maps TensorScatterUpdate only (test_tf2onnx_has_no_mapping_for_...)
            assert isinstance(target, ConversionFailed) and "TensorScatter" in str(target)
            continue
        assert isinstance(target, np.ndarray), f"{variant}: {target!r}"
        source = _source(path, case, variant)
        assert _same(target, source), f"{variant}: {target} != source {source}"
        assert compare(target.astype(seed.reference().dtype), seed.reference()).equal
        assert facts["ops"], "the converted graph's operators are recorded"
        ran += 1
    if not ran and unsupported:
        pytest.skip("; ".join(unsupported))  # jnp.take has no mode='raise': the jax path has nothing to convert
    assert ran or path == TF2ONNX, "no variant could run the seed"


# --- the converted graphs ----------------------------------------------------------------------------------------

GATHER_BATCHED = _case("Gather", {"axis": 1, "batch_dims": 1}, data=[[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]],
                       indices=np.array([[2, 0], [1, 1]], np.int64))


def _f32(*values: float) -> np.ndarray:
    return np.array(values, np.float32)


def test_tf2onnx_writes_gather_with_batch_dims_as_gathernd_and_preserves_it() -> None:
    target, facts = _run(TF2ONNX, GATHER_BATCHED, "gather/function")
    assert facts["ops"] == ["Unsqueeze", "GatherND(batch_dims=1)"]
    assert facts["conversion"]["opset"] == 15  # tf2onnx 1.17.0's default
    np.testing.assert_array_equal(target, compute(GATHER_BATCHED.op, GATHER_BATCHED.inputs, GATHER_BATCHED.attrs))


def test_tf2onnx_writes_a_negative_batch_dims_into_gathernd_which_onnxruntime_refuses() -> None:
    case = _case("Gather", {"axis": 1, "batch_dims": -1}, **GATHER_BATCHED.inputs)
    assert isinstance(_source(TF2ONNX, case, "gather/function"), np.ndarray)  # TensorFlow: batch_dims 1
    target, facts = _run(TF2ONNX, case, "gather/function")
    assert "GatherND(batch_dims=-1)" in facts["ops"]
    assert isinstance(target, Exception) and "Transpose" in str(target)  # changed: ok -> error


def test_tf2onnx_maps_tf_scatter_nd_to_scatternd_without_reduction_so_duplicates_stop_summing() -> None:
    case = _case("ScatterND", {"reduction": "none"}, data=np.zeros(4, np.float32),
                 indices=np.array([[1], [1], [3]], np.int64), updates=_f32(1, 2, 3))
    source = _source(TF2ONNX, case, "scatter_nd/function")
    np.testing.assert_array_equal(source, _f32(0, 3, 0, 3))  # tf.scatter_nd sums duplicates
    target, facts = _run(TF2ONNX, case, "scatter_nd/function")
    assert facts["ops"] == ["Cast", "ConstantOfShape", "ScatterND(reduction=none)"]
    np.testing.assert_array_equal(target, _f32(0, 2, 0, 3))  # onnxruntime: the last update wins


def test_openvino_maps_tf_scatter_nd_to_scatterndupdate_so_duplicates_stop_summing() -> None:
    case = _case("ScatterND", {"reduction": "none"}, data=np.zeros(4, np.float32),
                 indices=np.array([[1], [1], [3]], np.int64), updates=_f32(1, 2, 3))
    target, facts = _run(TF_OV, case, "scatter_nd/function")
    assert facts["ops"] == ["ScatterNDUpdate-4"]
    np.testing.assert_array_equal(target, _f32(0, 2, 0, 3))


def test_tf2onnx_has_no_mapping_for_tensor_scatter_nd_add_max_min_and_the_path_says_so() -> None:
    for reduction, op in (("add", "TensorScatterAdd"), ("max", "TensorScatterMax"), ("min", "TensorScatterMin")):
        case = _case("ScatterND", {"reduction": reduction}, data=_f32(1, 2, 3, 4),
                     indices=np.array([[1], [3]], np.int64), updates=_f32(5, 6))
        target, facts = _run(TF2ONNX, case, "tensor_scatter_nd/function")
        assert isinstance(target, ConversionFailed) and op in str(target)
        assert facts["conversion"]["stage"] == "convert"


def test_openvino_converts_tensor_scatter_nd_add_but_not_max() -> None:
    add = _case("ScatterND", {"reduction": "add"}, data=_f32(1, 2, 3, 4), indices=np.array([[1], [1]], np.int64),
                updates=_f32(5, 6))
    target, facts = _run(TF_OV, add, "tensor_scatter_nd/function")
    assert facts["ops"] == ["ScatterNDUpdate-15(reduction=sum)"]
    np.testing.assert_array_equal(target, _f32(1, 13, 3, 4))
    maximum = _case("ScatterND", {"reduction": "max"}, **add.inputs)
    target, _ = _run(TF_OV, maximum, "tensor_scatter_nd/function")
    assert isinstance(target, ConversionFailed) and "TensorScatterMax" in str(target)


def test_openvino_keeps_take_along_axis_assertion_as_an_extra_output_and_the_path_reads_the_result() -> None:
    case = _case("GatherElements", {"axis": 1}, data=[[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]],
                 indices=np.array([[2, 0], [1, 1]], np.int32))
    target, facts = _run(TF_OV, case, "take_along_axis/function")
    assert len(facts["conversion"]["outputs"]) == 2 and facts["conversion"]["output"] == 1
    np.testing.assert_array_equal(target, np.array([[3, 1], [5, 5]], np.float32))


def test_jax2onnx_writes_jnp_take_as_a_plain_gather_so_out_of_range_fills_become_errors() -> None:
    case = _case("Gather", {"axis": 0}, data=_f32(10, 20, 30, 40, 50), indices=np.array([7], np.int64))
    assert np.isnan(_source(JAX2ONNX, case, "take")).all()  # jnp.take's default mode 'fill'
    target, facts = _run(JAX2ONNX, case, "take")
    # float32 data: no double precision, so the int64 indices become int32 (the Cast) before a plain Gather
    assert facts["ops"] == ["Cast", "Gather(axis=0)"] and facts["conversion"]["opset"] == 23
    assert isinstance(target, Exception) and "out of data bounds" in str(target)


def test_jax2onnx_narrows_int64_indices_to_int32_unless_data_is_64_bit() -> None:
    case = _case("Gather", {"axis": 0}, data=_f32(10, 20, 30), indices=np.array([2, 0], np.int64))
    target, facts = _run(JAX2ONNX, case, "take")
    assert facts["conversion"]["enable_double_precision"] is False
    assert facts["conversion"]["input_casts"] == {"indices": "int64 -> int32"}
    np.testing.assert_array_equal(target, _f32(30, 10))
    wide = _case("Gather", {"axis": 0}, data=np.array([10.0, 20.0, 30.0]), indices=np.array([2, 0], np.int64))
    target, facts = _run(JAX2ONNX, wide, "take")
    assert facts["conversion"]["enable_double_precision"] is True and "input_casts" not in facts["conversion"]
    assert target.dtype == np.float64


def test_jax_take_mode_raise_is_unsupported_as_in_the_jax_adapter() -> None:
    case = _case("Take", {"axis": 0, "mode": "raise"}, data=_f32(1, 2), indices=np.array([0], np.int64))
    with pytest.raises(Unsupported, match="mode='raise'"):
        adapters.get(JAX2ONNX).prepare(case, "take")


# --- negative and out-of-range indices: the source raises, the converted model does not ------------------------


@pytest.mark.parametrize(("path", "variant"), [(TF2ONNX, "gather/function"), (TF_OV, "gather/function")])
def test_tensorflow_raises_on_a_negative_index_and_the_converted_model_wraps_it(path: str, variant: str) -> None:
    case = _case("Gather", {"axis": 0}, data=_f32(10, 20, 30, 40, 50), indices=np.array([-2], np.int64))
    assert isinstance(_source(path, case, variant), Exception)  # TensorFlow on CPU: out of range
    target, _ = _run(path, case, variant)
    np.testing.assert_array_equal(target, _f32(40))


def test_openvino_returns_zeros_where_tensorflow_raises_on_an_out_of_range_gather() -> None:
    case = _case("Gather", {"axis": 0}, data=_f32(10, 20, 30, 40, 50), indices=np.array([7], np.int64))
    assert isinstance(_source(TF_OV, case, "gather/function"), Exception)
    target, facts = _run(TF_OV, case, "gather/function")
    assert facts["ops"] == ["Gather-8(batch_dims=0)"]
    np.testing.assert_array_equal(target, _f32(0))


def test_jax_indexing_clamps_a_negative_out_of_range_index_and_the_converted_model_wraps_it() -> None:
    case = _case("Gather", {"axis": 0}, data=_f32(10, 20, 30, 40, 50), indices=np.array([-7], np.int64))
    np.testing.assert_array_equal(_source(JAX2ONNX, case, "indexing"), _f32(10))  # clamped to 0
    target, _ = _run(JAX2ONNX, case, "indexing")
    assert isinstance(target, np.ndarray) and not _same(target, _f32(10))


def test_expected_errors_are_not_seeds() -> None:
    assert all(not isinstance(c.reference(), ExpectedError) for _, c in _seeds())
