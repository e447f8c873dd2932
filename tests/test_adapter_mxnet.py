"""The MXNet adapter: every shipped case through the MXNet worker, and focused tests of the translation.

MXNet 1.9 lives in its own interpreter (.venv-mxnet, numpy<1.24), so every native call here goes through
harness.isolation.Isolated, the way `pytest cases --framework mxnet` runs it. Building a Call (prepare) imports no
MXNet, so the api strings and the Unsupported decisions are tested in this process.
"""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import numpy as np
import pytest

ROOT = Path(__file__).resolve().parent.parent
MXNET_PYTHON = ROOT / ".venv-mxnet" / "bin" / "python"
if not MXNET_PYTHON.exists():
    pytest.skip("MXNet's environment is not built (make mxnet-env)", allow_module_level=True)
pytest.importorskip("execnet")

from _shipped import REGRESSION_GATHER_NEG, REGRESSION_GATHER_OOB, shipped_cases  # noqa: E402

from adapters.base import CaseData, Unsupported  # noqa: E402
from adapters.mxnet import ADAPTER, element_coords  # noqa: E402
from harness import dtypes, wire  # noqa: E402
from harness.cases import Case  # noqa: E402
from harness.isolation import Isolated  # noqa: E402
from harness.ops import GATHER_OPS, SCATTER_OPS, with_defaults  # noqa: E402
from harness.runner import execute  # noqa: E402

PYTHONS = {"mxnet": str(MXNET_PYTHON)}

_TAKE_NEG = "mx.nd.take's default mode 'clip' clips negative indices to 0 instead of wrapping them"
_RAISE_NEG = "MXNet's mode='raise' rejects every negative index, in-range ones included"
_CLIP_OOB = "mode 'clip' (mx.nd.take's default) clamps out-of-range indices instead of raising"
_LEGACY_0D = "mx.nd under legacy shape semantics has no 0-d arrays: shape inference of take fails"
_ND_RANK1 = "mx.nd.gather_nd requires an index array of rank >= 2 (rank-1 indices are one tuple)"
_BF16_COPY = "mx.np ndarray.copy() of a bfloat16 array raises KeyError (numpy.void has no MXNet type)"
_BOOL_INDEX_COPY = "mx.nd.contrib.index_copy has no bool kernel: 'Unknown type enum 7'"
_OUTSIDE = (
    "MXNet scatters without a bounds check: an index outside [0, dim) (negatives included) is written "
    "outside the array — wrong result, heap corruption, abort or hang"
)

_PICK_CLIP = "mx.nd.pick's default mode 'clip' clips out-of-range and negative indices instead of raising (mxnet#12009)"
_PICK_WRAP = "mx.nd.pick(mode='wrap') wraps the out-of-range index 1000 (to 0) instead of raising"
_IMP, _REG = "cases/imported/onnx_node_", "cases/regression/gather.yaml::"
# cases/regression/gather.yaml cases with an index past the end: mx.nd.take's default mode clips it.
# jax-14193 has a 0-d index, which mx.nd.take cannot take (an error, as canonical semantics want).
_REG_OOB = tuple(c for c in REGRESSION_GATHER_OOB if c != "jax-14193-take-fill-int-min")

