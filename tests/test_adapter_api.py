"""The public adapter contract (docs/adapter-api.md): what ``gather_scatter_conformance.api`` exports, and the
default "not mapped" for an operator an adapter does not declare, from the adapter to the record."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from _cases import records_of

from gather_scatter_conformance import adapters, api
from gather_scatter_conformance.adapters import base
from gather_scatter_conformance.vocab.ops import OPS

ROOT = Path(__file__).resolve().parents[1]


def test_the_api_module_exports_the_contract_and_nothing_else() -> None:
    public = [n for n in vars(api) if n.isidentifier() and not n.startswith("_") and n != "annotations"]
    assert sorted(api.__all__) == sorted(public)
    for name in api.__all__:
        assert getattr(api, name) is getattr(base, name), name
    assert api.ENTRY_POINT_GROUP == "gather_scatter_conformance.adapters"
    doc = (ROOT / "docs" / "adapter-api.md").read_text()
    assert f'API_VERSION == "{api.API_VERSION}"' in doc and f"- **{api.API_VERSION}**" in doc  # and its changelog


def test_importing_the_api_imports_neither_the_harness_nor_pytest_nor_a_framework() -> None:
    code = ("import sys, json; import gather_scatter_conformance.api; "
            "print(json.dumps(sorted(m for m in sys.modules if m.split('.')[0] in ('pytest', '_pytest', 'yaml', "
            "'pydantic', 'execnet') or m.startswith('gather_scatter_conformance.harness'))))")
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=True)
    assert json.loads(proc.stdout) == []


class _Undeclared(base.Adapter):
    name = "undeclared"


def test_an_adapter_that_declares_nothing_maps_nothing() -> None:
    adapter = _Undeclared()
    assert [adapter.variants(op) for op in OPS] == [[]] * len(OPS)
    with pytest.raises(ValueError, match="undeclared has no variant 'take' for Gather; known: none"):
        adapter.check_variant("Gather", "take")


@pytest.mark.parametrize("name", adapters.names())
def test_every_adapter_leaves_an_undeclared_operator_unmapped(name: str) -> None:
    """A new operator reaches every adapter as an empty list of variants, never a KeyError."""
    assert adapters.get(name).variants("NoSuchOperator") == []


@pytest.mark.parametrize("name", adapters.names())
def test_every_data_less_variant_is_a_declared_variant(name: str) -> None:
    """NO_DATA_INPUT names variants of VARIANTS (a typo would silently label the real variant keep-data), and only
    scatters have a data input to lack."""
    adapter = adapters.get(name)
    for op, data_less in adapter.NO_DATA_INPUT.items():
        assert op in ("ScatterND", "ScatterElements", "TensorScatter")
        assert set(data_less) <= set(adapter.variants(op)), (op, data_less)
        assert not any(adapter.has_data_input(op, v) for v in data_less)


def test_an_adapter_that_declares_no_data_less_variant_has_data_everywhere() -> None:
    adapter = _Undeclared()
    assert adapter.has_data_input("ScatterND", "anything")
    assert not adapters.get("tensorflow").has_data_input("ScatterND", "scatter_nd/xla")
    assert adapters.get("tensorflow").has_data_input("ScatterND", "tensor_scatter_nd/xla")


PARTIAL = """\
    from gather_scatter_conformance.adapters.numpy import NumpyAdapter


    class Partial(NumpyAdapter):
        name = "partial"
        VARIANTS = {"Gather": ("take",)}  # ScatterND is not declared


    ADAPTER = Partial()
    """
CONFTEST = """\
    from gather_scatter_conformance import adapters

    adapters.use({**adapters.table(), "partial": "partial_adapter:ADAPTER"})
    """
CASES = {
    "gather.yaml": """\
        op: Gather
        cases:
          - id: plain
            source: test
            inputs: {data: [1, 2, 3], indices: [2, 0]}
            expected: [3, 1]
        """,
    "scatter_nd.yaml": """\
        op: ScatterND
        cases:
          - id: unmapped
            source: test
            inputs: {data: [1, 2, 3], indices: [[0]], updates: [9]}
            expected: [9, 2, 3]
          - id: unmapped-probe
            source: test
            dimension: negative-indices
            inputs: {data: [1, 2, 3], indices: [[-1]], updates: [9]}
        """,
}


@pytest.mark.slow
def test_an_unmapped_operator_is_recorded_as_unsupported_not_mapped(pytester: pytest.Pytester) -> None:
    """Through the plugin and a worker process: one skipped item per case, recorded as unsupported with the
    reason; never an error, never a deviation."""
    pytester.makepyfile(partial_adapter=textwrap.dedent(PARTIAL), conftest=textwrap.dedent(CONFTEST))
    folder = pytester.mkdir("cases")
    for name, text in CASES.items():
        (folder / name).write_text(textwrap.dedent(text))
    result = pytester.runpytest_subprocess("cases", "--framework", "partial", "--results", "r.jsonl", "-v", "-rs",
                                           "-p", "no:cacheprovider")
    result.assert_outcomes(passed=1, skipped=2)  # a probe too: no label of an operator that is not mapped
    result.stdout.fnmatch_lines(["*cases/scatter_nd.yaml::unmapped[[]partial[]] SKIPPED*",
                                 "*not mapped: partial declares no variant for ScatterND*"])
    records = records_of(pytester.path / "r.jsonl")
    unmapped = [r for r in records if r["case_id"].startswith("unmapped")]
    assert {(r["outcome"], r["verdict"], r["variant"], r["reason"]) for r in unmapped} == {
        ("unsupported", "n/a", "", "not mapped: partial declares no variant for ScatterND")}
    assert len(unmapped) == 2


def test_the_documented_example_is_the_toy_runtimes_adapter() -> None:
    """docs/adapter-api.md shows examples/toy-runtime's adapter whole; the slow tests/test_toy_runtime.py runs it."""
    doc = (ROOT / "docs" / "adapter-api.md").read_text()
    shown = next(block for block in doc.split("```python\n")[1:] if "class ToyAdapter" in block).split("```")[0]
    assert shown.strip() in (ROOT / "examples" / "toy-runtime" / "toy_runtime" / "adapter.py").read_text()


