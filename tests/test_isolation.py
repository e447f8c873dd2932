"""Crash, hang and kill containment: real crashing and hanging framework calls become results; nothing is lost."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path
from typing import Any

import pytest
from _cases import records_of
from _installed import require

from gather_scatter_conformance.harness.run.isolation import Isolated, signal_name

ROOT = Path(__file__).resolve().parent.parent


def _project(tmp_path: Path, files: dict[str, str]) -> Path:
    (tmp_path / "cases").mkdir()
    for name, text in files.items():
        (tmp_path / "cases" / name).write_text(textwrap.dedent(text))
    return tmp_path


def _pytest(cwd: Path, *args: str, timeout: float = 300) -> subprocess.CompletedProcess[str]:
    cmd = [sys.executable, "-m", "pytest", "cases", "-q", "-p", "no:cacheprovider", *args]
    return subprocess.run(cmd, cwd=cwd, capture_output=True, text=True, timeout=timeout)


def _records(path: Path) -> list[dict]:
    return records_of(path)


def _run_file(tmp_path: Path, name: str, text: str, *args: str) -> tuple[dict[str, dict], str]:
    """Run one case file (``name``: ``text``) with ``args``: its records by case id, and pytest's output."""
    project = _project(tmp_path, {name: text})
    result = _pytest(project, *args, "--results", "r.jsonl")
    return {r["case_id"]: r for r in _records(project / "r.jsonl")}, result.stdout


def test_signal_name() -> None:
    assert signal_name(-8) == "SIGFPE"
    assert signal_name(-11) == "SIGSEGV"
    assert signal_name(0) is None


def _alive(pid: int) -> bool:
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] != "Z"
    except (OSError, IndexError):
        return False


@pytest.mark.slow
@pytest.mark.skipif(not Path("/proc/self/task").exists(), reason="reads /proc")
def test_a_killed_worker_takes_its_template_and_the_child_it_forked_with_it() -> None:
    import threading

    import numpy as np

    from gather_scatter_conformance.harness.run.machine import family
    from gather_scatter_conformance.vocab import wire

    # A risky case runs in a child forked from the worker's template; this one repeats a 20-million-element take
    # for seconds. A run stopped while a child converted (SIGTERM, 2026-11-30) killed the worker alone, and the
    # template and its child ran on at full CPU.
    job = {"device": "cpu", "op": "Gather", "attrs": {"axis": 0, "batch_dims": 0}, "opset": None, "omit": [],
           "repeat": 100, "fresh": True,
           "inputs": {"data": wire.encode(np.zeros(2 * 10**7, np.float32)),
                      "indices": wire.encode(np.arange(2 * 10**7, dtype=np.int64))}}
    executor = Isolated(timeout=120)
    answers: list[dict[str, Any]] = []
    thread = threading.Thread(target=lambda: answers.append(executor.run("numpy", "take", job)))
    thread.start()
    try:
        deadline, processes = time.monotonic() + 60, []
        while time.monotonic() < deadline and len(processes) < 3:  # the worker, its template, the case's child
            time.sleep(0.2)
            try:
                workers = list(executor._workers.values())
            except RuntimeError:  # the run's thread is adding the worker
                continue
            processes = family(workers[0].pid) if workers else []
        assert len(processes) >= 3, processes
        workers[0].kill()
        time.sleep(0.5)  # the case has seconds to run yet
        assert [p for p in processes if _alive(p)] == []
        thread.join(60)  # the run itself goes on: a killed worker's case is run again alone
    finally:
        executor.close()


