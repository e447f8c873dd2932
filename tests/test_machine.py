"""Workers from the machine (issue #38): a run measures the memory of its processes together, its manifest keeps it,
and `gsc run --workers auto` sizes the next run by the cores and the memory available at that measurement."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path

import pytest

from gather_scatter_conformance.harness.cli import _workers
from gather_scatter_conformance.harness.run import machine


def test_one_worker_a_core_while_memory_holds() -> None:
    assert machine.choose_workers(16, 120.0, 4.0).workers == 16  # 0.8 * 120 / 4 = 24 fit: the cores bound it
    assert machine.choose_workers(16, 120.0, None).workers == 12  # unmeasured: DEFAULT_WORKER_GIB (8) a worker
    by_memory = machine.choose_workers(16, 120.0, 8.0, measured=True)
    assert by_memory.workers == 14 and "bound by memory" in by_memory.reason  # a measured peak: 0.95 * 120 / 8
    assert "as the last run of these results measured" in by_memory.reason
    # The converter paths on this machine, 2026-11-28: two workers peaked at 19.6 GiB with 22.7 GiB available;
    # the next run must not drop to one (0.8 of it would: 18.2 / 9.8).
    assert machine.choose_workers(2, 22.7, 9.8, measured=True).workers == 2
    assert machine.choose_workers(2, 3.0, 8.0).workers == 1  # not even one fits: one all the same
    assert machine.choose_workers(2, 21.0, None).workers == 2  # 0.8 * 21 / 8: 2 fit, and 2 cores
    assert "before any measurement" in machine.choose_workers(2, 21.0, None).reason
    assert machine.choose_workers(8, None, 4.0).workers == 8


def test_a_pytest_n_wins_over_workers() -> None:
    assert _workers("auto", ["-n", "3"], "") == []
    assert _workers("5", ["-n3"], "") == []
    assert _workers("1", [], "") == []


@pytest.mark.skipif(not Path("/proc/self/smaps_rollup").exists(), reason="needs Linux /proc")
def test_the_sampler_counts_the_children_of_the_process() -> None:
    child = subprocess.Popen([sys.executable, "-c", "b = b'x' * (300 * 2**20); import time; time.sleep(30)"])
    try:
        sampler = machine.PeakSampler(interval=0.1).start()
        deadline = time.monotonic() + 20
        while sampler.peak < 300 * 2**20 and time.monotonic() < deadline:
            time.sleep(0.1)
        peak = sampler.stop()
    finally:
        child.kill()
        child.wait()
    assert peak >= 300 * 2**20, peak


def test_the_sampler_reads_a_process_s_proportional_size_again_only_when_it_moved(monkeypatch) -> None:
    # #38: smaps_rollup costs the kernel a page-table walk (28 ms a GiB here); the paths phase's controller spent
    # 133 CPU s on it. A process whose resident size stayed put keeps its last reading.
    rss = {10: 1000 * 2**20, 11: 200 * 2**20}
    reads: list[int] = []

    def pss(pid: int) -> int:
        reads.append(pid)
        return rss[pid] // 2

    monkeypatch.setattr(machine, "family", lambda pid: list(rss))
    monkeypatch.setattr(machine, "resident", lambda pid: rss[pid])
    monkeypatch.setattr(machine, "proportional", pss)
    sampler = machine.PeakSampler(pid=10)
    assert sampler.sample() == 600 * 2**20 and reads == [10, 11]
    rss[10] += 5 * 2**20  # under 2 % and 32 MiB: the last reading stands
    assert sampler.sample() == 600 * 2**20 and reads == [10, 11]
    rss[11] += 100 * 2**20  # moved: read again
    assert sampler.sample() == 650 * 2**20 and reads == [10, 11, 11]
    assert sampler.peak == 650 * 2**20


@pytest.mark.slow
def test_a_run_keeps_its_workers_and_memory_and_the_next_is_sized_by_them(tmp_path: Path) -> None:
    def gsc(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run([sys.executable, "-m", "gather_scatter_conformance", "run", "--framework", "numpy",
                               "--results", "r.jsonl", *args], cwd=tmp_path, capture_output=True, text=True,
                              timeout=600)

    first = gsc("--workers", "2", "--gsc-case-tags=probe")
    assert first.returncode == 0, first.stderr[-2000:]
    head = json.loads((tmp_path / "r.jsonl").open().readline())["gsc_manifest"]
    assert head["workers"] == 2 and 0 < head["memory_peak_gib"] < 16
    second = gsc("--gsc-case-tags=probe")
    assert second.returncode == 0, second.stderr[-2000:]
    said = [line for line in second.stderr.splitlines() if line.startswith("gsc: ")]
    assert said and "as the last run of these results measured" in said[0], second.stderr[-2000:]
    bad = gsc("--workers", "many")
    assert bad.returncode == 2 and "neither a positive number of workers nor auto" in bad.stderr
