"""The report's delegation table: which backend actually executed each operator, as the runtimes reported it after
the run (a record's ``providers``, ``delegate`` and ``fallback``: ONNX Runtime's execution provider per node,
ExecuTorch's XNNPACK delegate or portable kernels, IREE's dispatch, MNN's backend, TensorFlow.js's backend).

One row per system column, runtime operator and the backend that ran it, with the number of cases: "which ops did
XNNPACK actually run, and did OpenVINO's execution provider fall back on GatherND?" is one look. A row whose backend
is not the one the variant asked for is a fallback, so a delegate's behaviour is never mistaken for the fallback's.
The rows are shown on each system's page; the landing page shows one line per system (``by_system``).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

from gather_scatter_conformance.harness.report.build import column

if TYPE_CHECKING:
    from gather_scatter_conformance.vocab.record import Record


def table(records: Iterable[Record]) -> list[dict[str, Any]]:
    """Rows ``col``, ``framework``, ``system`` (Record.system), ``op`` (the runtime's name for it), ``backend``
    (what ran it), ``asked`` (the backend the variant asked for, '' where the record does not say), ``fallback``
    (backend is not ``asked``),
    ``cases`` (how many records), ``ops`` (the harness operators among them) and ``example`` (a case); grouped by
    column, fallbacks first within a column. Records without delegation facts are left out."""
    rows: dict[tuple[str, str, str], dict[str, Any]] = {}
    for rec in records:
        placement = rec.providers or {}
        if not placement:
            continue
        col = column(rec)
        asked = rec.delegate or ""
        for op, backend in placement.items():
            row = rows.setdefault((col, op, backend), {
                "col": col, "framework": rec.framework, "system": rec.system,
                "op": op, "backend": backend, "asked": asked,
                "fallback": bool(asked) and backend != asked, "cases": 0, "ops": set(), "example": rec.case})
            row["cases"] += 1
            row["ops"].add(rec.op)
    out = sorted(rows.values(), key=lambda r: (r["col"], not r["fallback"], r["op"], r["backend"]))
    for row in out:
        row["ops"] = ", ".join(sorted(o for o in row["ops"] if o))
    return out


def summary(rows: list[dict[str, Any]]) -> dict[str, int]:
    """``columns`` with delegation facts, ``fallbacks`` (rows whose backend is not the one asked for) and
    ``fallback_cases`` (their records)."""
    return {"columns": len({r["col"] for r in rows}), "fallbacks": sum(r["fallback"] for r in rows),
            "fallback_cases": sum(r["cases"] for r in rows if r["fallback"])}


def by_system(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """One line per system with delegation facts: ``system``, ``apis`` (columns), ``ops`` (runtime operators),
    ``backends`` (what ran them, sorted), ``fallbacks`` (rows whose backend is not the one asked for) and
    ``fallback_cases`` (their records)."""
    out: dict[str, dict[str, Any]] = {}
    for row in rows:
        s = out.setdefault(row["system"], {"system": row["system"], "apis": set(), "ops": set(), "backends": set(),
                                           "fallbacks": 0, "fallback_cases": 0})
        s["apis"].add(row["col"])
        s["ops"].add(row["op"])
        s["backends"].add(row["backend"])
        s["fallbacks"] += row["fallback"]
        s["fallback_cases"] += row["cases"] if row["fallback"] else 0
    return [{**s, "apis": len(s["apis"]), "ops": len(s["ops"]), "backends": sorted(s["backends"])}
            for _, s in sorted(out.items())]
