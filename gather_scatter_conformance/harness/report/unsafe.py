"""The report's lead: memory-unsafe findings grouped by what the access was, writes first.

Four groups: out-of-bounds writes, out-of-bounds reads, uninitialised reads, and crashes (or hangs) without
evidence. A memory checker's evidence (``gsc memcheck``'s JSON lines, harness.evidence) decides the group where there
is some; without it, the value does where it can: ``alias-write`` is a neighbour's element written, ``alias`` one
read, ``garbage`` from a gather a read of memory that changes between processes. Each item says which: the checker's
one-line account, or "inferred from the value".
"""

from __future__ import annotations

import json
from collections import defaultdict
from pathlib import Path
from typing import TYPE_CHECKING, Any

from gather_scatter_conformance.harness.judge.repeats import distribution_text, unsafe_record
from gather_scatter_conformance.vocab.ops import SCATTER_OPS

if TYPE_CHECKING:
    from gather_scatter_conformance.vocab.record import Record

GROUPS = {
    "write": "Out-of-bounds writes",
    "read": "Out-of-bounds reads",
    "uninitialised": "Uninitialised reads",
    "crash": "Crashes and hangs without evidence",
}


def load_evidence(paths: list[str | Path]) -> dict[tuple[str, str, str], dict[str, Any]]:
    """Memory-checker evidence by (case, framework, variant), from ``gsc memcheck`` output files (the last line of
    a cell wins); files that do not exist are left out."""
    out: dict[tuple[str, str, str], dict[str, Any]] = {}
    for path in paths:
        if not Path(path).is_file():
            continue
        for line in Path(path).read_text(encoding="utf-8").splitlines():
            if line.strip():
                ev = json.loads(line)
                out[(ev["case"], ev["framework"], ev.get("variant", ""))] = ev
    return out


def evidence_text(evidence: dict[str, Any]) -> str:
    """The checker's one-line account of a cell, as ``gsc memcheck`` wrote it (harness.evidence.verdict): the
    access it proved, or the measured reason no checker saw one."""
    return evidence.get("reason") or "no checker has run"


def _group(rec: Record, evidence: dict[str, Any] | None) -> str:
    verdict = (evidence or {}).get("verdict")
    if verdict in ("write", "read", "uninitialised"):
        return verdict
    parts = set((rec.label or "").split("|"))
    if "alias-write" in parts:
        return "write"
    if "alias" in parts or ("garbage" in parts and rec.op not in SCATTER_OPS):
        return "read"
    if "garbage" in parts:  # a scatter's output holds values nothing wrote: memory it never initialised
        return "uninitialised"
    return "crash"


def is_unsafe(rec: Record, evidence: dict[str, Any] | None) -> bool:
    """A memory-unsafe finding: its label is in the class, a case without a dimension crashed or hung, or a
    checker saw an invalid access."""
    return (evidence or {}).get("verdict") in ("write", "read", "uninitialised") or unsafe_record(rec)


def section(records: list[Record], evidence: dict[tuple[str, str, str], dict[str, Any]]) -> dict[str, Any]:
    """The grouped findings: ``groups`` (write, read, uninitialised, crash; each a list of frameworks with their
    items, ``r`` the record's index), per-framework ``counts`` of the four, and whether any evidence was given."""
    groups: dict[str, dict[str, list[dict[str, Any]]]] = {g: defaultdict(list) for g in GROUPS}
    counts: dict[str, dict[str, int]] = defaultdict(lambda: dict.fromkeys(GROUPS, 0))
    for i, rec in enumerate(records):
        ev = evidence.get((rec.case, rec.framework, rec.variant))
        if not is_unsafe(rec, ev):
            continue
        g = _group(rec, ev)
        what = rec.label or (rec.outcome + (f" ({rec.signal})" if rec.signal else ""))
        groups[g][rec.framework].append({
            "r": i, "op": rec.op, "case": rec.case.split("::", 1)[-1], "api": rec.api or rec.variant,
            "what": what, "distribution": distribution_text(rec.distribution) if rec.distribution else "",
            "evidence": evidence_text(ev) if ev else "inferred from the value; no checker has run",
            "checked": bool(ev and ev.get("verdict") in ("write", "read", "uninitialised"))})
        counts[rec.framework][g] += 1
    return {
        "groups": [{"key": g, "title": GROUPS[g], "n": sum(len(v) for v in groups[g].values()),
                    "frameworks": [{"framework": fw, "entries": items} for fw, items in sorted(groups[g].items())]}
                   for g in GROUPS],
        "counts": {fw: c for fw, c in sorted(counts.items())},
        "with_evidence": bool(evidence),
    }
