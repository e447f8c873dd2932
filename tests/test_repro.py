"""A deviation's failure message carries the smallest repro: inputs, attributes, the native call, both results; and
repro scripts assert what was observed: a value where the spec raises, the class of an unchecked read, string data."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from gather_scatter_conformance.harness.cases.load import Case, load_file
from gather_scatter_conformance.harness.judge.verdict import judge
from gather_scatter_conformance.harness.run import repro
from gather_scatter_conformance.harness.run.repro import failure_message, script
from gather_scatter_conformance.harness.run.runner import InProcess, Skipped, execute
from gather_scatter_conformance.vocab import wire
from gather_scatter_conformance.vocab.record import Record


def _record(rec: Record | Skipped) -> Record:
    """runner.execute's answer on the CPU, which is always here: a Record, never Skipped."""
    assert isinstance(rec, Record), rec
    return rec


def _case(tmp_path: Path) -> Case:
    path = tmp_path / "gather.yaml"
    path.write_text("op: Gather\ncases:\n  - id: neg\n    source: t\n    inputs: {data: [1, 2, 3], indices: [-1]}\n")
    (case,) = load_file(path, "cases/gather.yaml")
    assert isinstance(case, Case)
    return case


def test_message_for_a_wrong_value(tmp_path: Path) -> None:
    case = _case(tmp_path)
    # What a framework that clamps negative indices to 0 would send back from its worker.
    res = {"outcome": "ok", "value": wire.encode(np.array([1], np.float32)), "api": "fw.gather(data, indices)"}
    record = {"case": case.nodeid, "framework": "fw", "variant": "v", "outcome": "ok", "api": res["api"],
              "expected": [3.0]}
    record.update(judge(case, res, case.reference()))
    assert record["verdict"] == "deviates" and record["mismatches"] == 1
    msg = failure_message(case, Record.read(record))
    assert "cases/gather.yaml::neg [fw , v]: deviates from canonical ONNX semantics: 1 of 1 element(s) differ" in msg
    assert "call:     fw.gather(data, indices)" in msg
    assert "at [0]: expected 3.0, observed 1.0" in msg
    assert "data = np.array([1.0, 2.0, 3.0], dtype=np.float32)" in msg
    assert "indices = np.array([-1], dtype=np.int64)" in msg


def test_message_for_an_error(tmp_path: Path) -> None:
    case = _case(tmp_path)
    res = {"outcome": "error", "error_type": "ValueError", "error_message": "<b>negative</b>", "api": "fw.g()"}
    record = {"case": case.nodeid, "framework": "fw", "variant": "v", "outcome": "error", "api": "fw.g()",
              "expected": [3.0], **res}
    record.update(judge(case, res, case.reference()))
    assert record["verdict"] == "deviates"
    assert "observed: error: ValueError: <b>negative</b>" in failure_message(case, Record.read(record))


def test_execute_in_process_numpy(tmp_path: Path) -> None:
    record = execute(_case(tmp_path), "numpy", "take", InProcess())
    assert record.verdict == "conforms"
    assert record.observed == [3.0]
    assert record.framework_version == np.__version__


ROOT = Path(__file__).resolve().parent.parent


def _probe(nodeid: str) -> Case:
    file, _, cid = nodeid.partition("::")
    return next(c for c in load_file(ROOT / file, file) if isinstance(c, Case) and c.id == cid)


def _run_script(path: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, str(path)], capture_output=True, text=True, timeout=300, cwd=path.parent)


@pytest.mark.framework
def test_a_value_where_the_spec_raises_is_kept_and_its_repro_asserts_it(tmp_path: Path) -> None:
    # jax.numpy indexing clamps an index past the end: a value where canonical semantics raise.
    case = _probe("cases/probes/gather.yaml::probe-oob-positive")
    record = _record(execute(case, "jax", "indexing", InProcess()))
    assert record.verdict == "deviates" and record.deviation == "no-error" and record.label == "clamp"
    assert record.observed == [50.0, 20.0] and record.observed_dtype == "float32"
    assert "observed: [50.0, 20.0] dtype=float32" in failure_message(case, record)
    path = tmp_path / "repro.py"
    path.write_text(script(case, record))
    assert "observed = np.asarray(json.loads(" in path.read_text()
    ran = _run_script(path)
    assert ran.returncode == 0, ran.stdout + ran.stderr
    # The script asserts the value: another one fails it.
    path.write_text(path.read_text().replace("[50.0, 20.0]", "[30.0, 20.0]"))
    assert _run_script(path).returncode != 0


