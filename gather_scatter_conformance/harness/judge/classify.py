"""Labelling what a framework did on a probe case, by finding the policy under which the reference engine agrees.

Labels are data (harness/judge/dimensions.py lists them); the report renders them. A label is found by running the
reference engine under every candidate policy and keeping the first that reproduces the observation, in a fixed
order, so ties (an input where clamp and wrap coincide) resolve the same way every time; probe cases are written
to avoid ties.
"""

from __future__ import annotations

from typing import Any, Protocol

import numpy as np

from gather_scatter_conformance.adapters.attrs import AXIS_REQUIRED
from gather_scatter_conformance.harness.judge.alias import unchecked_gather
from gather_scatter_conformance.harness.judge.dimensions import kind
from gather_scatter_conformance.harness.reference import AllowedOutputs, Policy, alternatives, compute
from gather_scatter_conformance.harness.reference.compare import compare
from gather_scatter_conformance.vocab.ops import SCATTER_OPS


class Judged(Protocol):
    """What labelling reads of a judged answer: a :class:`~gather_scatter_conformance.vocab.record.Record`, or one
    side of a converter path (harness.judge.preservation), which is judged but never a record of its own."""

    @property
    def outcome(self) -> str: ...
    @property
    def signal(self) -> str | None: ...
    @property
    def reason(self) -> str: ...
    @property
    def distinct_outputs(self) -> int | None: ...
    @property
    def verdict(self) -> str: ...
    @property
    def framework(self) -> str: ...
    @property
    def variant(self) -> str: ...


_OOB_LABEL = {"zero": "zero", "clamp": "clamp", "wrap": "wrap", "fill": "fill-nan", "skip": "skip"}
_TAKE_MODE_LABEL = {"wrap": "wrap", "clip": "clamp", "fill": "fill-nan"}


def _same(observed: np.ndarray, candidate: Any) -> bool:
    if candidate is None:
        return False
    try:
        return compare(observed, candidate).equal
    except (TypeError, ValueError):
        return False


def _try(op: str, inputs: dict[str, np.ndarray], attrs: dict[str, Any], policy: Policy | None = None) -> Any:
    try:
        return compute(op, inputs, attrs, policy) if policy else compute(op, inputs, attrs)
    except ValueError:
        return None


def _index_candidates(op: str, inputs: dict[str, np.ndarray], attrs: dict[str, Any]) -> list[tuple[str, Any]]:
    """(label, output) pairs for every index behaviour the engine can produce, canonical first."""
    out: list[tuple[str, Any]] = []
    if op == "Take":
        out.append(("wrap", _try(op, inputs, {**attrs, "mode": "raise"})))  # in-range negatives wrap
        for mode, label in _TAKE_MODE_LABEL.items():
            out.append((label, _try(op, inputs, {**attrs, "mode": mode})))
        flat = dict(inputs, data=inputs["data"].reshape(-1)) if attrs.get("axis") is None else inputs
        gather_attrs = {"axis": 0 if attrs.get("axis") is None else attrs["axis"], "batch_dims": 0}
        out.append(("zero", _try("Gather", flat, gather_attrs, Policy(out_of_bounds="zero"))))
    else:
        scatter = op in SCATTER_OPS
        out.append(("wrap", _try(op, inputs, attrs)))  # canonical: negatives wrap, no other index allowed
        for oob in ("skip", "clamp", "wrap") if scatter else ("zero", "clamp", "wrap", "fill"):
            for negative in ("wrap", "oob"):
                out.append((_OOB_LABEL[oob], _try(op, inputs, attrs, Policy(out_of_bounds=oob, negative=negative))))
    # A scatter's unchecked offset is a write: the neighbour's element is what changed.
    out.append(("alias-write" if op in SCATTER_OPS else "alias", unchecked_gather(op, inputs, attrs)))
    out.extend(alternatives(op, inputs, attrs))  # behaviours of the operator's own no policy models (shift)
    return out


def _index_label(op: str, inputs: dict[str, np.ndarray], attrs: dict[str, Any], observed: np.ndarray) -> str:
    for label, candidate in _index_candidates(op, inputs, attrs):
        if _same(observed, candidate):
            return label
    return "garbage"


def single_orders(op: str, inputs: dict[str, np.ndarray], attrs: dict[str, Any]) -> list[tuple[str, Any]]:
    """A scatter's output under each single order of its duplicate writes, labelled: ``last-wins``,
    ``first-wins``, ``accumulate`` (None where the engine cannot compute one)."""
    return [(label, _try(op, inputs, attrs, Policy(duplicates=policy)))
            for policy, label in (("last", "last-wins"), ("first", "first-wins"), ("accumulate", "accumulate"))]


