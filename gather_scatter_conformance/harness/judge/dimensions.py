"""Which behaviour label conforms: the label the canonical semantics give each dimension of the vocabulary
(gather_scatter_conformance.vocab.dimensions, re-exported here), and whether a measured one agrees with it."""

from __future__ import annotations

from gather_scatter_conformance.harness.reference.constraints import CONSTRAINTS
from gather_scatter_conformance.vocab.dimensions import (
    ALSO_CONFORMING,
    AXIS_LABELS,
    CANONICAL_LABELS,
    DIMENSIONS,
    DUPLICATE_LABELS,
    INDEX_LABELS,
    NEVER_CONFORMING,
    OPEN,
    OUTCOME_LABELS,
    SUPPORT_LABELS,
    UNCOVERED_LABELS,
)

__all__ = ["AXIS_LABELS", "DIMENSIONS", "DUPLICATE_LABELS", "INDEX_LABELS", "OUTCOME_LABELS", "SUPPORT_LABELS",
           "UNCOVERED_LABELS", "canonical_label", "conforms", "kind"]

# Duplicate targets without a reduction: ONNX allows any single order of the writes, so any of these conforms.
_DUPLICATE_OK = ("last-wins", "first-wins", "accumulate", "mixed")


def canonical_label(op: str, dimension: str) -> str | None:
    """The label the canonical semantics (newest ONNX; NumPy's take for Take) give a dimension, if any; where the
    vocabulary declares one (vocab.dimensions.CANONICAL_LABELS), that one."""
    k = kind(dimension)
    if dimension in CANONICAL_LABELS:
        return CANONICAL_LABELS[dimension]
    if dimension == "negative-indices":
        return "wrap"
    if k == "index":
        return "error"
    if dimension == "duplicates":
        return None  # ONNX leaves the winner unspecified: any single-order outcome conforms
    if k == "duplicates":
        return "reduce-all"
    if k == "uncovered":
        return "keep-data"
    if k == "axis":
        return "flatten" if op == "Take" else "axis-0"
    if dimension == "batch-dims-negative" and op == "GatherND":
        return "error"  # GatherND-13: batch_dims is a non-negative integer
    return "ok"


def conforms(op: str, dimension: str, label: str) -> bool:
    """Whether a measured label agrees with the canonical semantics of that dimension.

    On a dimension the specs leave open (vocab.dimensions.OPEN) every label a policy explains conforms, and only
    a memory-unsafe label (``garbage``, ``alias``, ``alias-write``, a hang or a crash) or ``wrong`` (a value no policy
    gives) does not: the probe measures the policy, it does not judge it. A label of repeated runs that disagreed
    (``a|b``) conforms when every part does. A label of vocab.dimensions.ALSO_CONFORMING conforms beside the
    canonical one (``zero-fill`` on ``uncovered``).

    An index type outside the operator's type constraints (``index-dtype:int8`` for Gather) may be refused or
    computed: both conform (gather_scatter_conformance.harness.reference.constraints), only a wrong value does not.
    """
    if "|" in label:
        return all(conforms(op, dimension, part) for part in label.split("|"))
    if dimension in OPEN:  # the spec does not decide: any behaviour a policy explains conforms
        return label not in NEVER_CONFORMING and label != "wrong" and not label.startswith("crash:")
    if label in ALSO_CONFORMING.get(dimension, ()):  # zero-fill: a data-less API's zeros on zero data
        return True
    want = canonical_label(op, dimension)
    if want is None:  # duplicate targets without a reduction: any single order is allowed
        return label in _DUPLICATE_OK
    if dimension.startswith("index-dtype:") and op in CONSTRAINTS:
        if dimension.split(":", 1)[1] not in CONSTRAINTS[op].index:
            return label in ("ok", "error")
    return label == want


def kind(dimension: str) -> str:
    """The kind of labels a dimension takes: index, duplicates, uncovered, support or axis."""
    return DIMENSIONS[dimension][1]
