"""The report's severity of a behaviour label (harness.report.severity): a wrong value is red where the canonical
semantics give the input a value; a policy on an input they refuse or leave open stays a defined alternative."""

from __future__ import annotations

import pytest

from gather_scatter_conformance.harness.judge.dimensions import conforms
from gather_scatter_conformance.harness.report.severity import of_label

CASES = [
    # ONNX Gather-13: a negative index counts from the end, so a clamp to 0 (issue #39's runtime) or a zero
    # (OpenVINO's CPU plugin on Gather-1, whose own reference tests expect the count from the end) is a wrong
    # value; a refusal is loud, an alternative.
    ("Gather", "negative-indices", "clamp", "wrong"),
    ("Gather", "negative-indices", "zero", "wrong"),
    ("Gather", "negative-indices", "error", "alt"),
    ("Gather", "negative-indices", "wrap", "ok"),
    # An index out of range is an error in ONNX: what a runtime does instead is its policy.
    ("Gather", "oob-positive", "zero", "alt"),
    ("Gather", "oob-positive", "clamp", "alt"),
    ("GatherND", "oob-negative", "garbage", "unsafe"),
    # ScatterND-18 reduction add sums duplicates: keeping the last is a wrong value; without a reduction any order.
    ("ScatterND", "duplicates-add", "last-wins", "wrong"),
    ("ScatterND", "duplicates", "first-wins", "ok"),
    # An API's own default axis is its documented choice, not a value the spec gives (numpy.take flattens).
    ("Gather", "default-axis", "flatten", "alt"),
    # TensorScatter-24 says nothing of negative write indices: any policy conforms.
    ("TensorScatter", "write-index-negative", "clamp", "ok"),
]


@pytest.mark.parametrize(("op", "dimension", "label", "severity"), CASES)
def test_severity(op: str, dimension: str, label: str, severity: str) -> None:
    assert of_label(label, conforms(op, dimension, label), op, dimension) == severity
