"""The report's Conversion section: does the behaviour survive the port?

One table of behaviour dimension × converter path (probe cases; seed and regression cases in one more row),
each cell saying whether the converted model did what the source API did natively: preserved, changed (with the
change, ``error -> wrap``) or failed to convert. A cell that is not all preserved opens a drill-down (its entries
travel in the page's evidence file, not in the page): each change and failure with the converted graph's operators,
both outputs, a link to the cell's own page and a repro script that converts and runs.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from typing import TYPE_CHECKING, Any

from gather_scatter_conformance import adapters
from gather_scatter_conformance.harness.judge.dimensions import DIMENSIONS
from gather_scatter_conformance.harness.report.rows import Key, cell_key

if TYPE_CHECKING:
    from gather_scatter_conformance.vocab.record import Record

OTHER = "cases"  # the column of non-probe cases (seed examples, regressions)
# preservation -> (cell class, glyph); a cell with several kinds takes the worst, in this order
STATUS = {"preserved": ("sev-ok", "✓"), "changed": ("sev-wrong", "≠"), "unknown": ("sev-unsafe", "⚠"),
          "conversion-failed": ("conv-failed", "∅"), "conversion-only": ("conv-only", "◇")}
_WORST = ("unknown", "changed", "conversion-failed", "conversion-only", "preserved")
_SHOWN_CHANGES = 3  # distinct changes a cell lists; the drill-down has them all


def is_conversion(record: Record) -> bool:
    """True for a converter path's record (it carries a ``conversion`` account, or its framework is a path)."""
    return bool(record.conversion) or adapters.is_path(record.framework)


def _short(summary: str) -> str:
    """``changed: error -> wrap`` -> ``error→wrap``; failures are shown by their glyph, the text in the title."""
    if summary.startswith("changed: "):
        return summary.removeprefix("changed: ").replace(" -> ", "→")
    return summary.split(":", 1)[0]


def section(records: list[Record], cases: Any = None,
            cell_urls: dict[Key, str] | None = None) -> dict[str, Any] | None:
    """The section's content from a run's records (None when it has no converter path's records).

    ``cases`` (harness.evidence.cells.Cases) finds case files for the repro scripts of changes; without it the
    drill-down shows no scripts. ``cell_urls`` (harness.report.site.cell_urls: (op, dimension, framework, variant,
    device) -> the cell page's address) gives each drill-down entry its cell page's link. A table cell's ``detail``
    is its index in ``details``.
    """
    recs = [(r, r.conversion) for r in records if r.conversion]
    if not recs:
        return None
    order = {name: i for i, name in enumerate(adapters.names())}
    paths = sorted({r.framework for r, _ in recs}, key=lambda p: (order.get(p, len(order)), p))
    dims = [d for d in DIMENSIONS if any(r.dimension == d for r, _ in recs)]
    columns = [*dims, OTHER]
    by_cell: dict[tuple[str, str], list[tuple[Record, dict[str, Any]]]] = defaultdict(list)
    for r, c in recs:
        by_cell[(r.framework, r.dimension or OTHER)].append((r, c))
    heads = []
    for path in paths:
        conv = next(c for r, c in recs if r.framework == path)
        counts = Counter(c["preservation"] for r, c in recs if r.framework == path)
        source, _, target = path.split("~")  # as the path names them (onnx, not the onnx-reference adapter)
        heads.append({"path": path, "source": source, "converter": conv.get("converter"), "target": target,
                      "versions": _versions(recs, path),
                      "opsets": sorted({str(c["opset"]) for r, c in recs if r.framework == path and c.get("opset")}),
                      "counts": dict(counts), "n": sum(counts.values())})
    # Dimensions down, paths across: a path is one column, so a dozen paths fit the page's width.
    details = _details(by_cell, paths, columns, cases, cell_urls or {})
    at = {(d["path"], d["column"]): i for i, d in enumerate(details)}
    rows = [{"dimension": col, "question": DIMENSIONS[col][0] if col in DIMENSIONS else
             "seed examples and regression cases",
             "cells": [_cell(by_cell[(path, col)], at.get((path, col))) if by_cell.get((path, col)) else None
                       for path in paths]}
            for col in columns]
    return {"paths": heads, "rows": rows, "details": details, "status": STATUS,
            "totals": dict(Counter(c["preservation"] for _, c in recs))}


def _versions(recs: list[tuple[Record, dict[str, Any]]], path: str) -> str:
    versions = next((c.get("versions") for r, c in recs if r.framework == path and c.get("versions")), None)
    return "; ".join(f"{k} {v}" for k, v in versions.items()) if versions else ""


