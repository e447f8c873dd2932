"""The TVM (Relax) adapter: every seed case on every variant against the reference engine, the Relax op lists, the
negative-index bugs of apache/tvm#20217 on both paths, repro sources, caching and the module-level ONNX entry point."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from _installed import require

from gather_scatter_conformance.adapters import onnx_graph
from gather_scatter_conformance.adapters import tvm as tvm_adapter
from gather_scatter_conformance.adapters.base import CaseData, Unsupported
from gather_scatter_conformance.harness.cases.load import Case
from gather_scatter_conformance.harness.reference import compute
from gather_scatter_conformance.harness.run.worker import run_case
from gather_scatter_conformance.vocab import wire
from gather_scatter_conformance.vocab.ops import with_defaults

require("tvm")  # looked up, not imported: tests/_installed.py

pytestmark = pytest.mark.framework  # make check runs none of these (docs/development.md)

ADAPTER = tvm_adapter.ADAPTER
ROOT = Path(__file__).resolve().parents[1]
DATA = np.arange(12, dtype=np.float32).reshape(3, 4)
RELAX, ONNX = "relax.op", tvm_adapter.FROM_ONNX
TWINS = ["from_onnx/constant", "from_onnx/dynamic"]


def _case(op: str, attrs: dict[str, Any] | None = None, **inputs: Any) -> CaseData:
    return CaseData(op=op, inputs={k: np.asarray(v) for k, v in inputs.items()}, attrs=with_defaults(op, attrs))


def _variant(op: str, kind: str) -> str:
    """The relax.op.<name> variant of ``op`` (kind "relax.op"), its from_onnx variant, or a twin named whole."""
    return kind if "/" in kind else ADAPTER.variants(op)[0 if kind == RELAX else 1]


def _run(case: CaseData, kind: str = RELAX) -> tuple[np.ndarray, list[str]]:
    call = ADAPTER.prepare(case, _variant(case.op, kind))
    return ADAPTER.to_numpy(call.run()), call.facts["ops"]


# --- variants, version, laziness -------------------------------------------------------------------------------


def test_variants_are_the_relax_op_then_the_onnx_frontend_and_its_twins() -> None:
    onnx = ["from_onnx", "from_onnx/constant", "from_onnx/dynamic"]
    assert {op: ADAPTER.variants(op) for op in tvm_adapter.RELAX_OPS} == {
        "Gather": ["relax.op.take", *onnx],
        "GatherElements": ["relax.op.gather_elements", *onnx],
        "GatherND": ["relax.op.gather_nd", *onnx],
        "ScatterElements": ["relax.op.scatter_elements", *onnx],
        "ScatterND": ["relax.op.scatter_nd", *onnx],
        "Take": ["relax.op.take", *onnx],
    }
    # a module a case is no per-shape cost; the twins (a build per index value, open shapes) run where slow ones do
    assert [v for op in tvm_adapter.RELAX_OPS for v in ADAPTER.variants(op) if ADAPTER.is_slow(v)] == \
        [v for _ in tvm_adapter.RELAX_OPS for v in onnx[1:]]
    with pytest.raises(ValueError, match="tvm has no variant"):
        ADAPTER.prepare(_case("Gather", data=DATA, indices=[0]), "relax.op.gather_nd")


def test_version_and_one_thread() -> None:
    import tvm

    assert ADAPTER.version() == tvm_adapter.version() == tvm.__version__
    assert os.environ[tvm_adapter.THREADS_ENV]  # set (to 1 unless the user chose) before tvm was imported


# --- every seed case on every variant ---------------------------------------------------------------------------


# The frontend's import and build take 0.15-0.2 s a case (the relax.op modules 0.03-0.06 s): here from_onnx runs on
# the seed cases where its translation does more than call the op (indices, reductions, batch dims, axes) and on the
# spec's and docs' examples; tests/test_known_deviations.py runs it on every shipped case.
FRONTEND_TAGS = {"negative-indices", "out-of-bounds", "reduction", "index-dtype", "batch_dims", "negative-axis",
                 "scalar-indices", "empty", "default-axis", "spec", "seed"}


def _runs_here(case: Case, variant: str) -> bool:
    return variant != ONNX or (bool(FRONTEND_TAGS & set(case.tags)) and "generated" not in case.tags)


def writes_outside(case: Case, variant: str) -> bool:
    """True when ``variant`` scatters to a coordinate outside its output: out of [-dim, dim), or, for
    relax.op.scatter_nd (which does not count negatives from the end), out of [0, dim). Such a write can corrupt this
    process's heap even where the result conforms (scatternd-reduction-min-float64-negative-indices)."""
    if case.op not in ("ScatterElements", "ScatterND"):
        return False
    inputs = case.inputs()
    data, idx = inputs["data"], inputs["indices"].astype(np.float64)  # compare without integer wrap-around
    if case.op == "ScatterND":
        k = idx.shape[-1] if idx.ndim else 0
        if not 0 < k <= data.ndim:
            return False
        dims = np.array(data.shape[:k], np.float64)
    else:
        axis = int(case.attrs["axis"])
        if not -data.ndim <= axis < data.ndim:
            return False
        dims = np.float64(data.shape[axis])
    low = 0 if variant == "relax.op.scatter_nd" else -dims
    return bool(((idx < low) | (idx >= dims)).any())


