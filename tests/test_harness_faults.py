"""Harness faults are not findings: a framework that is not installed is a usage error, and an exception of the harness
or of an adapter's own code (not of the framework) is recorded as ``harness-error`` with verdict n/a, reported by
pytest as an error, counted apart. The line between the two is harness.run.faults.is_harness_fault."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from _cases import GATHER_IN_RANGE, records_of

from gather_scatter_conformance import adapters
from gather_scatter_conformance.harness.cases.load import Case, load_file
from gather_scatter_conformance.harness.judge.verdict import is_finding
from gather_scatter_conformance.harness.run.faults import is_harness_fault
from gather_scatter_conformance.harness.run.runner import InProcess, execute

OWN = {__file__}  # this file plays an adapter module's part for the rule below


def _helper(a: int, b: int) -> int:
    return a + b


def _raise_mine() -> None:
    raise TypeError("an adapter's own check")


def _translate() -> None:
    try:
        np.zeros(3, dtype="no-such-dtype")
    except TypeError as exc:
        raise TypeError("the framework refused the dtype") from exc


# (what the code does, the code, the harness's fault while preparing a call?, ... while the call runs?)
RULE: list[tuple[str, Callable[[], Any], bool, bool]] = [
    ("numpy raises in its own Python code", lambda: np.take(np.arange(3), np.array([0.5])), False, False),
    ("a compiled numpy function refuses its argument", lambda: np.zeros(3, dtype="no-such-dtype"), False, False),
    ("a framework's refusal, re-raised by the adapter", _translate, False, False),
    ("a builtin called with the wrong type", lambda: int(None), True, False),  # type: ignore[arg-type]
    ("a key the adapter's own dict lacks", lambda: {}["k"], True, False),
    ("an attribute of None", lambda: None.shape, True, False),  # type: ignore[attr-defined]
    ("a name that does not exist", lambda: undefined_name, True, True),  # type: ignore[name-defined]  # noqa: F821
    ("our own function called with the wrong arguments", lambda: _helper(1), True, False),  # type: ignore[call-arg]
    ("an explicit raise of a TypeError", _raise_mine, True, False),
    ("an operator on the wrong operand (could be a tensor's refusal)", lambda: None + 1, False, False),  # type: ignore
]


@pytest.mark.parametrize(("what", "code", "preparing", "running"), RULE, ids=[r[0] for r in RULE])
def test_whose_fault(what: str, code: Callable[[], Any], preparing: bool, running: bool) -> None:
    with pytest.raises(Exception) as info:
        code()
    assert is_harness_fault(info.value, "prepare", OWN) is preparing
    assert is_harness_fault(info.value, "to_numpy", OWN) is preparing
    assert is_harness_fault(info.value, "run", OWN) is running
    # Raised in a file that is not ours, nothing but an ImportError is the harness's.
    assert is_harness_fault(info.value, "prepare", ()) is (preparing and "numpy" in what)
    assert is_harness_fault(info.value, "lookup", ()) is True  # no framework code runs while adapters are looked up


def test_an_import_error_is_never_a_behaviour() -> None:
    with pytest.raises(ImportError) as info:
        import not_a_module_anywhere  # type: ignore[import-not-found]  # noqa: F401
    assert is_harness_fault(info.value, "prepare", OWN)
    assert is_harness_fault(info.value, "run", OWN)  # in the adapter's own call code too
    assert not is_harness_fault(info.value, "run", ())  # a framework importing lazily while it runs: its answer


BROKEN = '''\
"""An adapter with a bug per variant, on NumPy."""
import numpy as np

from gather_scatter_conformance.adapters.base import Adapter, Call


class Broken(Adapter):
    name = "broken"
    requires = ("numpy",)
    extra = "numpy-extra"
    VARIANTS = {op: ["typo", "attribute", "call-typo", "to-numpy", "framework"]
                for op in ("Gather", "GatherElements", "GatherND", "ScatterElements", "ScatterND", "Take")}

    def version(self):
        return np.__version__

    def prepare(self, case, variant):
        data, indices = case.inputs["data"], case.inputs["indices"]
        if variant == "typo":
            return Call("np.take(data, indices)", lambda: np.take(data, indices), source=sorce)  # noqa: F821
        if variant == "attribute":
            return Call(case.api_name, lambda: np.take(data, indices))
        if variant == "call-typo":
            return Call("np.take(data, indices)", lambda: np.take(data, indicies))  # noqa: F821
        if variant == "to-numpy":
            return Call("np.take(data, indices)", lambda: None)
        return Call("np.take(data, indices, axis=7)", lambda: np.take(data, indices, axis=7))

    def to_numpy(self, out):
        return out.copy() if out is not None else out.shape


ADAPTER = Broken()
'''

CASES = GATHER_IN_RANGE + """\
  - id: probe-negative
    source: test
    dimension: negative-indices
    inputs: {data: [10, 20, 30], indices: [-1]}