@pytest.mark.framework
def test_real_crash_is_recorded_and_the_run_goes_on(tmp_path: Path) -> None:
    pytest.importorskip("openvino")
    # OpenVINO's Gather divides by the indices' element count: empty indices kill the process with SIGFPE.
    records, out = _run_file(tmp_path, "gather.yaml", """\
        op: Gather
        cases:
          - id: a-empty-indices
            source: test (OpenVINO Gather SIGFPE on empty indices)
            inputs: {data: [1, 2, 3, 4, 5], indices: {value: [], dtype: int64}}
          - id: b-after-the-crash
            source: test
            inputs: {data: [1, 2, 3, 4, 5], indices: [4, 0]}
        """, "--framework", "openvino", "--variants", "default", "-p", "no:randomly")
    assert records["a-empty-indices"]["outcome"] == "crash", out
    assert records["a-empty-indices"]["signal"] == "SIGFPE"
    assert records["b-after-the-crash"]["outcome"] == "ok"
    assert records["b-after-the-crash"]["verdict"] == "conforms"


# ONNX's Python reference on a 4*10^6-element ScatterElements: 1.4 s here with onnx 1.23.2 (16 s with older onnx),
# far over a 0.25 s limit, while the 3-element case takes under a millisecond: the limit sits between the two.
SLOW_AND_FAST = """\
    op: ScatterElements
    cases:
      - id: a-slow
        source: test
        inputs:
          data: {random: {shape: [4000000], seed: 1}}
          indices: {generate: {kind: unique, shape: [4000000], seed: 2}}
          updates: {random: {seed: 3}}
      - id: b-fast
        source: test
        inputs: {data: [0, 0, 0], indices: [2, 0], updates: [1, 2]}
    """


@pytest.mark.slow
def test_real_hang_is_recorded_as_timeout(tmp_path: Path) -> None:
    pytest.importorskip("onnx")
    records, _ = _run_file(tmp_path, "scatter_elements.yaml", SLOW_AND_FAST,
                           "--framework", "onnx-reference", "--case-timeout", "0.25")
    assert records["a-slow"]["outcome"] == "timeout"
    assert records["a-slow"]["verdict"] == "deviates"
    # a hang is confirmed by a second try in a fresh process (a loaded machine made two false hangs on 2026-11-27)
    assert records["a-slow"]["error_message"].endswith("; on a second try in a fresh process: again")
    assert records["b-fast"]["outcome"] == "ok"


@pytest.mark.slow
def test_a_short_first_try_is_a_hang_only_when_the_full_timeout_passes_too(tmp_path: Path) -> None:
    pytest.importorskip("onnx")
    # A first try cut at 0.1 s: the 1.4 s case is tried again with the full case timeout, and is a hang only if that
    # try has no result either, which the message says with both limits (issue #38: hangs known in seconds).
    records, _ = _run_file(tmp_path, "scatter_elements.yaml", SLOW_AND_FAST, "--framework", "onnx-reference",
                           "--first-timeout", "0.1", "--case-timeout", "0.3")
    assert records["a-slow"]["outcome"] == "timeout"
    assert records["a-slow"]["error_message"] == (
        "no result within 0.1 s; worker killed; on a second try in a fresh process: no result within 0.3 s; worker "
        "killed")
    (tmp_path / "b").mkdir()
    records, _ = _run_file(tmp_path / "b", "scatter_elements.yaml", SLOW_AND_FAST, "--framework", "onnx-reference",
                           "--first-timeout", "0.1", "--case-timeout", "120")
    assert records["a-slow"]["outcome"] == "ok" and records["a-slow"]["verdict"] == "conforms"
    assert records["b-fast"]["outcome"] == "ok"


