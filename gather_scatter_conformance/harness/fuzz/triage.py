"""Is a disagreement with the reference engine already-labelled behaviour, or a finding?

A generated case *touches* behaviour dimensions (harness/judge/dimensions.py): negative or out-of-range index values,
duplicate or uncovered scatter targets, a negative axis, batch_dims, scalar indices, a data or index dtype. The
probe cases measured each framework API's label for every dimension and the baselines record them
(baselines/<framework>.yaml). A deviation is *labelled* when those labels predict it:

- an error, a crash or a timeout, when some touched dimension's baseline label is exactly that;
- a value, when the reference engine under a policy consistent with every touched index dimension's label
  reproduces it (e.g. TensorFlow's XLA gather: negative-indices ``clamp`` -> Policy(clamp, negative=oob)), or
  when a touched dimension's label says the value is unpredictable (``garbage``, ``alias``) or wrong
  (``wrong`` for a dtype the API computes in another precision).

Everything else is a finding, with a *kind* (wrong-value, wrong-shape, wrong-dtype, value-not-error,
raised:<type>, crash:<signal>, timeout) by which findings are deduplicated.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass
from functools import cache
from typing import TYPE_CHECKING, Any

import numpy as np

from gather_scatter_conformance import resources
from gather_scatter_conformance.harness.cases.load import Case, ExpectedError, load_file
from gather_scatter_conformance.harness.fuzz.strategies import GenCase
from gather_scatter_conformance.harness.judge import baseline
from gather_scatter_conformance.harness.judge.dimensions import DIMENSIONS, kind
from gather_scatter_conformance.harness.judge.verdict import tolerance
from gather_scatter_conformance.harness.reference import AllowedOutputs, Policy, compute
from gather_scatter_conformance.harness.reference.compare import compare
from gather_scatter_conformance.harness.reference.policy import NEGATIVE, OUT_OF_BOUNDS
from gather_scatter_conformance.vocab import dtypes
from gather_scatter_conformance.vocab.ops import FILE_NAMES, SCATTER_OPS

if TYPE_CHECKING:
    from gather_scatter_conformance.vocab.record import Record

INDEX_DIMS = ("negative-indices", "oob-positive", "oob-negative")
UNPREDICTABLE = {"garbage", "alias", "nondeterministic"}
_OOB_LABEL = {"error": "error", "zero": "zero", "clamp": "clamp", "wrap": "wrap", "fill": "fill-nan", "skip": "skip"}
_DUP_POLICY = {"last-wins": "last", "first-wins": "first", "accumulate": "accumulate"}


@dataclass(frozen=True)
class Verdict:
    """How one API's result on one case is judged: status agree | n/a | labelled | finding, and why."""

    status: str
    kind: str = ""
    note: str = ""


@cache
def _probes(op: str) -> tuple[tuple[str, str], ...]:
    """(probe nodeid, dimension) for the shipped probes whose labels apply to generated cases (explicit
    attributes)."""
    path = resources.cases_dir() / "probes" / FILE_NAMES[op]
    out = []
    for entry in load_file(path, f"cases/probes/{FILE_NAMES[op]}"):
        if not isinstance(entry, Case) or entry.spec.dimension is None:
            continue
        omit = set(entry.spec.omit)
        # Generated cases always pass axis and mode; probes that leave them to the framework measure something else.
        if "axis" in omit or ("mode" in omit and entry.spec.dimension in (*INDEX_DIMS, "oob-alias")):
            continue
        out.append((entry.nodeid, entry.spec.dimension))
    return tuple(out)


@cache
def _baseline(framework: str) -> dict[str, str]:
    return baseline.load(resources.baselines_dir(), framework)["labels"]


@cache
def labels(op: str, framework: str, variant: str) -> dict[str, frozenset[str]]:
    """dimension -> the baseline labels of ``framework``:``variant`` on ``op``'s probes of that dimension (the
    shipped baselines, or ``$GSC_BASELINES``)."""
    known = _baseline(framework)
    out: dict[str, set[str]] = {}
    for nodeid, dim in _probes(op):
        lab = known.get(baseline.item_key(nodeid, variant))
        if lab is not None:
            out.setdefault(dim, set()).add(lab)
    return {d: frozenset(v) for d, v in out.items()}


def _extents(gc: GenCase) -> list[int]:
    data, a = gc.inputs["data"], gc.attrs
    if gc.op in ("GatherND", "ScatterND"):
        b, k = int(a.get("batch_dims", 0)), gc.inputs["indices"].shape[-1]
        return list(data.shape[b : b + k])
    if gc.op == "Take" and a["axis"] is None:
        return [int(data.size)]
    return [data.shape[int(a["axis"]) % data.ndim]]