def test_an_unchecked_read_asserts_its_class_not_its_bytes(tmp_path: Path) -> None:
    from gather_scatter_conformance.harness.run.isolation import Isolated

    # OpenVINO's GatherND reads past its buffer for an index past the end (risky: run in a worker).
    case = _probe("cases/probes/gather_nd.yaml::probe-oob-positive")
    executor = Isolated(timeout=120.0)
    try:
        record = _record(execute(case, "openvino", "GatherND-8", executor))
    finally:
        executor.close()
    if record.label != "garbage":  # its baseline label; a run reading zeros here would be a `zero` probe
        pytest.skip(f"GatherND-8 read {record.label} this time, not garbage")
    text = script(case, record)
    # No valid result exists (canonical semantics raise): a value of the observed shape is the class.
    assert "VALID = []  # canonical semantics: an error" in text and "observed = np.asarray" not in text
    assert "assert list(result.shape) == [2]" in text
    path = tmp_path / "repro.py"
    path.write_text(text)
    ran = _run_script(path)
    assert ran.returncode == 0, ran.stdout + ran.stderr
    assert "no valid result: an unchecked read" in ran.stdout
    # A probe that read zeros once: its bytes are asserted, unless its baseline names alternatives (zero|garbage).
    zero = record.model_copy(update={"label": "zero", "observed": [0.0, 5.0]})
    assert "observed = np.asarray" in script(case, zero)
    assert "VALID = []" in script(case, zero, accept="zero|garbage")



@pytest.mark.framework
def test_a_valid_result_reproduces_alternatives_that_include_a_conforming_label(tmp_path: Path) -> None:
    """CI, stop 53: Keras' scatter_update on torch wrote duplicates in one order that run, where its baseline says
    ``nondeterministic|last-wins``; the script took any two equal valid results for an unchecked read that did not
    reproduce. ``last-wins`` conforms (duplicate targets may take any one update), so a valid result reproduces it."""
    from gather_scatter_conformance import adapters

    case = _probe("cases/probes/scatter_nd.yaml::probe-duplicates")
    record = _record(execute(case, "onnxruntime", adapters.get("onnxruntime").variants("ScatterND")[0], InProcess()))
    assert record.verdict == "conforms" and record.label == "last-wins", record
    # As a run records a finding (the call's statements kept); the script writes the call from the adapter anew.
    varied = record.model_copy(update={"label": "nondeterministic", "native": "see the adapter"})
    path = tmp_path / "repro.py"
    path.write_text(script(case, varied, accept="nondeterministic|last-wins"))
    ran = _run_script(path)
    assert ran.returncode == 0, ran.stdout + ran.stderr
    assert "a valid result: the accepted label that conforms" in ran.stdout
    # Alternatives that are all findings (an unchecked read) still ask for other bytes on a second run.
    assert "again = run(**INPUTS)" in script(case, varied, accept="nondeterministic|garbage")

@pytest.mark.framework
def test_openvino_repro_scripts_run_on_string_data(tmp_path: Path) -> None:
    from gather_scatter_conformance.adapters.openvino import ADAPTER
    from gather_scatter_conformance.harness.run.runner import payload
    from gather_scatter_conformance.harness.run.worker import _case_data

    case = _probe("cases/probes/gather.yaml::probe-data-dtype-string")
    ran = {}
    for variant in ADAPTER.variants("Gather"):
        record = _record(execute(case, "openvino", variant, InProcess()))
        assert record.outcome == "ok" and record.observed_dtype == "string", record
        # The script of this (conforming) call, made as a finding's is: the native call's own source.
        _api, source = ADAPTER.describe(_case_data(payload(case)), variant)
        path = tmp_path / f"{variant.replace('/', '_')}.py"  # Gather-8/constant: no folder
        path.write_text(script(case, record.model_copy(update={"native": source})))
        done = _run_script(path)
        ran[variant] = "ok" if done.returncode == 0 else done.stderr[-300:]
    assert set(ran.values()) == {"ok"}, ran