OUT_OF_PROCESS = """\
    import subprocess
    import sys

    import numpy as np

    from gather_scatter_conformance.api import Adapter, Call, NativeCrash, delegation


    class OutOfProcess(Adapter):
        '''A runtime in a process of its own (as Node is to TensorFlow.js): a child Python that takes the gather
        by its index list on stdin and answers on stdout; index 99 makes it kill itself with SIGSEGV.'''

        name = "out-of-process"
        VARIANTS = {"Gather": ("child",)}

        def version(self) -> str:
            return "1"

        def prepare(self, case, variant):
            data, indices = case.inputs["data"], case.inputs["indices"]
            facts = {}
            code = ("import os, signal, sys; idx = [int(i) for i in sys.stdin.read().split()]; "
                    "os.kill(os.getpid(), signal.SIGSEGV) if 99 in idx else print(' '.join(map(str, idx)))")

            def run():
                proc = subprocess.run([sys.executable, "-c", code], input=" ".join(map(str, indices.tolist())),
                                      capture_output=True, text=True)
                if proc.returncode < 0:
                    raise NativeCrash(f"the child died with signal {-proc.returncode}", signal="SIGSEGV")
                facts.update(delegation({"Gather": "child"}, asked="child"))
                return data[[int(i) for i in proc.stdout.split()]]

            return Call("child.gather(data, indices)", run, facts=facts)


    ADAPTER = OutOfProcess()
    """


def test_a_runtime_process_that_dies_is_a_crash_of_the_case_and_delegation_is_recorded(
        pytester: pytest.Pytester) -> None:
    """NativeCrash from ``run`` is recorded as the case's crash with the signal; the other case still runs and its
    record carries the delegation facts."""
    pytester.makepyfile(out_of_process=textwrap.dedent(OUT_OF_PROCESS), conftest=textwrap.dedent(
        """\
        from gather_scatter_conformance import adapters

        adapters.use({**adapters.table(), "out-of-process": "out_of_process:ADAPTER"})
        """))
    (pytester.path / "gather.yaml").write_text(textwrap.dedent("""\
        op: Gather
        cases:
          - id: plain
            source: test
            inputs: {data: [1, 2, 3], indices: [2, 0]}
            expected: [3, 1]
          - id: kills-the-runtime
            source: test
            inputs: {data: [1, 2, 3], indices: [99]}
            expected: {error: true}
        """))
    result = pytester.runpytest_subprocess("gather.yaml", "--framework", "out-of-process", "--results", "r.jsonl",
                                           "-p", "no:cacheprovider")
    records = {r["case_id"]: r for r in records_of(pytester.path / "r.jsonl")}
    assert records["kills-the-runtime"]["outcome"] == "crash", result.stdout.str()
    assert records["kills-the-runtime"]["signal"] == "SIGSEGV"
    assert records["plain"]["outcome"] == "ok" and records["plain"]["verdict"] == "conforms"
    assert (records["plain"]["providers"], records["plain"]["delegate"], records["plain"]["fallback"]) == (
        {"Gather": "child"}, "child", False)