# (case nodeid, variant) -> why it deviates. Every entry is measured MXNet 1.9.1 behaviour, not a translation choice.
# Refusing index types outside ONNX's type constraints (here int16 indices) conforms, so it is not listed.
KNOWN_DEVIATIONS: dict[tuple[str, str], str] = {
    ("cases/gather.yaml::ov-gather8-example-6", "take"): _TAKE_NEG,
    ("cases/gather.yaml::ov-gather8-example-6", "take/raise"): _RAISE_NEG,
    ("cases/gather.yaml::ov-gather8-example-6", "np.take"): _RAISE_NEG,
    ("cases/gather.yaml::ov-gather8-example-7", "take"): _CLIP_OOB,
    ("cases/gather.yaml::onnx-gather13-negative-indices", "take"): _TAKE_NEG,
    ("cases/gather.yaml::onnx-gather13-negative-indices", "take/raise"): _RAISE_NEG,
    ("cases/gather.yaml::onnx-gather13-negative-indices", "np.take"): _RAISE_NEG,
    ("cases/gather.yaml::gather-negative-axis-last", "take"): _TAKE_NEG,
    ("cases/gather.yaml::gather-negative-axis-last", "take/raise"): _RAISE_NEG,
    ("cases/gather.yaml::gather-negative-axis-last", "np.take"): _RAISE_NEG,
    ("cases/gather.yaml::gather-scalar-index-axis0", "take"): _LEGACY_0D,
    ("cases/gather.yaml::gather-scalar-index-axis0", "take/raise"): _LEGACY_0D,
    ("cases/gather.yaml::gather-scalar-index-axis2", "take"): _LEGACY_0D,
    ("cases/gather.yaml::gather-scalar-index-axis2", "take/raise"): _LEGACY_0D,
    ("cases/gather.yaml::gather-scalar-negative-index-1d", "take"): _LEGACY_0D,
    ("cases/gather.yaml::gather-scalar-negative-index-1d", "take/raise"): _LEGACY_0D,
    ("cases/gather.yaml::gather-scalar-negative-index-1d", "np.take"): _RAISE_NEG,
    ("cases/gather.yaml::gather-negative-indices-2d", "take"): _TAKE_NEG,
    ("cases/gather.yaml::gather-negative-indices-2d", "take/raise"): _RAISE_NEG,
    ("cases/gather.yaml::gather-negative-indices-2d", "np.take"): _RAISE_NEG,
    ("cases/gather.yaml::gather-index-int16-negative", "take"): _TAKE_NEG,
    ("cases/gather.yaml::gen-gather-axis-neg1-rank4-with-negatives", "take"): _TAKE_NEG,
    ("cases/gather.yaml::gen-gather-axis-neg1-rank4-with-negatives", "take/raise"): _RAISE_NEG,
    ("cases/gather.yaml::gen-gather-axis-neg1-rank4-with-negatives", "np.take"): _RAISE_NEG,
    ("cases/gather_nd.yaml::gathernd-rank1-indices-element", "gather_nd"): _ND_RANK1,
    ("cases/gather_nd.yaml::gathernd-rank1-indices-slice", "gather_nd"): _ND_RANK1,
    ("cases/scatter_elements.yaml::onnx-scatterelements18-negative-indices", "np.setitem"): _OUTSIDE,
    ("cases/scatter_elements.yaml::se-negative-indices", "np.setitem"): _OUTSIDE,
    ("cases/scatter_elements.yaml::se-dtype-bfloat16", "np.setitem"): _BF16_COPY,
    ("cases/scatter_elements.yaml::se-index-int16-negative", "np.setitem"): _OUTSIDE,
    ("cases/scatter_nd.yaml::scatternd-negative-indices-elements", "np.setitem"): _OUTSIDE,
    ("cases/scatter_nd.yaml::scatternd-negative-indices-slices", "np.setitem"): _OUTSIDE,
    ("cases/scatter_nd.yaml::scatternd-negative-indices-slices", "index_copy"): _OUTSIDE,
    ("cases/scatter_nd.yaml::scatternd-dtype-bfloat16", "np.setitem"): _BF16_COPY,
    ("cases/scatter_nd.yaml::scatternd-dtype-bool", "index_copy"): _BOOL_INDEX_COPY,
    ("cases/scatter_nd.yaml::scatternd-index-int16-negative", "np.setitem"): _OUTSIDE,
    ("cases/take.yaml::take-scalar-index-axis-none", "take"): _LEGACY_0D,
    ("cases/take.yaml::take-scalar-index-axis1", "take"): _LEGACY_0D,
    ("cases/take.yaml::take-negative-indices-raise", "take"): _RAISE_NEG,
    ("cases/take.yaml::take-negative-indices-raise", "np.take"): _RAISE_NEG,
    ("cases/take.yaml::gen-take-axis0-rank4-with-negatives", "take"): _RAISE_NEG,
    ("cases/take.yaml::gen-take-axis0-rank4-with-negatives", "np.take"): _RAISE_NEG,
    # Imported ONNX node tests (cases/imported) and regression cases (cases/regression)
    **{(f"{_IMP}gather.yaml::test_gather_negative_indices", v): r for v, r in (
        ("take", _TAKE_NEG), ("take/raise", _RAISE_NEG), ("np.take", _RAISE_NEG))},
    (f"{_IMP}scatter_elements.yaml::test_scatter_elements_with_negative_indices", "np.setitem"): _OUTSIDE,
    **{(_REG + c, "take"): _CLIP_OOB for c in _REG_OOB},
    **{(_REG + c, v): r for c in REGRESSION_GATHER_NEG[:2]  # the third, a 0-d index, follows
       for v, r in (("take", _TAKE_NEG), ("take/raise", _RAISE_NEG), ("np.take", _RAISE_NEG))},
    **{(_REG + "jax-4795-take-negative-scalar-index", v): r for v, r in (
        ("take", _LEGACY_0D), ("take/raise", _LEGACY_0D), ("np.take", _RAISE_NEG))},
    ("cases/regression/gather_elements.yaml::mxnet-12009-pick-clips", "pick"): _PICK_CLIP,
    ("cases/regression/gather_elements.yaml::mxnet-12009-pick-clips", "pick/wrap"): _PICK_WRAP,
}

