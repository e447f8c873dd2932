"""benchmarks/cpu_share.py splits a run's CPU between the harness's processes and the frameworks' (issue #38): the
last turn's note could only say that 71 ms a record went "beyond the calls", not to whom."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from benchmarks.cpu_share import Proc, Samples, _phase_name, measure, phases  # noqa: E402


def test_a_phase_s_harness_is_its_controller_and_xdist_workers_and_the_rest_is_the_frameworks() -> None:
    samples = Samples()
    run = Proc(100, 1, "python -m gather_scatter_conformance run --framework frameworks --phase frameworks", 30.0,
               False, 0.0, 100.0)
    worker = Proc(101, 100, "python -u -c import sys;exec(eval(sys.stdin.readline()))", 20.0, False, 1.0, 99.0)
    framework = Proc(102, 101, "python -u -c import sys;exec(eval(sys.stdin.readline()))", 120.0, True, 2.0, 98.0)
    # make runs a line with quotes through a shell, whose command line names the run too: not a phase.
    shell = Proc(99, 1, "/bin/sh -c .venv/bin/python -m gather_scatter_conformance run --phase 'onnxruntime (EP)'",
                 0.0, False, 0.0, 100.0)
    samples.procs = {(p.pid, 0): p for p in (shell, run, worker, framework)}
    samples.machine = [(0.0, 1000.0, 50.0), (100.0, 1190.0, 60.0)]  # 190 CPU s busy, 10 idle
    (row,) = phases(samples, sampler_cpu=0.0, total_wall=100.0)
    assert row.name == "frameworks: harness share of busy CPU"
    assert row.value == pytest.approx(50 / 190)  # the controller's 30 and its worker's 20, of 190
    assert row.extra["frameworks_s"] == 140.0 and row.extra["xdist_workers"] == 1 and row.extra["idle_s"] == 10.0
    # make report's OpenVINO EP line: a phase name of several words, as /proc shows argv.
    assert _phase_name("python -m gather_scatter_conformance run --phase onnxruntime (OpenVINO EP) --results r") == (
        "onnxruntime (OpenVINO EP)")


@pytest.mark.framework
def test_a_real_run_is_sampled(tmp_path: Path) -> None:
    # numpy's Gather examples through gsc run without pytest-xdist: the controller runs the cases, and its child,
    # the numpy worker, is the frameworks' side.
    rows = measure([sys.executable, "-m", "gather_scatter_conformance", "run", "--framework", "numpy", "--results",
                    str(tmp_path / "r.jsonl"), "-k", "example", "-p", "no:xdist", "--no-cache"], cwd=tmp_path)
    phase, whole = rows
    assert phase.name == "numpy: harness share of busy CPU" and 0 < phase.value <= 1
    assert phase.extra["controller_s"] > 0 and phase.extra["xdist_workers"] == 0
    assert whole.name == "the whole command" and whole.value > 0 and "exit 0" in whole.detail