@pytest.mark.parametrize(("native", "reproduces", "says"), [
    # glibc found the heap damaged and its abort path deadlocked (paddle's index_put did): reproduced, and it ends
    ("sys.stderr.write('free(): invalid next size (fast)\\n'); sys.stderr.flush(); import time; time.sleep(600)",
     True, "reproduced: glibc reported 'free(): invalid next size (fast)'"),
    # a hang without glibc's word is no repro of a crash
    ("import time; time.sleep(600)", False, "hung for 3 s without a heap message"),
    # the crash itself
    ("import os, signal; os.kill(os.getpid(), signal.SIGABRT)", True, "child process ended with -6"),
])
def test_a_crash_repro_ends_even_when_its_child_hangs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, native: str,
                                                      reproduces: bool, says: str) -> None:
    from gather_scatter_conformance.harness.run import repro

    monkeypatch.setattr(repro, "_CHILD_TIMEOUT", 3)
    case = _case(tmp_path)
    record = Record.read({"framework": "fw", "variant": "v", "outcome": "crash", "signal": "SIGABRT",
                          "native": native, "api": "fw.call()", "case": case.nodeid, "verdict": "deviates"})
    path = tmp_path / "repro.py"
    path.write_text(script(case, record, source=native))  # the call as a test writes it, not a record's text
    ran = _run_script(path)
    assert (ran.returncode == 0) == reproduces, ran.stdout + ran.stderr
    assert says in ran.stdout + ran.stderr


@pytest.mark.parametrize(("crashes_on", "reproduces", "says"), [
    (3, True, "child process ended with -11 (expected -signal.SIGSEGV) in child 3 of up to 4"),
    (None, False, "expected a memory-damage signal (SIGSEGV when recorded), got 0"),
])
def test_a_memory_damage_crash_gets_several_children(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                     crashes_on: int | None, reproduces: bool, says: str) -> None:
    """Damaged memory kills a process only where something notices: TVM's scatter_nd write before a block killed 1
    standalone child in 5. Such a script runs children until one dies of a memory-damage signal."""
    from gather_scatter_conformance.harness.run import repro

    monkeypatch.setattr(repro, "_TRIES", 4)
    case = _case(tmp_path)
    native = ("import os, pathlib, signal; f = pathlib.Path(__file__).with_suffix('.n'); "
              "n = int(f.read_text()) + 1 if f.exists() else 1; f.write_text(str(n)); "
              f"n == {crashes_on} and os.kill(os.getpid(), signal.SIGSEGV); result = None")
    record = Record.read({"framework": "fw", "variant": "v", "outcome": "crash", "signal": "SIGSEGV",
                          "native": native, "api": "fw.call()", "case": case.nodeid, "verdict": "deviates"})
    path = tmp_path / "repro.py"
    path.write_text(script(case, record, source=native))  # the call as a test writes it, not a record's text
    ran = _run_script(path)
    assert (ran.returncode == 0) == reproduces, ran.stdout + ran.stderr
    assert says in ran.stdout + ran.stderr
    assert (tmp_path / "repro.n").read_text() == str(crashes_on or 4)  # it stopped at the first crash


def _asked(case: Case, framework: str, variant: str, device: str) -> tuple[str | None, str | None]:
    """call_source's answer for ``case`` on ``framework``/``variant``/``device``: (source, None) or (None, why not)."""
    record = _cell(case, framework, variant, device)
    try:
        return repro.call_source(case, record), None
    except LookupError as exc:
        return None, str(exc)


def _cell(case: Case, framework: str, variant: str, device: str) -> Record:
    return Record.read({"case": case.nodeid, "framework": framework, "variant": variant, "device": device,
                        "outcome": "ok", "verdict": "conforms"})


# One that writes, one that cannot (a device no process here runs), one that has no adapter.
_CELLS = (("numpy", "take", "cpu"), ("numpy", "take", "openvino"), ("no-such-framework", "v", "cpu"))


def test_call_sources_written_ahead_are_those_written_in_line(tmp_path: Path) -> None:
    # A report writes its repro scripts' calls in forked processes while it builds its tables (each framework
    # imported once, there); what a script says must not depend on where its call was written.
    alone = [_asked(_case(tmp_path), *cell) for cell in _CELLS]
    assert alone[0][0] and "np.take" in alone[0][0] and "provider" in str(alone[1][1])
    assert alone[2][1] == "no adapter of that name here"
    case = _case(tmp_path)
    records = [_cell(case, *cell) for cell in _CELLS]
    with repro.prefetch_sources([(case, r) for r in records], workers=1):
        assert all(isinstance(held, repro._Ahead) for held in case.memo[repro._SOURCES].values())
        ahead = [_asked(case, *cell) for cell in _CELLS]
    assert ahead == alone


