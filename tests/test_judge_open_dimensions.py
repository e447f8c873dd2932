"""What the specs leave open is measured, never judged: TensorScatter's open dimensions and inputs, labelled by the
classifier and given a verdict that a policy alone cannot make a deviation. Observations are written by hand."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from gather_scatter_conformance.harness.cases.load import Case, load_file
from gather_scatter_conformance.harness.judge.classify import label
from gather_scatter_conformance.harness.judge.dimensions import canonical_label, conforms
from gather_scatter_conformance.harness.judge.verdict import judge, open_question
from gather_scatter_conformance.vocab import wire
from gather_scatter_conformance.vocab.dimensions import CANONICAL_LABELS, DIMENSIONS, OPEN
from gather_scatter_conformance.vocab.record import Record

ROOT = Path(__file__).resolve().parents[1]
PROBES = {c.id: c for c in load_file(ROOT / "cases/probes/tensor_scatter.yaml", "cases/probes/tensor_scatter.yaml")
          if isinstance(c, Case)}


def _ok(values: list[float], case: Case) -> dict:
    shape = case.inputs()["data"].shape
    return {"outcome": "ok", "value": wire.encode(np.asarray(values, np.float32).reshape(shape))}


def test_every_open_and_declared_dimension_is_in_the_vocabulary() -> None:
    assert set(OPEN) <= set(CANONICAL_LABELS) <= set(DIMENSIONS)


@pytest.mark.parametrize("dimension", sorted(OPEN))
@pytest.mark.parametrize(("observed", "ok"), [("error", True), ("wrap", True), ("skip", True), ("clamp", True),
                                              ("garbage", False), ("alias", False), ("timeout", False),
                                              ("crash:SIGSEGV", False)])
def test_an_open_dimension_accepts_every_policy_label(dimension: str, observed: str, ok: bool) -> None:
    assert conforms("TensorScatter", dimension, observed) is ok


@pytest.mark.parametrize(("dimension", "canonical", "other"), [("circular-wrap", "wrap", "error"),
                                                               ("sequence-axis-0", "error", "wrong"),
                                                               ("sequence-axis-last", "ok", "error"),
                                                               ("empty-update", "ok", "error")])
def test_a_decided_dimension_has_one_conforming_label(dimension: str, canonical: str, other: str) -> None:
    assert canonical_label("TensorScatter", dimension) == canonical
    assert conforms("TensorScatter", dimension, canonical) and not conforms("TensorScatter", dimension, other)


@pytest.mark.parametrize(
    ("probe", "observed", "want"),
    [
        ("probe-write-index-negative", [10, 20, 30, -1, -2], "wrap"),
        ("probe-write-index-negative", [-2, 20, 30, 40, 50], "clamp"),
        ("probe-write-index-negative", [10, 20, 30, 40, 50], "skip"),
        ("probe-write-index-negative", [10, -1, -2, 40, 50], "garbage"),
        ("probe-write-index-overflow", [10, 20, 30, 40, -2], "clamp"),
        ("probe-write-index-overflow", [-2, 20, 30, 40, -1], "wrap"),
        ("probe-write-index-overflow", [10, 20, 30, 40, -1], "skip"),
        ("probe-write-index-overflow-past-end", [10, -1, 30, 40, 50], "wrap"),
        ("probe-write-index-overflow-alias", [10, 20, 30, 40, -1, -2, 70, -3, -4, 100], "alias-write"),
        ("probe-write-index-overflow-alias", [10, 20, 30, 40, -1, 60, 70, -3, -4, 100], "skip"),
        ("probe-write-index-negative-alias", [-1, 20, 30, 40, -3, 60, 70, 80, 90, 100], "alias-write"),
        ("probe-circular-wrap", [-2, 20, 30, 40, -1], "wrap"),
        ("probe-circular-negative", [10, 20, 30, -1, -2], "wrap"),
        ("probe-circular-negative", [10, 20, 30, 40, 50], "skip"),
        ("probe-circular-negative", [-2, 20, 30, 40, 50], "clamp"),
    ],
)
def test_labels_and_verdicts_of_observed_values(probe: str, observed: list[float], want: str) -> None:
    case = PROBES[probe]
    res = _ok(observed, case)
    verdict = judge(case, res, case.reference())
    record = Record.read({"case": case.nodeid, "framework": "", "outcome": res["outcome"], **verdict})
    obs = np.asarray(observed, np.float32).reshape(case.inputs()["data"].shape)
    assert label(case.dimension, case.op, case.inputs(), case.attrs, record, obs) == want
    # An open input: every label a policy explains conforms; a decided one only at its canonical label.
    should = conforms(case.op, case.dimension, want)
    assert (verdict["verdict"] == "conforms") is should, verdict["reason"]
    if open_question(case) is not None:
        assert "the spec leaves this open" in verdict["reason"]


@pytest.mark.parametrize("probe", ["probe-write-index-negative", "probe-write-index-overflow",
                                   "probe-circular-negative"])
def test_a_refusal_of_an_open_input_conforms(probe: str) -> None:
    case = PROBES[probe]
    verdict = judge(case, {"outcome": "error", "error_type": "Fail", "error_message": "no"}, case.reference())
    assert verdict["verdict"] == "conforms" and "leaves open" in verdict["reason"]
    crash = judge(case, {"outcome": "crash", "signal": "SIGSEGV"}, case.reference())
    assert crash["verdict"] == "deviates" and crash["deviation"] == "crash"


def test_a_refusal_of_a_decided_input_still_deviates() -> None:
    case = PROBES["probe-circular-wrap"]
    assert open_question(case) is None
    verdict = judge(case, {"outcome": "error", "error_type": "Fail", "error_message": "no"}, case.reference())
    assert verdict["verdict"] == "deviates" and verdict["deviation"] == "error"
