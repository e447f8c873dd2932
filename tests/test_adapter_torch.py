"""The torch adapter: every shipped case on every variant, and the translation in detail."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("torch")

import ml_dtypes
import torch

import gather_scatter_conformance.adapters.torch as torch_adapter
from gather_scatter_conformance.adapters.attrs import InvalidAttribute
from gather_scatter_conformance.adapters.base import CaseData, Unsupported
from gather_scatter_conformance.adapters.torch import ADAPTER, COMPILED, to_tensor
from gather_scatter_conformance.adapters.torch_calls import VARIANTS
from gather_scatter_conformance.harness.reference import compute
from gather_scatter_conformance.harness.run.worker import run_case

pytestmark = pytest.mark.framework  # make check runs none of these (docs/development.md)

ROOT = Path(__file__).resolve().parents[1]

# --- variants --------------------------------------------------------------------------------------------------


def test_variants_default_first_and_compile_twins() -> None:
    def with_twins(*eager: str) -> list[str]:
        return [*eager, *(f"{v}/compile" for v in eager), *(f"{v}/compile_constant" for v in eager),
                *(f"{v}/compile_dynamic" for v in eager)]

    assert ADAPTER.variants("Gather") == with_twins("index_select", "indexing")
    assert ADAPTER.variants("GatherElements") == with_twins("gather", "take_along_dim")
    assert ADAPTER.variants("GatherND") == with_twins("indexing")
    assert ADAPTER.variants("ScatterElements") == [*with_twins("scatter", "scatter_reduce"), "scatter/threads",
                                                   "scatter_reduce/threads"]
    assert ADAPTER.variants("ScatterND") == [*with_twins("index_put"), "index_put/threads"]
    assert ADAPTER.variants("Take") == with_twins("take", "index_select")
    assert [v for v in ADAPTER.variants("Take") if ADAPTER.is_slow(v)] == with_twins("take", "index_select")[2:]


def test_a_constant_twin_compiles_a_function_of_the_data_with_the_indices_a_constant() -> None:
    """Index provenance (#40): ``/compile_constant`` compiles a function of the data alone that makes the indices
    from a Python list it closes over (a constant of the graph); its value and its repro's agree with eager."""
    case = _case("Gather", {"axis": 0}, data=F, indices=np.array([2, 0]))
    call = ADAPTER.prepare(case, "index_select/compile_constant")
    assert call.api.startswith("torch.compile(lambda data: (lambda data, indices: ")
    expected = F[[2, 0]]
    np.testing.assert_array_equal(ADAPTER.to_numpy(call.run()), expected)
    scope: dict = {"np": np, "data": F, "indices": np.array([2, 0])}
    exec(call.source, scope)
    np.testing.assert_array_equal(scope["result"], expected)
    with pytest.raises(ValueError, match="no variant"):
        ADAPTER.prepare(_case("Take", {"axis": None, "mode": "raise"}, data=F, indices=np.array([0])), "indexing")


def test_a_dynamic_twin_compiles_for_symbolic_shapes() -> None:
    """Dynamic shapes (#40): ``/compile_dynamic`` is torch.compile(dynamic=True): the graph it compiles takes other
    shapes of the same rank and dtype without compiling again, and its value and its repro's agree with eager."""
    import torch

    from gather_scatter_conformance.adapters import torch as torch_adapter
    from gather_scatter_conformance.adapters.torch_calls import expression

    case = _case("Gather", {"axis": 0}, data=F, indices=np.array([2, 0]))
    call = ADAPTER.prepare(case, "index_select/compile_dynamic")
    assert "dynamic=True" in call.api and "dynamic=False" in ADAPTER.prepare(case, "index_select/compile").api
    np.testing.assert_array_equal(ADAPTER.to_numpy(call.run()), F[[2, 0]])
    scope: dict = {"np": np, "data": F, "indices": np.array([2, 0])}
    exec(call.source, scope)
    np.testing.assert_array_equal(scope["result"], F[[2, 0]])
    expr = expression("Gather", "index_select", {"data": F.shape, "indices": (2,)}, {"axis": 0, "batch_dims": 0}, ())
    data, indices = torch.from_numpy(F), torch.tensor([2, 0])
    compiled = {d: torch_adapter.COMPILED.get(expr, ("data", "indices"), (data, indices), d) for d in (True, False)}
    for dynamic, fn in compiled.items():
        fn(data, indices)  # compiled for the case's shapes
        before = torch._dynamo.utils.counters["stats"]["unique_graphs"]
        bigger = torch.arange(40.0).reshape(8, 5)
        np.testing.assert_array_equal(fn(bigger, torch.tensor([7, 1, 3])).numpy(), bigger.numpy()[[7, 1, 3]])
        grew = torch._dynamo.utils.counters["stats"]["unique_graphs"] - before
        assert grew == (0 if dynamic else 1), (dynamic, grew)


def test_translation_imports_no_torch() -> None:
    code = ("import sys; from gather_scatter_conformance.adapters import torch_calls as c; "
            "c.expression('Gather', 'indexing', {'data': (2, 3), 'indices': (2,)}, {'axis': 1, 'batch_dims': 0}); "
            "assert 'torch' not in sys.modules, 'torch imported'")
    subprocess.run([sys.executable, "-c", code], cwd=ROOT, check=True)


def _case(op: str, attrs: dict, **inputs: np.ndarray) -> CaseData:
    return CaseData(op=op, inputs=inputs, attrs=attrs)


def _run(case: CaseData, variant: str) -> np.ndarray:
    return ADAPTER.to_numpy(ADAPTER.prepare(case, variant).run())


F = np.arange(12, dtype=np.float32).reshape(3, 4)
R = np.random.default_rng(0).standard_normal((2, 3, 4, 5)).astype(np.float32)


# --- Gather / Take ---------------------------------------------------------------------------------------------


def test_index_select_flattens_indices_and_reshapes_output() -> None:
    idx = np.array([[3, 0], [1, 1]])
    case = _case("Gather", {"axis": 1, "batch_dims": 0}, data=F, indices=idx)
    call = ADAPTER.prepare(case, "index_select")
    assert call.api == ("torch.index_select(data, 1, indices.reshape(-1))"
                        ".reshape(data.shape[:1] + indices.shape + data.shape[2:])")
    assert call.device == "cpu"
    np.testing.assert_array_equal(ADAPTER.to_numpy(call.run()), np.take(F, idx, axis=1))
    one_d = _case("Gather", {"axis": 0, "batch_dims": 0}, data=F, indices=np.array([2, 0]))
    assert ADAPTER.prepare(one_d, "index_select").api == "torch.index_select(data, 0, indices)"
    scalar = _case("Gather", {"axis": 0, "batch_dims": 0}, data=F, indices=np.array(2))
    np.testing.assert_array_equal(_run(scalar, "index_select"), F[2])  # the 0-d index drops the axis


@pytest.mark.parametrize(("axis", "select_api", "indexing_api"), [
    (-1, "torch.index_select(data, -1, indices.reshape(-1)).reshape(data.shape[:-1] + indices.shape)",
     "data[..., indices]"),
    (-2, "torch.index_select(data, -2, indices.reshape(-1)).reshape(data.shape[:-2] + indices.shape + "
     "data.shape[-1:])", "data[..., indices, :]"),
    (2, "torch.index_select(data, 2, indices.reshape(-1)).reshape(data.shape[:2] + indices.shape + data.shape[3:])",
     "data[:, :, indices]"),
])
def test_gather_axis_spellings(axis: int, select_api: str, indexing_api: str) -> None:
    idx = np.array([[1, 0, 2]])
    case = _case("Gather", {"axis": axis, "batch_dims": 0}, data=R, indices=idx)
    for variant, api in (("index_select", select_api), ("indexing", indexing_api)):
        call = ADAPTER.prepare(case, variant)
        assert call.api == api
        np.testing.assert_array_equal(ADAPTER.to_numpy(call.run()), np.take(R, idx, axis=axis))


@pytest.mark.parametrize(("axis", "batch_dims", "shape"), [(1, 1, (2, 5)), (2, 1, (2, 6)), (3, 2, (2, 3, 4)),
                                                            (2, -1, (2, 3, 7)), (3, 1, (2, 2))])
def test_gather_batch_dims_through_indexing_matches_reference(axis: int, batch_dims: int, shape: tuple) -> None:
    idx = np.random.default_rng(1).integers(0, R.shape[axis], size=shape)
    case = _case("Gather", {"axis": axis, "batch_dims": batch_dims}, data=R, indices=idx)
    call = ADAPTER.prepare(case, "indexing")
    assert "torch.arange(data.shape[0])" in call.api
    np.testing.assert_array_equal(ADAPTER.to_numpy(call.run()), compute("Gather", case.inputs, case.attrs))
    with pytest.raises(Unsupported, match="no batch_dims"):
        ADAPTER.prepare(case, "index_select")


def test_batch_dims_that_normalise_to_zero_and_invalid_ones() -> None:
    case = _case("Gather", {"axis": 1, "batch_dims": -1}, data=F, indices=np.array([2, 0]))
    assert ADAPTER.prepare(case, "index_select").api == "torch.index_select(data, 1, indices)"
    bad = _case("Gather", {"axis": 0, "batch_dims": 1}, data=F, indices=np.array([[0], [1], [2]]))
    with pytest.raises(InvalidAttribute, match="batch_dims=1 must not exceed axis=0"):  # as the reference raises
        ADAPTER.prepare(bad, "indexing")


def test_take_flattened_along_an_axis_and_modes() -> None:
    idx = np.array([[11, -1], [0, 5]])
    flat = _case("Take", {"axis": None, "mode": "raise"}, data=F, indices=idx)
    assert ADAPTER.prepare(flat, "take").api == "torch.take(data, indices)"
    np.testing.assert_array_equal(_run(flat, "take"), np.take(F, idx))  # torch.take wraps negatives
    along = _case("Take", {"axis": 1, "mode": "raise"}, data=F, indices=np.array([3, 0]))
    assert ADAPTER.prepare(along, "index_select").api == "torch.index_select(data, 1, indices)"
    # A variant named after an API calls that API: torch.take has no dim, index_select takes no flattened input.
    with pytest.raises(Unsupported, match=r"torch\.take has no dim"):
        ADAPTER.prepare(along, "take")
    with pytest.raises(Unsupported, match="needs a dim"):
        ADAPTER.prepare(flat, "index_select")
    # torch.take wraps in-range negative indices, which index_select refuses.
    neg = _case("Take", {"axis": None, "mode": "raise"}, data=F, indices=np.array([-1, -2]))
    np.testing.assert_array_equal(_run(neg, "take"), [11, 10])
    for mode in ("wrap", "clip", "fill"):
        with pytest.raises(Unsupported, match=f"mode='{mode}'"):
            ADAPTER.prepare(_case("Take", {"axis": None, "mode": mode}, data=F, indices=idx), "take")


# --- GatherElements / GatherND ---------------------------------------------------------------------------------


def test_gather_elements_passes_axis() -> None:
    idx = np.array([[0, 2], [1, 0], [3, 3]])
    case = _case("GatherElements", {"axis": -1}, data=F, indices=idx)
    assert ADAPTER.prepare(case, "gather").api == "torch.gather(data, -1, indices)"
    np.testing.assert_array_equal(_run(case, "gather"), np.take_along_axis(F, idx, axis=-1))


@pytest.mark.parametrize(("batch_dims", "tail"), [(0, (4, 2)), (0, (2, 2, 3)), (1, (2, 2)), (2, (2, 2))])
def test_gather_nd_unbinds_the_last_dim_with_batch_aranges(batch_dims: int, tail: tuple) -> None:
    # values 0/1 are in range for every dim of R; the batch dims of indices must equal data's
    idx = np.random.default_rng(2).integers(0, 2, size=R.shape[:batch_dims] + tail)
    case = _case("GatherND", {"batch_dims": batch_dims}, data=R, indices=idx)
    call = ADAPTER.prepare(case, "indexing")
    assert call.api.endswith("tuple(indices.unbind(-1))]")
    assert ("torch.arange" in call.api) == bool(batch_dims)
    np.testing.assert_array_equal(ADAPTER.to_numpy(call.run()), compute("GatherND", case.inputs, case.attrs))


# --- ScatterElements / ScatterND -------------------------------------------------------------------------------

DUP = np.array([[0, 0, 1, 0], [2, 2, 2, 1]])  # duplicate targets along axis 0 (with reductions)
UPD = np.array([[10, 20, 30, 40], [1, 2, 3, 4]], np.float32)


@pytest.mark.parametrize(("reduction", "scatter_api", "reduce_api"), [
    ("none", "data.scatter(0, indices, updates)", None),
    ("add", "data.scatter_add(0, indices, updates)",
     "data.scatter_reduce(0, indices, updates, reduce='sum', include_self=True)"),
    ("mul", "data.scatter_reduce(0, indices, updates, reduce='prod', include_self=True)", "same"),
    ("max", "data.scatter_reduce(0, indices, updates, reduce='amax', include_self=True)", "same"),
    ("min", "data.scatter_reduce(0, indices, updates, reduce='amin', include_self=True)", "same"),
])
def test_scatter_elements_reductions(reduction: str, scatter_api: str, reduce_api: str | None) -> None:
    idx = np.array([[0, 1, 2, 0], [2, 0, 1, 1]]) if reduction == "none" else DUP
    case = _case("ScatterElements", {"axis": 0, "reduction": reduction}, data=F, indices=idx, updates=UPD)
    want = compute("ScatterElements", case.inputs, case.attrs)
    call = ADAPTER.prepare(case, "scatter")
    assert call.api == scatter_api
    np.testing.assert_array_equal(ADAPTER.to_numpy(call.run()), want)
    np.testing.assert_array_equal(F, np.arange(12, dtype=np.float32).reshape(3, 4))  # data is not written to
    if reduce_api is None:
        with pytest.raises(Unsupported, match="no plain assignment"):
            ADAPTER.prepare(case, "scatter_reduce")
        return
    call = ADAPTER.prepare(case, "scatter_reduce")
    assert call.api == (scatter_api if reduce_api == "same" else reduce_api)
    np.testing.assert_array_equal(ADAPTER.to_numpy(call.run()), want)


def test_scatter_nd_index_put_accumulate_and_unsupported_reductions() -> None:
    idx = np.array([[0, 1], [2, 3], [0, 1]])
    upd = np.array([5, 6, 7], np.float32)
    add = _case("ScatterND", {"reduction": "add"}, data=F, indices=idx, updates=upd)
    call = ADAPTER.prepare(add, "index_put")
    assert call.api == "data.index_put(tuple(indices.unbind(-1)), updates, accumulate=True)"
    np.testing.assert_array_equal(ADAPTER.to_numpy(call.run()), compute("ScatterND", add.inputs, add.attrs))
    none = _case("ScatterND", {"reduction": "none"}, data=F, indices=idx[:2], updates=upd[:2])
    assert ADAPTER.prepare(none, "index_put").api.endswith("accumulate=False)")
    np.testing.assert_array_equal(_run(none, "index_put"), compute("ScatterND", none.inputs, none.attrs))
    for reduction in ("mul", "max", "min"):
        with pytest.raises(Unsupported, match=f"reduction='{reduction}'"):
            ADAPTER.prepare(_case("ScatterND", {"reduction": reduction}, data=F, indices=idx, updates=upd),
                            "index_put")


# --- dtypes ----------------------------------------------------------------------------------------------------


def test_bfloat16_goes_through_float32_both_ways() -> None:
    data = np.array([[1.5, -2.25, 3e38], [0.1, 7, -0.0]], dtype=ml_dtypes.bfloat16)
    assert to_tensor(data).dtype == torch.bfloat16
    case = _case("Gather", {"axis": 1, "batch_dims": 0}, data=data, indices=np.array([2, 0, 1]))
    call = ADAPTER.prepare(case, "index_select")
    assert "torch.bfloat16" in call.api
    out = ADAPTER.to_numpy(call.run())
    assert out.dtype == np.dtype(ml_dtypes.bfloat16)
    np.testing.assert_array_equal(out.view(np.uint16), data[:, [2, 0, 1]].view(np.uint16))  # bit-exact


def test_complex_and_bool_data_keep_their_dtype() -> None:
    for data in (np.array([1 + 2j, 3 - 4j], np.complex64), np.array([True, False])):
        out = _run(_case("Take", {"axis": None, "mode": "raise"}, data=data, indices=np.array([1, 0])), "take")
        assert out.dtype == data.dtype
        np.testing.assert_array_equal(out, data[[1, 0]])


def test_strings_are_unsupported() -> None:
    data = np.array(["a", "b"], dtype=object)
    with pytest.raises(Unsupported, match="no string tensors"):
        ADAPTER.prepare(_case("GatherElements", {"axis": 0}, data=data, indices=np.array([1])), "gather")


def test_indices_keep_their_dtype_and_torch_judges_them() -> None:
    for dtype in ("int32", "int16", "uint16", "uint32", "uint64"):
        assert str(to_tensor(np.array([1], dtype)).dtype) == f"torch.{dtype}"
    ok = _run(_case("GatherElements", {"axis": 1}, data=F, indices=np.array([[1], [0], [3]], np.int32)), "gather")
    np.testing.assert_array_equal(ok, F[[0, 1, 2], [1, 0, 3]][:, None])
    payload = {"op": "Take", "attrs": {"axis": None, "mode": "raise"},
               "inputs": {"data": _wire(F), "indices": _wire(np.array([1], np.int32))}}
    res = run_case("torch", "take", payload)  # torch.take wants int64: a recorded error, not a cast
    assert res["outcome"] == "error" and "long" in res["error_message"].lower()


def _wire(arr: np.ndarray) -> dict:
    from gather_scatter_conformance.vocab import wire

    return wire.encode(arr)


# --- torch.compile ---------------------------------------------------------------------------------------------


def test_compile_api_and_cache_per_expression_and_signature() -> None:
    case = _case("Gather", {"axis": 0, "batch_dims": 0}, data=np.arange(5, dtype=np.float32),
                 indices=np.array([0, -2, -1]))
    call = ADAPTER.prepare(case, "index_select/compile")
    assert call.api == ("torch.compile(lambda data, indices: torch.index_select(data, 0, indices), "
                        "backend='inductor', dynamic=False)(data, indices)")
    tensors = (to_tensor(case.inputs["data"]), to_tensor(case.inputs["indices"]))
    fn = COMPILED.get("torch.index_select(data, 0, indices)", ("data", "indices"), tensors)
    assert COMPILED.get("torch.index_select(data, 0, indices)", ("data", "indices"), tensors) is fn
    other = (tensors[0], tensors[1][:2])
    assert COMPILED.get("torch.index_select(data, 0, indices)", ("data", "indices"), other) is not fn
    before = COMPILED.compiles
    # Measured: compiled index_select wraps negative indices where eager raises, which also shows the compiled
    # code ran (not an eager fallback).
    np.testing.assert_array_equal(ADAPTER.to_numpy(call.run()), [0, 3, 4])
    ADAPTER.prepare(case, "index_select/compile").run()
    assert COMPILED.compiles == before  # both runs reused the callable built above
    with pytest.raises(IndexError):
        ADAPTER.prepare(case, "index_select").run()


def test_missing_cxx_toolchain_makes_compile_variants_unsupported(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(torch_adapter, "_TOOLCHAIN", "torch.compile (inductor, CPU) needs a C++ compiler: test")
    case = _case("GatherElements", {"axis": 0}, data=F, indices=np.array([[0]]))
    with pytest.raises(Unsupported, match="C\\+\\+ compiler"):
        ADAPTER.prepare(case, "gather/compile")
    assert ADAPTER.prepare(case, "gather").api == "torch.gather(data, 0, indices)"


def test_variants_table_covers_every_operator() -> None:
    from gather_scatter_conformance.vocab.ops import OPS

    # Every operator of the vocabulary, TensorScatter through its emulation (index_copy on the sequence dim).
    assert set(VARIANTS) == set(OPS)
    assert VARIANTS["TensorScatter"][0] == "emulated.index_copy"


def test_inductor_compiles_without_its_pool() -> None:
    # Risky cases run in children forked from a template that has compiled (harness.run.worker._warm_up); a child
    # waited forever on futures of inductor's compile pool, which only its parent had (seen in a full run).
    code = ("from gather_scatter_conformance.adapters.torch import _torch; _torch(); "
            "import torch._inductor.config as c; "
            "assert c.compile_threads == 1, c.compile_threads")
    subprocess.run([sys.executable, "-c", code], cwd=ROOT, check=True, timeout=300)


@pytest.mark.parametrize("users_own", [False, True])
def test_inductor_keeps_its_cache_beside_the_harness_caches_unless_the_user_set_one(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, users_own: bool) -> None:
    """A run's workers get a temporary folder of their own, removed at its end (Isolated.scratch), where inductor
    would keep what torch.compile built: the adapter points TORCHINDUCTOR_CACHE_DIR at the harness's cache
    (``$GSC_INDUCTOR_CACHE``, ``torchinductor/``), so forked children and the next run find it. A user's own
    setting wins."""
    from torch._inductor.runtime.cache_dir_utils import cache_dir

    monkeypatch.setenv(torch_adapter.INDUCTOR_CACHE_ENV, str(tmp_path / "gsc"))
    if users_own:
        monkeypatch.setenv("TORCHINDUCTOR_CACHE_DIR", str(tmp_path / "own"))
    else:
        monkeypatch.delenv("TORCHINDUCTOR_CACHE_DIR", raising=False)
    monkeypatch.setattr(torch_adapter, "_CONFIGURED", False)
    torch_adapter._torch()
    assert cache_dir() == str(tmp_path / ("own" if users_own else "gsc"))