@pytest.mark.slow
def test_a_hang_the_result_cache_witnessed_needs_no_second_try(tmp_path: Path) -> None:
    pytest.importorskip("onnx")
    # #38: a second run paid each hang's second full-timeout try again. A cell whose cache entry is a hang (both
    # tries, a case timeout at least this run's) is still measured, and a first try that hangs again is the hang.
    project = _project(tmp_path, {"scatter_elements.yaml": SLOW_AND_FAST})

    def run(results: str, case_timeout: str) -> dict[str, dict]:
        _pytest(project, "--framework", "onnx-reference", "--first-timeout", "0.1", "--case-timeout", case_timeout,
                "--gsc-cache-dir", str(tmp_path / "cache"), "--results", results)
        return {r["case_id"]: r for r in _records(project / results)}

    first = run("r1.jsonl", "0.3")["a-slow"]
    assert first["error_message"].endswith("on a second try in a fresh process: no result within 0.3 s; worker killed")
    again = run("r2.jsonl", "0.3")
    assert again["a-slow"]["outcome"] == "timeout" and not again["a-slow"].get("cached")
    assert again["a-slow"]["distribution"] == {"timeout": 2}  # both runs of the cell: a first try each
    assert again["a-slow"]["error_message"] == (
        f"no result within 0.1 s; worker killed; it hung on both tries at {first['time']} too (its result-cache "
        "entry), so no second try")
    assert again["b-fast"].get("cached")
    # A longer case timeout than the entry's: the entry witnessed nothing about it, so the second try runs.
    longer = run("r3.jsonl", "120")["a-slow"]
    assert longer["outcome"] == "ok" and longer["verdict"] == "conforms"


@pytest.mark.slow
def test_two_hung_tries_settle_a_cell_and_a_baseline_hang_needs_no_second_try(tmp_path: Path) -> None:
    pytest.importorskip("onnx")
    # #38: a hang cost its worker four tries (120 s each at most): the first and its second in a fresh process, then
    # a repeat's two. Two tries that hung settle the cell. And a cell whose baseline holds a hang on this release
    # (tinygrad's duplicates-many scatter, TVM's negative-index scatters) has its witness there, as a cell whose
    # result-cache entry hung: a first try that hangs is the hang.
    project = _project(tmp_path, {"scatter_elements.yaml": SLOW_AND_FAST})
    base = tmp_path / "baselines"
    base.mkdir()

    def run(results: str, label: str | None) -> dict:
        if label:
            (base / "onnx-reference.yaml").write_text(
                "framework: onnx-reference\nversion: '1.0'\nlabels:\n"
                f"  cases/scatter_elements.yaml::a-slow[ReferenceEvaluator]: '{label}'\n")
        _pytest(project, "--framework", "onnx-reference", "--first-timeout", "0.1", "--case-timeout", "0.3",
                "--no-cache", "--baseline-dir", str(base), "--results", results)
        return {r["case_id"]: r for r in _records(project / results)}["a-slow"]

    alone = run("r1.jsonl", None)
    assert alone["outcome"] == "timeout" and alone["distribution"] == {"timeout": 1}  # one run, two tries
    assert alone["error_message"].endswith("on a second try in a fresh process: no result within 0.3 s; worker "
                                           "killed")
    witnessed = run("r2.jsonl", "crash:SIGSEGV|timeout")
    assert witnessed["distribution"] == {"timeout": 2}  # two runs, a first try each
    assert witnessed["error_message"] == (
        f"no result within 0.1 s; worker killed; its baseline gives the cell crash:SIGSEGV|timeout on "
        f"{witnessed['framework_version']}, so no second try")
    # A baseline without a hang witnesses none: the second try runs.
    assert run("r3.jsonl", "clamp")["error_message"].endswith("on a second try in a fresh process: no result "
                                                              "within 0.3 s; worker killed")


def test_a_bad_first_timeout_is_a_usage_error(tmp_path: Path) -> None:
    project = _project(tmp_path, {"gather.yaml": _many_cases(1)})
    result = _pytest(project, "--framework", "numpy", "--first-timeout", "soon")
    assert result.returncode == 4, result.stdout + result.stderr
    assert "--first-timeout: 'soon' is neither 'auto' nor a positive number of seconds" in result.stderr