def test_a_process_that_dies_writing_ahead_leaves_its_sources_to_call_source(tmp_path: Path,
                                                                            monkeypatch: pytest.MonkeyPatch) -> None:
    parent, describe = os.getpid(), repro._describe

    def dies_in_a_child(*args: object) -> tuple[str | None, str | None]:
        if os.getpid() != parent:
            os._exit(3)  # as a framework that crashes on import would
        return describe(*args)  # type: ignore[arg-type]

    alone = [_asked(_case(tmp_path), *cell) for cell in _CELLS]
    monkeypatch.setattr(repro, "_describe", dies_in_a_child)
    case = _case(tmp_path)
    records = [_cell(case, *cell) for cell in _CELLS]
    with repro.prefetch_sources([(case, r) for r in records], workers=1):
        ahead = [_asked(case, *cell) for cell in _CELLS]
    assert ahead == alone


def test_a_process_stuck_on_an_import_that_another_thread_held_at_the_fork_is_ended(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # A full report hung (2026-11-29): the process writing sources ahead was forked while the report's main thread
    # was importing a module, and waited forever on that module's lock the first time it imported it. Here a thread
    # is inside a module's import when the fork happens, and the child imports the same module.
    import sys
    import threading

    (tmp_path / "gsc_gate.py").write_text("import threading\nINSIDE, LEAVE = threading.Event(), threading.Event()\n")
    (tmp_path / "gsc_held_import.py").write_text("import gsc_gate\ngsc_gate.INSIDE.set()\ngsc_gate.LEAVE.wait()\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    import gsc_gate  # type: ignore[import-not-found]

    parent, describe = os.getpid(), repro._describe

    def imports_first_in_a_child(*args: object) -> tuple[str | None, str | None]:
        if os.getpid() != parent:
            import gsc_held_import  # type: ignore[import-not-found]  # noqa: F401
        return describe(*args)  # type: ignore[arg-type]

    alone = [_asked(_case(tmp_path), *cell) for cell in _CELLS]
    monkeypatch.setattr(repro, "_describe", imports_first_in_a_child)
    monkeypatch.setattr(repro, "STALL_S", 2.0)
    importing = threading.Thread(target=__import__, args=("gsc_held_import",), daemon=True)
    importing.start()
    assert gsc_gate.INSIDE.wait(30)
    case = _case(tmp_path)
    records = [_cell(case, *cell) for cell in _CELLS]
    got: list[object] = []

    def report() -> None:
        with repro.prefetch_sources([(case, r) for r in records], workers=1):
            got.extend(_asked(case, *cell) for cell in _CELLS)

    reporting = threading.Thread(target=report, daemon=True)
    reporting.start()
    reporting.join(60)
    gsc_gate.LEAVE.set()
    importing.join(30)
    sys.modules.pop("gsc_held_import", None)
    assert not reporting.is_alive(), "the block waits on a process that is stuck on an import lock"
    assert got == alone


def test_a_process_that_dies_loses_its_own_task_only(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # paddle's import segfaults in a process that imported TensorFlow: it ended the one process that wrote every
    # framework's calls, and every task behind it: a full report then wrote 1,571 calls in line. Now the next task
    # gets a fresh process.
    parent, describe = os.getpid(), repro._describe

    def marked_in_a_child(case: Case, framework: str, variant: str, device: str) -> tuple[str | None, str | None]:
        if os.getpid() == parent:
            return describe(case, framework, variant, device)
        if framework == "no-such-framework":
            os._exit(3)
        source, why = describe(case, framework, variant, device)
        return (source and source + "  # ahead"), why

    alone = [_asked(_case(tmp_path), *cell) for cell in _CELLS]
    monkeypatch.setattr(repro, "_describe", marked_in_a_child)
    case = _case(tmp_path)
    records = [_cell(case, *cell) for cell in reversed(_CELLS)]  # the task that dies first
    with repro.prefetch_sources([(case, r) for r in records], workers=1):
        ahead = [_asked(case, *cell) for cell in _CELLS]
    assert ahead[0] == (f"{alone[0][0]}  # ahead", None)
    assert ahead[1:] == alone[1:]