# Which cases get a worker of their own, fitted to what MXNet 1.9.1 does (measured; the harness's rule, is_risky,
# goes by tags and would restart MXNet — about 4 s of import — for every out-of-bounds gather):
# - its scatters (scatter_nd, item assignment, index_copy) have no bounds check, and negative indices are not
#   wrapped: any index outside [0, dim) writes outside the array. The heap damage surfaces later (an abort or a
#   hang in whatever runs next), so each such case runs in a throwaway worker whose exit status is checked;
# - its gathers raise, clamp or wrap out-of-range indices (take, pick, gather_nd, indexing), and the ones that
#   crash (take from an empty axis) crash at once: they share the warm worker.
OUTSIDE_TIMEOUT = 30.0




def _case_data(case: Case) -> CaseData:
    return CaseData(op=case.op, inputs=case.inputs(), attrs=case.attrs, opset=case.spec.opset)


def writes_outside(case: Case, variant: str) -> bool:
    """True when ``variant`` reaches an MXNet scatter with a coordinate outside [0, dim) for its dimension."""
    if case.op not in SCATTER_OPS:
        return False
    try:
        ADAPTER.prepare(_case_data(case), variant)
    except (Unsupported, ValueError):
        return False
    data, indices = case.inputs()["data"], case.inputs()["indices"].astype(np.int64)
    if case.op == "ScatterND":
        k = indices.shape[-1] if indices.ndim else 0
        if k > data.ndim:
            return False
        return bool(((indices < 0) | (indices >= np.array(data.shape[:k], dtype=np.int64))).any())
    axis = int(case.attrs["axis"])
    if not -data.ndim <= axis < data.ndim or indices.ndim != data.ndim:
        return False
    # The aranges that spell the other coordinates run over indices' dims, which may exceed data's (an invalid case).
    wider = any(i > n for d, (i, n) in enumerate(zip(indices.shape, data.shape, strict=True)) if d != axis % data.ndim)
    return wider or bool(((indices < 0) | (indices >= data.shape[axis])).any())


