"""The tensorflow adapter: every shipped case on its variants, and the translation in detail."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("tensorflow")

import ml_dtypes
from _shipped import REGRESSION_GATHER_NEG, REGRESSION_GATHER_OOB, shipped_cases

import adapters.tensorflow as tf_adapter
from adapters.base import CaseData, Unsupported
from adapters.tensorflow import ADAPTER, from_tensor, split_variant, to_tensor
from harness.cases import Case
from harness.reference import compute
from harness.runner import InProcess, execute

tf = tf_adapter.tf_module()
ROOT = Path(__file__).resolve().parents[1]

# Each tf.function / XLA variant traces (and XLA compiles) once per new shape: 0.1-0.5 s a case. So the shipped-
# case test runs them only on cases tagged MODE_TAGS, where the modes are known to part ways (index values
# outside [0, s), index dtypes); every other case runs its eager variants. GSC_TF_ALL_MODES=1 runs every variant
# on every case (as does `pytest cases --framework tensorflow`); KNOWN_DEVIATIONS lists the full set.
MODE_TAGS = {"negative-indices", "out-of-bounds", "index-dtype"}
ALL_MODES = os.environ.get("GSC_TF_ALL_MODES") == "1"

NEGATIVE = "negative index: TF rejects indices outside [0, s) on CPU (InvalidArgumentError); ONNX wraps negatives"
XLA_CLAMP = "XLA clamps gather indices into [0, s-1] (negatives -> 0) instead of raising (tensorflow#61865)"
XLA_OOB = "XLA clamps an out-of-range gather index and returns a value where ONNX raises (tensorflow#61865)"
XLA_SCATTER = "XLA silently drops scatter updates whose index is outside [0, s) (negatives too); ONNX wraps negatives"
XLA_STRING = "XLA cannot compile tf.string tensors (no XLA_CPU_JIT kernel for DT_STRING arguments)"
BOOL_MAX = "TensorScatterMax has no CPU kernel for bool (NotFoundError); XLA has one and conforms"
SCATTER_ND_SUMS = ("tf.scatter_nd sums the updates of a repeated index (documented: 'updates ... will be summed'), "
                   "where ONNX ScatterND without a reduction writes one of them")
RANK1 = "tensor_scatter_nd_* needs a leading update axis: indices of shape (k,) are rejected (XLA accepts them)"

EAGER_GRAPH = ("eager", "function")


def _each(file: str, cases: list[str], variants: list[str], reason: str) -> dict[tuple[str, str], str]:
    return {(f"cases/{file}.yaml::{c}", v): reason for c in cases for v in variants}


def _modes(api: str, modes: tuple[str, ...] = tf_adapter.MODES) -> list[str]:
    return [f"{api}/{m}" for m in modes]


_GATHER_NEG = ["ov-gather8-example-6", "onnx-gather13-negative-indices", "gather-negative-axis-last",
               "gather-scalar-negative-index-1d", "gather-negative-indices-2d",
               "gen-gather-axis-neg1-rank4-with-negatives"]
# Negative indices in cases whose index type is outside ONNX's constraints (int16; int32 for GatherND): eager and
# graph refuse them, which conforms; XLA clamps them, a different value.
_GATHER_NEG_OUTSIDE = ["gather-index-int16-negative"]
_GND_NEG_OUTSIDE = ["trt-gathernd-elementwise-dims-1", "gathernd-negative-indices-slices",
                    "gathernd-index-int16-negative"]
_TAKE_NEG_OUTSIDE = ["take-index-int16-negative"]
_GND_NEG = ["gathernd-negative-indices-elements", "gen-gathernd-batch-dims1-rank4-with-negatives"]
# -2 on an axis of size 2: XLA clamps it to 0, which is where wrapping lands too, so only eager/graph deviate.
_GND_NEG_COINCIDENT = ["blog-gathernd-example-2", "blog-gathernd-mxnet-example-2"]
_SE_NEG = ["onnx-scatterelements18-negative-indices", "se-negative-indices", "se-reduction-add-negative-indices"]
_SND_NEG = ["scatternd-negative-indices-elements", "scatternd-negative-indices-slices",
            "gen-scatternd-k3-rank3-add-with-negatives"]
_TAKE_NEG = ["take-negative-indices-raise", "gen-take-axis0-rank4-with-negatives"]
# cases/regression/gather.yaml: an index past the end (XLA clamps it), or an in-range negative one (eager rejects it)
_REG_OOB = list(REGRESSION_GATHER_OOB)
_REG_NEG = list(REGRESSION_GATHER_NEG)

# (case nodeid, variant) -> why TensorFlow's result differs from canonical semantics. Measured with 2.21.0 (CPU).
# Refusing index types outside ONNX's type constraints (uint*, int16; int32 for GatherND/ScatterND) conforms.
KNOWN_DEVIATIONS: dict[tuple[str, str], str] = {
    # Gather (tf.gather)
    **_each("gather", _GATHER_NEG, _modes("gather", EAGER_GRAPH), NEGATIVE),
    **_each("gather", _GATHER_NEG + _GATHER_NEG_OUTSIDE, ["gather/xla"], XLA_CLAMP),
    **_each("gather", ["ov-gather8-example-7"], ["gather/xla"], XLA_OOB),
    **_each("gather", ["gather-dtype-string"], ["gather/xla"], XLA_STRING),
    # GatherElements (tnp.take_along_axis: it wraps negatives itself, so they conform)
    **_each("gather_elements", ["ge-dtype-string"], ["take_along_axis/xla"], XLA_STRING),
    # GatherND (tf.gather_nd)
    **_each("gather_nd", _GND_NEG + _GND_NEG_COINCIDENT, _modes("gather_nd", EAGER_GRAPH), NEGATIVE),
    **_each("gather_nd", _GND_NEG + _GND_NEG_OUTSIDE, ["gather_nd/xla"], XLA_CLAMP),
    **_each("gather_nd", ["gathernd-dtype-string"], ["gather_nd/xla"], XLA_STRING),
    # ScatterElements (tf.tensor_scatter_nd_* on full coordinates)
    **_each("scatter_elements", _SE_NEG, _modes("tensor_scatter_nd", EAGER_GRAPH), NEGATIVE),
    **_each("scatter_elements", [*_SE_NEG, "se-index-int16-negative"], ["tensor_scatter_nd/xla"], XLA_SCATTER),
    **_each("scatter_elements", ["se-reduction-max-bool"], _modes("tensor_scatter_nd", EAGER_GRAPH), BOOL_MAX),
    **_each("scatter_elements", ["se-dtype-string"], ["tensor_scatter_nd/xla"], XLA_STRING),
    # ScatterND (tf.tensor_scatter_nd_*, tf.scatter_nd)
    **_each("scatter_nd", [*_SND_NEG, "scatternd-reduction-min-float64-negative-indices"],
            _modes("tensor_scatter_nd", EAGER_GRAPH), NEGATIVE),
    **_each("scatter_nd", [*_SND_NEG, "scatternd-index-int16-negative"], ["tensor_scatter_nd/xla"], XLA_SCATTER),
    **_each("scatter_nd", ["scatternd-reduction-max-bool"], _modes("tensor_scatter_nd", EAGER_GRAPH), BOOL_MAX),
    **_each("scatter_nd", ["scatternd-rank1-indices-element", "scatternd-rank1-indices-slice"],
            _modes("tensor_scatter_nd", EAGER_GRAPH), RANK1),
    **_each("regression/scatter_nd", ["jax-12359-scatter-duplicates-cpu-vs-gpu"], _modes("scatter_nd"),
            SCATTER_ND_SUMS),
    # Take (mode raise via tf.gather; clip/wrap via tnp.take conform)
    **_each("take", _TAKE_NEG, _modes("gather", EAGER_GRAPH), NEGATIVE),
    **_each("take", _TAKE_NEG + _TAKE_NEG_OUTSIDE, ["gather/xla"], XLA_CLAMP),
    **_each("take", ["take-mode-raise-out-of-range"], ["gather/xla"], XLA_OOB),
    **_each("take", ["take-dtype-string"], ["gather/xla"], XLA_STRING),
    # Imported ONNX node tests (cases/imported) and regression cases (cases/regression)
    **_each("imported/onnx_node_gather", ["test_gather_negative_indices"], _modes("gather", EAGER_GRAPH), NEGATIVE),
    **_each("imported/onnx_node_gather", ["test_gather_negative_indices"], ["gather/xla"], XLA_CLAMP),
    **_each("imported/onnx_node_scatter_elements", ["test_scatter_elements_with_negative_indices"],
            _modes("tensor_scatter_nd", EAGER_GRAPH), NEGATIVE),
    **_each("imported/onnx_node_scatter_elements", ["test_scatter_elements_with_negative_indices"],
            ["tensor_scatter_nd/xla"], XLA_SCATTER),
    **_each("regression/gather", _REG_OOB, ["gather/xla"], XLA_OOB),
    **_each("regression/gather", _REG_NEG, _modes("gather", EAGER_GRAPH), NEGATIVE),
    **_each("regression/gather", _REG_NEG, ["gather/xla"], XLA_CLAMP),
    **_each("regression/gather_elements", ["mxnet-12009-pick-clips"], ["take_along_axis/xla"], XLA_OOB),
    **_each("regression/gather_nd", ["tensorflow-12608-gather-nd-gpu-zeros",
            "tensorflow-112068-xla-gather-nd-accepts-out-of-bounds"], ["gather_nd/xla"], XLA_OOB),
    **_each("regression/gather_nd", ["mxnet-11551-indexing-negative-reads-garbage"], _modes("gather_nd", EAGER_GRAPH),
            NEGATIVE),
}




def _selected(case: Case) -> list[str]:
    variants = ADAPTER.variants(case.op)
    if ALL_MODES or MODE_TAGS & set(case.tags):
        return variants
    return [v for v in variants if v.endswith("/eager")]


def test_shipped_cases_deviate_exactly_where_known() -> None:
    cases = shipped_cases()
    possible = {(c.nodeid, v) for c in cases for v in ADAPTER.variants(c.op)}
    stale = sorted(set(KNOWN_DEVIATIONS) - possible)
    assert not stale, f"KNOWN_DEVIATIONS names cases/variants that do not exist: {stale}"
    ran: set[tuple[str, str]] = set()
    deviating: dict[tuple[str, str], str] = {}
    no_reason = []
    for case in cases:
        for variant in _selected(case):
            rec = execute(case, "tensorflow", variant, InProcess())
            key = (case.nodeid, variant)
            ran.add(key)
            if rec["verdict"] == "deviates":
                deviating[key] = f"{rec['reason']} {(rec.get('error_message') or '')[:160]}"
            if rec["verdict"] == "n/a" and not rec.get("reason"):
                no_reason.append(key)
    assert not no_reason, f"n/a without a reason: {no_reason}"
    expected = {k for k in KNOWN_DEVIATIONS if k in ran}
    unexpected = {k: v for k, v in deviating.items() if k not in expected}
    fixed = sorted(expected - set(deviating))
    assert not unexpected, "new deviations:\n" + "\n".join(f"{k}: {v}" for k, v in sorted(unexpected.items()))
    assert not fixed, f"known deviations that now conform: {fixed}"


# ---------------------------------------------------------------------------------------------------------------
# Translation
# ---------------------------------------------------------------------------------------------------------------


def _case(op: str, attrs: dict, **inputs: np.ndarray) -> CaseData:
    from harness.ops import with_defaults

    return CaseData(op, inputs, with_defaults(op, attrs))


def _run(case: CaseData, variant: str) -> np.ndarray:
    call = ADAPTER.prepare(case, variant)
    return ADAPTER.to_numpy(call.run())


def test_variants_are_api_times_mode_with_eager_primary_first() -> None:
    assert ADAPTER.variants("Gather") == ["gather/eager", "gather/function", "gather/xla"]
    assert ADAPTER.variants("Take")[:3] == ["take/eager", "take/function", "take/xla"]
    assert ADAPTER.variants("Take")[3:] == ["gather/eager", "gather/function", "gather/xla"]
    assert ADAPTER.variants("ScatterND") == [
        "tensor_scatter_nd/eager", "tensor_scatter_nd/function", "tensor_scatter_nd/xla",
        "scatter_nd/eager", "scatter_nd/function", "scatter_nd/xla",
    ]
    assert split_variant("gather_nd/xla") == ("gather_nd", "xla")
    with pytest.raises(ValueError):
        split_variant("gather")
    with pytest.raises(ValueError):
        ADAPTER.prepare(_case("Gather", {}, data=np.ones(2), indices=np.zeros(1, np.int64)), "gather_nd/eager")


def test_variants_import_no_framework() -> None:
    code = (
        "import sys, adapters.tensorflow as m; "
        "[m.ADAPTER.variants(op) for op in m.APIS]; "
        "assert 'tensorflow' not in sys.modules, 'tensorflow imported'"
    )
    subprocess.run([sys.executable, "-c", code], cwd=ROOT, check=True, timeout=60)


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
