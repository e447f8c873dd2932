"""A deviation's failure message carries the smallest repro: inputs, attributes, the native call, both results."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from gather_scatter_conformance.harness.cases.load import Case, load_file
from gather_scatter_conformance.harness.judge.verdict import judge
from gather_scatter_conformance.harness.run.repro import failure_message
from gather_scatter_conformance.harness.run.runner import execute
from gather_scatter_conformance.vocab import wire


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
    record = {"framework": "fw", "variant": "v", "outcome": "ok", "api": res["api"], "expected": [3.0]}
    record.update(judge(case, res, case.reference()))
    assert record["verdict"] == "deviates" and record["mismatches"] == 1
    msg = failure_message(case, record)
    assert "cases/gather.yaml::neg [fw , v]: deviates from canonical ONNX semantics: 1 of 1 element(s) differ" in msg
    assert "call:     fw.gather(data, indices)" in msg
    assert "at [0]: expected 3.0, observed 1.0" in msg
    assert "data = np.array([1.0, 2.0, 3.0], dtype=np.float32)" in msg
    assert "indices = np.array([-1], dtype=np.int64)" in msg


def test_message_for_an_error(tmp_path: Path) -> None:
    case = _case(tmp_path)
    res = {"outcome": "error", "error_type": "ValueError", "error_message": "<b>negative</b>", "api": "fw.g()"}
    record = {"framework": "fw", "variant": "v", "outcome": "error", "api": "fw.g()", "expected": [3.0], **res}
    record.update(judge(case, res, case.reference()))
    assert record["verdict"] == "deviates"
    assert "observed: error: ValueError: <b>negative</b>" in failure_message(case, record)


def test_execute_in_process_numpy(tmp_path: Path) -> None:
    from gather_scatter_conformance.harness.run.runner import InProcess

    record = execute(_case(tmp_path), "numpy", "take", InProcess())
    assert record["verdict"] == "conforms"
    assert record["observed"] == [3.0]
    assert record["framework_version"] == np.__version__
