"""The report's list of harness faults: records whose outcome is ``harness-error`` (the harness or an adapter
failed, not the framework; verdict n/a), grouped by where it failed. They are no findings: the list says what to fix
in the harness."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from gather_scatter_conformance.vocab.record import HARNESS_ERROR, Record


def listing(records: Iterable[Record]) -> list[dict[str, Any]]:
    """One row per framework API, phase, place and error: ``col``, ``phase``, ``where`` (from the package down),
    ``error`` (type and first line), ``count`` and the first ``case``; the most frequent first."""
    groups: dict[tuple[str, ...], dict[str, Any]] = {}
    for rec in records:
        if rec.outcome != HARNESS_ERROR:
            continue
        where = rec.fault.where if rec.fault else ""
        where = where[where.find("gather_scatter_conformance/"):] if "gather_scatter_conformance/" in where else where
        message = (rec.error_message or "").strip().splitlines()
        error = f"{rec.error_type or ''}: {message[0] if message else ''}".strip(": ")
        col = f"{rec.framework}:{rec.variant}"
        key = (col, rec.fault.phase if rec.fault else "", where, error)
        row = groups.setdefault(key, {"col": col, "phase": key[1], "where": where, "error": error, "count": 0,
                                      "case": rec.case})
        row["count"] += 1
    return sorted(groups.values(), key=lambda r: (-r["count"], r["col"], r["where"]))