def test_the_first_try_limit_is_learned_per_system_and_variant() -> None:
    from gather_scatter_conformance.harness.run.timeouts import FirstTry

    clock = FirstTry(120.0)
    fast, slow = ("iree", "stablehlo"), ("torch", "compile")
    for duration in (0.2, 0.9, 0.4):
        assert clock.limit(fast) == 120.0  # not enough seen yet: the full timeout
        clock.seen(fast, {"outcome": "ok", "duration_s": duration})
    assert clock.limit(fast) == 10.0  # 10 x 0.9 s is under the 10 s floor
    clock.seen(fast, {"outcome": "error", "duration_s": 2.5})
    assert clock.limit(fast) == 25.0
    for outcome in ("timeout", "crash", "harness-error"):  # what did not finish says nothing of a call's time
        clock.seen(fast, {"outcome": outcome, "duration_s": 60.0})
    assert clock.limit(fast) == 25.0
    assert clock.limit(slow) == 120.0
    for _ in range(3):
        clock.seen(slow, {"outcome": "ok", "duration_s": 30.0})
    assert clock.limit(slow) == 120.0  # never past the case timeout
    assert FirstTry(120.0, fixed=0.5).limit(slow) == 0.5 and FirstTry(1.0, fixed=5.0).limit(slow) == 1.0


def test_worker_in_another_interpreter_reports_its_python() -> None:
    ex = Isolated({"numpy": sys.executable}, timeout=60)
    try:
        import numpy as np

        from gather_scatter_conformance.vocab import wire

        res = ex.run(
            "numpy",
            "take",
            {
                "op": "Take",
                "attrs": {"axis": None, "mode": "wrap"},
                "inputs": {"data": wire.encode(np.arange(3.0)), "indices": wire.encode(np.array([4]))},
            },
        )
        assert res["outcome"] == "ok"
        assert wire.decode(res["value"]).tolist() == [1.0]
    finally:
        ex.close()


def _many_cases(n: int) -> str:
    lines = ["op: Gather", "cases:"]
    for i in range(n):
        lines += [f"  - id: c{i:03d}", "    source: test", f"    inputs: {{data: [1, 2, 3], indices: [{i % 3}]}}"]
    return "\n".join(lines) + "\n"


@pytest.mark.slow
def test_kill_midway_then_resume_loses_and_duplicates_nothing(tmp_path: Path) -> None:
    project = _project(tmp_path, {"gather.yaml": _many_cases(150)})
    results = project / "r.jsonl"
    cmd = [
        sys.executable,
        "-m",
        "pytest",
        "cases",
        "-q",
        "-p",
        "no:cacheprovider",
        "--framework",
        "numpy",
        "--results",
        str(results),
    ]
    proc = subprocess.Popen(
        cmd, cwd=project, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True
    )
    partial = project / "r.jsonl.partial"  # where a run writes until it ends (harness.run.records.RunFiles)
    deadline = time.time() + 120
    while time.time() < deadline:
        if partial.exists() and len(partial.read_text().splitlines()) >= 21:
            break
        time.sleep(0.01)
    os.killpg(proc.pid, signal.SIGKILL)
    proc.wait()
    assert not results.exists()  # a killed run replaced nothing
    before = _records(partial)
    assert 20 <= len(before) < 150, "the run must be killed midway"
    _pytest(project, "--framework", "numpy", "--results", str(results), "--resume")
    after = _records(results)
    keys = [r["case"] for r in after]
    assert len(keys) == len(set(keys)) == 150
    assert after[: len(before)] == before  # what was recorded before the kill is kept as it was


@pytest.mark.framework
def test_memory_corruption_that_kills_at_exit_is_charged_to_its_case(tmp_path: Path) -> None:
    pytest.importorskip("openvino")
    # ScatterElementsUpdate with an index below -dim writes before the buffer: the call returns, the process dies
    # later (at exit). Risky cases run in a worker of their own, whose exit status is checked.
    records, _ = _run_file(tmp_path, "scatter_elements.yaml", """\
        op: ScatterElements
        cases:
          - id: a-write-before-the-buffer
            source: test (OpenVINO ScatterElementsUpdate heap corruption)
            tags: [out-of-bounds]
            inputs: {data: [1, 2, 3], indices: [-4], updates: [9]}
          - id: b-innocent
            source: test
            inputs: {data: [1, 2, 3], indices: [0], updates: [9]}
        """, "--framework", "openvino", "--variants", "default")
    first = records["a-write-before-the-buffer"]
    assert first["outcome"] == "crash", first
    assert first["signal"] in ("SIGSEGV", "SIGABRT")
    assert "on exit" in first["error_message"]
    assert records["b-innocent"]["outcome"] == "ok"