# The seed cases against known/tvm.yaml: tests/test_known_deviations.py's plan for tvm (each pair once in
# make test).


# --- Relax op lists (facts["ops"]) -----------------------------------------------------------------------------


def test_relax_op_variants_record_the_one_op_they_build() -> None:
    upd = np.ones((1, 4), np.float32)
    cases = {
        "relax.take": _case("Gather", {"axis": 1}, data=DATA, indices=[0, 2]),
        "relax.gather_elements": _case("GatherElements", {"axis": 1}, data=DATA, indices=np.zeros((3, 1), int)),
        "relax.gather_nd": _case("GatherND", data=DATA, indices=[[1, 2]]),
        "relax.scatter_elements": _case("ScatterElements", {"axis": 0}, data=DATA, indices=[[2, 0, 1, 2]],
                                        updates=upd),
        "relax.scatter_nd": _case("ScatterND", {"reduction": "add"}, data=DATA, indices=[[1]], updates=upd),
    }
    for op, case in cases.items():
        out, ops = _run(case)
        assert ops == [op]
        np.testing.assert_array_equal(out, compute(case.op, case.inputs, case.attrs))
    flat = _case("Take", {"axis": None, "mode": "wrap"}, data=DATA, indices=[13, -1])
    out, ops = _run(flat)
    assert ops == ["relax.reshape", "relax.take"]
    np.testing.assert_array_equal(out, [1.0, 11.0])


def test_facts_are_recorded_by_the_worker() -> None:
    payload = {"op": "GatherND", "attrs": {"batch_dims": 0},
               "inputs": {"data": wire.encode(DATA), "indices": wire.encode(np.array([[1, 2]]))}}
    res = run_case("tvm", "from_onnx", payload)
    assert res["outcome"] == "ok" and res["ops"][-1] == "relax.gather_nd" and "relax.where" in res["ops"]


# --- apache/tvm#20217: in-range negative indices ---------------------------------------------------------------
# On 0.26 the ONNX frontend passed them on unnormalised; 0.27.0 (after #20219) normalises them in the frontend
# (less/add/where before the op), and the Relax ops themselves still do not (#20297).


def test_20217_gather_elements_all_minus_one() -> None:
    case = _case("GatherElements", {"axis": 1}, data=DATA, indices=np.full((3, 4), -1))
    want = compute("GatherElements", case.inputs, case.attrs)
    assert want.tolist() == [[3.0] * 4, [7.0] * 4, [11.0] * 4]
    out, ops = _run(case, ONNX)
    np.testing.assert_array_equal(out, want)
    assert ops[-1] == "relax.gather_elements" and {"relax.less", "relax.add", "relax.where"} <= set(ops)
    # The Relax op reads flat offset row*4 - 1: the previous row's last element (row 0 reads before the buffer).
    out, ops = _run(case, RELAX)
    assert ops == ["relax.gather_elements"]
    assert out[1:].tolist() == [[3.0] * 4, [7.0] * 4]


def test_20217_gather_nd_negative_pairs() -> None:
    case = _case("GatherND", data=DATA, indices=[[-1, -1], [0, -2]])
    want = compute("GatherND", case.inputs, case.attrs)
    assert want.tolist() == [11.0, 2.0]
    out, ops = _run(case, ONNX)
    np.testing.assert_array_equal(out, want)
    assert ops[-1] == "relax.gather_nd" and "relax.where" in ops
    out, _ = _run(case, RELAX)  # both offsets (-5, -2) lie before the data: whatever is there
    assert out.tolist() != want.tolist()


