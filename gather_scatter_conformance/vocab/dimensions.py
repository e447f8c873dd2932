"""The behaviour dimensions probe cases measure, and the labels each can get: vocabulary that case files, the
judge and the report share.

A dimension is one question the specs leave open or frameworks answer differently ("what happens to an index past
the end?"). Probe cases name their dimension (checked when a case file loads); the classifier
(harness.judge.classify) labels the observed behaviour, and harness.judge.dimensions says which label conforms. The
blog's Table 1 and Table 2 (seed 002) are rows of these dimensions.
"""

from __future__ import annotations

from gather_scatter_conformance.vocab.dtypes import INDEX_DTYPES

INDEX_LABELS = ("wrap", "error", "clamp", "zero", "fill-nan", "skip", "alias", "garbage")
DUPLICATE_LABELS = (
    "last-wins", "first-wins", "accumulate", "reduce-all", "mixed", "nondeterministic", "garbage", "error",
)
UNCOVERED_LABELS = ("keep-data", "zero", "garbage")
SUPPORT_LABELS = ("ok", "error", "wrong")  # wrong: ran, but the value differs from canonical semantics
AXIS_LABELS = ("axis-0", "flatten", "first-non-batch", "last", "required", "other")
# Labels any dimension can get from the outcome alone.
OUTCOME_LABELS = ("unsupported", "timeout")  # and crash:<SIGNAL>

# dimension -> (question it answers, kind of labels)
DIMENSIONS: dict[str, tuple[str, str]] = {
    "default-axis": ("Which axis is used when none is given?", "axis"),
    "negative-axis": ("Is a negative axis accepted (counted from the end)?", "support"),
    "batch-dims": ("Is batch_dims=1 supported?", "support"),
    "batch-dims-negative": ("Is a negative batch_dims accepted?", "support"),
    "negative-indices": ("What happens to an index in [-s, -1]?", "index"),
    "oob-positive": ("What happens to an index >= s?", "index"),
    "oob-negative": ("What happens to an index < -s?", "index"),
    "oob-alias": ("An out-of-range index whose unchecked flat offset is another valid element", "index"),
    "duplicates": ("Duplicate scatter targets without a reduction", "duplicates"),
    "duplicates-add": ("Duplicate scatter targets with reduction add", "duplicates"),
    "duplicates-mul": ("Duplicate scatter targets with reduction mul", "duplicates"),
    "duplicates-max": ("Duplicate scatter targets with reduction max", "duplicates"),
    "duplicates-min": ("Duplicate scatter targets with reduction min", "duplicates"),
    "uncovered": ("What do locations no scatter index covers hold?", "uncovered"),
    "scalar-indices": ("Are 0-d indices accepted?", "support"),
    "empty-indices": ("Are empty indices accepted?", "support"),
    "empty-data": ("Is empty data accepted (with empty indices)?", "support"),
    "rank-8": ("Is rank-8 data accepted?", "support"),
    **{f"index-dtype:{d}": (f"Are {d} indices accepted?", "support") for d in INDEX_DTYPES if d != "uint16"},
    **{
        f"data-dtype:{d}": (f"Is {d} data accepted?", "support")
        for d in ("float16", "bfloat16", "float64", "int8", "uint8", "bool", "complex64", "string")
    },
}
