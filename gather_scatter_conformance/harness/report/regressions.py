"""The report's upstream-report table: each regression case (an upstream bug with its minimal inputs,
cases/regression/) and its measured status on every system of the run, not only on the framework it was reported
against.

A system's status for a case is the worst of its variants' (deviates, then crash, timeout, dtype, error, conforms,
n/a), with the variants that showed it; so "does iree#24881 show anywhere else?" is one row.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

from gather_scatter_conformance.harness.evidence.cells import Cases
from gather_scatter_conformance.harness.report import build

if TYPE_CHECKING:
    from gather_scatter_conformance.vocab.record import Record

# Worst first: what a system's cell shows when its variants disagree.
ORDER = ("deviates", "crash", "timeout", "dtype", "error", "conforms", "n/a")


def _web(url: str | None) -> bool:
    """Only web addresses become links (a case file is user input; its text is escaped, its scheme checked)."""
    return bool(url) and url.startswith(("https://", "http://"))


def table(records: Iterable[Record], cases: Cases | None = None) -> list[dict[str, Any]]:
    """Rows ``case``, ``issue``, ``url``, ``reported_on`` (the bug's framework), ``cells`` (system -> ``status``,
    ``variants`` showing it), ``deviating`` (systems whose status is deviates, crash or timeout) and ``counts``
    (status -> systems), in case order; only records tagged ``regression``."""
    cases = cases or Cases()
    rows: dict[str, dict[str, Any]] = {}
    for rec in records:
        if "regression" not in rec.tags:
            continue
        row = rows.get(rec.case)
        if row is None:
            case = cases.get(rec.case)
            bug = case.spec.bug if case is not None else None
            row = rows[rec.case] = {"case": rec.case, "issue": bug.issue if bug else "",
                                       "url": bug.url if bug and _web(bug.url) else "",
                                       "reported_on": bug.framework if bug else "", "by_system": {}}
        row["by_system"].setdefault(rec.system, []).append((build.status(rec), rec.variant))
    out = []
    for row in rows.values():
        cells = {}
        for system, seen in sorted(row.pop("by_system").items()):
            worst = min((s for s, _ in seen), key=ORDER.index)
            cells[system] = {"status": worst, "variants": sorted(v for s, v in seen if s == worst)}
        row["cells"] = cells
        row["deviating"] = [s for s, c in cells.items() if c["status"] in ("deviates", "crash", "timeout")]
        row["counts"] = {s: sum(c["status"] == s for c in cells.values()) for s in ORDER}
        out.append(row)
    return out