def test_20217_scatter_nd_negative_row() -> None:
    data, upd = np.zeros((3, 4), np.float32), np.array([[1, 2, 3, 4], [5, 6, 7, 8]], np.float32)
    case = _case("ScatterND", data=data, indices=[[-1], [0]], updates=upd)
    want = compute("ScatterND", case.inputs, case.attrs)
    out, ops = _run(case, ONNX)
    np.testing.assert_array_equal(out, want)
    assert ops[-1] == "relax.scatter_nd" and "relax.where" in ops
    # relax.op.scatter_nd writes row -1 before its output, corrupting the heap: measured in a child process.
    code = textwrap.dedent("""
        import numpy as np
        from gather_scatter_conformance.adapters.tvm import ADAPTER
        from gather_scatter_conformance.adapters.base import CaseData
        case = CaseData("ScatterND", {"data": np.zeros((3, 4), np.float32), "indices": np.array([[-1], [0]]),
                        "updates": np.array([[1, 2, 3, 4], [5, 6, 7, 8]], np.float32)}, {"reduction": "none"})
        print(ADAPTER.prepare(case, "relax.op.scatter_nd").run().tolist(), flush=True)
    """)
    proc = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True,
                          env={**os.environ, "PYTHONPATH": str(ROOT)}, timeout=120)
    first = proc.stdout.splitlines()[0]
    assert first == "[[5.0, 6.0, 7.0, 8.0], [0.0, 0.0, 0.0, 0.0], [0.0, 0.0, 0.0, 0.0]]", proc.stderr[-2000:]
    assert want.tolist()[2] == [1.0, 2.0, 3.0, 4.0]  # canonical: the -1 row lands in the last row


def test_scatter_elements_counts_negative_indices_from_the_end() -> None:
    upd = np.arange(1, 5, dtype=np.float32).reshape(1, 4)
    case = _case("ScatterElements", {"axis": 0}, data=DATA, indices=[[-1, 0, -3, -2]], updates=upd)
    want = compute("ScatterElements", case.inputs, case.attrs)
    for kind in (RELAX, ONNX):
        np.testing.assert_array_equal(_run(case, kind)[0], want)


# --- attribute translation -------------------------------------------------------------------------------------


def test_take_modes_map_to_relax_take_modes() -> None:
    data = np.arange(5, dtype=np.float32)
    idx = np.array([0, 7, 4])
    for mode, want in {"wrap": [0, 2, 4], "clip": [0, 4, 4]}.items():
        case = _case("Take", {"axis": 0, "mode": mode}, data=data, indices=idx)
        call = ADAPTER.prepare(case, "relax.op.take")
        assert call.api.startswith(f"relax.op.take(data, indices, axis=0, mode={mode!r})")
        np.testing.assert_array_equal(ADAPTER.to_numpy(call.run()), want)
    fill = _case("Take", {"axis": 0, "mode": "fill"}, data=data, indices=idx)
    assert "mode='nan'" in ADAPTER.prepare(fill, "relax.op.take").api
    assert np.isnan(_run(fill)[0][1])
    raise_ = _case("Take", {"axis": 0, "mode": "raise"}, data=data, indices=[3])
    assert "mode='fast'" in ADAPTER.prepare(raise_, "relax.op.take").api
    with pytest.raises(Unsupported, match="no mode 'wrap'"):
        ADAPTER.prepare(_case("Take", {"axis": 0, "mode": "wrap"}, data=data, indices=[0]), "from_onnx")


def test_scatter_reductions_map_none_to_update() -> None:
    for reduction, relax_name in tvm_adapter.REDUCTIONS.items():
        case = _case("ScatterND", {"reduction": reduction}, data=DATA, indices=[[1], [1]],
                     updates=np.full((2, 4), 2.0, np.float32))
        assert f"reduction={relax_name!r}" in ADAPTER.prepare(case, "relax.op.scatter_nd").api
        if reduction != "none":  # 'none' with duplicate targets: either write is allowed
            for kind in (RELAX, ONNX):
                np.testing.assert_array_equal(_run(case, kind)[0], compute("ScatterND", case.inputs, case.attrs))


def test_unsupported_batch_dims_and_dtypes() -> None:
    with pytest.raises(Unsupported, match="no batch_dims"):
        ADAPTER.prepare(_case("Gather", {"axis": 1, "batch_dims": 1}, data=DATA, indices=[[0], [1], [2]]),
                        "relax.op.take")
    for arr in (np.array(["a", "b"], dtype=object), np.zeros(2, np.complex64)):
        for variant in ADAPTER.variants("Gather"):
            with pytest.raises(Unsupported, match="TVM has no"):
                ADAPTER.prepare(_case("Gather", data=arr, indices=[0]), variant)


# --- repro sources, cache, the module-level entry point ----------------------------------------------------------


