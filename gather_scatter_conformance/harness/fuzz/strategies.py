"""Hypothesis strategies for random valid cases of each operator, and the seeded generation of N of them.

A generated case is valid for the canonical semantics whatever its index values: shapes, axes, batch_dims and
reductions always fit the operator, so the reference engine gives a value, or an error only for out-of-range
index values. Draws are ordered simplest-first (float32 before other dtypes, in-range indices before other
patterns, small ranks and dims), so that Hypothesis's shrinker moves a finding towards a readable case.

Deliberately left out (see docs/fuzzing.md): empty tensors (OpenVINO dies of SIGFPE; probes cover them), strings and
complex data, index dtypes other than int32/int64, GatherElements/ScatterElements indices smaller than data
outside the axis (an extension of ONNX that the reference engine documents), negative batch_dims.
"""

from __future__ import annotations

import hashlib
import math
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from hypothesis import HealthCheck, Phase, Verbosity, given, seed, settings
from hypothesis import strategies as st

from gather_scatter_conformance.vocab import dtypes
from gather_scatter_conformance.vocab.ops import with_defaults

# Simplest first: the shrinker moves towards the start of each list.
DATA_DTYPES = ("float32", "int64", "int32", "float64", "float16", "bfloat16", "bool")
INDEX_DTYPES = ("int64", "int32")
REDUCTIONS = ("none", "add", "mul", "max", "min")
TAKE_MODES = ("raise", "wrap", "clip", "fill")
# One pattern in five puts an index out of range; the rest stay in range (with negatives, boundaries or repeats).
INDEX_PATTERNS = ("in-range", "negatives", "boundary", "duplicates", "out-of-range")
SPECIAL_FLOATS = (math.nan, math.inf, -math.inf, -0.0, 0.5)

MAX_DATA = 64  # elements of data
MAX_INDEX = 24  # index entries (elements for Gather/Take/*Elements, tuples for the ND operators)
MAX_RANK = 6


@dataclass(frozen=True)
class GenCase:
    """One generated case: operator, input arrays (names per vocab.ops.INPUTS) and attributes."""

    op: str
    inputs: dict[str, np.ndarray] = field(hash=False, compare=False)
    attrs: dict[str, Any] = field(hash=False, compare=False)
    pattern: str = "in-range"

    @property
    def key(self) -> str:
        """A digest of the case's content: equal for equal cases, used for memoising and as the case id."""
        h = hashlib.sha256(self.op.encode())
        h.update(repr(sorted(self.attrs.items())).encode())
        for name in sorted(self.inputs):
            arr = self.inputs[name]
            h.update(f"{name}:{dtypes.name_of(arr.dtype)}:{arr.shape}".encode())
            h.update(np.ascontiguousarray(arr).tobytes())
        return h.hexdigest()[:16]

    def size(self) -> int:
        """Total number of input elements (a rough measure of how small a case is)."""
        return sum(int(a.size) for a in self.inputs.values())


