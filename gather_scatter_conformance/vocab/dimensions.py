"""The behaviour dimensions probe cases measure, and the labels each can get: vocabulary that case files, the
judge and the report share.

A dimension is one question the specs leave open or frameworks answer differently ("what happens to an index past
the end?"). Probe cases name their dimension (checked when a case file loads); the classifier
(harness.judge.classify) labels the observed behaviour, and harness.judge.dimensions says which label conforms. The
blog's Table 1 and Table 2 (seed 002) are rows of these dimensions.
"""

from __future__ import annotations

from gather_scatter_conformance.vocab.dtypes import INDEX_DTYPES

# Every probe case is tagged with its data input's dtype (``data:int32``; the case loader derives it), so the
# behaviour table can show a label per data dtype where they differ (issue #40).
DATA_TAG = "data:"
DATA_DTYPE = "data-dtype:"  # the dimensions asking whether an API accepts a data dtype: data-dtype:int32
# A case's copy with another data dtype (a case's ``data_dtypes``) carries this tag. It is no focus case: a variant
# that compiles per shape (torch.compile, jit, a converter path) runs the case it copies, and the copies only with
# --slow-variants all (issue #38: the copies on every compiled variant were a quarter of a run's records and half
# its call time).
DTYPE_COPY_TAG = "dtype-copy"

# shift: a TensorScatter block moved whole to the nearest start where it fits (XLA's dynamic_update_slice).
# alias: a gather read another valid element (the unchecked flat offset); alias-write: a scatter wrote one (the
# neighbour's element changed). wrong: one value, the same in every fresh process, that no policy gives.
INDEX_LABELS = (
    "wrap", "error", "clamp", "zero", "fill-nan", "skip", "shift", "alias", "alias-write", "wrong", "garbage",
)
DUPLICATE_LABELS = (
    "last-wins", "first-wins", "accumulate", "reduce-all", "mixed", "nondeterministic", "wrong", "garbage", "error",
)
# zero-fill: an API without a data input (tf.scatter_nd, mx.nd.scatter_nd: adapters' NO_DATA_INPUT) scatters into
# zeros it makes itself. It runs only cases whose data is all zeros, where keep-data and zero give the same output:
# the label says why the places are 0 (there is no data to keep), which "Same as data" would hide.
UNCOVERED_LABELS = ("keep-data", "zero", "zero-fill", "wrong", "garbage")
SUPPORT_LABELS = ("ok", "error", "wrong")  # wrong: ran, but the value differs from canonical semantics
AXIS_LABELS = ("axis-0", "flatten", "first-non-batch", "last", "required", "other")
# What a reader sees for each label (the report's cells); a label without words reads capitalised.
LABEL_WORDS = {
    "wrap": "Wrap (supported)", "error": "Error", "zero": "Zero", "clamp": "Clamp", "fill-nan": "Fill (NaN/min)",
    "skip": "Dropped", "shift": "Block moved to fit", "alias": "Reads neighbour",
    "alias-write": "Writes neighbour", "garbage": "Garbage (varies between runs)",
    "last-wins": "Last wins", "first-wins": "First wins", "accumulate": "Accumulate", "reduce-all": "Reduces all",
    "mixed": "Mixed order",
    "nondeterministic": "Non-deterministic", "keep-data": "Same as data", "ok": "Supported",
    "zero-fill": "Zeros (no data input)",
    "wrong": "Wrong result", "axis-0": "Outermost axis", "flatten": "Flattened",
    "first-non-batch": "First non-batch axis", "last": "Innermost axis", "required": "Required (no default)",
    "other": "Other axis", "unsupported": "Not expressible", "timeout": "Timeout (hang)",
    "unspecified": "Unspecified", "undefined": "Undefined",
}

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
        f"{DATA_DTYPE}{d}": (f"Is {d} data accepted?", "support")
        for d in ("float16", "bfloat16", "float64", "int8", "uint8", "bool", "complex64", "string")
    },
    # TensorScatter-24 (the KV-cache write). Its index dimensions take the index labels, read for a block of
    # writes: `wrap` counts a negative position from the end / continues at 0 past the end (circular); `skip` drops
    # the positions outside the cache and writes the rest (a partial write); `clamp` clips each position into
    # [0, s-1].
    "write-index-negative": ("What happens to a negative write index in linear mode?", "index"),
    "write-index-overflow": (
        "What happens in linear mode when write_index + sequence_length passes max_sequence_length?", "index"),
    "circular-wrap": ("Does circular mode continue at position 0 past max_sequence_length?", "index"),
    "circular-negative": ("What does circular mode do with a negative write index?", "index"),
    "empty-update": ("Is an update with sequence_length 0 accepted (the cache unchanged)?", "support"),
    "sequence-axis-0": ("Is axis 0 (the batch axis, which TensorScatter-24 forbids) refused?", "support"),
    "sequence-axis-last": ("Is axis -1 (the sequence axis last) supported?", "support"),
}