def _cell(recs: list[tuple[Record, dict[str, Any]]], detail: int | None) -> dict[str, Any]:
    kinds = Counter(c["preservation"] for _, c in recs)
    worst = next(k for k in _WORST if kinds.get(k))
    changes = Counter(_short(c["summary"]) for _, c in recs if c["preservation"] in ("changed", "unknown"))
    title = "; ".join(f"{n} {k}" for k, n in kinds.most_common())
    if changes:
        title += " — " + "; ".join(f"{c} ({n})" for c, n in changes.most_common())
    return {"cls": STATUS[worst][0], "glyph": STATUS[worst][1], "kind": worst, "n": len(recs),
            "preserved": kinds.get("preserved", 0), "changes": [c for c, _ in changes.most_common(_SHOWN_CHANGES)],
            "more": max(0, len(changes) - _SHOWN_CHANGES), "title": title,
            "detail": detail if worst != "preserved" else None}


def _details(by_cell: dict[tuple[str, str], list[tuple[Record, dict[str, Any]]]], paths: list[str], columns: list[str],
             cases: Any, cell_urls: dict[Key, str]) -> list[dict[str, Any]]:
    """Every cell that is not all preserved, with its changed/failed records: case, variant, summary, converted
    ops, source call and output, target output, the cell page's address and the repro script."""
    out = []
    for path in paths:
        for col in columns:
            cell = [(r, c) for r, c in by_cell.get((path, col), []) if c["preservation"] != "preserved"]
            if not cell:
                continue
            items = []
            scripts = 0
            for r, conv in sorted(cell, key=lambda rc: (rc[1]["preservation"] != "changed", rc[0].case,
                                                        rc[0].variant)):
                items.append({
                    "case": r.case, "variant": r.variant, "op": r.op,
                    "kind": conv["preservation"], "summary": conv["summary"],
                    "source_api": conv.get("source_api", ""),
                    "source": _side(conv.get("source_value"), conv.get("source_dtype"), conv.get("source_error")),
                    "target": _side(r.observed, r.observed_dtype,
                                    None if r.outcome == "ok" else
                                    f"{r.outcome}: {r.error_type or r.signal or ''}: "
                                    f"{(r.error_message or '')[:300]}"),
                    "ops": " · ".join(r.ops or []) or "(not reported)",
                    "opset": conv.get("opset"), "api": r.api,
                    "url": cell_urls.get(cell_key(r)),
                    # One script per cell travels with the page's evidence (each carries its case's inputs: all
                    # of them would weigh megabytes); every other one is on its cell page or a command away.
                    "repro": _repro(r, cases) if not scripts else None,
                    "command": f"gsc repro RESULTS --case {r.case} --framework "
                               f"{r.framework}:{r.variant} --out repro.py" if r.native else None,
                })
                scripts += items[-1]["repro"] is not None
            out.append({"path": path, "column": col, "entries": items})
    return out


def _side(value: Any, dtype: Any, error: str | None) -> str:
    if error:
        return error
    if value is None:
        return f"(large {dtype} array)" if dtype else "(not run)"
    text = str(value)
    return (text if len(text) <= 300 else text[:300] + " …") + (f"  dtype={dtype}" if dtype else "")


def _repro(record: Record, cases: Any) -> str | None:
    if cases is None or not record.native:
        return None
    from gather_scatter_conformance.harness.run.repro import script

    case = cases.get(record.case)
    if case is None:
        return None
    try:
        return script(case, record)
    except ValueError:
        return None


def render_text(records: list[Record]) -> str:
    """The section's table as text: one line per dimension (and ``cases``), one column per converter path (numbered,
    named below), each cell ``preserved/total`` marked ``≠`` where a probe changed, ``∅`` where the converter
    failed, ``◇`` where it converted but the target cannot run here (conversion-only), ``⚠`` where the run crashed
    or hung; then every distinct change per path."""
    sec = section(records)
    if sec is None:
        return "no converter path records"
    paths = [p["path"] for p in sec["paths"]]
    lines = [f"{'dimension':<22}" + "".join(f"{f'[{k + 1}]':>9}" for k in range(len(paths)))]
    changes: dict[str, set[str]] = {p: set() for p in paths}
    for row in sec["rows"]:
        cells = []
        for k, c in enumerate(row["cells"]):
            if c is None:
                cells.append(f"{'-':>9}")
                continue
            mark = "" if c["kind"] == "preserved" else c["glyph"]
            cells.append(f"{mark + str(c['preserved']) + '/' + str(c['n']):>9}")
            changes[paths[k]].update(f"{row['dimension']}: {ch}" for ch in c["changes"])
        lines.append(f"{row['dimension'][:22]:<22}" + "".join(cells))
    lines.append("")
    for k, p in enumerate(sec["paths"]):
        lines.append(f"[{k + 1}] {p['path']}: {p['converter']}; {p['versions']}")
    lines.append("")
    for path in paths:
        if changes[path]:
            lines.append(f"{path}: " + "; ".join(sorted(changes[path])))
    return "\n".join(lines)
