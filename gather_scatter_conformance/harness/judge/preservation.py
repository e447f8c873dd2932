"""The preservation verdict of a converter path: did the converted model do what the source API did natively?

``preserved``: the target's outcome is the source's (both raised, or equal values of the same dtype);
``changed``: it is not, and the account says how, with both sides' labels (a probe's behaviour label, else
``ok``/``wrong``/``error`` against the canonical semantics) and both values; ``conversion-failed``: the converter
itself failed (raised, crashed or hung), with its error. ``unknown``: the run died (crash, hang) before the source's
native result was known. ``conversion-only``: the model converted, but its target cannot run on this machine
(Core ML off macOS; adapters.convert.path.NotRun): the record keeps the converted program's operators, and both
the preservation and the record's verdict say what is known without a run. A target that crashes or hangs on the
converted model is a ``changed`` (``ok -> crash:SIGFPE``): the path notes each stage as it starts
(adapters.convert.path), so a dead run still says whose death it was.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from gather_scatter_conformance.harness.cases.load import Case
from gather_scatter_conformance.harness.judge.verdict import judge, stored
from gather_scatter_conformance.harness.reference.compare import compare
from gather_scatter_conformance.vocab.record import Result

if TYPE_CHECKING:
    from gather_scatter_conformance.vocab.record import Record

PRESERVATION = ("preserved", "changed", "conversion-failed", "conversion-only", "unknown")


@dataclass(frozen=True)
class _Side:
    """One side of a path (the source's native call, or the target), judged to be labelled (classify.Judged):
    it is part of the path's record, never a record of its own."""

    outcome: str
    signal: str | None
    reason: str
    distinct_outputs: int | None
    verdict: str
    framework: str
    variant: str


def side_label(case: Case, res: Result | Mapping[str, Any], expected: Any, who: Mapping[str, Any] | None = None) -> str:
    """The label of one side's outcome: a probe's behaviour label; for other cases ``ok`` (conforms), ``wrong``
    (a value the canonical semantics do not give), ``error``, ``crash:<SIGNAL>``, ``timeout``, ``unsupported``.
    ``who``: the ``framework`` and ``variant`` that ran it, where the label depends on the API (zero-fill)."""
    res = Result.of(res)
    outcome = res.outcome
    if outcome == "crash":
        return f"crash:{res.signal or 'exit'}"
    if outcome in ("timeout", "unsupported") or (outcome == "error" and not case.spec.dimension):
        return outcome
    verdict = judge(case, res, expected)
    if case.spec.dimension:
        from gather_scatter_conformance.harness.judge.classify import label

        side = _Side(outcome=res.outcome, signal=res.signal, reason=verdict.get("reason", res.reason),
                     distinct_outputs=res.distinct_outputs, verdict=verdict["verdict"],
                     framework=(who or {}).get("framework") or "", variant=(who or {}).get("variant") or "")
        return label(case.spec.dimension, case.op, case.inputs(), case.attrs, side, res.observed)
    return "ok" if verdict["verdict"] == "conforms" else "wrong"


def _same(a: np.ndarray | None, b: np.ndarray | None, source: Result, target: Result) -> bool:
    """Both sides did the same: the same outcome, and for values the same dtype, shape and elements."""
    if source.outcome != target.outcome:
        return False
    if a is None or b is None:
        return True
    if a.dtype != b.dtype or a.shape != b.shape:
        return False
    try:
        return compare(b, a).equal
    except (TypeError, ValueError):
        return False


def account(case: Case, description: dict[str, Any], res: Result | Mapping[str, Any], record: Record,
            expected: Any) -> dict[str, Any]:
    """The ``conversion`` field of a path's record: the path (``description``, the adapter's static one, is used
    when the run died before reporting), versions, options, stage reached, both sides' labels and values, and the
    preservation verdict with a one-line ``summary`` (``changed: wrap -> zero``)."""
    res = Result.of(res)
    conv = dict(res.get("conversion") or description)
    source = conv.pop("source_result", None)
    if source is not None:
        source = Result.of(source)
    target_label = record.label or side_label(case, res, expected)
    conv["target_label"] = target_label
    a = source.observed if source is not None else None
    b = res.observed
    if source is not None:  # what the source did natively, whatever became of the conversion
        # The path's adapter answers for its source's API (a data-less tf.scatter_nd stays data-less)
        who = {"framework": record.framework, "variant": record.variant}
        conv["source_label"] = side_label(case, source, expected, who)
        if a is not None:
            conv.update(source_value=stored(a), source_dtype=str(a.dtype), source_shape=list(a.shape))
        else:
            conv["source_error"] = f"{source.error_type or ''}: {source.error_message or ''}".strip(": ")
    died = record.outcome in ("crash", "timeout")
    ending = f"crashed ({record.signal or 'exit'})" if record.outcome == "crash" else "hung (timeout)"
    if died and conv.get("stage") == "convert":  # the converter itself took the process down
        return {**conv, "preservation": "conversion-failed", "summary": f"conversion-failed: the converter {ending}"}
    if record.outcome == "error" and conv.get("stage") in ("convert", None):
        # stage None: the path could not even make the source's call (the source API refused the case)
        error = record.error_message or ""
        if conv.get("stage") is None:
            error = f"the source call could not be made: {record.error_type}: {error}"
        return {**conv, "stage": "convert", "preservation": "conversion-failed",
                "summary": f"conversion-failed: {error}"}
    if record.outcome == "unsupported" and conv.get("stage") == "converted":  # the path raised NotRun
        return {**conv, "preservation": "conversion-only",
                "summary": f"conversion-only: {record.reason or 'the target cannot run here'}"}
    if source is None:
        why = (f"the source API itself {ending}, natively" if died and conv.get("stage") == "source" else
               f"the run ended ({record.outcome}) before the path reported its source's result")
        return {**conv, "preservation": "unknown", "summary": f"unknown: {why}"}
    source_label = conv["source_label"]
    if _same(a, b, source, res):
        return {**conv, "preservation": "preserved", "summary": "preserved"}
    differs = "" if source_label != target_label else " (other values)"
    if a is not None and b is not None and a.dtype != b.dtype and np.array_equal(
            a.astype(np.float64, copy=False), b.astype(np.float64, copy=False)):
        differs = f" (dtype {a.dtype} -> {b.dtype})"
    return {**conv, "preservation": "changed", "summary": f"changed: {source_label} -> {target_label}{differs}"}
