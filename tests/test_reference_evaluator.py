"""Random valid cases: the reference engine against onnx.reference.ReferenceEvaluator (opset 18)."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st
from onnx import helper
from onnx.reference import ReferenceEvaluator

from gather_scatter_conformance.harness.reference import AllowedOutputs, IndexOutOfRange, compute, equal_nan
from gather_scatter_conformance.vocab.ops import INPUTS

SETTINGS = settings(max_examples=150, deadline=None, derandomize=True, suppress_health_check=[HealthCheck.too_slow])
DATA_DTYPES = (np.float32, np.int32, np.int64)


def run_onnx(op: str, inputs: dict[str, np.ndarray], **attrs) -> np.ndarray:
    """Run a one-node opset-18 model (Gather*/ScatterElements/ScatterND at their latest versions <= 18)."""
    names = INPUTS[op]
    node = helper.make_node(op, list(names), ["out"], **attrs)
    graph = helper.make_graph(
        [node],
        "g",
        [
            helper.make_tensor_value_info(n, helper.np_dtype_to_tensor_dtype(inputs[n].dtype), inputs[n].shape)
            for n in names
        ],
        [helper.make_tensor_value_info("out", helper.np_dtype_to_tensor_dtype(inputs["data"].dtype), None)],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 18)])
    return ReferenceEvaluator(model).run(None, {n: inputs[n] for n in names})[0]


def assert_same(ours, theirs: np.ndarray) -> None:
    assert isinstance(ours, np.ndarray)
    assert ours.dtype == theirs.dtype
    np.testing.assert_array_equal(ours, theirs, strict=True)


def shapes(min_rank: int = 1, max_rank: int = 4, min_side: int = 1, max_side: int = 4):
    return st.lists(st.integers(min_side, max_side), min_size=min_rank, max_size=max_rank).map(tuple)


def data_array(draw, shape: tuple[int, ...]) -> np.ndarray:
    dtype = draw(st.sampled_from(DATA_DTYPES))
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    return rng.integers(-50, 50, size=shape).astype(dtype)


def index_array(draw, shape: tuple[int, ...], size) -> np.ndarray:
    """Random in-range indices in [-size, size-1] (size: int or per-last-dim sizes)."""
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    size = np.asarray(size, dtype=np.int64)
    idx = np.floor(rng.random(shape) * (2 * size)).astype(np.int64) - size
    return idx.astype(draw(st.sampled_from((np.int32, np.int64))))


@SETTINGS
@given(st.data())
def test_gather(data) -> None:
    draw = data.draw
    x = data_array(draw, draw(shapes()))
    axis = draw(st.integers(-x.ndim, x.ndim - 1))
    idx = index_array(draw, draw(shapes(0, 3, 0, 3)), x.shape[axis])
    assert_same(
        compute("Gather", {"data": x, "indices": idx}, {"axis": axis}),
        run_onnx("Gather", {"data": x, "indices": idx}, axis=axis),
    )


@SETTINGS
@given(st.data())
def test_gather_batch_dims(data) -> None:
    # ONNX Gather has no batch_dims: batch i of the output must be ONNX Gather on batch i of data and indices.
    draw = data.draw
    x = data_array(draw, draw(shapes(2, 4)))
    axis = draw(st.integers(1, x.ndim - 1))
    b = draw(st.integers(1, axis))
    idx = index_array(draw, x.shape[:b] + draw(shapes(0, 2, 0, 3)), x.shape[axis])
    given_b = draw(st.sampled_from((b, b - idx.ndim))) if b < idx.ndim else b  # negative: counted from the end
    ours = compute("Gather", {"data": x, "indices": idx}, {"axis": axis - x.ndim, "batch_dims": given_b})
    assert ours.shape == x.shape[:axis] + idx.shape[b:] + x.shape[axis + 1 :]
    n = int(np.prod(x.shape[:b]))
    flat_x = x.reshape((n, *x.shape[b:]))
    flat_i = idx.reshape((n, *idx.shape[b:]))
    flat_o = ours.reshape((n, *ours.shape[b:]))
    for i in range(n):
        assert_same(flat_o[i, ...], run_onnx("Gather", {"data": flat_x[i], "indices": flat_i[i]}, axis=axis - b))


@SETTINGS
@given(st.data())
def test_gather_elements(data) -> None:
    draw = data.draw
    x = data_array(draw, draw(shapes()))
    axis = draw(st.integers(-x.ndim, x.ndim - 1))
    shape = list(x.shape)
    shape[axis] = draw(st.integers(0, 4))  # the reference requires equal dims outside axis
    idx = index_array(draw, tuple(shape), x.shape[axis])
    inputs = {"data": x, "indices": idx}
    # ONNX's reference mishandles negative axes here (see test_onnx_gather_elements_negative_axis): pass it >= 0.
    ours = compute("GatherElements", inputs, {"axis": axis})
    assert_same(ours, run_onnx("GatherElements", inputs, axis=axis % x.ndim))


@SETTINGS
@given(st.data())
def test_gather_nd(data) -> None:
    draw = data.draw
    x = data_array(draw, draw(shapes()))
    b = draw(st.integers(0, x.ndim - 1))
    k = draw(st.integers(1, x.ndim - b))
    idx = index_array(draw, x.shape[:b] + draw(shapes(0, 2, 0, 3)) + (k,), x.shape[b : b + k])
    inputs = {"data": x, "indices": idx}
    assert_same(compute("GatherND", inputs, {"batch_dims": b}), run_onnx("GatherND", inputs, batch_dims=b))


def _distinct_along(draw, shape: tuple[int, ...], axis: int, size: int) -> np.ndarray:
    """Indices of ``shape`` whose lines along ``axis`` hold distinct targets in [0, size), some made negative."""
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    full = list(shape)
    full[axis] = size
    perm = np.argsort(rng.random(full), axis=axis)
    idx = np.take(perm, np.arange(shape[axis]), axis=axis)
    idx = np.where(rng.random(idx.shape) < 0.3, idx - size, idx)
    return idx.astype(draw(st.sampled_from((np.int32, np.int64))))


def _check_scatter(op: str, inputs: dict[str, np.ndarray], attrs: dict) -> None:
    before = {k: v.copy() for k, v in inputs.items()}
    ours = compute(op, inputs, attrs)
    for k, v in inputs.items():
        np.testing.assert_array_equal(v, before[k], err_msg=f"{op} modified its input {k}")
    theirs = run_onnx(op, inputs, **attrs)
    event(f"{op} reduction={attrs.get('reduction')} result={type(ours).__name__} empty={inputs['indices'].size == 0}")
    if isinstance(ours, AllowedOutputs):
        # ONNX's reference applies updates sequentially in row-major order: the last-wins member of the set.
        assert attrs.get("reduction", "none") == "none"
        assert ours.allows(theirs)
        assert_same(ours.example(), theirs)
    else:
        assert_same(ours, theirs)


REDUCTIONS = ("none", "add", "mul", "max", "min")
SCATTER_SETTINGS = settings(SETTINGS, max_examples=40)


@pytest.mark.parametrize("unique", [True, False], ids=["unique", "duplicates"])
@pytest.mark.parametrize("reduction", REDUCTIONS)
@SCATTER_SETTINGS
@given(data=st.data(), empty=st.integers(0, 9))
def test_scatter_elements(data, reduction: str, unique: bool, empty: int) -> None:
    draw = data.draw
    x = data_array(draw, draw(shapes()))
    axis = draw(st.integers(-x.ndim, x.ndim - 1))
    ax = axis % x.ndim
    s = x.shape[axis]
    # Unique: distinct targets per line. Otherwise more updates than targets per line, so duplicates are certain.
    n = draw(st.integers(1, s)) if unique else s + draw(st.integers(1, 3))
    shape = tuple(n if d == ax else draw(st.integers(1, m)) for d, m in enumerate(x.shape))
    if empty == 0:
        shape = tuple(0 if d == draw(st.integers(0, x.ndim - 1)) else m for d, m in enumerate(shape))
    idx = _distinct_along(draw, shape, ax, s) if unique else index_array(draw, shape, s)
    upd = data_array(draw, shape).astype(x.dtype)
    inputs = {"data": x, "indices": idx, "updates": upd}
    _check_scatter("ScatterElements", inputs, {"axis": axis, "reduction": reduction})


@pytest.mark.parametrize("unique", [True, False], ids=["unique", "duplicates"])
@pytest.mark.parametrize("reduction", REDUCTIONS)
@SCATTER_SETTINGS
@given(data=st.data(), empty=st.integers(0, 9))
def test_scatter_nd(data, reduction: str, unique: bool, empty: int) -> None:
    draw = data.draw
    x = data_array(draw, draw(shapes()))
    k = draw(st.integers(1, x.ndim))
    n_rows = int(np.prod(x.shape[:k]))
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    if empty == 0:
        lead: tuple[int, ...] = (0,)
    elif unique:
        lead = (draw(st.integers(1, n_rows)),)
    else:
        lead = (n_rows + draw(st.integers(1, 3)),)  # more updates than targets: duplicates are certain
    if draw(st.booleans()) and lead[0] % 2 == 0:
        lead = (2, lead[0] // 2)
    if unique:
        rows = rng.permutation(n_rows)[: int(np.prod(lead))]
        idx = np.stack(np.unravel_index(rows, x.shape[:k]), axis=-1).reshape((*lead, k)).astype(np.int64)
        idx = np.where(rng.random(idx.shape) < 0.3, idx - np.asarray(x.shape[:k]), idx)
        idx = idx.astype(draw(st.sampled_from((np.int32, np.int64))))
    else:
        idx = index_array(draw, (*lead, k), x.shape[:k])
    upd = data_array(draw, lead + x.shape[k:]).astype(x.dtype)
    _check_scatter("ScatterND", {"data": x, "indices": idx, "updates": upd}, {"reduction": reduction})


# ---- Where onnx.reference (1.23.2) itself is wrong. Each test states what a correct evaluator does; the engine
# ---- does it (asserted first), ONNX's reference does not, hence xfail(strict=True): a fixed onnx makes it pass.
# ---- The xfail is bound to the ONNX failure's exception type, so an engine regression still fails the test.


class OnnxReferenceWrong(AssertionError):
    """onnx.reference gave a wrong answer (not an error)."""


@pytest.mark.xfail(
    strict=True,
    raises=ValueError,
    reason="onnx.reference GatherElements compares index.shape[:axis] + index.shape[axis+1:] without normalising "
    "a negative axis, so axis=-1 rejects valid inputs whose indices differ from data along the axis",
)
def test_onnx_gather_elements_negative_axis() -> None:
    inputs = {"data": np.array([1.0, 2.0], np.float32), "indices": np.array([1], np.int64)}
    np.testing.assert_array_equal(compute("GatherElements", inputs, {"axis": -1}), [2.0])
    np.testing.assert_array_equal(run_onnx("GatherElements", inputs, axis=-1), [2.0])


@pytest.mark.xfail(
    strict=True,
    raises=ValueError,
    reason="onnx.reference GatherElements uses np.choose, which accepts at most 64 choices: an axis longer than "
    "64 on data of rank >= 3 raises 'Need at least 0 and at most 64 array objects'",
)
def test_onnx_gather_elements_long_axis() -> None:
    data = np.arange(65, dtype=np.float32).reshape(1, 65, 1)
    inputs = {"data": data, "indices": np.array([[[64]]], np.int64)}
    np.testing.assert_array_equal(compute("GatherElements", inputs, {"axis": 1}), [[[64.0]]])
    np.testing.assert_array_equal(run_onnx("GatherElements", inputs, axis=1), [[[64.0]]])


@pytest.mark.xfail(
    strict=True,
    raises=OnnxReferenceWrong,
    reason="onnx.reference GatherElements calls np.choose(mode='wrap'), so out-of-range indices silently wrap "
    "(5 -> 1 here, output [[2], [3]]); the spec says out-of-bounds is an error and onnxruntime raises",
)
def test_onnx_gather_elements_out_of_range() -> None:
    inputs = {"data": np.array([[1, 2], [3, 4]], np.float32), "indices": np.array([[5], [0]], np.int64)}
    with pytest.raises(IndexOutOfRange):
        compute("GatherElements", inputs, {"axis": 1})
    try:
        out = run_onnx("GatherElements", inputs, axis=1)
    except Exception:  # any error is right here
        return
    raise OnnxReferenceWrong(f"out-of-range index accepted, output {out.tolist()}")


@pytest.mark.xfail(
    strict=True,
    raises=OnnxReferenceWrong,
    reason="onnx.reference ScatterElements max/min use Python max()/min(), which drop a NaN depending on operand "
    "order (max(1, nan) = 1): updates [nan, 5] at index 0 of [1, 2, 3] give [5, 2, 3]. Its ScatterND uses "
    "np.maximum and gives [nan, 2, 3]; the engine propagates NaN like np.maximum",
)
def test_onnx_scatter_elements_max_nan() -> None:
    inputs = {
        "data": np.array([1, 2, 3], np.float32),
        "indices": np.array([0, 0], np.int64),
        "updates": np.array([np.nan, 5], np.float32),
    }
    expected = np.array([np.nan, 2, 3], np.float32)
    np.testing.assert_array_equal(compute("ScatterElements", inputs, {"reduction": "max"}), expected)
    nd = {"data": inputs["data"], "indices": inputs["indices"].reshape(2, 1), "updates": inputs["updates"]}
    np.testing.assert_array_equal(run_onnx("ScatterND", nd, reduction="max"), expected)
    out = run_onnx("ScatterElements", inputs, reduction="max")
    if not equal_nan(out, expected).all():
        raise OnnxReferenceWrong(f"NaN dropped: {out.tolist()}")
