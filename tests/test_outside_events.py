"""Outside events are not findings (issue #37): a worker killed from outside, a shared worker's crash charged to
whichever case ran last, and the time inputs take to reach a worker are no verdict on the framework."""

from __future__ import annotations

import os
import signal
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from gather_scatter_conformance import adapters
from gather_scatter_conformance.harness.cases.load import Case, load_file
from gather_scatter_conformance.harness.judge.repeats import unsafe_record
from gather_scatter_conformance.harness.judge.verdict import is_finding
from gather_scatter_conformance.harness.run.isolation import Isolated, is_risky
from gather_scatter_conformance.harness.run.runner import execute
from gather_scatter_conformance.vocab import wire

pytestmark = pytest.mark.skipif(not hasattr(os, "fork") or os.name != "posix", reason="needs POSIX signals")

# A framework whose behaviour is chosen by the first index: 0 answers; 1 segfaults in the call (its own crash);
# 2 waits to be killed from outside (a pid file that a test's thread kills, as the OOM killer would, or removes to
# let it answer); 3 answers and leaves its process damaged (as an out-of-bounds write leaves a heap); 4 answers,
# unless an earlier case damaged its process: then it aborts (SIGABRT), as OpenVINO's Gather-7 did after others.
VICTIM = '''
import os, signal, time
from pathlib import Path
from gather_scatter_conformance.adapters.base import Adapter, Call

class Victim(Adapter):
    name = "victim"
    module = "numpy"
    damaged = False

    def version(self):
        return "1.0"

    def prepare(self, case, variant):
        kind = int(case.inputs["indices"].reshape(-1)[0])
        data = case.inputs["data"]

        def run():
            if kind == 1:
                os.kill(os.getpid(), signal.SIGSEGV)
            if kind == 2:
                pid = Path(os.environ["GSC_VICTIM_DIR"], f"{os.getpid()}.pid")
                pid.write_text("")
                deadline = time.monotonic() + 30
                while pid.exists() and time.monotonic() < deadline:
                    time.sleep(0.005)
            if kind == 3:
                type(self).damaged = True
            if kind == 4 and type(self).damaged:
                os.kill(os.getpid(), signal.SIGABRT)
            return data[:1] * 2

        return Call("victim()", run)

ADAPTER = Victim()
'''


class Killer:
    """Kills (SIGKILL) the first ``kills`` processes that write a pid file in ``folder``, and lets the others go."""

    def __init__(self, folder: Path, kills: int) -> None:
        self.folder, self.left, self.killed = folder, kills, 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._loop, daemon=True)
        self._thread.start()

    def _loop(self) -> None:
        while not self._stop.is_set():
            for path in self.folder.glob("*.pid"):
                if self.left > 0:
                    os.kill(int(path.stem), signal.SIGKILL)
                    self.left -= 1
                    self.killed += 1
                path.unlink()
            time.sleep(0.005)

    def stop(self) -> None:
        self._stop.set()
        self._thread.join()


