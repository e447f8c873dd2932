"""The runner's shortcuts change nothing a record says: identical outputs are judged as compare() judges them,
per-case values are computed once, and records are in the file the moment write() returns."""

from __future__ import annotations

import json
import os
import textwrap
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from gather_scatter_conformance.harness.cases.load import Case, load_file
from gather_scatter_conformance.harness.judge import verdict
from gather_scatter_conformance.harness.reference.compare import compare
from gather_scatter_conformance.harness.run import records, runner
from gather_scatter_conformance.vocab import wire
from gather_scatter_conformance.vocab.record import Record

NAN = float("nan")
IDENTICAL = [
    np.array([1.5, NAN, -0.0, np.inf], np.float32),
    np.array([[1, 2], [3, 4]], np.int64),
    np.array([True, False]),
    np.zeros((0, 3), np.float64),
    np.array([1 + 2j, NAN], np.complex64),
    np.array(7, np.uint8),
]


def _case(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Case:
    monkeypatch.setenv("GSC_CASE_CACHE", "off")
    path = tmp_path / "gather.yaml"
    path.write_text(textwrap.dedent("""\
        op: Gather
        cases:
          - id: c
            source: test
            inputs: {data: [1, 2, 3], indices: [2, 0]}
        """))
    case = load_file(path)[0]
    assert isinstance(case, Case)
    return case


@pytest.mark.parametrize("expected", IDENTICAL, ids=[str(a.dtype) for a in IDENTICAL])
def test_identical_outputs_get_the_fields_compare_gives(expected: np.ndarray, tmp_path: Path,
                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    case = _case(tmp_path, monkeypatch)
    res = {"outcome": "ok", "value": wire.encode(expected.copy())}
    fields = verdict.judge(case, res, expected)
    full = compare(wire.decode(res["value"]), expected)
    assert fields["verdict"] == "conforms" and full.equal
    assert (fields["max_abs_err"], fields["mismatches"], fields["first_mismatches"]) == (
        full.max_abs_err, full.mismatches, full.first_mismatches)


def test_different_outputs_still_take_the_full_comparison(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    case = _case(tmp_path, monkeypatch)
    expected = np.array([3.0, 1.0], np.float32)
    wrong = judge_of(case, np.array([3.0, 2.0], np.float32), expected)
    assert wrong["verdict"] == "deviates" and wrong["mismatches"] == 1 and wrong["max_abs_err"] == 1.0
    widened = judge_of(case, np.array([3.0, 1.0], np.float64), expected)  # equal values, another dtype
    assert widened["verdict"] == "deviates" and "dtype float64" in widened["reason"]


def judge_of(case: Case, observed: np.ndarray, expected: np.ndarray) -> dict[str, Any]:
    return verdict.judge(case, {"outcome": "ok", "value": wire.encode(observed)}, expected)


def test_per_case_work_is_done_once(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    case = _case(tmp_path, monkeypatch)
    calls = []
    real = wire.encode
    monkeypatch.setattr(wire, "encode", lambda arr: calls.append(1) or real(arr))
    first, second = runner.payload(case), runner.payload(case)
    assert first["inputs"] is second["inputs"] and len(calls) == 2  # data and indices, once
    assert case.reference() is case.reference()


def _record(case: str) -> Record:
    return Record.read({"case": case, "framework": "numpy", "outcome": "ok", "verdict": "conforms"})


def test_a_record_is_in_the_file_when_write_returns_and_fsyncs_are_batched(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    synced = []
    monkeypatch.setattr(os, "fsync", lambda fd: synced.append(fd))
    path = tmp_path / "r.jsonl"
    writer = records.ResultsWriter(path, sync_interval=3600)
    for i in range(50):
        writer.write(_record(f"c{i}"))
        assert json.loads(path.read_text().splitlines()[-1]) == _record(f"c{i}").dump()
    assert synced == []
    writer.close()
    assert len(synced) == 1
    every = records.ResultsWriter(tmp_path / "s.jsonl", sync_interval=0)
    every.write(_record("a"))
    every.write(_record("b"))
    every.close()
    assert len(synced) == 3