class WarmMxnet:
    """The shared MXNet worker; gathers stay in it even when the harness would give them a worker of their own."""

    def __init__(self) -> None:
        self.isolated = Isolated(PYTHONS, timeout=120.0)

    def run(self, framework: str, variant: str, payload: dict[str, Any]) -> dict[str, Any]:
        if payload["op"] in GATHER_OPS:
            payload = {**payload, "fresh": False}
        return self.isolated.run(framework, variant, payload)


class FreshMxnet:
    """A throwaway worker for one case; its exit status is checked, so a crash at exit is that case's crash."""

    def run(self, framework: str, variant: str, payload: dict[str, Any]) -> dict[str, Any]:
        isolated = Isolated(PYTHONS, timeout=OUTSIDE_TIMEOUT)
        try:
            return isolated.run(framework, variant, {**payload, "fresh": True})
        finally:
            isolated.close()


@pytest.fixture(scope="module")
def executor() -> Any:
    """One warm MXNet worker for the module (importing MXNet takes seconds)."""
    warm = WarmMxnet()
    yield warm
    warm.isolated.close()


def test_every_shipped_case(executor: WarmMxnet) -> None:
    runs = [(case, variant) for case in shipped_cases() for variant in ADAPTER.variants(case.op)]
    records: dict[tuple[str, str], dict[str, Any]] = {}
    # The throwaway workers (MXNet's import is most of their cost) run two at a time beside the warm one.
    with ThreadPoolExecutor(max_workers=2) as pool:
        pending = {
            (c.nodeid, v): pool.submit(execute, c, "mxnet", v, FreshMxnet()) for c, v in runs if writes_outside(c, v)
        }
        for case, variant in runs:
            if (case.nodeid, variant) not in pending:
                records[(case.nodeid, variant)] = execute(case, "mxnet", variant, executor)
        records.update({key: future.result() for key, future in pending.items()})
    missing_reason = [key for key, rec in records.items() if rec["verdict"] == "n/a" and not rec["reason"]]
    assert not missing_reason, f"n/a records without a reason: {missing_reason}"
    deviating = {
        key: f"{rec['outcome']}: {rec['reason']}"[:160] for key, rec in records.items() if rec["verdict"] == "deviates"
    }
    unexpected = {k: v for k, v in deviating.items() if k not in KNOWN_DEVIATIONS}
    fixed = sorted(k for k in KNOWN_DEVIATIONS if k not in deviating)
    assert not unexpected and not fixed, f"new deviations: {unexpected}\nno longer deviating: {fixed}"


# --- the translation (prepare only: no MXNet needed) -------------------------------------------------------------


def _cd(op: str, attrs: dict[str, Any] | None = None, **inputs: Any) -> CaseData:
    return CaseData(op=op, inputs={k: np.asarray(v) for k, v in inputs.items()}, attrs=with_defaults(op, attrs))


F32 = np.arange(6, dtype=np.float32).reshape(2, 3)
I64 = np.array([[1, 0]], dtype=np.int64)


def test_variants_default_first() -> None:
    assert {
        op: ADAPTER.variants(op)[0]
        for op in ("Gather", "GatherElements", "GatherND", "ScatterElements", "ScatterND", "Take")
    } == {
        "Gather": "take",
        "GatherElements": "pick",
        "GatherND": "gather_nd",
        "ScatterElements": "np.setitem",
        "ScatterND": "scatter_nd",
        "Take": "take",
    }
    with pytest.raises(ValueError, match="unknown variant"):
        ADAPTER.prepare(_cd("Gather", {"axis": 1}, data=F32, indices=I64), "xla")


@pytest.mark.parametrize(
    ("variant", "api"),
    [
        ("take", "mx.nd.take(data, indices, axis=1)"),  # MXNet's default mode ('clip'): what a user gets
        ("take/raise", "mx.nd.take(data, indices, axis=1, mode='raise')"),
        ("np.take", "npx.set_np(); mx.np.take(data, indices, axis=1)"),
        ("np.indexing", "npx.set_np(); data[:, indices]"),
    ],
)
def test_gather_api(variant: str, api: str) -> None:
    assert ADAPTER.prepare(_cd("Gather", {"axis": 1}, data=F32, indices=I64), variant).api == api