@pytest.fixture
def victim(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """The ``victim`` adapter registered here and in worker processes; yields the folder of its pid files."""
    (tmp_path / "victim_adapter.py").write_text(VICTIM)
    pids = tmp_path / "pids"
    pids.mkdir()
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.setenv("PYTHONPATH", f"{tmp_path}:{Path(__file__).resolve().parents[1]}")
    monkeypatch.setenv("GSC_VICTIM_DIR", str(pids))
    monkeypatch.setitem(adapters.table(), "victim", "victim_adapter:ADAPTER")
    adapters.get.cache_clear()
    yield pids
    adapters.get.cache_clear()


def _payload(kind: int, fresh: bool = False) -> dict[str, Any]:
    return {"op": "Gather", "attrs": {"axis": 0, "batch_dims": 0}, "fresh": fresh,
            "inputs": {"data": wire.encode(np.arange(3.0)), "indices": wire.encode(np.array([kind]))}}


def _run(ex: Isolated, pids: Path, kind: int, fresh: bool = False, kills: int = 0) -> dict[str, Any]:
    killer = Killer(pids, kills)
    try:
        return ex.run("victim", "default", _payload(kind, fresh))
    finally:
        killer.stop()
        assert killer.killed == kills


# 1. A worker killed from outside (SIGKILL: what the OOM killer sends) is rerun once in a fresh process.

@pytest.mark.parametrize(("fork", "fresh"), [(True, False), (False, False), (True, True)],
                         ids=["shared-worker", "no-fork", "forked-child"])
def test_a_worker_killed_from_outside_once_is_rerun_and_the_rerun_stands(victim: Path, fork: bool,
                                                                         fresh: bool) -> None:
    ex = Isolated(timeout=60, fork=fork)
    try:
        res = _run(ex, victim, 2, fresh, kills=1)
        assert res["outcome"] == "ok", res
        assert wire.decode(res["value"]).tolist() == [0.0]
        assert "killed from outside (SIGKILL)" in res["rerun"]
        assert ex.run("victim", "default", _payload(0))["outcome"] == "ok"  # and the run goes on
    finally:
        ex.close()


@pytest.mark.parametrize(("fork", "fresh"), [(True, False), (True, True)], ids=["shared-worker", "forked-child"])
def test_a_worker_killed_from_outside_twice_is_an_interruption_not_a_crash(victim: Path, fork: bool,
                                                                           fresh: bool) -> None:
    ex = Isolated(timeout=60, fork=fork)
    try:
        res = _run(ex, victim, 2, fresh, kills=2)
    finally:
        ex.close()
    assert res["outcome"] == "harness-error", res
    assert res["fault"]["phase"] == "interrupted"
    assert "worker killed from outside (SIGKILL)" in res["error_message"]


def test_an_interruption_is_recorded_with_no_verdict_and_is_not_memory_unsafe(victim: Path, tmp_path: Path) -> None:
    (tmp_path / "gather.yaml").write_text("op: Gather\ncases:\n  - id: big\n    source: test\n"
                                          "    inputs: {data: [1, 2, 3], indices: [2]}\n")
    (case,) = (c for c in load_file(tmp_path / "gather.yaml", "cases/gather.yaml") if isinstance(c, Case))

    class Interrupted:  # what Isolated answers for a case whose worker was killed from outside twice
        def run(self, framework: str, variant: str, payload: dict[str, Any]) -> dict[str, Any]:
            ex = Isolated(timeout=60)
            killer = Killer(victim, 2)
            try:
                return ex.run(framework, variant, payload)
            finally:
                killer.stop()
                ex.close()

    record = execute(case, "victim", "default", Interrupted(), repeats=5)
    assert record.outcome == "harness-error" and record.verdict == "n/a", record
    assert record.fault is not None and record.fault.phase == "interrupted"
    assert "worker killed from outside (SIGKILL)" in record.reason
    assert not record.signal and record.deviation is None and record.distribution is None
    assert not unsafe_record(record) and not is_finding(record)


def test_a_cases_own_crash_in_a_forked_child_is_charged_at_once(victim: Path) -> None:
    ex = Isolated(timeout=60, fork=True)
    try:
        res = _run(ex, victim, 1, fresh=True)
    finally:
        ex.close()
    assert res["outcome"] == "crash" and res["signal"] == "SIGSEGV", res
    assert "rerun" not in res  # alone in a fresh process already: nothing to rerun


# 2. A crash in the shared worker is rerun alone in a fresh process before it is charged.

@pytest.mark.parametrize("fork", [True, False], ids=["fork", "no-fork"])
def test_a_shared_workers_crash_that_does_not_recur_alone_is_not_the_cases(victim: Path, fork: bool) -> None:
    ex = Isolated(timeout=60, fork=fork)
    try:
        assert _run(ex, victim, 3)["outcome"] == "ok"  # damages the shared worker, says nothing
        res = _run(ex, victim, 4)  # aborts in the damaged worker; conforms alone
        assert res["outcome"] == "ok", res
        assert wire.decode(res["value"]).tolist() == [0.0]
        assert "the shared worker crashed on this case (worker died with SIGABRT)" in res["rerun"]
        assert "alone in a fresh process" in res["rerun"]
    finally:
        ex.close()


def test_a_shared_workers_crash_that_recurs_alone_is_the_cases(victim: Path) -> None:
    ex = Isolated(timeout=60, fork=True)
    try:
        first = _run(ex, victim, 1)  # the first case of its worker: alone already, charged at once
        assert _run(ex, victim, 0)["outcome"] == "ok"
        res = _run(ex, victim, 1)  # in a worker that ran another case first
    finally:
        ex.close()
    assert first["outcome"] == "crash" and first["signal"] == "SIGSEGV" and "rerun" not in first, first
    assert res["outcome"] == "crash" and res["signal"] == "SIGSEGV", res
    assert "again alone in a fresh process" in res["rerun"]


def test_the_reruns_note_reaches_the_records_reason(victim: Path, tmp_path: Path) -> None:
    (tmp_path / "gather.yaml").write_text("op: Gather\ncases:\n  - id: damaging\n    source: test\n"
                                          "    inputs: {data: [1, 2, 3], indices: [3]}\n"
                                          "  - id: innocent\n    source: test\n"
                                          "    inputs: {data: [1, 2, 3, 4, 5], indices: [4]}\n")
    cases = {c.id: c for c in load_file(tmp_path / "gather.yaml", "cases/gather.yaml") if isinstance(c, Case)}
    ex = Isolated(timeout=60, fork=True)
    try:
        execute(cases["damaging"], "victim", "default", ex)
        record = execute(cases["innocent"], "victim", "default", ex)
    finally:
        ex.close()
    assert record.outcome == "ok" and record.verdict == "deviates", record  # victim's value: data[:1] * 2
    assert record.deviation == "value"
    assert "the shared worker crashed on this case" in record.reason


def test_negative_indices_are_risky_for_every_operator() -> None:
    assert is_risky("Gather", "negative-indices", [])
    assert is_risky("GatherND", None, ["negative-indices"])
    assert is_risky("TensorScatter", "write-index-negative", [])
    assert is_risky("TensorScatter", "circular-negative", [])
    assert not is_risky("Gather", "negative-axis", [])
    assert not is_risky("Gather", "batch-dims-negative", [])
    # no dimension or tag says so, the values do
    assert is_risky("Gather", None, [], {"data": np.arange(3), "indices": np.array([0, -1])})
    assert not is_risky("Gather", None, [], {"data": np.arange(-3, 0), "indices": np.array([0, 2])})


# 3. Sending the inputs to the worker is not the case's time.

TIGHT = 0.1  # s: far above np.take on 4 indices, below carrying 200 MB to a worker and decoding it there

@pytest.mark.parametrize("fresh", [False, True], ids=["shared-worker", "forked-child"])
def test_the_transfer_of_big_inputs_is_outside_the_case_timeout(fresh: bool) -> None:
    # 200 MB of data, a 4-element answer: np.take takes microseconds; sending and decoding the data does not (a
    # 0.8 GB case with a 2 s limit was recorded as a hang).
    data = np.ones(50_000_000, np.float32)
    payload = {"op": "Gather", "attrs": {"axis": 0, "batch_dims": 0}, "fresh": fresh,
               "inputs": {"data": wire.encode(data), "indices": wire.encode(np.array([0, 1, 2, 3]))}}
    small = {**payload, "inputs": {"data": wire.encode(data[:8]), "indices": payload["inputs"]["indices"]}}
    ex = Isolated(timeout=TIGHT, fork=True)
    try:
        assert ex.run("numpy", "take", small)["outcome"] == "ok"  # warm: the import is no case's time either
        start = time.perf_counter()
        res = ex.run("numpy", "take", payload)
        took = time.perf_counter() - start
    finally:
        ex.close()
    assert res["outcome"] == "ok", (res.get("error_message"), took)
    assert res["duration_s"] < TIGHT


@pytest.mark.slow
def test_a_big_case_with_a_tight_case_timeout_is_no_hang_end_to_end(tmp_path: Path) -> None:
    import json
    import subprocess
    import sys

    root = Path(__file__).resolve().parents[1]
    (tmp_path / "cases").mkdir()
    (tmp_path / "cases" / "gather.yaml").write_text(
        "op: Gather\ncases:\n  - id: big\n    source: test (200 MB of data, a 4-element answer)\n"
        "    inputs:\n      data: {random: {shape: [50000000], seed: 1}}\n      indices: [0, 1, 2, 3]\n")
    env = {**os.environ, "PYTHONPATH": str(root)}  # this checkout's harness, in the run and in its workers
    subprocess.run([sys.executable, "-m", "pytest", "cases", "-q", "-p", "no:cacheprovider", "--framework", "numpy",
                    "--case-timeout", str(TIGHT), "--no-cache", "--results", "r.jsonl"],
                   cwd=tmp_path, env=env, capture_output=True, text=True, timeout=600)
    records = [json.loads(line) for line in (tmp_path / "r.jsonl").read_text().splitlines() if line.strip()]
    (record,) = [r for r in records if r.get("case_id") == "big"]
    assert record["outcome"] == "ok" and record["verdict"] == "conforms", record.get("error_message")


# 5. A case whose process passes the worker memory limit is stopped and charged as too large, not as a crash, and
# the run goes on: the input budget (GSC_CASE_MEMORY) cannot see an output that a small input makes large.

# 16 MiB of data, 64 indices of its first row: a 1 GiB answer.
BIG_ANSWER = ("op: Gather\ncases:\n  - id: big-answer\n    source: test (a 1 GiB answer from 16 MiB of data)\n"
              "    inputs:\n      data: {fill: {value: 1, shape: [2, 4194304], dtype: float32}}\n"
              "      indices: {fill: {value: 0, shape: [64], dtype: int64}}\n"
              "  - id: small\n    source: test\n    inputs: {data: [1, 2, 3], indices: [2]}\n")


@pytest.mark.parametrize("fresh", [False, True], ids=["shared-worker", "forked-child"])
def test_a_case_past_the_worker_memory_limit_is_too_large_and_the_run_goes_on(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, fresh: bool) -> None:
    (tmp_path / "gather.yaml").write_text(BIG_ANSWER)
    big, small = (c for c in load_file(tmp_path / "gather.yaml", "cases/gather.yaml") if isinstance(c, Case))
    monkeypatch.setenv("GSC_WORKER_MEMORY", "0.5")

    class Limited:  # the real isolation, its risky path or its shared worker
        def __init__(self) -> None:
            self.isolated = Isolated(timeout=120, fork=True)

        def run(self, framework: str, variant: str, payload: dict[str, Any]) -> dict[str, Any]:
            return self.isolated.run(framework, variant, {**payload, "fresh": fresh})

    executor = Limited()
    try:
        record = execute(big, "numpy", "take", executor)
        after = execute(small, "numpy", "take", executor)
    finally:
        executor.isolated.close()
    assert record.outcome == "harness-error" and record.verdict == "n/a", record.error_message
    assert record.fault is not None and record.fault.phase == "too-large"
    assert record.error_type == "TooLarge" and "GSC_WORKER_MEMORY" in (record.error_message or "")
    assert not record.signal and record.deviation is None
    assert not unsafe_record(record) and not is_finding(record)
    assert after.outcome == "ok" and after.verdict == "conforms"


def test_a_bad_worker_memory_limit_is_a_one_line_usage_error(tmp_path: Path) -> None:
    import subprocess
    import sys

    (tmp_path / "gather.yaml").write_text(BIG_ANSWER)
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[1]), "GSC_WORKER_MEMORY": "lots"}
    proc = subprocess.run([sys.executable, "-m", "pytest", "gather.yaml", "-q", "-p", "no:cacheprovider",
                           "--framework", "numpy", "--no-cache", "--results", "r.jsonl"],
                          cwd=tmp_path, env=env, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 4, proc.stdout + proc.stderr
    assert "GSC_WORKER_MEMORY='lots': not a number of GiB" in proc.stderr
    assert "Traceback" not in proc.stdout + proc.stderr and not (tmp_path / "r.jsonl").exists()