@pytest.mark.parametrize("kind", [RELAX, ONNX, *TWINS])
def test_repro_source_runs_standalone_and_gives_the_same_result(kind: str) -> None:
    case = _case("GatherElements", {"axis": 1}, data=DATA, indices=np.array([[0, -1], [2, 1], [-4, 3]]))
    call = ADAPTER.prepare(case, _variant(case.op, kind))
    out = ADAPTER.to_numpy(call.run())
    scope: dict[str, Any] = {"np": np, **case.inputs}
    exec(call.source, scope)  # the repro statements the report writes
    np.testing.assert_array_equal(scope["result"], out)
    assert "import tvm" in call.source and "tvm.compile(mod, target='llvm')" in call.source


def test_executables_are_cached_by_signature_and_released() -> None:
    ADAPTER.release()
    a = _case("Gather", {"axis": 0}, data=DATA, indices=[0, 1])
    b = _case("Gather", {"axis": 0}, data=DATA + 1, indices=[2, 0])  # other values, same signature
    c = _case("Gather", {"axis": 1}, data=DATA, indices=[0, 1])
    for case in (a, b, c):
        for variant in ADAPTER.variants("Gather")[:2]:
            ADAPTER.prepare(case, variant).run()
    assert (ADAPTER.cache.misses, ADAPTER.cache.hits, len(ADAPTER.cache)) == (4, 2, 4)
    ADAPTER.release()
    assert len(ADAPTER.cache) == 0
    # The twins: the constant one builds per index value (they are in the model), the dynamic one per rank and dtype
    for case in (a, b):
        for variant in TWINS:
            ADAPTER.prepare(case, variant).run()
    assert (ADAPTER.cache.misses, ADAPTER.cache.hits) == (3, 1)
    ADAPTER.release()


@pytest.mark.parametrize("kind", [RELAX, ONNX, "from_onnx/dynamic"])
def test_a_fresh_process_loads_what_an_earlier_one_kept_on_disk(kind: str, tmp_path: Path,
                                                              monkeypatch: pytest.MonkeyPatch) -> None:
    # A risky case's repeats each run in a forked child with an empty LRU: the first keeps its executable on disk,
    # the next loads it instead of importing and building (issue #38: 0.14 s -> 0.02 s a from_onnx repeat here).
    from gather_scatter_conformance.adapters.convert.path import CACHE_ENV

    monkeypatch.setenv(CACHE_ENV, str(tmp_path))
    data = np.arange(12, dtype=np.int32).reshape(3, 4)
    base = dict(op="ScatterND", attrs=with_defaults("ScatterND", {}))
    first = CaseData(**base, inputs={"data": data, "indices": np.array([[2], [0]]),
                                     "updates": np.full((2, 4), 7, np.int32)}, fresh=True)
    ADAPTER.release()
    built, ops = _run(first, kind)
    kept = sorted(p.name for p in (tmp_path / "tvm").iterdir())
    assert len(kept) == 2 and kept[0].endswith(".ops.json") and kept[1].endswith(".so")

    # Another process (an empty LRU) that cannot build: the same signature with other values loads the library.
    ADAPTER.release()
    monkeypatch.setattr(tvm_adapter.TvmAdapter, "__module__", tvm_adapter.__name__)
    monkeypatch.setattr(tvm_adapter, "relax_ops", lambda mod: pytest.fail("imported or built again"))
    again = CaseData(**base, inputs={"data": data + 1, "indices": np.array([[1], [2]]),
                                     "updates": np.full((2, 4), 9, np.int32)}, fresh=True)
    out, ops_again = _run(again, kind)
    np.testing.assert_array_equal(out, compute(again.op, again.inputs, again.attrs))
    assert ops_again == ops and built.shape == out.shape
    ADAPTER.release()


