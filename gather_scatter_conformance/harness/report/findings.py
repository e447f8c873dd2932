"""The report's key findings, shown before any table: what is memory-unsafe, what contradicts the documentation or
the 2020 blog, what changed, and per framework one line of what differs from canonical ONNX.

Every item names the behaviour row (``b``, an index into the behaviour rows) or the record (``r``, an index into
the records) whose evidence the page opens on click.
"""

from __future__ import annotations

from collections import defaultdict
from typing import TYPE_CHECKING, Any

from gather_scatter_conformance.harness.report import severity
from gather_scatter_conformance.harness.report.build import column, row_column, shown_label, status, words
from gather_scatter_conformance.vocab.record import HARNESS_ERROR

if TYPE_CHECKING:
    from gather_scatter_conformance.vocab.record import Record

SHOWN_PER_FRAMEWORK = 6  # items of a framework's line shown before "N more"


def _api(column_name: str) -> str:
    """``variant[@device]`` of a ``framework:variant[@device]`` column."""
    return column_name.split(":", 1)[1]


def _grouped(rows: list[dict[str, Any]], picked: list[int], sev_of: dict[int, str]) -> list[dict[str, Any]]:
    """Picked behaviour rows grouped by framework, then by (operator, dimension, label): one item per group, its
    APIs listed, worst severity first."""
    by_fw: dict[str, dict[tuple[str, str, str], dict[str, Any]]] = defaultdict(dict)
    for b in picked:
        r = rows[b]
        shown = shown_label(r["label"])
        key = (r["op"], r["dimension"], shown)
        item = by_fw[r["framework"]].setdefault(key, {
            "op": r["op"], "dim": r["dimension"], "words": words(shown, r["dimension"]), "sev": sev_of[b],
            "sym": severity.symbol(sev_of[b]), "apis": [], "b": b,
            "documented": words(r.get("documented"), r["dimension"]) if r.get("documented") else "",
            "blog": words(r.get("blog_2020"), r["dimension"]) if r.get("blog_2020") else ""})
        item["apis"].append(_api(row_column(r)))
    rank = {s: i for i, s in enumerate(severity.ORDER)}
    return [{"framework": fw, "entries": sorted(items.values(), key=lambda i: (rank[i["sev"]], i["op"], i["dim"]))}
            for fw, items in sorted(by_fw.items())]


def findings(records: list[Record], rows: list[dict[str, Any]], sevs: list[str | None],
             changes: dict[str, Any] | None, history: dict[str, Any] | None) -> dict[str, Any]:
    """Key findings from deduplicated records, their behaviour rows and severities (harness.report.build.severities),
    the changes against the previous run (harness.report.build.changes, or None) and the History section
    (gather_scatter_conformance.harness.report.history.section, or None)."""
    measured = [b for b, r in enumerate(rows) if r.get("measured") is not False]
    sev_of = {b: sevs[b] for b in measured}
    unsafe = [b for b in measured if sev_of[b] == "unsafe"]
    # Crashes and hangs of cases that are no probe (a seed or regression case) are memory-unsafe results too.
    crashes: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for i, rec in enumerate(records):
        if status(rec) in ("crash", "timeout") and not rec.dimension:
            crashes[rec.framework].append({"r": i, "case": rec.case.split("::", 1)[-1], "api": _api(column(rec)),
                                           "op": rec.op, "what": rec.outcome + (
                                               f" ({rec.signal})" if rec.signal else "")})
    docs = [b for b in measured if rows[b].get("agrees_with_docs") is False and sev_of[b] != "na"]
    blog = [b for b in measured if rows[b].get("agrees_with_blog") is False and sev_of[b] != "na"]
    differs = [b for b in measured if sev_of[b] in ("unsafe", "wrong", "alt")]
    results: dict[str, dict[str, int]] = defaultdict(lambda: defaultdict(int))
    for rec in records:
        if rec.outcome != HARNESS_ERROR:  # the harness failed there: no result (listed apart, report.faults)
            results[rec.framework][status(rec)] += 1
    per_fw = []
    by_fw = {g["framework"]: g["entries"] for g in _grouped(rows, differs, sev_of)}
    versions = {r.framework: r.framework_version for r in records}
    for fw in sorted(results):
        items = by_fw.get(fw, [])
        counts = results[fw]
        per_fw.append({"framework": fw, "version": versions.get(fw, ""), "entries": items[:SHOWN_PER_FRAMEWORK],
                       "more": items[SHOWN_PER_FRAMEWORK:], "results": sum(counts.values()),
                       "counts": {s: counts.get(s, 0) for s in ("deviates", "dtype", "error", "crash", "timeout")},
                       "unsafe": sum(1 for i in items if i["sev"] == "unsafe")})
    return {
        "unsafe": _grouped(rows, unsafe, sev_of), "unsafe_cells": len(unsafe),
        "crashes": [{"framework": fw, "entries": items} for fw, items in sorted(crashes.items())],
        "crash_results": sum(len(v) for v in crashes.values()),
        "docs": _grouped(rows, docs, sev_of), "docs_cells": len(docs),
        "blog": _grouped(rows, blog, sev_of), "blog_cells": len(blog),
        "changes": None if changes is None else {
            "labels": len(changes["labels"]), "started": len(changes["started"]),
            "stopped": len(changes["stopped"]), "other": len(changes["other"]),
            "new": changes["new"], "gone": changes["gone"]},
        "history": None if history is None else history.get("summary"),
        "frameworks": per_fw,
    }
