"""A run comes framework worker by framework worker, and its executor keeps only a few of them warm (issue #38:
every framework warm in both pytest-xdist workers held 17.5 GiB of this machine's 24 in the frameworks phase)."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import numpy as np
import pytest

from gather_scatter_conformance.harness.cli import _workers
from gather_scatter_conformance.harness.run.isolation import WARM_ENV, Isolated, warm_limit
from gather_scatter_conformance.vocab import wire

_CASES = "op: Gather\ncases:\n" + "".join(
    f"  - id: c{i}\n    source: test\n    inputs: {{data: [1, 2, 3], indices: [{i}]}}\n" for i in range(3))


def test_the_items_come_framework_by_framework(pytester: pytest.Pytester) -> None:
    (pytester.mkdir("cases") / "gather.yaml").write_text(_CASES)
    result = pytester.runpytest_subprocess("cases", "--framework", "numpy,onnx-reference,onnxruntime",
                                           "--collect-only", "-q", "-p", "no:cacheprovider")
    ids = [line for line in result.stdout.lines if "::" in line]
    frameworks = [i.split("[", 1)[1].split(":")[0].rstrip("]") for i in ids]
    assert len(ids) >= 9, result.stdout.str()
    # Collected case by case, then ordered so: each framework's items together, in the order the case file has them.
    assert frameworks == sorted(frameworks, key=["numpy", "onnx-reference", "onnxruntime"].index), ids
    assert [i.split("::")[1].split("[")[0] for i in ids if i.endswith("[numpy]")] == ["c0", "c1", "c2"]


def test_several_workers_steal_work() -> None:
    # Each pytest-xdist worker starts on a contiguous share of the run, so on a few framework workers.
    assert _workers("2", [], "") == ["-n", "2", "--dist", "worksteal"]
    assert _workers("2", [], "", "numpy,onnx~mnnconvert~mnn") == ["-n", "2", "--dist", "worksteal"]


def test_a_run_of_paths_only_deals_each_path_whole() -> None:
    # A path's worker imports a source, a converter and a target: a steal that splits a path starts it twice.
    assert _workers("2", [], "", "paths") == ["-n", "2", "--gsc-path-units"]
    assert _workers("2", [], "", "onnx~mnnconvert~mnn, torch~onnx-dynamo~onnxruntime") == ["-n", "2",
                                                                                          "--gsc-path-units"]
    assert _workers("1", [], "", "paths") == []


@pytest.mark.parametrize(("nodeid", "unit"), [
    ("cases/gather.yaml::c0[onnx~mnnconvert~mnn]", "onnx~mnnconvert~mnn@cpu"),
    ("cases/gather.yaml::c0[torch~onnx-dynamo~openvino:index_select]", "torch~onnx-dynamo~openvino@cpu"),
    ("cases/gather.yaml::c0[torch~onnx-dynamo~onnxruntime:take@cuda]", "torch~onnx-dynamo~onnxruntime@cuda"),
    ("cases/gather.yaml::c0[torch~onnx-dynamo~onnxruntime@cuda]", "torch~onnx-dynamo~onnxruntime@cuda"),
    ("cases/gather.yaml::c0[numpy:take]", "cases/gather.yaml::c0[numpy:take]"),  # a framework's: its own unit
    ("tests/test_x.py::test_y", "tests/test_x.py::test_y"),
])
def test_a_paths_unit_is_the_path_on_its_device(nodeid: str, unit: str) -> None:
    from gather_scatter_conformance.harness.run.pytest_plugin import path_unit

    assert path_unit(nodeid) == unit


@pytest.mark.framework  # MNN, and torch for onnx2torch, in their worker processes
def test_with_path_units_each_path_runs_on_one_worker(pytester: pytest.Pytester) -> None:
    from gather_scatter_conformance import resources

    (pytester.mkdir("cases") / "gather.yaml").write_bytes((resources.cases_dir() / "gather.yaml").read_bytes())
    paths = ("onnx~mnnconvert~mnn", "onnx~onnx2torch~torch")
    result = pytester.runpytest_subprocess("cases", "--framework", ",".join(paths), "-k", "onnx-gather13-example",
                                           "-n", "2", "--gsc-path-units", "--no-cache", "-v", "-p",
                                           "no:cacheprovider", timeout=600)
    ran = [line.split() for line in result.stdout.lines if line.startswith("[gw") and "::" in line]
    workers = {path: {words[0] for words in ran if words[-1].endswith(f"[{path}]")} for path in paths}
    assert len(ran) >= 4 and all(len(w) == 1 for w in workers.values()), result.stdout.str()
    assert workers[paths[0]] != workers[paths[1]], workers  # two units, two workers: one each


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True


@pytest.mark.framework  # ONNX Runtime and ONNX's reference in their worker processes
def test_past_the_warm_limit_the_worker_used_least_recently_stops(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(WARM_ENV, "2")
    payload = {"op": "Gather", "attrs": {"axis": 0, "batch_dims": 0},
               "inputs": {"data": wire.encode(np.arange(3.0)), "indices": wire.encode(np.array([2]))}}
    ex = Isolated({}, timeout=120)
    try:
        pids = {}
        for framework, variant in [("numpy", "take"), ("onnx-reference", "ReferenceEvaluator"), ("numpy", "take"),
                                   ("onnxruntime", "Gather-13")]:
            res = ex.run(framework, variant, payload)
            assert res["outcome"] == "ok" and wire.decode(res["value"]).tolist() == [2.0], res
            pids[framework] = ex._workers[ex.worker_key(framework, variant)].pid
        # numpy ran after onnx-reference, so onnx-reference's process is the one stopped for onnxruntime's.
        assert [key[0] for key in ex._workers] == ["numpy", "onnxruntime"]
        assert not _alive(pids["onnx-reference"])
        assert _alive(pids["numpy"]) and _alive(pids["onnxruntime"])
    finally:
        ex.close()


def test_the_warm_limit_is_read_from_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(WARM_ENV, raising=False)
    assert warm_limit() == 4
    monkeypatch.setenv(WARM_ENV, "0")
    assert warm_limit() == 0  # no limit: every worker stays warm
    monkeypatch.setenv(WARM_ENV, "many")
    with pytest.raises(ValueError, match=WARM_ENV):
        warm_limit()


@pytest.mark.framework
def test_a_run_on_two_workers_records_every_case(tmp_path: Path) -> None:
    import subprocess

    (tmp_path / "cases").mkdir()
    (tmp_path / "cases" / "gather.yaml").write_text(_CASES)
    done = subprocess.run([sys.executable, "-m", "gather_scatter_conformance", "run", "cases", "--framework",
                           "numpy,onnx-reference", "--results", "r.jsonl", "--no-cache", "--workers", "2"],
                          cwd=tmp_path, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stdout + done.stderr
    from _cases import records_of

    records = records_of(tmp_path / "r.jsonl")
    defaults = ("take", "ReferenceEvaluator")
    assert sorted((r["case_id"], r["framework"]) for r in records if r["variant"] in defaults) == [
        (f"c{i}", f) for i in range(3) for f in ("numpy", "onnx-reference")]