"""


@pytest.fixture
def broken(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> dict[str, Case]:
    """The ``broken`` adapter (BROKEN) and ``unloadable`` (a module that does not import) registered in this
    process, and the CASES."""
    (tmp_path / "broken_adapter.py").write_text(BROKEN)
    (tmp_path / "unloadable_adapter.py").write_text("import not_a_module_anywhere\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.setenv("PYTHONPATH", f"{tmp_path}:{Path(__file__).resolve().parents[1]}")  # for worker processes
    monkeypatch.setitem(adapters.table(), "broken", "broken_adapter:ADAPTER")
    monkeypatch.setitem(adapters.table(), "unloadable", "unloadable_adapter:ADAPTER")
    adapters.get.cache_clear()
    (tmp_path / "gather.yaml").write_text(CASES)
    yield {c.id: c for c in load_file(tmp_path / "gather.yaml", "cases/gather.yaml") if isinstance(c, Case)}
    adapters.get.cache_clear()


@pytest.mark.parametrize(("variant", "phase"), [("typo", "prepare"), ("attribute", "prepare"),
                                                ("call-typo", "run"), ("to-numpy", "to_numpy")])
def test_a_bug_in_an_adapter_is_a_harness_fault(broken: dict[str, Case], variant: str, phase: str) -> None:
    record = execute(broken["probe-negative"], "broken", variant, InProcess())
    assert record.outcome == "harness-error" and record.verdict == "n/a", record
    assert record.fault.phase == phase and "broken_adapter.py" in record.fault.where
    assert "Traceback" in record.fault.traceback
    assert record.deviation is None and record.label is None and record.native is None
    assert not is_finding(record)


def test_the_frameworks_own_error_stays_a_result(broken: dict[str, Case], tmp_path: Path) -> None:
    record = execute(broken["in-range"], "broken", "framework", InProcess())
    assert record.outcome == "error" and record.error_type.endswith("AxisError")
    assert record.verdict == "deviates" and record.deviation == "error"
    # And a real adapter's framework error: numpy refuses an index past the end, as the spec requires.
    (tmp_path / "oob.yaml").write_text("op: Gather\ncases:\n  - id: oob\n    source: t\n"
                                       "    inputs: {data: [1], indices: [4]}\n")
    (oob,) = load_file(tmp_path / "oob.yaml", "cases/oob.yaml")
    record = execute(oob, "numpy", "take", InProcess())
    assert record.outcome == "error" and record.error_type == "IndexError" and record.verdict == "conforms"


def test_an_adapter_that_does_not_load_is_a_harness_fault(broken: dict[str, Case]) -> None:
    record = execute(broken["in-range"], "unloadable", "x", InProcess())
    assert record.outcome == "harness-error" and record.fault.phase == "lookup"
    assert record.error_type == "ModuleNotFoundError" and record.verdict == "n/a"


def test_worker_processes_report_harness_faults(broken: dict[str, Case]) -> None:
    from gather_scatter_conformance.harness.run.isolation import Isolated

    executor = Isolated(timeout=60.0)
    try:
        typo = execute(broken["probe-negative"], "broken", "typo", executor)
        fine = execute(broken["probe-negative"], "broken", "framework", executor)
        unloadable = execute(broken["in-range"], "unloadable", "x", executor)
    finally:
        executor.close()
    assert typo.outcome == "harness-error" and typo.fault.phase == "prepare", typo
    assert fine.outcome == "error"  # the same worker goes on after a fault
    # The worker could not warm the framework up (its adapter does not load): no case of it has a result.
    assert unloadable.outcome == "harness-error" and unloadable.fault.phase == "worker", unloadable


CONFTEST = """\
from gather_scatter_conformance import adapters

