"""Cells measured as distributions: a memory-unsafe or flipping cell runs several times, each in a fresh process,
and its record says what each run gave (``{"garbage": 3, "zero": 2}``).

One run cannot tell an unchecked read of memory that changes (``garbage``) from one deterministic wrong value; the
repeats can. A value no policy explains that is the same in every fresh process is ``wrong``, not ``garbage``
(LiteRT's SCATTER_ND with duplicate targets gives 20·(1−2)+(1+2) = −17 every time); one that differs between
processes stays ``garbage`` and is memory-unsafe by that evidence.
"""

from __future__ import annotations

import hashlib
from collections import Counter
from typing import TYPE_CHECKING, Any

from gather_scatter_conformance.vocab.dimensions import is_memory_unsafe

if TYPE_CHECKING:
    from gather_scatter_conformance.vocab.record import Record

DEFAULT_REPEATS = 5
HANGS_ENOUGH = 2  # a hang costs the whole case timeout (120 s): two establish it, five would cost ten minutes


def hangs_in(answer: dict[str, Any]) -> int:
    """How many tries of one worker answer hung: none unless it is a timeout; then the ``hangs`` its executor
    counted (harness.run.isolation: two where a second try in a fresh process hung too), one where it says none."""
    if answer.get("outcome") != "timeout":
        return 0
    hangs = answer.get("hangs")
    return hangs if isinstance(hangs, int) and hangs > 0 else 1


def hung_enough(hangs: int) -> bool:
    """True once a cell's tries so far hung HANGS_ENOUGH times (:func:`hangs_in` summed over its runs): its repeats
    stop there, and its distribution counts the runs made. A run whose second try confirmed its hang is two: a
    further run would only pay the case timeout twice more to say the same."""
    return hangs >= HANGS_ENOUGH


def needs_repeats(record: Record) -> bool:
    """True when a record's single run cannot say what the cell does: its label is memory-unsafe (garbage, a
    neighbour's element, a crash, a hang), the case crashed or hung, or one process gave several outputs."""
    return (is_memory_unsafe(record.label) or record.outcome in ("crash", "timeout")
            or (record.distinct_outputs or 1) > 1)


def unsafe_record(rec: Record) -> bool:
    """True for a memory-unsafe record: a label of the class (garbage, alias, alias-write, timeout, crash:SIG), or a
    case that is no probe (no dimension) whose call crashed or hung."""
    if is_memory_unsafe(rec.label):
        return True
    return not rec.dimension and rec.outcome in ("crash", "timeout")


def suspect(baseline_label: str | None) -> bool:
    """True when a cell's baseline says it flipped (``a|b``) or is memory-unsafe: it is repeated whatever its first
    run gives, so a run that happens to read zeros is not taken for a safe one."""
    return bool(baseline_label) and ("|" in baseline_label or is_memory_unsafe(baseline_label))


def hung_in(baseline_label: str | None) -> bool:
    """True when a baseline label says the cell hung on some run: one of its alternatives is ``timeout`` (a converter
    path's ``changed: error -> timeout``, or ``conversion-failed (timeout)``: its converter hung)."""
    def hung(alt: str) -> bool:
        end = alt.rsplit("->", 1)[-1].strip()
        return end == "timeout" or end.endswith("(timeout)")

    return bool(baseline_label) and any(hung(alt) for alt in baseline_label.split("|"))


def value_digest(answer: dict[str, Any]) -> str | None:
    """A digest of a worker answer's value (None when it returned none): equal digests, equal outputs bitwise."""
    value = answer.get("value")
    if answer.get("outcome") != "ok" or not isinstance(value, dict):
        return None
    h = hashlib.sha256(f"{value.get('dtype')}{value.get('shape')}".encode())
    h.update(value["bytes"] if "bytes" in value else repr(value.get("items")).encode())
    return h.hexdigest()


def run_label(record: Record) -> str:
    """What one run gave, as a distribution counts it: a probe's label; for another case its crash signal, its hang,
    or its verdict."""
    if record.label:
        return record.label
    if record.outcome == "crash":
        return f"crash:{record.signal or 'exit'}"
    if record.outcome == "timeout":
        return "timeout"
    return str(record.verdict or record.outcome)


def combine(runs: list[tuple[Record, str | None]]) -> Record:
    """The record of a repeated cell from its runs (record, value digest), the first run's first.

    The first run's record is kept (its value, verdict and repro); a probe's ``label`` becomes the labels seen, most
    frequent first (``garbage|zero``), and ``distribution`` counts them. ``garbage`` becomes ``wrong`` when every run
    returned, all returned the same value, and no run's own repeated calls disagreed: deterministic, so no evidence
    of an unowned read.
    """
    labels = [run_label(rec) for rec, _ in runs]
    digests = {d for _, d in runs}
    # Deterministic: every run returned, all the same bytes, and no run's own repeated calls (a case's `repeat`)
    # disagreed. The digest is of a run's first value, so a process whose later calls differed is not deterministic.
    if (len(digests) == 1 and None not in digests
            and all(rec.outcome == "ok" and (rec.distinct_outputs or 1) == 1 for rec, _ in runs)):
        labels = ["wrong" if lab == "garbage" else lab for lab in labels]
    counts = Counter(labels)
    ordered = sorted(counts, key=lambda lab: (-counts[lab], lab))
    out = runs[0][0].model_copy(deep=True)
    out.distribution = {lab: counts[lab] for lab in ordered}
    if out.label:
        out.label = "|".join(ordered)
    if out.conversion:
        out.conversion = _preservations(runs)
    return out


def _preservations(runs: list[tuple[Record, str | None]]) -> dict[str, Any]:
    """A converter path's preservation over its runs: the first run's account, with every run's verdict in its
    summary, most frequent first (``changed: error -> zero|changed: error -> garbage``), as its label lists every
    label seen; ``changed`` where any run's kind differs from the others'."""
    accounts = [rec.conversion for rec, _ in runs if rec.conversion]
    seen = Counter(c["summary"] if c["preservation"] == "changed" else c["preservation"] for c in accounts)
    kinds = {c["preservation"] for c in accounts}
    out = dict(runs[0][0].conversion or {})
    if len(seen) > 1:
        out["summary"] = "|".join(sorted(seen, key=lambda s: (-seen[s], s)))
        if len(kinds) > 1:
            out["preservation"] = "changed"
    return out


def distribution_text(distribution: dict[str, int]) -> str:
    """``garbage 3/5, zero 2/5``: a distribution as the report and the advisories show it."""
    total = sum(distribution.values())
    return ", ".join(f"{lab} {n}/{total}" for lab, n in distribution.items())
