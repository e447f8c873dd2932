"""A judged record's test outcome is the judge's rule (harness.judge.outcome), not the pytest plugin's: every branch,
on records as the runner makes them (numpy's take on hand-written cases), against baselines as baseline.load gives
them."""

from __future__ import annotations

from typing import Any

import pytest

from gather_scatter_conformance.harness.cases.load import Case, load_file
from gather_scatter_conformance.harness.judge.baseline import item_key
from gather_scatter_conformance.harness.judge.outcome import outcome
from gather_scatter_conformance.harness.run.runner import InProcess, execute
from gather_scatter_conformance.vocab.record import Record

CASES = """\
op: Gather
cases:
  # conforms: in range
  - id: in-range
    source: test
    inputs: {data: [1, 2, 3], indices: [2, 0]}
  # a probe: np.take wraps an index past the end in mode wrap, raises by default
  - id: oob
    source: test
    dimension: oob-positive
    inputs: {data: [10, 20, 30], indices: [7]}
"""


@pytest.fixture(scope="module")
def cases(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Case]:
    path = tmp_path_factory.mktemp("c") / "gather.yaml"
    path.write_text(CASES)
    return {c.id: c for c in load_file(path, "mine/gather.yaml") if isinstance(c, Case)}


NONE: dict[str, Any] = {"framework": "numpy", "version": None, "labels": {}}  # baseline.load of no file


def _baseline(label: str) -> dict[str, Any]:
    return {"framework": "numpy", "version": "2.4.6", "labels": {item_key("mine/gather.yaml::oob", "take"): label}}


def test_a_conforming_record_passes_and_a_deviation_fails_unless_known(cases: dict[str, Case]) -> None:
    record = execute(cases["in-range"], "numpy", "take", InProcess())
    assert outcome(record, NONE, "k").kind == "pass"
    deviates = record.model_copy(update={"verdict": "deviates"})
    assert (outcome(deviates, NONE, "k").kind, outcome(deviates, NONE, "k").message) == ("fail", "failure")
    known = outcome(deviates.model_copy(update={"known_deviation": "numpy: documented"}), NONE, "k")
    assert (known.kind, known.reason) == ("xfail", "known: numpy: documented")


def test_unsupported_and_not_mapped_are_skipped(cases: dict[str, Case]) -> None:
    record = execute(cases["in-range"], "numpy", "take", InProcess())
    assert outcome(record.model_copy(update={"outcome": "unsupported", "reason": "no"}), NONE, "k").kind == "skip"
    assert outcome(record.model_copy(update={"variant": ""}), NONE, "k").reason.startswith("unsupported")


def test_a_probe_fails_when_its_label_is_not_its_baselines(cases: dict[str, Case]) -> None:
    record = execute(cases["oob"], "numpy", "take", InProcess())
    key = item_key("mine/gather.yaml::oob", "take")
    assert outcome(record, _baseline(record.label), key).kind == "pass"
    other = outcome(record, _baseline("clamp"), key)
    assert other.kind == "fail" and other.message == "failure" and other.reason


def test_a_converter_path_keeps_its_sources_behaviour_or_says_why() -> None:
    base = {"case": "mine/gather.yaml::in-range", "framework": "a~b~c", "variant": "v", "outcome": "ok",
            "verdict": "conforms", "framework_version": "1",
            "conversion": {"preservation": "preserved", "summary": "kept"}}
    assert outcome(Record.read(base), NONE, "k").kind == "pass"
    changed = Record.read({**base, "conversion": {"preservation": "changed", "summary": "error -> wrap"}})
    assert (outcome(changed, NONE, "k").kind, outcome(changed, NONE, "k").message) == ("fail", "preservation")
    assert outcome(changed.model_copy(update={"known_change": "x"}), NONE, "k").kind == "xfail"
    failed = Record.read({**base, "conversion": {"preservation": "conversion-failed", "summary": "no converter"}})
    assert outcome(failed, NONE, "k").kind == "skip"
