"""What a judged record means for its test: pass, skip, xfail or fail (issue #37).

These are the rules the pytest plugin applied inline; here, below the runner, the plugin, the fuzzer and the release
sweep can apply the same ones. A record's verdict says what the framework did against canonical semantics; its
outcome adds what the project expects of it: a known deviation (known/<framework>.yaml) is an expected failure, a
probe's label must be its baseline's, a converter path must keep its source's behaviour unless its baseline or known
file records the change.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal

from gather_scatter_conformance.adapters.base import NOT_MAPPED
from gather_scatter_conformance.harness.judge import baseline as baselines

if TYPE_CHECKING:
    from gather_scatter_conformance.vocab.record import Record


@dataclass(frozen=True)
class Outcome:
    """A record's test outcome."""

    kind: Literal["pass", "skip", "xfail", "fail"]
    reason: str = ""
    """skip and xfail: why. fail: the baseline's line where the baseline failed it ('' for a deviation)."""
    message: Literal["failure", "preservation"] | None = None
    """fail: the finding's message that goes with it (harness.run.repro.failure_message, preservation_message)."""
    note: str | None = None
    """A baseline note (a label the baseline allows but had not seen), whatever the kind."""


def outcome(record: Record, baseline: Mapping[str, Any], key: str) -> Outcome:
    """The outcome of ``record`` (a judged result record) against its framework's ``baseline`` (baseline.load) for
    the baseline key ``key`` (baseline.item_key of its case, variant and device)."""
    if record.variant == NOT_MAPPED:  # an operator the adapter does not map: recorded, nothing to check
        return Outcome("skip", f"unsupported: {record.reason}")
    if record.conversion:
        return _preservation(record, baseline, key)
    if record.label is not None:
        return _label(record, baseline, key, "failure")
    if record.outcome == "unsupported":
        return Outcome("skip", f"unsupported: {record.reason}")
    if record.verdict == "n/a":  # a converter path whose converter failed on the case
        return Outcome("skip", record.reason)
    if record.verdict == "deviates":
        if record.known_deviation:
            return Outcome("xfail", f"known: {record.known_deviation}")
        return Outcome("fail", message="failure")
    return Outcome("pass")


def _label(record: Record, baseline: Mapping[str, Any], key: str,
           message: Literal["failure", "preservation"]) -> Outcome:
    """Fail when the record's baseline label (a probe's behaviour label, a converter path's preservation:
    baseline.record_label) is not the one the baseline gives the key on the record's release."""
    label = baselines.record_label(record)
    version = record.framework_version
    problem = baselines.check(baseline, key, label, version, record.dimension)
    if problem:
        return Outcome("fail", problem, message)
    return Outcome("pass", note=baselines.note(baseline, key, label, version))


def _preservation(record: Record, baseline: Mapping[str, Any], key: str) -> Outcome:
    """A converter path passes when the converted model does what the source API does natively (its verdict
    against canonical semantics is the source's business, and recorded); its preservation must also be the one
    its baseline records, where that covers the case. A change fails unless the known file explains it or the
    baseline records it (both xfail); a conversion the converter could not make is skipped."""
    checked = _label(record, baseline, key, "preservation")
    if checked.kind == "fail":
        return checked
    conversion = record.conversion or {}
    kind = conversion["preservation"]
    if kind == "preserved":
        return checked
    if kind in ("conversion-failed", "conversion-only"):  # nothing ran on the target: nothing to compare
        return Outcome("skip", conversion["summary"][:300], note=checked.note)
    if record.known_change:
        return Outcome("xfail", f"known: {record.known_change}", note=checked.note)
    if baselines.label_at(baseline, key, record.framework_version) is not None:
        return Outcome("xfail", f"recorded in baselines/{record.framework}.yaml: {conversion['summary']}",
                       note=checked.note)
    return Outcome("fail", message="preservation", note=checked.note)