def _dims(draw: st.DrawFn, rank: int, budget: int, low: int = 1, high: int = 4) -> tuple[int, ...]:
    """``rank`` dims in [low, high] whose product stays within ``budget`` (later dims shrink to fit)."""
    out: list[int] = []
    for _ in range(rank):
        room = max(low, min(high, budget // max(1, math.prod(out))))
        out.append(draw(st.integers(low, room)))
    return tuple(out)


@dataclass(frozen=True)
class _Head:
    """Choices drawn before any shape, so that shrinking a shape never shifts them: the special float values
    and the forced out-of-range index are placed at ``position % size`` and survive a shrinking tensor."""

    dtype: str
    index_dtype: str
    pattern: str
    specials: tuple[tuple[int, float], ...]  # (position, value) overrides of data (floats only)
    update_specials: tuple[tuple[int, float], ...]  # the same for scatter updates
    oob: tuple[int, int, int]  # (entry, tuple component, which of s, s+1, -s-1, -s-2)


def _specials(draw: st.DrawFn, dtype: str) -> tuple[tuple[int, float], ...]:
    if not dtypes.is_float(dtype) or not draw(st.sampled_from((False, False, False, True))):
        return ()
    pair = st.tuples(st.integers(0, MAX_DATA - 1), st.sampled_from(SPECIAL_FLOATS))
    return tuple(draw(st.lists(pair, min_size=1, max_size=3)))


def _head(draw: st.DrawFn) -> _Head:
    pick = st.sampled_from
    dtype, idt, pattern = draw(pick(DATA_DTYPES)), draw(pick(INDEX_DTYPES)), draw(pick(INDEX_PATTERNS))
    oob = (0, 0, 0)
    if pattern == "out-of-range":
        oob = (draw(st.integers(0, MAX_INDEX - 1)), draw(st.integers(0, MAX_RANK - 1)), draw(st.integers(0, 3)))
    return _Head(dtype, idt, pattern, _specials(draw, dtype), _specials(draw, dtype), oob)


def _values(draw: st.DrawFn, n: int, dtype: str, specials: tuple[tuple[int, float], ...] = (), *,
            negate: bool = False, small: bool = False) -> np.ndarray:
    """``n`` values of ``dtype``: distinct (1..n) when ``arange`` is drawn, else small random ones; then the
    special floats at their positions (mod n)."""
    kind = draw(st.sampled_from(("arange", "random")))
    if dtype == "bool":
        vals = [i % 2 == 1 for i in range(n)] if kind == "arange" else draw(st.lists(st.booleans(), min_size=n,
                                                                                   max_size=n))
        return np.array(vals, dtype=bool)
    if small:  # mul reductions: products of many updates must stay exact and inside every dtype's range
        vals = draw(st.lists(st.integers(-2, 2), min_size=n, max_size=n))
    elif kind == "arange":
        vals = [-(i + 1) if negate else i + 1 for i in range(n)]
    else:
        vals = draw(st.lists(st.integers(-9, 9), min_size=n, max_size=n))
    out = np.array(vals, dtype=np.float64)
    for pos, value in specials:
        out[pos % n] = value
    return out.astype(dtypes.to_numpy(dtype))


def _index_values(draw: st.DrawFn, extents: list[int], count: int, head: _Head) -> np.ndarray:
    """``count`` index tuples (one column per extent) following the pattern; shape (count, len(extents))."""
    cols = []
    for s in extents:
        if head.pattern == "in-range":
            el = st.integers(0, s - 1)
        elif head.pattern == "negatives":
            el = st.integers(-s, s - 1)
        elif head.pattern == "boundary":
            el = st.sampled_from((0, s - 1, -s, -1))
        elif head.pattern == "duplicates":
            el = st.integers(0, min(1, s - 1))
        else:
            el = st.integers(-s - 2, s + 1)
        cols.append(draw(st.lists(el, min_size=count, max_size=count)))
    out = np.array(cols, dtype=np.int64).T.reshape(count, len(extents))
    if head.pattern == "out-of-range" and count:
        # At least one entry is out of range, so every case of this pattern exercises the canonical error.
        row, col = head.oob[0] % count, head.oob[1] % len(extents)
        s = extents[col]
        out[row, col] = (s, s + 1, -s - 1, -s - 2)[head.oob[2]]
    return out


def _reduction(draw: st.DrawFn, dtype: str) -> str:
    allowed = ("none", "max", "min") if dtype == "bool" else REDUCTIONS
    return draw(st.sampled_from(allowed))


def _start(draw: st.DrawFn) -> tuple[_Head, int, tuple[int, ...]]:
    """Every strategy's first draws, in this order (the order fixes what a seed generates): head, rank, shape."""
    h = _head(draw)
    rank = draw(st.integers(1, MAX_RANK))
    return h, rank, _dims(draw, rank, MAX_DATA)


def _data_and_indices(draw: st.DrawFn, h: _Head, shape: tuple[int, ...], idx: np.ndarray) -> dict[str, np.ndarray]:
    """The data input, drawn after the indices, and the indices in the head's index dtype."""
    data = _values(draw, math.prod(shape), h.dtype, h.specials).reshape(shape)
    return {"data": data, "indices": idx.astype(h.index_dtype)}


@st.composite
def _gather(draw: st.DrawFn) -> GenCase:
    h, rank, shape = _start(draw)
    axis = draw(st.integers(-rank, rank - 1))
    a = axis % rank
    b = min(a, draw(st.sampled_from((0, 0, 0, 1, 2))))  # ONNX has no batch_dims: most cases leave it 0
    extra = _dims(draw, draw(st.integers(0 if b == 0 else 1, 2)), MAX_INDEX // max(1, math.prod(shape[:b])), 1, 3)
    ishape = shape[:b] + extra
    idx = _index_values(draw, [shape[a]], math.prod(ishape), h).reshape(ishape)
    inputs = _data_and_indices(draw, h, shape, idx)
    return GenCase("Gather", inputs, {"axis": axis, "batch_dims": b}, h.pattern)


@st.composite
def _take(draw: st.DrawFn) -> GenCase:
    h, rank, shape = _start(draw)
    axis = draw(st.one_of(st.none(), st.integers(-rank, rank - 1)))
    mode = draw(st.sampled_from(TAKE_MODES))
    ishape = _dims(draw, draw(st.integers(0, 3)), MAX_INDEX, 1, 3)
    extent = math.prod(shape) if axis is None else shape[axis % rank]
    idx = _index_values(draw, [extent], math.prod(ishape), h).reshape(ishape)
    inputs = _data_and_indices(draw, h, shape, idx)
    return GenCase("Take", inputs, {"axis": axis, "mode": mode}, h.pattern)


@st.composite
def _elements(draw: st.DrawFn, op: str) -> GenCase:
    h, rank, shape = _start(draw)
    axis = draw(st.integers(-rank, rank - 1))
    a = axis % rank
    rest = math.prod(shape) // shape[a]
    ishape = shape[:a] + (draw(st.integers(1, max(1, min(4, MAX_INDEX // rest)))),) + shape[a + 1 :]
    idx = _index_values(draw, [shape[a]], math.prod(ishape), h).reshape(ishape)
    inputs = _data_and_indices(draw, h, shape, idx)
    attrs: dict[str, Any] = {"axis": axis}
    if op == "ScatterElements":
        attrs["reduction"] = _reduction(draw, h.dtype)
        inputs["updates"] = _values(draw, math.prod(ishape), h.dtype, h.update_specials, negate=True,
                                    small=attrs["reduction"] == "mul").reshape(ishape)
    return GenCase(op, inputs, attrs, h.pattern)


@st.composite
def _nd(draw: st.DrawFn, op: str) -> GenCase:
    h, rank, shape = _start(draw)
    b = min(rank - 1, draw(st.sampled_from((0, 0, 0, 1, 2)))) if op == "GatherND" else 0
    k = draw(st.integers(1, rank - b))
    batch = math.prod(shape[:b])
    extra = _dims(draw, draw(st.integers(0, 2)), max(1, MAX_INDEX // batch), 1, 3)
    tuples = batch * math.prod(extra)
    idx = _index_values(draw, list(shape[b : b + k]), tuples, h).reshape(shape[:b] + extra + (k,))
    inputs = _data_and_indices(draw, h, shape, idx)
    attrs: dict[str, Any] = {"batch_dims": b} if op == "GatherND" else {}
    if op == "ScatterND":
        attrs["reduction"] = _reduction(draw, h.dtype)
        ushape = extra + shape[k:]
        inputs["updates"] = _values(draw, math.prod(ushape), h.dtype, h.update_specials, negate=True,
                                    small=attrs["reduction"] == "mul").reshape(ushape)
    return GenCase(op, inputs, attrs, h.pattern)


# Operator -> its strategy of valid random cases. An operator of the vocabulary without one is not fuzzed (``gsc
# fuzz --op all`` leaves it out, naming it; asking for it is a usage error) until a strategy is written here.
STRATEGIES: dict[str, Callable[[], st.SearchStrategy[GenCase]]] = {
    "Gather": lambda: _gather(),
    "Take": lambda: _take(),
    "GatherElements": lambda: _elements("GatherElements"),
    "ScatterElements": lambda: _elements("ScatterElements"),
    "GatherND": lambda: _nd("GatherND"),
    "ScatterND": lambda: _nd("ScatterND"),
}


def case_strategy(op: str) -> st.SearchStrategy[GenCase]:
    """The strategy of valid random cases of ``op`` (one of :data:`STRATEGIES`); ValueError for any other."""
    if op not in STRATEGIES:
        raise ValueError(f"no fuzzing strategy for operator {op!r} (fuzzed: {', '.join(STRATEGIES)})")
    return STRATEGIES[op]()


def fuzz_settings(n: int, shrink: bool = False) -> settings:
    """Settings shared by generation and shrinking: no database, no deadline, no health checks, quiet.

    Shrinking replays generation with the same settings and seed, so the same cases come in the same order
    up to the first one that shows the disagreement being shrunk.
    """
    return settings(
        max_examples=n,
        database=None,
        deadline=None,
        derandomize=False,
        phases=[Phase.generate, Phase.shrink] if shrink else [Phase.generate],
        suppress_health_check=list(HealthCheck),
        report_multiple_bugs=False,
        verbosity=Verbosity.quiet,
        print_blob=False,
    )


def examples_for(n: int) -> int:
    """Hypothesis examples to draw for ``n`` distinct cases (a few draws repeat an earlier case)."""
    return n + n // 4 + 5


def generate(op: str, n: int, seed_value: int) -> list[GenCase]:
    """The first ``n`` distinct cases Hypothesis generates for ``op`` with ``seed_value``, in order.

    Deterministic: the same (op, n, seed) gives the same list (Hypothesis is seeded and has no database).
    Fewer than ``n`` only if Hypothesis runs out of new examples.
    """
    out: dict[str, GenCase] = {}

    @seed(seed_value)
    @fuzz_settings(examples_for(n))
    @given(case_strategy(op))
    def collect(case: GenCase) -> None:
        if len(out) < n:
            full = with_attrs_defaults(case)
            out.setdefault(full.key, full)

    collect()
    return list(out.values())


def with_attrs_defaults(case: GenCase) -> GenCase:
    """The same case with every attribute default filled in (what adapters and the reference engine see)."""
    return GenCase(case.op, case.inputs, with_defaults(case.op, case.attrs), case.pattern)