def index_features(gc: GenCase) -> set[str]:
    """Which index dimensions the index values touch: negative-indices, oob-positive, oob-negative."""
    idx = gc.inputs["indices"].astype(np.int64)
    extents = _extents(gc)
    cols = idx.reshape(-1, len(extents)) if gc.op in ("GatherND", "ScatterND") else idx.reshape(-1, 1)
    s = np.asarray(extents, dtype=np.int64)
    out = set()
    if ((cols < 0) & (cols >= -s)).any():
        out.add("negative-indices")
    if (cols >= s).any():
        out.add("oob-positive")
    if (cols < -s).any():
        out.add("oob-negative")
    return out


def _hits(gc: GenCase) -> np.ndarray | None:
    """How many in-range updates land on each data element of a scatter (out-of-range ones dropped)."""
    ones = {
        "data": np.zeros(gc.inputs["data"].shape, np.float64),
        "indices": gc.inputs["indices"],
        "updates": np.ones(gc.inputs["updates"].shape, np.float64),
    }
    try:
        return np.asarray(compute(gc.op, ones, {**gc.attrs, "reduction": "add"}, Policy(out_of_bounds="skip")))
    except ValueError:
        return None


def touched(gc: GenCase) -> list[str]:
    """The behaviour dimensions (names in harness/judge/dimensions.py) this case exercises, in a fixed order."""
    a, data, idx = gc.attrs, gc.inputs["data"], gc.inputs["indices"]
    out: list[str] = []
    if gc.op != "Take" or a.get("mode") == "raise":  # Take's other modes define every index value
        out += [d for d in INDEX_DIMS if d in index_features(gc)]
    if gc.op in SCATTER_OPS:
        hits = _hits(gc)
        if hits is not None and hits.size and (hits > 1).any():
            red = a.get("reduction", "none")
            out.append("duplicates" if red == "none" else f"duplicates-{red}")
        if hits is not None and hits.size and (hits == 0).any():
            out.append("uncovered")
    if a.get("axis") is not None and int(a.get("axis", 0)) < 0:
        out.append("negative-axis")
    if int(a.get("batch_dims", 0) or 0) > 0:
        out.append("batch-dims")
    if idx.ndim == 0:
        out.append("scalar-indices")
    for d in (f"data-dtype:{dtypes.name_of(data.dtype)}", f"index-dtype:{dtypes.name_of(idx.dtype)}"):
        if d in DIMENSIONS:
            out.append(d)
    return out


def _as_gather(gc: GenCase) -> tuple[str, dict[str, np.ndarray], dict[str, Any]]:
    """Take in mode raise is Gather (on the flattened data when axis is None): policies apply to that form.
    Take's other modes define every index value themselves, so they stay Take."""
    if gc.op != "Take" or gc.attrs.get("mode") != "raise":
        return gc.op, gc.inputs, gc.attrs
    data, axis = gc.inputs["data"], gc.attrs["axis"]
    if axis is None:
        data, axis = data.reshape(-1), 0
    return "Gather", {"data": data, "indices": gc.inputs["indices"]}, {"axis": axis, "batch_dims": 0}


def _candidates(gc: GenCase, have: dict[str, frozenset[str]], dims: list[str]) -> list[Any]:
    """Reference outputs under every policy consistent with the baseline labels of the touched dimensions."""
    op, inputs, attrs = _as_gather(gc)
    index_dims = [d for d in dims if d in INDEX_DIMS]
    dup = ["any-of"] + sorted({_DUP_POLICY[x] for x in have.get("duplicates", ()) if x in _DUP_POLICY})
    variants = [inputs]
    if "uncovered" in dims and {"zero", "zero-fill"} & set(have.get("uncovered", ())):  # uncovered places are 0
        variants.append({**inputs, "data": np.zeros_like(inputs["data"])})
    out = []
    for neg, oob, dups, inp in itertools.product(NEGATIVE, OUT_OF_BOUNDS, dup, variants):
        policy = Policy(out_of_bounds=oob, negative=neg, duplicates=dups)
        if not policy.applies_to(op):
            continue
        implied = {
            "negative-indices": neg if neg in ("wrap", "error") else _OOB_LABEL[oob],
            "oob-positive": _OOB_LABEL[oob],
            "oob-negative": "error" if neg == "error" else _OOB_LABEL[oob],
        }
        if index_dims and not all(implied[d] in have.get(d, ()) for d in index_dims):
            continue
        if not index_dims and (neg, oob) != ("wrap", "error"):
            continue  # no index dimension touched: the index policy cannot change the output
        try:
            out.append(compute(op, inp, attrs, policy))
        except ValueError:
            continue
    return out


