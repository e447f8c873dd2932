"""The IREE adapter (stablehlo.gather/scatter as MLIR text, and iree-import-onnx of the ONNX models, both compiled
for llvm-cpu) and its two converter paths: real compiles and runs against the reference engine and the StableHLO
spec, the dispatches read from the compiled modules, the cache, repro sources, and the measured findings
(iree-org/iree#24881: the single-index gather's missing clamp; a negative scatter index crashing the process)."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from _installed import require

from gather_scatter_conformance import adapters
from gather_scatter_conformance.adapters import iree as iree_adapter
from gather_scatter_conformance.adapters import iree_stablehlo, onnx_graph
from gather_scatter_conformance.adapters.base import CaseData, Unsupported
from gather_scatter_conformance.harness.reference import Policy, compute
from gather_scatter_conformance.harness.run.worker import run_case
from gather_scatter_conformance.vocab import wire
from gather_scatter_conformance.vocab.ops import with_defaults

require("iree.compiler", "iree.runtime")  # looked up, not imported: tests/_installed.py

pytestmark = pytest.mark.framework  # make check runs none of these (docs/development.md)

ADAPTER = iree_adapter.ADAPTER
ROOT = Path(__file__).resolve().parents[1]
HLO, ONNX = "stablehlo", iree_adapter.IMPORT_ONNX
TWINS = ["import_onnx/constant", "import_onnx/dynamic"]
DATA = np.arange(24, dtype=np.float32).reshape(2, 3, 4)
CLAMP = Policy(out_of_bounds="clamp", negative="oob")  # the StableHLO spec's gather: every start index clamped


def _case(op: str, attrs: dict[str, Any] | None = None, **inputs: Any) -> CaseData:
    return CaseData(op=op, inputs={k: np.asarray(v) for k, v in inputs.items()}, attrs=with_defaults(op, attrs))


def _variant(op: str, kind: str) -> str:
    return kind if "/" in kind else ADAPTER.variants(op)[0 if kind == HLO else 1]


def _run(case: CaseData, kind: str = HLO) -> tuple[np.ndarray, dict[str, Any]]:
    call = ADAPTER.prepare(case, _variant(case.op, kind))
    return ADAPTER.to_numpy(call.run()), call.facts


def test_variants_are_the_stablehlo_op_then_the_onnx_import_and_its_twins() -> None:
    onnx = ["import_onnx", "import_onnx/constant", "import_onnx/dynamic"]
    assert {op: ADAPTER.variants(op) for op in iree_adapter._STABLEHLO_OP} == {
        "Gather": ["stablehlo.gather", *onnx],
        "GatherElements": ["stablehlo.gather", *onnx],
        "GatherND": ["stablehlo.gather", *onnx],
        "ScatterElements": ["stablehlo.scatter", *onnx],
        "ScatterND": ["stablehlo.scatter", *onnx],
        "Take": ["stablehlo.gather", *onnx],
    }
    with pytest.raises(ValueError, match="iree has no variant"):
        ADAPTER.prepare(_case("Gather", data=DATA, indices=[0]), "stablehlo.scatter")


# In-range, non-negative indices (stablehlo.* clamps negatives: not an in-range case there) of every operator and
# attribute the translation handles (axes, batch dims, reductions, scalar and empty indices), on both input paths,
# against the reference engine.
IN_RANGE = [
    _case("Gather", {"axis": 1}, data=DATA, indices=[[2, 0], [1, 1]]),
    _case("Gather", {"axis": -1}, data=DATA, indices=np.int64(3)),
    _case("Gather", {"axis": 2, "batch_dims": 1}, data=DATA, indices=[[3, 0], [1, 1]]),
    _case("Gather", {"axis": 0}, data=DATA, indices=np.zeros((0, 2), np.int64)),
    _case("Gather", {"axis": 0}, data=np.zeros((0, 3), np.float32), indices=np.zeros((0,), np.int64)),
    _case("GatherElements", {"axis": 1}, data=DATA, indices=[[[2, 0, 1, 1]], [[1, 1, 0, 2]]]),
    _case("GatherND", {}, data=DATA, indices=[[1, 2], [0, 1]]),
    _case("GatherND", {"batch_dims": 1}, data=DATA, indices=[[2], [0]]),
    _case("Take", {"axis": None, "mode": "raise"}, data=DATA, indices=[5, 23]),
    _case("Take", {"axis": 1, "mode": "clip"}, data=DATA, indices=[2, 1]),
    _case("ScatterElements", {"axis": 1, "reduction": "add"}, data=DATA, indices=[[[2, 0, 1, 1]], [[1, 1, 0, 2]]],
          updates=np.ones((2, 1, 4), np.float32)),
    _case("ScatterND", {"reduction": "none"}, data=DATA, indices=[[1, 2], [0, 1]],
          updates=-np.ones((2, 4), np.float32)),
    _case("ScatterND", {"reduction": "max"}, data=DATA, indices=[[1]], updates=np.full((1, 3, 4), 9, np.float32)),
]


@pytest.mark.slow
@pytest.mark.parametrize("kind", [HLO, ONNX])
@pytest.mark.parametrize("case", IN_RANGE, ids=lambda c: f"{c.op}-{c.attrs}")
def test_in_range_cases_equal_the_reference(case: CaseData, kind: str) -> None:
    try:
        out, facts = _run(case, kind)
    except Unsupported as exc:  # ONNX has no Gather batch_dims and no Take clip
        assert kind == ONNX and ("batch_dims" in str(exc) or "mode" in str(exc))
        return
    want = compute(case.op, case.inputs, case.attrs)
    assert out.dtype == want.dtype and out.shape == want.shape
    np.testing.assert_array_equal(out, want)
    # An empty result needs no dispatch: the module only allocates it.
    assert bool(facts["ops"]) == bool(want.size)
    assert facts["providers"] == dict.fromkeys(facts["ops"], "llvm-cpu")
    assert facts["fallback"] is False


def test_the_stablehlo_text_has_the_specs_dimension_numbers() -> None:
    text = iree_stablehlo.module(_case("Gather", {"axis": 1}, data=DATA, indices=[0, 2]))
    assert "collapsed_slice_dims = [1], start_index_map = [1], index_vector_dim = 1" in text
    assert "offset_dims = [0, 2]" in text and "slice_sizes = array<i64: 2, 1, 4>" in text
    scatter = iree_stablehlo.module(_case("ScatterND", {"reduction": "mul"}, data=DATA, indices=[[1]],
                                          updates=np.ones((1, 3, 4), np.float32)))
    assert "update_window_dims = [1, 2], inserted_window_dims = [0]" in scatter and "stablehlo.multiply" in scatter
    with pytest.raises(Unsupported, match="no mode 'wrap'"):
        iree_stablehlo.module(_case("Take", {"axis": 0, "mode": "wrap"}, data=DATA, indices=[0]))
    with pytest.raises(Unsupported, match="no element type"):
        iree_stablehlo.module(_case("Gather", data=np.array(["a"], object), indices=[0]))


def test_gathers_off_the_leading_axis_clamp_as_the_spec_says() -> None:
    """Where the gather does not take the torch_index_select shape (a non-leading axis, coordinates of every dim),
    IREE clamps each start index into range as the StableHLO spec says: -2 and -7 to 0, 7 to the last."""
    data = np.arange(1, 16, dtype=np.float32).reshape(3, 5)
    for case in (_case("Gather", {"axis": 1}, data=data, indices=[-2, 7, -7]),
                 _case("GatherElements", {"axis": 1}, data=data, indices=[[-2], [7], [-7]]),
                 _case("GatherND", data=data, indices=[[0, -2], [1, 7], [-7, 0]])):
        out, _ = _run(case)
        np.testing.assert_array_equal(out, compute(case.op, case.inputs, case.attrs, CLAMP))


def test_24881_single_index_gather_reads_outside_the_operand() -> None:
    """iree-org/iree#24881 on iree 3.13.0: the issue's gather (operand [10, 20, 30], indices [-5, 0, 2, 100] as a
    (4, 1) tensor, index_vector_dim=1) does not give the spec's clamped [10, 10, 30, 30]; the in-range elements are
    right, the out-of-range ones are whatever lies outside the buffer."""
    case = _case("Gather", data=np.array([10, 20, 30], np.int32), indices=[-5, 0, 2, 100])
    text = iree_stablehlo.module(case)
    assert "tensor<4x1xi64>" in text
    assert "collapsed_slice_dims = [0], start_index_map = [0], index_vector_dim = 1" in text
    assert compute("Gather", case.inputs, case.attrs, CLAMP).tolist() == [10, 10, 30, 30]
    outs = [_run(case)[0].tolist() for _ in range(3)]
    assert all(o[1:3] == [10, 30] for o in outs)
    assert all(o != [10, 10, 30, 30] for o in outs), outs


def test_negative_scatter_index_kills_the_process() -> None:
    """A stablehlo.scatter index in [-2, -1] on an axis of 5 is out of bounds, so the spec drops its update; IREE
    3.13.0 writes it before the buffer and the process dies of SIGSEGV (-5..-3 and 5.. are dropped; upstream
    iree-org/iree#13580, open). Measured in a child process."""
    code = textwrap.dedent("""
        import numpy as np
        from gather_scatter_conformance.adapters.iree import ADAPTER
        from gather_scatter_conformance.adapters.base import CaseData
        case = CaseData("ScatterND", {"data": np.array([10, 20, 30, 40, 50], np.float32), "indices": np.array(
            [[INDEX], [1]]), "updates": np.array([-1, -2], np.float32)}, {"reduction": "none"})
        print(ADAPTER.prepare(case, "stablehlo.scatter").run().tolist(), flush=True)
    """)
    results = {}
    for index in (-5, -1):
        proc = subprocess.run([sys.executable, "-c", code.replace("INDEX", str(index))], cwd=ROOT,
                              capture_output=True, text=True, timeout=300)
        results[index] = (proc.returncode, proc.stdout.strip())
    assert results[-5] == (0, "[10.0, -2.0, 30.0, 40.0, 50.0]")  # dropped, as the spec says
    assert results[-1][0] == -11, results[-1]  # SIGSEGV


def test_onnx_import_wraps_negatives_but_never_checks_the_range() -> None:
    """The ONNX path counts in-range negatives from the end (canonical), and reads out-of-range indices unchecked:
    7 on an axis of 5 in row 0 reads row 1's element (the flat offset), where ONNX requires an error."""
    data = np.arange(1, 16, dtype=np.float32).reshape(3, 5)
    out, _ = _run(_case("Gather", {"axis": 1}, data=data, indices=[-2, 7]), ONNX)
    assert out[:, 0].tolist() == [4.0, 9.0, 14.0]
    assert out[:2, 1].tolist() == [8.0, 13.0]


def test_float64_is_demoted_by_default() -> None:
    """iree-compile demotes f64 to f32 by default (--iree-input-demote-f64-to-f32): the module built from a float64
    gather refuses the float64 input."""
    case = _case("Gather", data=np.array([1.5, 2.5], np.float64), indices=[1])
    with pytest.raises(ValueError, match="element type mismatch; expected f32"):
        _run(case)


def test_compiled_modules_are_cached_by_signature() -> None:
    ADAPTER.release()
    case = _case("GatherND", data=DATA, indices=[[0, 1]])
    _run(case)
    _run(_case("GatherND", data=DATA + 1, indices=[[1, 2]]))  # same op, attributes, shapes, dtypes
    assert (ADAPTER.cache.misses, ADAPTER.cache.hits) == (1, 1)
    _run(_case("GatherND", data=DATA, indices=[[0, 1], [1, 1]]))
    assert ADAPTER.cache.misses == 2


@pytest.mark.parametrize("kind", [HLO, ONNX])
def test_a_compiled_module_is_kept_on_disk_for_the_other_worker_the_repeats_and_the_next_run(
        kind: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """#38: a repeat of a memory-unsafe cell runs in a child forked from a template that never compiled, and each
    pytest-xdist worker has its own LRU, so each compiled the module again (0.3-1 s). The .vmfb is kept under the
    conversion cache by what shapes it (never the values) and loaded instead; another signature compiles, and a
    damaged entry is compiled anew."""
    from gather_scatter_conformance.adapters.convert.path import CACHE_ENV

    monkeypatch.setenv(CACHE_ENV, str(tmp_path))
    ADAPTER.release()
    case = _case("GatherND", data=DATA, indices=[[0, 1]])
    first, facts = _run(case, kind)
    np.testing.assert_array_equal(first, [DATA[0, 1]])
    (entry,) = (tmp_path / "iree").iterdir()

    def no_compile(*args: Any) -> Any:
        raise AssertionError("compiled again")

    monkeypatch.setattr(iree_adapter, "compile_text", no_compile)
    ADAPTER.release()  # a fresh process's adapter: an empty LRU
    other_values = _case("GatherND", data=DATA + 1, indices=[[1, 2]])
    again, again_facts = _run(other_values, kind)
    np.testing.assert_array_equal(again, [DATA[1, 2] + 1])
    assert again_facts == facts and facts["ops"]  # the dispatches are read from the loaded module
    with pytest.raises(AssertionError, match="compiled again"):  # another signature is another module
        _run(_case("GatherND", data=DATA, indices=[[0, 1], [1, 1]]), kind)
    blob = bytearray(entry.read_bytes())
    blob[-1] ^= 0xFF
    entry.write_bytes(bytes(blob))
    ADAPTER.release()
    with pytest.raises(AssertionError, match="compiled again"):
        _run(case, kind)
    ADAPTER.release()


# Cases of each StableHLO shape the ahead compile groups, and one it leaves alone (GatherElements builds its
# coordinates with an iota, which IREE hoists into the module's initializer).
AHEAD_CASES = [
    _case("Gather", {"axis": 1}, data=DATA, indices=[2, 0]),
    _case("GatherND", data=DATA, indices=[[0, 1]]),
    _case("GatherND", data=DATA, indices=[[1], [0]]),
    _case("ScatterND", data=DATA, indices=[[1, 2]], updates=np.ones((1, 4), np.float32)),
    _case("ScatterND", {"reduction": "add"}, data=DATA[0], indices=[[0], [0]], updates=np.ones((2, 4), np.float32)),
    _case("Take", {"mode": "clip"}, data=DATA[0, 0], indices=[7, -1]),
    _case("GatherElements", {"axis": 0}, data=DATA[0], indices=[[1, 0, 2, 1]]),
]


def test_cases_compiled_ahead_in_one_module_run_as_compiled_alone(tmp_path: Path,
                                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    """#38: IREE compiles a one-op module in 0.4-1.5 s, most of it fixed cost; many cases compiled as the functions
    of one module cost a few times one. Each case then runs its own function, with the value and the dispatches
    (its own, named as its own module names them) that compiling it alone gives: the StableHLO modules in one
    group, the ONNX importer's in another; a float64 case and a string case are not grouped (IREE demotes the
    one and does not compile the other)."""
    from gather_scatter_conformance.adapters.convert.path import CACHE_ENV

    alone_onnx = [_case("Gather", data=DATA[0, 0].astype(np.float64), indices=[1]),
                  _case("Gather", data=np.array(["a", "b"]), indices=[1])]
    monkeypatch.setenv(CACHE_ENV, str(tmp_path / "ahead"))
    ADAPTER.release()
    ADAPTER.ahead([(c, _variant(c.op, kind)) for kind in (HLO, ONNX) for c in AHEAD_CASES]
                  + [(c, _variant(c.op, ONNX)) for c in alone_onnx])
    refs = sorted((tmp_path / "ahead" / "iree").glob("*.ref"))
    groups = sorted((tmp_path / "ahead" / "iree").glob("*.vmfb"))
    # Left to their runs: GatherElements' StableHLO iota; Take's clip mode, which ONNX cannot say
    assert (len(refs), len(groups)) == (6 + 6, 2)
    runs = [(kind, case) for kind in (HLO, ONNX) for case in AHEAD_CASES if (kind, case.op) != (ONNX, "Take")]
    grouped = {}
    for kind, case in runs:
        ADAPTER.release()
        grouped[kind, id(case)] = _run(case, kind)
    monkeypatch.setenv(CACHE_ENV, str(tmp_path / "alone"))
    for kind, case in runs:
        ADAPTER.release()
        alone = _run(case, kind)
        np.testing.assert_array_equal(grouped[kind, id(case)][0], alone[0])
        assert grouped[kind, id(case)][1] == alone[1] and alone[1]["ops"], (kind, case.op)
    ADAPTER.release()


@pytest.mark.parametrize("says_where", [True, False], ids=["error-names-its-line", "error-names-no-line"])
def test_a_case_the_group_cannot_compile_is_left_to_its_own_run(tmp_path: Path, says_where: bool) -> None:
    """A case the group cannot compile gets no entry (its run compiles it and records the compiler's error), the
    others theirs. Where the compiler's error names the failing function's line, that case is left out and the rest
    compiled again; else the group is halved until the failing case stands alone, and a case left alone in a half,
    too, compiles at its run (compiling it ahead would gain nothing)."""
    from gather_scatter_conformance.adapters import iree_batch

    texts = [iree_stablehlo.module(c) for c in AHEAD_CASES[:4]]
    broken = texts[1].replace("stablehlo.gather", "stablehlo.no_such_op")
    members = [(f"{i:032x}", t) for i, t in enumerate([texts[0], broken, texts[2], texts[3]])]

    def compile_text(text: str) -> bytes:
        if not says_where and "no_such_op" in text:
            raise RuntimeError("error: an error that names no line")
        return iree_adapter.compile_text(text, "stablehlo")

    done = iree_batch.compile_ahead(members, tmp_path, compile_text, iree_adapter.compile_flow,
                                    iree_adapter.dispatches, iree_adapter.write_atomic, lambda key: False)
    if says_where:  # [0, broken, 2, 3] fails at the broken one's line; [0, 2, 3] compiles
        assert sorted(done.keys) == [members[0][0], members[2][0], members[3][0]]
        assert (done.grouped, done.alone, done.failed_compiles) == (3, 1, 1)
    else:  # [0, broken, 2, 3] fails; [0, broken] fails, and leaves 0 and the broken one alone; [2, 3] compiles
        assert sorted(done.keys) == [members[2][0], members[3][0]]
        assert (done.grouped, done.alone, done.failed_compiles) == (2, 2, 2)
    assert not (tmp_path / f"{members[1][0]}.ref").exists()
    ref = iree_batch.read_ref(tmp_path / f"{members[2][0]}.ref")
    assert ref is not None and ref.function == f"c{members[2][0]}"
    assert ref.dispatches == iree_adapter.compile_module(texts[2], "stablehlo").dispatches


def test_two_cases_iree_merges_into_one_executable_each_name_their_dispatch(tmp_path: Path) -> None:
    """IREE deduplicates identical executables across a module's functions: the second function calls the first's.
    Its dispatches are read from what it calls (the flow-level module), not from the names with its prefix, so it
    keeps the dispatch its own module would have."""
    from gather_scatter_conformance.adapters import iree_batch

    text = iree_stablehlo.module(AHEAD_CASES[1])
    members = [("a" * 32, text), ("b" * 32, text + "\n// the same function, another key\n")]
    done = iree_batch.compile_ahead(members, tmp_path, lambda t: iree_adapter.compile_text(t, "stablehlo"),
                                    iree_adapter.compile_flow, iree_adapter.dispatches,
                                    iree_adapter.write_atomic, lambda key: False)
    assert done.grouped == 2
    first, second = (iree_batch.read_ref(tmp_path / f"{key}.ref") for key, _ in members)
    assert first is not None and second is not None
    assert first.dispatches == second.dispatches == iree_adapter.compile_module(text, "stablehlo").dispatches


def test_a_damaged_ref_is_a_miss(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from gather_scatter_conformance.adapters import iree_batch
    from gather_scatter_conformance.adapters.convert.path import CACHE_ENV

    monkeypatch.setenv(CACHE_ENV, str(tmp_path))
    ADAPTER.release()
    case = AHEAD_CASES[1]
    ADAPTER.ahead([(case, _variant(case.op, HLO)), (AHEAD_CASES[2], _variant(case.op, HLO))])
    (ref,) = [p for p in (tmp_path / "iree").glob("*.ref")
              if iree_adapter.vmfb_key(_variant(case.op, HLO), iree_stablehlo.module(case)) in p.name]
    assert iree_batch.read_ref(ref) is not None
    ref.write_bytes(ref.read_bytes().replace(b"llvm-cpu", b"llvm-cpX"))
    assert iree_batch.read_ref(ref) is None
    compiled = []
    real = iree_adapter.compile_text
    monkeypatch.setattr(iree_adapter, "compile_text", lambda *a: compiled.append(1) or real(*a))
    out, _ = _run(case)
    np.testing.assert_array_equal(out, [DATA[0, 1]])
    assert compiled == [1]
    ADAPTER.release()


def test_a_run_compiles_its_iree_cases_ahead(tmp_path: Path) -> None:
    """The pytest plugin hands a session's cases to each adapter's ``ahead`` before the first runs: a run of IREE's
    GatherND cases leaves their functions compiled in groups on disk, and its records pass as before."""
    from gather_scatter_conformance.adapters.convert.path import CACHE_ENV

    env = {**__import__("os").environ, CACHE_ENV: str(tmp_path / "conversions")}
    done = subprocess.run([sys.executable, "-m", "pytest", str(ROOT / "cases" / "gather_nd.yaml"), "--framework",
                           "iree", "-k", "blog-gathernd and not import_onnx", "-n", "0",
                           "-q", "--no-cache", "-p", "no:cacheprovider", "--results", str(tmp_path / "r.jsonl")],
                          cwd=tmp_path, env=env, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    assert list((tmp_path / "conversions" / "iree").glob("*.ref")), done.stdout[-2000:]


def test_repro_sources_run_and_give_the_same_result() -> None:
    # Non-negative indices: a negative stablehlo.scatter index writes outside the output (see above).
    for kind in (HLO, ONNX):
        case = _case("ScatterElements", {"axis": 0, "reduction": "mul"}, data=np.arange(1, 6, dtype=np.int32),
                     indices=[1, 1, 4], updates=np.array([2, 3, 4], np.int32))
        call = ADAPTER.prepare(case, _variant(case.op, kind))
        scope: dict[str, Any] = {"np": np, **case.inputs}
        exec(call.source, scope)
        np.testing.assert_array_equal(scope["result"], compute(case.op, case.inputs, case.attrs))
        np.testing.assert_array_equal(scope["result"], ADAPTER.to_numpy(call.run()))


def test_facts_are_recorded_by_the_worker() -> None:
    payload = {"op": "GatherND", "attrs": {"batch_dims": 0},
               "inputs": {"data": wire.encode(DATA), "indices": wire.encode(np.array([[1, 2]]))}}
    res = run_case("iree", ONNX, payload)
    assert res["outcome"] == "ok" and res["ops"] and all("_dispatch_" in op for op in res["ops"])
    assert set(res["providers"].values()) == {"llvm-cpu"} and res["fallback"] is False


# --- the converter paths ------------------------------------------------------------------------------------------


@pytest.mark.slow
def test_onnx_path_preserves_an_in_range_case_and_records_dispatches(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("GSC_CONVERSION_CACHE", "off")
    path = adapters.get("onnx~iree-import-onnx~iree")
    case = _case("GatherElements", {"axis": 1}, data=DATA, indices=[[[2, 0, 1, 1]], [[1, 1, 0, -1]]])
    call = path.prepare(case, path.variants("GatherElements")[0])
    np.testing.assert_array_equal(path.to_numpy(call.run()), compute(case.op, case.inputs, case.attrs))
    conversion = call.facts["conversion"]
    assert conversion["stage"] == "run" and conversion["input_type"] == "onnx" and conversion["opset"] == 13
    assert call.facts["ops"] and all("_dispatch_" in op for op in call.facts["ops"])


@pytest.mark.slow
def test_jax_path_keeps_jax_normalisation_and_fill(monkeypatch: pytest.MonkeyPatch) -> None:
    """jax.export writes jnp.take's negative-index normalisation and its NaN fill around the stablehlo.gather, so
    IREE's missing clamp (#24881) does not show through this path: -2 reads 40, 7 reads NaN, as jax itself does."""
    monkeypatch.setenv("GSC_CONVERSION_CACHE", "off")
    path = adapters.get("jax~jax-export~iree")
    case = _case("Gather", {"axis": 0}, data=np.array([10, 20, 30, 40, 50], np.float32), indices=[-2, 7, 0])
    call = path.prepare(case, "take")
    out = path.to_numpy(call.run())
    assert out[0] == 40 and np.isnan(out[1]) and out[2] == 10
    assert call.facts["conversion"]["source_result"]["outcome"] == "ok"
    with pytest.raises(Unsupported, match="mode='raise'"):
        path.prepare(_case("Take", {"axis": 0, "mode": "raise"}, data=DATA, indices=[0]), "take")


def test_a_ref_naming_a_path_or_markup_is_a_miss(tmp_path: Path) -> None:
    """Evidence is data: a .ref comes from a cache folder another run (or machine) wrote. Its group becomes a file
    name and its function a call, so anything but the names compile_ahead writes is refused, digest or not."""
    from gather_scatter_conformance.adapters import iree_batch
    from gather_scatter_conformance.adapters.convert.path import write_atomic

    good = iree_batch.Ref("a" * 32, "c" + "b" * 32, {"main_dispatch_0_x": "llvm-cpu"})
    for ref in (good, iree_batch.Ref("../../" + "a" * 26, good.function, good.dispatches),
                iree_batch.Ref(good.group, "c<script>alert(1)</script>", good.dispatches),
                iree_batch.Ref(good.group, "__init", good.dispatches)):
        iree_batch.write_ref(tmp_path / "x.ref", ref, write_atomic)
        assert iree_batch.read_ref(tmp_path / "x.ref") == (ref if ref is good else None)
    (tmp_path / "x.ref").write_bytes(b"\x00" * 40 + b'{"format": 1')  # truncated, wrong digest
    assert iree_batch.read_ref(tmp_path / "x.ref") is None


@pytest.mark.parametrize("twin", TWINS)
@pytest.mark.parametrize("case", [
    _case("Gather", {"axis": 1}, data=DATA, indices=[[2, 0], [1, 1]]),
    _case("GatherElements", {"axis": 1}, data=DATA, indices=[[[2, 0, 1, 1]], [[1, 1, 0, 2]]]),
    _case("GatherND", {"batch_dims": 1}, data=DATA, indices=[[2], [0]]),
    _case("ScatterElements", {"axis": 1, "reduction": "add"}, data=DATA, indices=[[[2, 0, 1, 1]], [[1, 1, 0, 2]]],
          updates=np.ones((2, 1, 4), np.float32)),
    _case("ScatterND", {"reduction": "none"}, data=DATA, indices=[[1, 2], [0, 1]],
          updates=-np.ones((2, 4), np.float32)),
], ids=lambda c: c.op)
def test_the_twins_equal_the_reference_in_range(case: CaseData, twin: str) -> None:
    """#40: the importer's model with the indices an initializer, and with the inputs' dimensions symbolic (tied
    where the operator ties them: onnx_graph.declared_shapes), computes what the reference engine does; the repro
    feeds what the model takes."""
    call = ADAPTER.prepare(case, twin)
    out = ADAPTER.to_numpy(call.run())
    np.testing.assert_array_equal(out, compute(case.op, case.inputs, case.attrs))
    assert ("indices=constant" in call.api) == twin.endswith("constant")
    assert ("'data_d0'" in call.source) == twin.endswith("dynamic")  # the model's symbolic dimension
    scope: dict[str, Any] = {"np": np, **case.inputs}
    exec(call.source, scope)  # the repro statements the report writes
    np.testing.assert_array_equal(scope["result"], out)


def test_a_compile_that_succeeds_writes_nothing_to_the_terminal(capfd: pytest.CaptureFixture[str]) -> None:
    """iree-compile's diagnostics of a successful compile were echoed to stderr: torch-mlir's ONNX lowering reports
    ``error:`` lines for a ScatterND with uint8 indices and symbolic shapes, then converts it another way. A run
    showed them between its progress lines (the cases compiled ahead run in pytest's own process)."""
    case = _case("ScatterND", data=np.zeros(4, np.float32), indices=np.array([[1], [3]], np.uint8),
                 updates=np.array([5.0, 6.0], np.float32))
    text = iree_adapter.import_onnx(onnx_graph.build_variant(case, "import_onnx/dynamic")[0])
    assert iree_adapter.compile_text(text, "onnx") and iree_adapter.compile_flow(text, "onnx")
    assert capfd.readouterr().err == ""
