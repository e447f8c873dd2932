"""Comparing two runs record by record: which outcome, verdict or behaviour label changed, per framework.

``gsc diff OLD NEW`` answers "what did this change (or this release) do to the results?" without a
report: records are matched by case, framework, variant and device (Record.key).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from gather_scatter_conformance.vocab.record import Record


def _fields(rec: Record) -> tuple[tuple[str, object], ...]:
    """The fields a diff compares, by name: outcome, verdict and label."""
    return ("outcome", rec.outcome), ("verdict", rec.verdict), ("label", rec.label)


FIELDS = ("outcome", "verdict", "label")  # what _fields gives, by name


@dataclass
class RunDiff:
    """What differs between two results sets: per (framework, field, old value, new value) a count and examples,
    plus the record keys only one side has."""

    changed: Counter[tuple[str, str, str, str]] = field(default_factory=Counter)
    examples: dict[tuple[str, str, str, str], list[str]] = field(default_factory=dict)
    only_old: int = 0
    only_new: int = 0
    same: int = 0

    def as_json(self) -> dict[str, object]:
        """The diff as builtins (``gsc diff --json``): the counts, and one entry per framework × field × change."""
        return {"same": self.same, "only_old": self.only_old, "only_new": self.only_new,
                "changed": [{"framework": fw, "field": f, "old": a, "new": b, "count": n,
                             "examples": self.examples.get((fw, f, a, b), [])}
                            for (fw, f, a, b), n in sorted(self.changed.items())]}


def diff(old: Iterable[Record], new: Iterable[Record], examples: int = 3) -> RunDiff:
    """Match ``old`` and ``new`` records by key and count every changed outcome, verdict and label."""
    before = {r.key: r for r in old}
    out = RunDiff()
    seen = set()
    for rec in new:
        key = rec.key
        seen.add(key)
        prev = before.get(key)
        if prev is None:
            out.only_new += 1
            continue
        moved = [(f, str(a), str(b)) for (f, a), (_, b) in zip(_fields(prev), _fields(rec), strict=True) if a != b]
        if not moved:
            out.same += 1
        for f, a, b in moved:
            k = (rec.framework, f, a, b)
            out.changed[k] += 1
            shown = out.examples.setdefault(k, [])
            if len(shown) < examples:
                shown.append(f"{key[0]} [{key[2]}]")
    out.only_old = len(set(before) - seen)
    return out


def render(d: RunDiff) -> str:
    """The diff as text: one line per framework × field × change, with its count and a few example records."""
    lines = [f"same: {d.same} record(s); changed: {sum(d.changed.values())} field change(s); "
             f"only in old: {d.only_old}; only in new: {d.only_new}"]
    for (fw, f, a, b), n in sorted(d.changed.items()):
        lines.append(f"  {fw:<16}{f:<9}{a} -> {b}: {n}    e.g. {'; '.join(d.examples[(fw, f, a, b)])}")
    return "\n".join(lines)