def test_gather_batch_dims_only_as_indexing() -> None:
    data, idx = np.zeros((2, 5), np.float32), np.zeros((2, 3), np.int64)
    for variant in ("take", "take/raise", "np.take"):
        with pytest.raises(Unsupported, match="no batch_dims"):
            ADAPTER.prepare(_cd("Gather", {"axis": 1, "batch_dims": 1}, data=data, indices=idx), variant)
    want = "npx.set_np(); data[mx.np.arange(2, dtype='int64').reshape((2, 1)), indices.reshape((2, 3))]"
    for b in (1, -1):  # -1 counts from the indices rank: the same batch_dims 1
        assert (
            ADAPTER.prepare(_cd("Gather", {"axis": 1, "batch_dims": b}, data=data, indices=idx), "np.indexing").api
            == want
        )


def test_take_axis_none_and_modes() -> None:
    case = _cd("Take", {"axis": None, "mode": "clip"}, data=F32, indices=I64)
    assert ADAPTER.prepare(case, "take").api == "mx.nd.take(data.reshape(-1), indices, axis=0, mode='clip')"
    assert ADAPTER.prepare(case, "np.take").api == "npx.set_np(); mx.np.take(data, indices, axis=None, mode='clip')"
    fill = _cd("Take", {"axis": 0, "mode": "fill"}, data=F32, indices=I64)
    for variant in ADAPTER.variants("Take"):
        with pytest.raises(Unsupported, match="no 'fill' mode"):
            ADAPTER.prepare(fill, variant)


def test_gather_nd_moves_the_tuple_axis_first() -> None:
    idx = np.zeros((2, 1, 2), np.int64)
    data = np.zeros((2, 3, 4), np.float32)
    assert ADAPTER.prepare(_cd("GatherND", data=data, indices=idx), "gather_nd").api == (
        "mx.nd.gather_nd(data, mx.nd.moveaxis(indices, -1, 0))"
    )
    batched = ADAPTER.prepare(_cd("GatherND", {"batch_dims": 1}, data=data, indices=idx), "gather_nd").api
    assert "np.indices((2, 1))[:1]" in batched and "mx.nd.moveaxis(indices, -1, 0), dim=0" in batched
    assert ADAPTER.prepare(_cd("GatherND", data=data, indices=idx), "np.indexing").api == (
        "npx.set_np(); data[tuple(mx.np.moveaxis(indices, -1, 0))]"
    )


def test_pick_expresses_one_index_per_position_only() -> None:
    idx = np.array([[2], [0]], np.int64)
    assert ADAPTER.prepare(_cd("GatherElements", {"axis": 1}, data=F32, indices=idx), "pick").api == (
        "mx.nd.pick(data, indices, axis=1, keepdims=True)"
    )
    assert ADAPTER.prepare(_cd("GatherElements", {"axis": 1}, data=F32, indices=idx), "pick/wrap").api == (
        "mx.nd.pick(data, indices, axis=1, keepdims=True, mode='wrap')"
    )
    # indices smaller than data outside the axis read the leading part of data: pick needs the slice written out
    small = _cd("GatherElements", {"axis": 1}, data=F32, indices=idx[:1])
    assert ADAPTER.prepare(small, "pick").api == "mx.nd.pick(data[:1, :], indices, axis=1, keepdims=True)"
    with pytest.raises(Unsupported, match=r"indices.shape\[axis\] == 1"):
        ADAPTER.prepare(_cd("GatherElements", {"axis": 1}, data=F32, indices=np.zeros((2, 2), np.int64)), "pick")
    coords = ADAPTER.prepare(_cd("GatherElements", {"axis": 1}, data=F32, indices=idx), "np.indexing").api
    assert coords == "npx.set_np(); data[(mx.np.arange(2, dtype='int64').reshape((2, 1)), indices)]"
    assert element_coords((2, 3), 0) == [None, (1, 3)]