def _reproduces(case: Case, observed: np.ndarray, candidate: Any) -> bool:
    atol, rtol = tolerance(case, candidate) if isinstance(candidate, np.ndarray) else (0.0, 0.0)
    try:
        return compare(observed, candidate, atol=atol, rtol=rtol).equal
    except (TypeError, ValueError):
        return False


def _value_kind(record: Record, expected: Any) -> str:
    if isinstance(expected, ExpectedError):
        return "value-not-error"
    reason = record.reason
    if reason.startswith("shape"):
        return "wrong-shape"
    if reason.startswith("dtype"):
        return "wrong-dtype"
    # NaN/inf handling is its own kind, so it neither hides nor is hidden by a wrong index on finite values.
    nonfinite = any(
        isinstance(m.get(k), float) and not np.isfinite(m[k])
        for m in record.first_mismatches or () for k in ("expected", "observed")
    )
    return "wrong-value:nonfinite" if nonfinite else "wrong-value"


def describe_labels(have: dict[str, frozenset[str]], dims: list[str]) -> str:
    """``baseline negative-indices=error, data-dtype:float16=ok``: the labels that judged a result."""
    parts = [f"{d}={'|'.join(sorted(have[d])) if d in have else '(no baseline)'}" for d in dims]
    return "baseline " + ", ".join(parts) if parts else "no behaviour dimension touched"


def assess(gc: GenCase, case: Case, record: Record, observed: np.ndarray | None,
           have: dict[str, frozenset[str]]) -> Verdict:
    """Judge one API's record on ``gc`` against the reference and the API's baseline labels ``have``."""
    if record.verdict == "conforms":
        return Verdict("agree")
    outcome = record.outcome
    if outcome in ("unsupported", "harness-error"):  # the API cannot express it, or the harness failed: no result
        return Verdict("n/a", note=record.reason)
    dims = touched(gc)
    context = describe_labels(have, dims)
    if outcome in ("crash", "timeout", "error"):
        lab = {"crash": f"crash:{record.signal or 'exit'}", "timeout": "timeout"}.get(outcome, "error")
        hit = [d for d in dims if lab in have.get(d, ())]
        if hit:
            return Verdict("labelled", note=f"{hit[0]}: {lab}")
        short = (record.error_type or "").rsplit(".", 1)[-1]
        return Verdict("finding", lab if outcome != "error" else f"raised:{short}", context)
    assert observed is not None
    risky = [d for d in dims if d in INDEX_DIMS]
    if risky and any(d.startswith("oob") for d in risky):
        risky.append("oob-alias")  # an unchecked out-of-range read is what the oob-alias probe labels
    for d in risky + [d for d in dims if d.startswith("duplicates")]:
        labs = have.get(d, frozenset())
        # A probe that crashed says the kernel does not check these indices: a value it returns is as arbitrary
        # as garbage (MXNet's np.setitem writes a negative index somewhere, or dies).
        if labs & UNPREDICTABLE or (d in risky and any(x.startswith("crash") for x in labs)):
            return Verdict("labelled", note=f"{d}: {'|'.join(sorted(labs))}")
    wrong = [d for d in dims if kind(d) == "support" and "wrong" in have.get(d, ())]
    if wrong:
        return Verdict("labelled", note=f"{wrong[0]}: wrong")
    for candidate in _candidates(gc, have, dims):
        if _reproduces(case, observed, candidate):
            return Verdict("labelled", note=context)
    return Verdict("finding", _value_kind(record, case.reference()), context)


def is_unsafe(gc: GenCase, have: dict[str, frozenset[str]]) -> bool:
    """True when the API may not check this case's index values (label alias/garbage/crash or none measured),
    so running it could corrupt or kill the process it runs in."""
    feats = index_features(gc) if gc.op != "Take" or gc.attrs.get("mode") == "raise" else set()
    if gc.op not in SCATTER_OPS:
        feats.discard("negative-indices")
    risky = [d for d in INDEX_DIMS if d in feats]
    if any(d.startswith("oob") for d in risky):
        risky.append("oob-alias")
    for d in risky:
        labs = have.get(d)
        if d != "oob-alias" and not labs:
            return True
        if labs and any(x in UNPREDICTABLE or x.startswith("crash") for x in labs):
            return True
    return False


def allowed_example(expected: Any) -> Any:
    """The reference value to write as ``expected``: the array, or the last-wins member of an allowed set."""
    return expected.example() if isinstance(expected, AllowedOutputs) else expected