# Dimensions whose canonical label is not the one their kind implies (an index dimension's is `error`, a support
# dimension's `ok`); for an open dimension (OPEN, below) the label of the reference engine's canonical policy
# (docs/reference-engine.md says why each).
CANONICAL_LABELS: dict[str, str] = {
    "write-index-negative": "wrap",  # policy negative=wrap: counted from the end, as the pseudocode's Python does
    "write-index-overflow": "error",  # policy out_of_bounds=error: the text's requirement, the pseudocode's IndexError
    "circular-negative": "wrap",  # policy negative=wrap: floor modulo, the pseudocode's Python %
    "circular-wrap": "wrap",  # TensorScatter-24: "the update index is modulo max_sequence_length"
    "sequence-axis-0": "error",  # TensorScatter-24: axis "cannot be 0 (the batch dimension)"
}

# Labels that conform besides a dimension's canonical one. zero-fill: a data-less API runs only cases with all-zero
# data, and there its zeros are exactly the data ONNX keeps (the record's verdict is conforms); on any other data it
# is unsupported, not wrong.
ALSO_CONFORMING: dict[str, tuple[str, ...]] = {"uncovered": ("zero-fill",)}

# Dimensions the specs leave open: dimension -> what the text does not decide. Their probes measure a policy and
# never make a verdict of it: every label but a crash, a hang or garbage conforms. The reference engine's canonical
# policy still gives their canonical label (what the report shows as canonical).
OPEN: dict[str, str] = {
    "write-index-negative": "TensorScatter-24 says nothing of negative write_indices",
    "write-index-overflow": "TensorScatter-24 linear mode 'requires' write_indices + sequence_length <= "
                            "max_sequence_length and says nothing of what happens otherwise",
    "circular-negative": "TensorScatter-24 takes the write index 'modulo max_sequence_length' without saying "
                         "which modulo for negative values",
}
# Labels that never conform, open dimension or not: no policy explains them.
NEVER_CONFORMING = ("garbage", "alias", "alias-write", "timeout")

# The memory-unsafe class: labels that show an access the framework does not own (a value that changes from one
# fresh process to the next, a neighbour's element read or written through an unchecked offset), a crash, or a
# hang. Which label of the class a cell gets may depend on what lies in memory, so baselines and the nightly
# compare the class and the labels seen, not one label (harness.judge.baseline).
MEMORY_UNSAFE = "memory-unsafe"
MEMORY_UNSAFE_LABELS = ("garbage", "alias", "alias-write", "timeout")  # and crash:<SIGNAL>


def is_memory_unsafe(label: str | None) -> bool:
    """True when some part of ``label`` (``a|b`` when runs disagreed) is in the memory-unsafe class."""
    return any(part in MEMORY_UNSAFE_LABELS or part.startswith("crash:") for part in (label or "").split("|"))


# The orders a scatter may write duplicate targets in. A cell seen writing them in no fixed order
# (``nondeterministic``: outputs differed between calls) shows any of them on a given run, one order or a mix (Keras's
# torch backend: nondeterministic 4/5, mixed 1/5): its baseline compares this family, as a memory-unsafe cell's
# compares the class.
ORDER_LABELS = ("last-wins", "first-wins", "mixed", "nondeterministic")


# The operators whose writes can meet at one place (TensorScatter's per-batch block cannot): their adapters' thread
# twins, where the system exposes its thread count.
DUPLICATE_TARGET_OPS = ("ScatterElements", "ScatterND")


def thread_sensitive(dimension: str | None) -> bool:
    """Whether a probe of ``dimension`` may answer differently with another intra-op thread count: the duplicate
    scatter targets (written in an order a parallel kernel may not fix). Thread twins (vocab.variants.THREAD_MODES)
    run on these probes only."""
    return dimension in DIMENSIONS and DIMENSIONS[dimension][1] == "duplicates"


def same_unordered(known: str | None, observed: str | None) -> bool:
    """True when ``known`` (a baseline's label) says the cell wrote duplicates in no fixed order and every part of
    ``observed`` is an order of :data:`ORDER_LABELS`."""
    parts = (observed or "").split("|")
    return "nondeterministic" in (known or "").split("|") and all(p in ORDER_LABELS for p in parts)


def label_class(label: str | None) -> str | None:
    """The class a baseline compares: ``memory-unsafe`` for a label of that class (whichever parts it has), else the
    label itself."""
    return MEMORY_UNSAFE if is_memory_unsafe(label) else label


def words(label: str | None, dimension: str | None = None) -> str:
    """Short blog-style text for a label, as the report's cells and upstream issues show it (``a|b``, different
    labels across probes, reads ``A / B``; ``error`` of a support dimension reads "Not supported (error)")."""
    if not label:
        return ""
    out = []
    for part in label.split("|"):
        if part.startswith("crash:"):
            out.append(f"Crash ({part.split(':', 1)[1]})")
        elif part == "error" and dimension in DIMENSIONS and DIMENSIONS[dimension][1] == "support":
            out.append("Not supported (error)")
        else:
            out.append(LABEL_WORDS.get(part, part.capitalize()))
    return " / ".join(out)