def test_scatter_nd_variants() -> None:
    idx, upd = np.array([[1, 2]], np.int64), np.ones(1, np.float32)
    with pytest.raises(Unsupported, match="scatter_nd has no data input"):
        ADAPTER.prepare(_cd("ScatterND", data=F32, indices=idx, updates=upd), "scatter_nd")
    zeros = _cd("ScatterND", data=np.zeros((2, 3), np.float32), indices=idx, updates=upd)
    assert ADAPTER.prepare(zeros, "scatter_nd").api == (
        "mx.nd.scatter_nd(updates, mx.nd.moveaxis(indices, -1, 0), shape=(2, 3))"
    )
    assert ADAPTER.prepare(zeros, "np.setitem").api == (
        "npx.set_np(); out = data.copy(); out[tuple(mx.np.moveaxis(indices, -1, 0))] = updates"
    )
    with pytest.raises(Unsupported, match="index tuples of length 1"):
        ADAPTER.prepare(zeros, "index_copy")
    rows = _cd("ScatterND", data=F32, indices=np.array([[1]], np.int64), updates=np.ones((1, 3), np.float32))
    assert ADAPTER.prepare(rows, "index_copy").api == (
        "mx.nd.contrib.index_copy(data, indices.reshape(-1), updates.reshape((-1, 3)))"
    )
    add = _cd("ScatterND", {"reduction": "add"}, data=np.zeros((2, 3), np.float32), indices=idx, updates=upd)
    for variant in ADAPTER.variants("ScatterND"):
        with pytest.raises(Unsupported, match="no scatter-add"):
            ADAPTER.prepare(add, variant)


def test_scatter_elements_spells_every_coordinate() -> None:
    case = _cd(
        "ScatterElements",
        {"axis": -1},
        data=F32,
        indices=np.zeros((2, 2), np.int64),
        updates=np.ones((2, 2), np.float32),
    )
    assert ADAPTER.prepare(case, "np.setitem").api == (
        "npx.set_np(); out = data.copy(); out[(mx.np.arange(2, dtype='int64').reshape((2, 1)), indices)] = updates"
    )


def test_dtype_conversions_in_api() -> None:
    u32 = _cd("Gather", {"axis": 1}, data=F32, indices=I64.astype(np.uint32))
    assert ADAPTER.prepare(u32, "take").api == (
        "indices = mx.nd.array(indices.astype('int64'), dtype='int64'); mx.nd.take(data, indices, axis=1)"
    )
    bf16 = _cd("Gather", {"axis": 1}, data=F32.astype(dtypes.to_numpy("bfloat16")), indices=I64)
    assert ADAPTER.prepare(bf16, "np.take").api == (
        "npx.set_np(); data = mx.nd.amp_cast(mx.nd.array(data, dtype='float32'), dtype='bfloat16').as_np_ndarray(); "
        "mx.np.take(data, indices, axis=1)"
    )
    for data, name in (
        (F32.astype(np.complex64), "complex64"),
        (np.array(["a", "b"], dtype=object), "string"),
        (F32.astype(np.int16), "int16"),
    ):
        with pytest.raises(Unsupported, match=f"cannot hold {name}"):
            ADAPTER.prepare(_cd("Take", {"axis": 0}, data=data, indices=np.array([0])), "take")


def test_to_numpy_reads_mxnet_bfloat16_records() -> None:
    bits = np.array([1.5, -2.0, 384.0], dtype=dtypes.to_numpy("bfloat16"))
    record = bits.view(np.uint16).view(np.dtype([("bfloat16", "<u2")]))  # what MXNet's .asnumpy() returns
    out = ADAPTER.to_numpy(record)
    assert out.dtype == dtypes.to_numpy("bfloat16") and out.tolist() == [1.5, -2.0, 384.0]
    assert ADAPTER.to_numpy(np.arange(3, dtype=np.int8)).dtype == np.int8


