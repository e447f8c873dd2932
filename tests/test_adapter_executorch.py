"""The ExecuTorch adapter and its converter paths: the torch adapter's calls exported, lowered (portable kernels and
the XNNPACK partitioner) and run by the ExecuTorch runtime, against the reference engine; the delegation read from
the lowered program; the runtime's kernel log in its errors; the missing scatter_reduce kernel; the integer
remainder that makes an exported take_along_dim fail on a negative index (pytorch/pytorch#196106's decomposition);
repro sources, caching and the paths' preservation verdict."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from _installed import require

from gather_scatter_conformance import adapters
from gather_scatter_conformance.adapters import executorch as et_adapter
from gather_scatter_conformance.adapters import executorch_program as et
from gather_scatter_conformance.adapters.base import CaseData, Unsupported
from gather_scatter_conformance.adapters.convert import path as convert_path
from gather_scatter_conformance.harness.reference import compute
from gather_scatter_conformance.harness.run.runner import InProcess, execute
from gather_scatter_conformance.harness.run.worker import run_case
from gather_scatter_conformance.vocab import wire
from gather_scatter_conformance.vocab.ops import with_defaults

require("executorch", "torch")  # looked up, not imported: tests/_installed.py

pytestmark = pytest.mark.framework  # make check runs none of these (docs/development.md)

ADAPTER = et_adapter.ADAPTER
DATA = np.arange(12, dtype=np.float32).reshape(4, 3)


def _case(op: str, attrs: dict[str, Any] | None = None, **inputs: Any) -> CaseData:
    return CaseData(op=op, inputs={k: np.asarray(v) for k, v in inputs.items()}, attrs=with_defaults(op, attrs))


def _run(case: CaseData, variant: str) -> tuple[np.ndarray, dict[str, Any]]:
    call = ADAPTER.prepare(case, variant)
    return ADAPTER.to_numpy(call.run()), call.facts


# --- variants ----------------------------------------------------------------------------------------------------


def test_variants_are_the_torch_adapters_eager_calls_on_each_backend_then_the_defaults_twins() -> None:
    torch = adapters.get("torch")
    for op in ("Gather", "GatherElements", "GatherND", "ScatterElements", "ScatterND", "Take"):
        eager = [v for v in torch.variants(op) if "/" not in v]
        assert ADAPTER.variants(op) == [f"{v}/portable" for v in eager] + [f"{v}/xnnpack" for v in eager] + [
            f"{eager[0]}/portable_constant", f"{eager[0]}/portable_dynamic"]
        assert all(ADAPTER.is_slow(v) for v in ADAPTER.variants(op))
    assert ADAPTER.variants("Gather")[0] == "index_select/portable"
    with pytest.raises(ValueError, match="executorch has no variant"):
        ADAPTER.prepare(_case("Gather", data=DATA, indices=[0]), "index_select")


def test_what_torch_cannot_say_is_unsupported_with_torchs_reason() -> None:
    with pytest.raises(Unsupported, match=r"torch\.index_select has no batch_dims"):
        ADAPTER.prepare(_case("Gather", {"batch_dims": 1}, data=DATA, indices=[[0], [1], [2], [0]]),
                        "index_select/portable")
    with pytest.raises(Unsupported, match="string"):
        ADAPTER.prepare(_case("Gather", data=np.array(["a", "b"], dtype=object), indices=[0]),
                        "index_select/portable")


# --- values and delegation ---------------------------------------------------------------------------------------


@pytest.mark.parametrize("backend", ["portable", "xnnpack"])
def test_each_operator_on_each_backend_matches_the_reference(backend: str) -> None:
    upd = np.ones((1, 3), np.float32)
    cases = [
        (_case("Gather", {"axis": 1}, data=DATA, indices=[2, -1]), "indexing"),
        (_case("GatherElements", {"axis": 1}, data=DATA, indices=[[0], [2], [1], [0]]), "gather"),
        (_case("GatherND", data=DATA, indices=[[1, 2], [-1, 0]]), "indexing"),
        (_case("ScatterElements", {"axis": 0}, data=DATA, indices=[[3, 0, 1]], updates=upd), "scatter"),
        (_case("ScatterND", {"reduction": "add"}, data=DATA, indices=[[1], [1]], updates=np.ones((2, 3),
                                                                                              np.float32)),
         "index_put"),
        (_case("Take", {"axis": None}, data=DATA, indices=[11, -12]), "take"),
    ]
    for case, torch_variant in cases:
        out, facts = _run(case, f"{torch_variant}/{backend}")
        np.testing.assert_array_equal(out, compute(case.op, case.inputs, case.attrs), err_msg=case.op)
        assert facts["ops"] and set(facts["providers"]) == set(facts["ops"])


def test_delegation_is_read_from_the_lowered_program() -> None:
    """XNNPACK takes the reshape of torch.take (view_copy) and none of the indexing ops: measured per variant."""
    take = _case("Take", {"axis": None}, data=DATA, indices=[0, 11])
    _, facts = _run(take, "take/xnnpack")
    assert facts["ops"] == ["aten.view_copy.default", "aten.index.Tensor"]
    assert facts["providers"] == {"aten.view_copy.default": et.XNNPACK, "aten.index.Tensor": et.PORTABLE}
    assert facts["fallback"] is True
    _, facts = _run(take, "take/portable")
    assert facts["providers"] == {"aten.view_copy.default": et.PORTABLE, "aten.index.Tensor": et.PORTABLE}
    assert facts["fallback"] is False
    _, facts = _run(_case("GatherElements", {"axis": 0}, data=DATA, indices=[[0, 1, 2]]), "gather/xnnpack")
    assert facts["providers"] == {"aten.gather.default": et.PORTABLE} and facts["fallback"] is True


def test_the_worker_records_ops_and_providers() -> None:
    payload = {"op": "Gather", "attrs": {"axis": 0, "batch_dims": 0},
               "inputs": {"data": wire.encode(DATA), "indices": wire.encode(np.array([1, 2]))}}
    res = run_case("executorch", "index_select/xnnpack", payload)
    assert res["outcome"] == "ok"
    assert res["ops"] == ["aten.index_select.default"]
    assert res["providers"] == {"aten.index_select.default": "portable"} and res["fallback"] is True


# --- errors: the kernel's own reason, a missing kernel -----------------------------------------------------------


def test_an_out_of_range_index_raises_with_the_kernels_check_in_the_message() -> None:
    case = _case("Gather", {"axis": 0}, data=DATA, indices=[0, 9])
    with pytest.raises(RuntimeError, match=r"index\[1\] = 9 is out of range \[0, 4\)"):
        _run(case, "index_select/portable")
    with pytest.raises(RuntimeError, match="not within bounds"):
        _run(case, "indexing/portable")


def test_scatter_reduce_has_no_kernel_in_the_runtime() -> None:
    """ExecuTorch 1.5.1's kernels (the pybindings' registry) lack aten::scatter_reduce.two_out: the program exports
    and lowers, and loading it fails. Every ScatterElements reduction other than add goes through it."""
    case = _case("ScatterElements", {"axis": 0, "reduction": "max"}, data=DATA, indices=[[3, 0, 1]],
                 updates=np.ones((1, 3), np.float32))
    call = ADAPTER.prepare(case, "scatter_reduce/portable")
    with pytest.raises(RuntimeError, match=r"scatter_reduce\.two_out' not found"):
        call.run()
    assert call.facts["ops"] == ["aten.scatter_reduce.two"]  # what was lowered is recorded even so


# --- pytorch/pytorch#196106 and ExecuTorch's integer remainder ---------------------------------------------------


def _program(expr: str, *tensors: Any) -> Any:
    from gather_scatter_conformance.adapters.torch import _lambda

    names = ("data", "indices")[:len(tensors)]
    lowered = et.lower(et.module_of(_lambda(expr, names)), tensors, et.PORTABLE)
    return lowered, et.load(lowered.buffer)


def test_exported_take_along_dim_wraps_like_eager_and_fails_on_negative_indices() -> None:
    """torch.export decomposes take_along_dim(dim=0) into remainder(indices, size) + gather, so ExecuTorch wraps an
    out-of-range index as eager torch does (pytorch/pytorch#196106); its integer remainder keeps the dividend's
    sign (C's %), so an in-range negative index stays negative and gather rejects it, where eager gives x[-1]."""
    import torch

    x = torch.tensor([10.0, 20.0, 30.0])
    lowered, method = _program("torch.take_along_dim(data, indices, dim=0)", x, torch.tensor([0]))
    assert "aten.remainder.Scalar" in lowered.ops and lowered.ops[-1] == "aten.gather.default"
    assert et.execute(method, [x, torch.tensor([9])]).tolist() == [10.0]  # #196106: 9 % 3, no error
    assert torch.take_along_dim(x, torch.tensor([9]), dim=0).tolist() == [10.0]  # eager does the same
    assert torch.take_along_dim(x, torch.tensor([-1]), dim=0).tolist() == [30.0]
    with pytest.raises(RuntimeError, match="out of bounds"):
        et.execute(method, [x, torch.tensor([-1])])


def test_integer_remainder_keeps_the_dividends_sign() -> None:
    """torch.remainder is Python's modulus (the divisor's sign); ExecuTorch's portable kernel computes C's % on
    integers (the float kernel is corrected): remainder([-1, -4, 5], 3) is [-1, -1, 2], torch's [2, 2, 2]."""
    import torch

    x = torch.tensor([-1, -4, 5])
    _, method = _program("torch.remainder(data, 3)", x)
    assert torch.remainder(x, 3).tolist() == [2, 2, 2]
    assert et.execute(method, [x]).tolist() == [-1, -1, 2]
    _, method = _program("torch.remainder(data, 3)", x.float())
    assert et.execute(method, [x.float()]).tolist() == [2.0, 2.0, 2.0]


# --- cache and repro ---------------------------------------------------------------------------------------------


def test_programs_are_cached_by_signature_not_values() -> None:
    ADAPTER.release()
    for indices in ([0, 1], [2, 3], [3, 3]):
        out, _ = _run(_case("Gather", {"axis": 0}, data=DATA, indices=indices), "index_select/portable")
        np.testing.assert_array_equal(out, DATA[indices])
    assert (ADAPTER.cache.misses, ADAPTER.cache.hits) == (1, 2)
    _run(_case("Gather", {"axis": 0}, data=DATA, indices=[0, 1, 2]), "index_select/portable")
    assert ADAPTER.cache.misses == 2


_REUSE_SCRIPT = """
import torch
import torch._export.utils as u
from gather_scatter_conformance.adapters import executorch_program as et, torch_export
class M(torch.nn.Module):
    def forward(self, x, i):
        return torch.gather(x, 1, i)
example = (torch.arange(12.0).reshape(4, 3), torch.tensor([[0], [2], [1], [0]]))
calls = []  # torch materialises each namespace's operators once in every walk of the registry
materialise = u._materialize_cpp_cia_ops
u._materialize_cpp_cia_ops = lambda: calls.append(1) or materialise()
torch_export._installed = True  # the first lowering as torch does it: no reuse
et.lower(M(), example, "portable")
plain_start = len(calls)
plain = et.lower(M(), example, "portable").buffer
plain_calls = len(calls) - plain_start
torch_export._installed = False
torch_export.reuse_op_tables()
start = len(calls)
cached = [et.lower(M(), example, "portable").buffer for _ in range(3)]
cached_calls = len(calls) - start
lib = torch.library.Library("gsc_test", "DEF")
lib.define("twice(Tensor x) -> Tensor")
lib.impl("twice", lambda x: x * 2, "CompositeImplicitAutograd")
from torch.export.exported_program import _collect_all_valid_cia_ops as collect
start = len(calls)
seen = torch.ops.gsc_test.twice.default in collect()
print(plain == cached[0] == cached[2], plain_calls, cached_calls, seen, len(calls) > start)
"""


def test_the_operator_table_is_walked_once_per_registry_and_programs_are_unchanged() -> None:
    import subprocess
    import sys

    # A process of its own: the walk counted from torch's first lowering, without the reuse and then with it.
    out = subprocess.run([sys.executable, "-c", _REUSE_SCRIPT], capture_output=True, text=True, timeout=300)
    same, plain_calls, cached_calls, sees_new_op, walked_again = out.stdout.split()[-5:]
    assert same == "True", out.stderr[-2000:]  # the .pte bytes are the same with the table reused
    # torch walks the registry three times a lowering; reused, three lowerings walk it once in all
    assert int(cached_calls) * 3 == int(plain_calls) > 0
    assert sees_new_op == "True" and walked_again == "True"  # a new operator in the registry: walked again, seen


def test_the_repro_source_runs_and_gives_the_same_result() -> None:
    import ml_dtypes

    case = _case("ScatterND", {"reduction": "add"}, data=DATA, indices=[[1, 2], [1, 2]],
                 updates=np.array([5.0, 7.0], np.float32))
    call = ADAPTER.prepare(case, "index_put/xnnpack")
    scope: dict[str, Any] = {"np": np, "ml_dtypes": ml_dtypes, **{k: v.copy() for k, v in case.inputs.items()}}
    exec(call.source, scope)
    np.testing.assert_array_equal(scope["result"], ADAPTER.to_numpy(call.run()))
    assert scope["result"][1, 2] == 17.0
    assert "XnnpackPartitioner()" in call.source and "index_put" in call.api


# --- the shipped seed cases --------------------------------------------------------------------------------------


# The seed cases against known/executorch.yaml: tests/test_known_deviations.py's plan for executorch (each pair once in
# make test).


# --- the converter paths -----------------------------------------------------------------------------------------


@pytest.mark.parametrize("name", ["torch~torch-export~executorch", "torch~torch-export-xnnpack~executorch"])
def test_each_path_preserves_torch_and_records_its_delegation(name: str, tmp_path: Any,
                                                              monkeypatch: pytest.MonkeyPatch) -> None:
    from gather_scatter_conformance.harness.cases.load import Case, load_file
    from tests._shipped import ROOT

    monkeypatch.setenv(convert_path.CACHE_ENV, str(tmp_path))
    found = [c for c in load_file(ROOT / "cases/take.yaml", "cases/take.yaml")
             if isinstance(c, Case) and c.id == "numpy-take-example-1"]
    rec = execute(found[0], name, "take", InProcess())
    assert rec.verdict == "conforms" and rec.conversion["preservation"] == "preserved"
    # int64 data: XNNPACK takes not even the reshape (it lowers float tensors), so every op is on portable.
    assert rec.providers == {"aten.view_copy.default": et.PORTABLE, "aten.index.Tensor": et.PORTABLE}
    assert rec.fallback is ("xnnpack" in name)
    assert list(tmp_path.glob("*.bin")), "the .pte program is kept in the conversion cache"
    # float data: the XNNPACK path's reshape is delegated, the indexing is not.
    path = adapters.get(name)
    call = path.prepare(_case("Take", {"axis": None}, data=DATA, indices=[0, 11]), "take")
    np.testing.assert_array_equal(path.to_numpy(call.run()), [0.0, 11.0])
    backend = et.XNNPACK if "xnnpack" in name else et.PORTABLE
    assert call.facts["providers"] == {"aten.view_copy.default": backend, "aten.index.Tensor": et.PORTABLE}


def test_a_lowered_program_is_kept_on_disk_for_the_paths_and_the_next_run(tmp_path: Any,
                                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    """#38: the adapter and the torch~torch-export~executorch paths lower the same call the same way; the program
    is kept under the conversion cache by what shapes it (never the values), so the paths phase and the next run
    load it instead of lowering again. A damaged entry is lowered anew."""
    from gather_scatter_conformance.adapters.convert.path import CACHE_ENV

    monkeypatch.setenv(CACHE_ENV, str(tmp_path))
    case = _case("Gather", {"axis": 0}, data=DATA, indices=[3, 0])
    first = et_adapter.program(case, "index_select", et.XNNPACK)
    entries = sorted(p.suffix for p in (tmp_path / "executorch").iterdir())
    assert entries == [".json", ".pte"]

    def no_lowering(*args: Any) -> Any:
        raise AssertionError("lowered again")

    monkeypatch.setattr(et, "lower", no_lowering)
    other_values = _case("Gather", {"axis": 0}, data=DATA * 2, indices=[1, 1])
    again = et_adapter.program(other_values, "index_select", et.XNNPACK)
    assert (again.buffer, again.ops, again.placement) == (first.buffer, first.ops, first.placement)
    assert first.placement  # what the XNNPACK partitioner took is part of the entry
    with pytest.raises(AssertionError, match="lowered again"):  # another backend is another program
        et_adapter.program(case, "index_select", et.PORTABLE)
    next(tmp_path.glob("executorch/*.json")).write_text('{"ops": "not a list"}')
    with pytest.raises(AssertionError, match="lowered again"):
        et_adapter.program(case, "index_select", et.XNNPACK)


@pytest.mark.parametrize("case", [
    _case("Gather", {"axis": 0}, data=DATA, indices=[2, 0]),
    _case("GatherElements", {"axis": 1}, data=DATA, indices=[[0, 2], [2, 1], [1, 0], [0, 0]]),
    _case("GatherND", {}, data=DATA, indices=[[1, 2], [0, 1]]),
    _case("ScatterElements", {"axis": 0, "reduction": "add"}, data=DATA, indices=[[1, 0, 2]],
          updates=np.ones((1, 3), np.float32)),
    _case("ScatterND", {"reduction": "none"}, data=DATA, indices=[[1], [0]], updates=-np.ones((2, 3), np.float32)),
], ids=lambda c: c.op)
def test_the_twins_equal_the_reference_and_their_repros_reproduce(case: CaseData) -> None:
    """#40: the default call exported with the indices a buffer of the module (a constant of the program) and with
    every dimension Dim.AUTO computes what the reference engine does, and each repro runs the same program."""
    import ml_dtypes

    for twin in ADAPTER.variants(case.op)[-2:]:
        out, _ = _run(case, twin)
        np.testing.assert_array_equal(out, compute(case.op, case.inputs, case.attrs))
        call = ADAPTER.prepare(case, twin)
        scope: dict[str, Any] = {"np": np, "ml_dtypes": ml_dtypes, **case.inputs}
        exec(call.source, scope)  # the repro statements the report writes
        np.testing.assert_array_equal(scope["result"], out)
        assert ("register_buffer" in call.source) == twin.endswith("constant")
        assert ("Dim.AUTO" in call.source) == twin.endswith("dynamic")


def test_the_dynamic_twin_runs_other_sizes_and_the_constant_twin_holds_its_indices() -> None:
    """The dynamic program is not specialised to the case's sizes: it runs a smaller input too; the constant one
    takes no indices, and a program is lowered per index value (they are part of it)."""
    case = _case("Gather", {"axis": 0}, data=DATA, indices=[2, 0])
    dynamic = et_adapter.program(case, "index_select", et.PORTABLE, dynamic=True)
    method = et.load(dynamic.buffer)
    small = et.execute(method, [torch_tensor(DATA[:2]), torch_tensor(np.array([1]))])
    np.testing.assert_array_equal(ADAPTER.to_numpy(small), DATA[1:2])
    held = et_adapter.program(case, "index_select", et.PORTABLE, held="indices")
    np.testing.assert_array_equal(ADAPTER.to_numpy(et.execute(et.load(held.buffer), [torch_tensor(DATA)])),
                                  DATA[[2, 0]])
    other = et_adapter.program(_case("Gather", {"axis": 0}, data=DATA, indices=[1, 1]), "index_select", et.PORTABLE,
                               held="indices")
    assert other.buffer != held.buffer


def torch_tensor(arr: np.ndarray) -> Any:
    from gather_scatter_conformance.adapters.torch import to_tensor

    return et.standard(to_tensor(np.ascontiguousarray(arr)))
