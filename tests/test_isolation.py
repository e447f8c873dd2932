"""Crash, hang and kill containment: real crashing and hanging framework calls become results; nothing is lost."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest
from _cases import records_of

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


@pytest.mark.slow
def test_real_hang_is_recorded_as_timeout(tmp_path: Path) -> None:
    pytest.importorskip("onnx")
    # ONNX's Python reference on a 4*10^6-element ScatterElements: 1.4 s here with onnx 1.23.2 (16 s with older onnx),
    # far over a 0.25 s limit, while the 3-element case takes under a millisecond: the limit sits between the two.
    records, _ = _run_file(tmp_path, "scatter_elements.yaml", """\
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
        """, "--framework", "onnx-reference", "--case-timeout", "0.25")
    assert records["a-slow"]["outcome"] == "timeout"
    assert records["a-slow"]["verdict"] == "deviates"
    # a hang is confirmed by a second try in a fresh process (a loaded machine made two false hangs on 2026-11-27)
    assert records["a-slow"]["error_message"].endswith("again on a second try in a fresh process")
    assert records["b-fast"]["outcome"] == "ok"


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
