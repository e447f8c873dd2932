"""The MXNet adapter: focused tests of the translation and of the worker (tests/test_known_deviations.py runs every
shipped case through it).

MXNet 1.9 lives in its own interpreter (.venv-mxnet, numpy<1.24), so every native call here goes through
harness.run.isolation.Isolated, the way `pytest cases --framework mxnet` runs it. Building a Call (prepare) imports no
MXNet, so the api strings and the Unsupported decisions are tested in this process.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from _inprocess import MXNET_PYTHON, WarmMxnet

if not MXNET_PYTHON.exists():
    pytest.skip("MXNet's environment is not built (make mxnet-env)", allow_module_level=True)
pytest.importorskip("execnet")

from gather_scatter_conformance.adapters.base import CaseData, Unsupported
from gather_scatter_conformance.adapters.mxnet import ADAPTER, element_coords
from gather_scatter_conformance.vocab import dtypes, wire
from gather_scatter_conformance.vocab.ops import with_defaults

pytestmark = pytest.mark.framework  # make check runs none of these (docs/development.md)


@pytest.fixture(scope="module")
def executor() -> Any:
    """One warm MXNet worker for the module (importing MXNet takes seconds)."""
    warm = WarmMxnet()
    yield warm
    warm.isolated.close()


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
    with pytest.raises(ValueError, match="mxnet has no variant"):
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