def _one_gather(tmp_path: Path, indices: str) -> Any:
    """The one case of a Gather file written to ``tmp_path``: data [1.0, 2.0, 3.0], ``indices`` as YAML."""
    from gather_scatter_conformance.harness.cases.load import load_file

    (tmp_path / "gather.yaml").write_text("op: Gather\ncases:\n  - id: one\n    source: test\n"
                                          f"    inputs: {{data: [1.0, 2.0, 3.0], indices: {indices}}}\n")
    (case,) = load_file(tmp_path / "gather.yaml", "gather.yaml")
    return case


@pytest.mark.framework
def test_workers_write_their_temporary_files_into_a_folder_of_the_run(tmp_path: Path,
                                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    """TensorFlow's autograph writes a source file per converted function into the temporary folder and removes it
    in an exit handler, which a risky case's forked child (``os._exit``) never runs: a run left hundreds of
    ``__autograph_generated_file*.py`` in /tmp. The workers' TMPDIR is a folder of the executor, removed at close."""
    require("tensorflow")
    import tempfile

    from gather_scatter_conformance.harness.run.runner import execute

    system = tmp_path / "system-tmp"
    system.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(system))  # where mkdtemp puts the executor's folder
    case = _one_gather(tmp_path, "[-1, 0]")
    ex = Isolated(timeout=120)
    try:
        record = execute(case, "tensorflow", "gather/function", ex)
        assert record.outcome in ("ok", "error") and record.fault is None, record  # TF refuses -1 on the CPU
        (scratch,) = system.iterdir()
        assert scratch.name.startswith("gsc-workers-")
        assert list(scratch.glob("__autograph_generated_file*.py")), "the forked child wrote no autograph file there"
    finally:
        ex.close()
    assert not list(system.iterdir())


@pytest.mark.framework
def test_a_paths_progress_file_is_made_in_the_workers_folder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A converter path's case notes its progress in a file the parent makes and removes; a parent killed in
    between left it in the system's temporary folder. It is made in the workers' folder, which goes with them."""
    require("MNN", "onnx")
    import tempfile

    from gather_scatter_conformance.harness.run import runner

    made: list[str | None] = []
    real = tempfile.mkstemp

    def mkstemp(*args: object, **kwargs: object) -> tuple[int, str]:
        if kwargs.get("prefix") == "gsc-progress-":
            made.append(kwargs.get("dir"))  # type: ignore[arg-type]
        return real(*args, **kwargs)  # type: ignore[call-overload]

    monkeypatch.setattr(runner.tempfile, "mkstemp", mkstemp)
    case = _one_gather(tmp_path, "[2, 0]")
    ex = Isolated(timeout=120)
    try:
        record = runner.execute(case, "onnx~mnnconvert~mnn", "Gather-13", ex)
        assert record.fault is None, record
        assert made == [ex.scratch()]
    finally:
        ex.close()


def test_a_hang_is_filed_under_the_device_the_adapters_results_are(tmp_path: Path) -> None:
    """ONNX Runtime files a run's results by its execution provider (an OpenVINO EP run's under "openvino"): a call
    that hung or killed its process answers nothing, and its record must still be filed there, not with the CPU
    provider's cells as one of theirs (the OpenVINO EP phase of 2026-12-01 filed a crash under "cpu"). The Azure
    provider, in every onnxruntime build, runs no node itself, so its cases run and hang on the CPU as usual."""
    pytest.importorskip("onnxruntime")
    records, out = _run_file(tmp_path, "scatter_elements.yaml", SLOW_AND_FAST, "--framework", "onnxruntime",
                             "--variants", "default", "--gsc-ort-providers", "AzureExecutionProvider",
                             "--case-timeout", "0.02")
    assert records["a-slow"]["outcome"] == "timeout", out
    assert {r["device"] for r in records.values()} == {"azure"}, records