# --- through the MXNet worker ------------------------------------------------------------------------------------


def _run(executor: Any, op: str, variant: str, attrs: dict[str, Any] | None = None, **inputs: Any) -> dict[str, Any]:
    payload = {
        "op": op,
        "inputs": {k: wire.encode(np.asarray(v)) for k, v in inputs.items()},
        "attrs": with_defaults(op, attrs),
        "opset": None,
    }
    return executor.run("mxnet", variant, payload)


def _value(res: dict[str, Any]) -> np.ndarray:
    assert res["outcome"] == "ok", res
    return wire.decode(res["value"])


def test_gather_nd_tuples_read_along_the_last_axis(executor: Any) -> None:
    # 3 tuples of length 2 (indices (3, 2)): passed as is, MXNet would read 2 tuples of length 3.
    idx = np.array([[0, 2], [1, 0], [1, 2]], np.int64)
    for variant in ADAPTER.variants("GatherND"):
        assert _value(_run(executor, "GatherND", variant, data=F32, indices=idx)).tolist() == [2.0, 3.0, 5.0]


def test_int64_indices_and_data_keep_their_precision(executor: Any) -> None:
    # 2**24 + 1 is odd; as float32 (mx.nd.array's default type) it would round to the even 2**24.
    idx = np.array([2**24 + 1], np.int64)
    for variant in ADAPTER.variants("Take"):
        wrap = {"axis": 0, "mode": "wrap"}
        res = _run(executor, "Take", variant, wrap, data=np.array([10, 20], np.int64), indices=idx)
        assert _value(res).tolist() == [20]
    big = np.array([2**53 + 1, -(2**63), 2**63 - 1], np.int64)
    out = _value(_run(executor, "Gather", "take", data=big, indices=np.array([2, 0], np.int32)))
    assert out.dtype == np.int64 and out.tolist() == [2**63 - 1, 2**53 + 1]


def test_bfloat16_and_cast_indices_round_trip(executor: Any) -> None:
    bf16 = dtypes.to_numpy("bfloat16")
    data = np.array([[1.5, -2.0], [0.0078125, 384.0]], dtype=bf16)
    for variant in ("take", "np.take", "np.indexing"):
        out = _value(_run(executor, "Gather", variant, data=data, indices=np.array([1, 0], np.uint32)))
        assert out.dtype == bf16 and out.tolist() == [[0.0078125, 384.0], [1.5, -2.0]]


def test_shape_semantics_are_scoped_per_variant(executor: Any) -> None:
    # npx.set_np() gives 0-d arrays to the mx.np call only; mx.nd keeps MXNet's default legacy shapes afterwards.
    scalar = {"data": np.array([10.0, 20.0, 30.0], np.float32), "indices": np.array(2, np.int64)}
    assert _value(_run(executor, "Gather", "np.take", **scalar)).tolist() == 30.0
    legacy = _run(executor, "Gather", "take", **scalar)
    assert legacy["outcome"] == "error" and "inferring shapes" in legacy["error_message"]
    assert _value(_run(executor, "Gather", "np.take", **scalar)).tolist() == 30.0


def test_asynchronous_errors_stay_in_their_case(executor: Any) -> None:
    oob = _run(executor, "Gather", "take/raise", data=np.array([1.0, 2.0], np.float32), indices=np.array([5]))
    assert oob["outcome"] == "error" and "out of bound" in oob["error_message"]
    ok = _run(executor, "Gather", "take/raise", data=np.array([1.0, 2.0], np.float32), indices=np.array([1]))
    assert _value(ok).tolist() == [2.0]