def test_the_worker_tells_the_adapter_a_risky_case_runs_in_a_fresh_process(tmp_path: Path,
                                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    from gather_scatter_conformance.adapters.convert.path import CACHE_ENV

    monkeypatch.setenv(CACHE_ENV, str(tmp_path))
    payload = {"op": "Gather", "attrs": {"axis": 0},
               "inputs": {"data": wire.encode(DATA), "indices": wire.encode(np.array([5, 0]))}}
    ADAPTER.release()
    assert run_case("tvm", "from_onnx", payload)["outcome"] == "ok" and not (tmp_path / "tvm").exists()
    ADAPTER.release()
    assert run_case("tvm", "from_onnx", {**payload, "fresh": True})["outcome"] == "ok"
    assert len(list((tmp_path / "tvm").glob("*.so"))) == 1
    ADAPTER.release()


def test_a_case_in_the_warm_worker_keeps_nothing_and_a_damaged_library_is_built_again(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from gather_scatter_conformance.adapters.convert.path import CACHE_ENV

    monkeypatch.setenv(CACHE_ENV, str(tmp_path))
    case = _case("Gather", {"axis": 0}, data=DATA, indices=[2, 0])
    ADAPTER.release()
    _run(case, ONNX)
    assert not (tmp_path / "tvm").exists()  # the export would cost more than the build the LRU already saves
    fresh = CaseData(op=case.op, inputs=case.inputs, attrs=case.attrs, fresh=True)
    ADAPTER.release()
    _, built_ops = _run(fresh, ONNX)
    (lib,) = (tmp_path / "tvm").glob("*.so")
    (listing,) = (tmp_path / "tvm").glob("*.ops.json")
    for damaged in (b'{"relax.take": 1}', b'["relax.take"', b'"relax.take"'):  # not a list of names: a miss
        listing.write_bytes(damaged)
        assert tvm_adapter.load_kept(listing.name.removesuffix(".ops.json")) is None
    lib.write_bytes(b"not a shared library")
    ADAPTER.release()
    out, ops = _run(fresh, ONNX)
    np.testing.assert_array_equal(out, DATA[[2, 0]])
    assert ops == built_ops and "relax.take" in ops and lib.stat().st_size > 100  # built and kept again
    ADAPTER.release()


def test_from_onnx_entry_point_returns_a_runner_and_the_op_list() -> None:
    case = _case("GatherND", {"batch_dims": 1}, data=np.arange(8, dtype=np.float32).reshape(2, 2, 2),
                 indices=[[1], [0]])
    model, names, _ = onnx_graph.build(case)
    run, ops = tvm_adapter.from_onnx(model)
    assert names == ["data", "indices"] and ops[-1] == "relax.gather_nd"
    np.testing.assert_array_equal(run(dict(case.inputs)), [[2.0, 3.0], [4.0, 5.0]])


@pytest.mark.skipif(not hasattr(os, "fork"), reason="no fork here")
def test_a_forked_child_of_a_process_that_ran_cases_runs_cases() -> None:
    """Why tvm's fork_after_run is True: the template that runs risky cases is warmed up first."""
    import time

    assert ADAPTER.fork_after_run
    warm = _case("Gather", {"axis": 0}, data=DATA, indices=[2])
    for kind in (RELAX, ONNX):
        _run(warm, kind)
    pid = os.fork()
    if pid == 0:  # the child: new shapes, so both variants build anew
        ok = False
        try:
            case = _case("Gather", {"axis": 1}, data=DATA[:2], indices=[3, 0])
            ok = all(_run(case, kind)[0].tolist() == [[3.0, 0.0], [7.0, 4.0]] for kind in (RELAX, ONNX))
        finally:
            os._exit(0 if ok else 1)
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        done, status = os.waitpid(pid, os.WNOHANG)
        if done:
            assert os.waitstatus_to_exitcode(status) == 0
            return
        time.sleep(0.05)
    os.kill(pid, 9)
    os.waitpid(pid, 0)
    pytest.fail("the forked child hung")


@pytest.mark.parametrize("twin", TWINS)
@pytest.mark.parametrize("case", [
    _case("Gather", {"axis": 1}, data=DATA, indices=[[2, 0], [1, 1]]),
    _case("GatherElements", {"axis": 1}, data=DATA, indices=[[0, 2], [2, 1], [1, 0]]),
    _case("GatherND", {"batch_dims": 0}, data=DATA, indices=[[1, 2], [0, 1]]),
    _case("ScatterElements", {"axis": 0, "reduction": "add"}, data=DATA, indices=[[1, 0, 2]],
          updates=np.ones((1, 3), np.float32)),
    _case("ScatterND", {"reduction": "none"}, data=DATA, indices=[[1], [0]], updates=-np.ones((2, 4), np.float32)),
], ids=lambda c: c.op)
def test_the_twins_equal_the_reference_in_range(case: CaseData, twin: str) -> None:
    """#40: the frontend's model with the indices an initializer, and with the inputs' dimensions symbolic (tied
    where the operator ties them: onnx_graph.declared_shapes), computes what the reference engine does."""
    call = ADAPTER.prepare(case, twin)
    np.testing.assert_array_equal(ADAPTER.to_numpy(call.run()), compute(case.op, case.inputs, case.attrs))
    assert ("indices=constant" in call.api) == twin.endswith("constant")
    assert ("'data_d0'" in call.source) == twin.endswith("dynamic")  # the model's symbolic dimension