adapters.table()["broken"] = "broken_adapter:ADAPTER"
adapters.table()["ghost"] = "ghost_adapter:ADAPTER"
"""
GHOST = """\
from gather_scatter_conformance.adapters.base import Adapter


class Ghost(Adapter):
    name = "ghost"
    requires = ("not_a_module_anywhere",)
    extra = "ghost"
    VARIANTS = {"Gather": ["ghost.gather"]}


ADAPTER = Ghost()
"""


@pytest.fixture
def project(pytester: pytest.Pytester) -> pytest.Pytester:
    pytester.makepyfile(conftest=CONFTEST, broken_adapter=BROKEN, ghost_adapter=GHOST)
    cases = pytester.mkdir("cases")
    (cases / "gather.yaml").write_text(CASES)
    return pytester


def test_pytest_reports_a_harness_fault_as_an_error(project: pytest.Pytester) -> None:
    result = project.runpytest_subprocess("cases", "--framework", "broken,numpy", "--variants", "all",
                                          "--isolation", "none", "--results", "r.jsonl", "-p", "no:cacheprovider")
    # typo, attribute, call-typo and to-numpy on both cases: errors; the framework's AxisError: failures (deviates).
    result.assert_outcomes(errors=8, failed=1, passed=3)
    out = result.stdout.str()
    assert "ERROR cases/gather.yaml::in-range[broken] - " in out
    assert "harness fault, not a result (prepare): NameError: name 'sorce' is not defined" in out
    records = records_of(project.path / "r.jsonl")
    faults = [r for r in records if r["outcome"] == "harness-error"]
    assert len(faults) == 8 and {r["verdict"] for r in faults} == {"n/a"}
    from gather_scatter_conformance.harness.console import summary_text

    table = summary_text([str(project.path / "r.jsonl")])
    assert "8 harness fault(s) among 'other'" in table
    broken_row = next(line for line in table.splitlines() if line.startswith("broken"))
    assert broken_row.split()[-1] == "8"  # the 'other' column: the faults, neither conforming nor deviating


@pytest.mark.slow
def test_a_framework_that_is_not_installed_is_a_usage_error(project: pytest.Pytester) -> None:
    result = project.runpytest_subprocess("cases", "--framework", "ghost", "--results", "r.jsonl")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    err = result.stderr.str()
    assert ("ghost is not installed here (no not_a_module_anywhere): "
            "pip install 'gather-scatter-conformance[ghost]'") in err
    assert "Traceback" not in err and not (project.path / "r.jsonl").exists()
    unknown = project.runpytest_subprocess("cases", "--framework", "no-such-framework")
    assert unknown.ret == pytest.ExitCode.USAGE_ERROR and "unknown 'no-such-framework'" in unknown.stderr.str()


def test_a_framework_in_its_own_interpreter_is_not_checked_here(project: pytest.Pytester) -> None:
    import sys

    result = project.runpytest_subprocess("cases", "--framework", "ghost", f"--framework-python=ghost={sys.executable}",
                                          "--collect-only", "-q")
    assert result.ret == pytest.ExitCode.OK, result.stderr.str()
    assert "2 tests collected" in result.stdout.str()


def test_resuming_from_a_file_that_is_not_results_is_a_usage_error(project: pytest.Pytester) -> None:
    (project.path / "r.jsonl").write_text((project.path / "cases" / "gather.yaml").read_text())
    result = project.runpytest_subprocess("cases", "--framework", "numpy", "--results", "r.jsonl", "--resume")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    assert "--resume: r.jsonl: not a results file (it looks like YAML" in result.stderr.str()


def test_a_failure_to_judge_a_result_is_a_harness_fault(broken: dict[str, Case],
                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    from gather_scatter_conformance.harness.judge import classify

    def broken_label(*args: Any) -> str:
        return {}["a label the classifier lacks"]

    monkeypatch.setattr(classify, "label", broken_label)
    record = execute(broken["probe-negative"], "numpy", "take", InProcess())
    assert record.outcome == "harness-error" and record.verdict == "n/a" and record.fault.phase == "judge"
    assert record.api == "np.take(data, indices, axis=0)" and "broken_label" in record.fault.traceback