def _duplicates_label(op: str, inputs: dict[str, np.ndarray], attrs: dict[str, Any], observed: np.ndarray) -> str:
    if attrs.get("reduction", "none") != "none":
        return "reduce-all" if _same(observed, _try(op, inputs, attrs)) else "garbage"
    for label, output in single_orders(op, inputs, attrs):
        if _same(observed, output):
            return label
    allowed = _try(op, inputs, attrs)
    if isinstance(allowed, AllowedOutputs) and allowed.contains(observed).all():
        return "mixed"  # each element is one of the updates, but no single order explains all of them
    return "garbage"


def has_data_input(op: str, record: Judged) -> bool:
    """Whether the record's API takes a data input: False for a variant its adapter declares data-less
    (Adapter.NO_DATA_INPUT, tf.scatter_nd); True otherwise, and where the record names no registered adapter."""
    from gather_scatter_conformance import adapters

    try:
        adapter = adapters.get(record.framework or "")
    except (KeyError, TypeError):
        return True
    return adapter.has_data_input(op, record.variant or "")


def _uncovered_label(op: str, inputs: dict[str, np.ndarray], attrs: dict[str, Any], observed: np.ndarray,
                     data_input: bool = True) -> str:
    counting = {
        "data": np.zeros(inputs["data"].shape, np.float64),
        "indices": inputs["indices"],
        "updates": np.ones(inputs["updates"].shape, np.float64),
    }
    hits = _try(op, counting, {**attrs, "reduction": "add"})
    if hits is None:
        return "garbage"
    untouched = np.asarray(hits) == 0
    if observed.shape != untouched.shape or not untouched.any():
        return "garbage"
    data = inputs["data"]
    if not data_input and _same(observed[untouched], np.zeros_like(data[untouched])):
        return "zero-fill"  # no data to keep: the API made these zeros (it runs only on all-zero data)
    if _same(observed[untouched], data[untouched]):
        return "keep-data"
    if _same(observed[untouched], np.zeros_like(data[untouched])):
        return "zero"
    return "garbage"


def _axis_label(op: str, inputs: dict[str, np.ndarray], attrs: dict[str, Any], observed: np.ndarray) -> str:
    data = inputs["data"]
    flat = dict(inputs, data=data.reshape(-1))
    b = int(attrs.get("batch_dims", 0) or 0)
    b = b + inputs["indices"].ndim if b < 0 else b
    base = "Gather" if op == "Take" else op
    if op == "Take":  # Gather has no mode; on in-range indices Take's mode changes nothing
        attrs = {k: v for k, v in attrs.items() if k != "mode"}
    tries: list[tuple[str, Any]] = [
        ("axis-0", _try(base, inputs, {**attrs, "axis": 0})),
        ("first-non-batch", _try(base, inputs, {**attrs, "axis": b}) if b else None),
        ("flatten", _try(base, flat, {**attrs, "axis": 0, "batch_dims": 0})),
        # Flattening within each batch (jax.vmap over jnp.take): data reshaped to batch dims + (-1,).
        (
            "flatten",
            _try(base, dict(inputs, data=data.reshape(data.shape[:b] + (-1,))), {**attrs, "axis": b}) if b else None,
        ),
        ("last", _try(base, inputs, {**attrs, "axis": data.ndim - 1})),
    ]
    for label, candidate in tries:
        if _same(observed, candidate):
            return label
    return "other"


def label(
    dimension: str,
    op: str,
    inputs: dict[str, np.ndarray],
    attrs: dict[str, Any],
    record: Judged,
    observed: np.ndarray | None,
) -> str:
    """The behaviour label for one probe result (see harness/judge/dimensions.py for the vocabulary)."""
    outcome = record.outcome
    if outcome == "crash":
        return f"crash:{record.signal or 'exit'}"
    k = kind(dimension)
    if outcome == "unsupported" and k == "axis" and AXIS_REQUIRED in (record.reason or ""):
        return "required"  # the API has no default axis, so an adapter cannot leave it out
    if outcome in ("timeout", "unsupported"):
        return outcome
    if outcome == "error":
        return "required" if k == "axis" else "error"
    assert observed is not None
    if (record.distinct_outputs or 1) > 1:
        return "nondeterministic" if k == "duplicates" else "garbage"
    if k == "support":
        return "ok" if record.verdict == "conforms" else "wrong"
    if k == "index":
        return _index_label(op, inputs, attrs, observed)
    if k == "duplicates":
        return _duplicates_label(op, inputs, attrs, observed)
    if k == "uncovered":
        return _uncovered_label(op, inputs, attrs, observed, has_data_input(op, record))
    return _axis_label(op, inputs, attrs, observed)
