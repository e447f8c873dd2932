"""The report's History section: each framework API × behaviour dimension's label per release, from the release
sweeps in ``history/<framework>.jsonl`` (harness.history.store), with every change linked to the evidence of both
releases."""

from __future__ import annotations

import math
from collections import defaultdict
from typing import Any

from packaging.version import Version

from gather_scatter_conformance.harness.history import store

# Release columns per table: at 1600 px, more than 12 left labels such as "unsupported" too narrow a column, and
# they broke inside words. A framework with more releases gets its history in several tables of equal width.
COLUMNS = 12


def parts(n: int, columns: int = COLUMNS) -> list[tuple[int, int]]:
    """(start, stop) of each table's release columns: ``n`` releases in as few tables of at most ``columns`` as fit,
    as even as possible (21 -> 11 + 10)."""
    if n <= 0:
        return []
    size = math.ceil(n / math.ceil(n / columns))
    return [(i, min(i + size, n)) for i in range(0, n, size)]


def _evidence(rec: dict[str, Any] | None) -> dict[str, Any]:
    """What one release measured for one key, as the page lists it."""
    if rec is None:
        return {}
    cases = rec.get("labels") or {c: "deviates" for c in rec.get("deviating", [])}
    return {"release": rec["release"], "version": rec.get("version", ""), "label": rec["label"],
            "cases": sorted(cases.items()), "outcomes": rec.get("outcomes", {}), "measured": rec.get("measured", ""),
            "packages": ", ".join(f"{k} {v}" for k, v in sorted(rec.get("packages", {}).items()))}


def _framework(framework: str, records: list[dict[str, Any]]) -> dict[str, Any]:
    releases = store.releases(records)
    by_key = {store.key(r): {} for r in records if r.get("status") == "ok"}
    for rec in records:
        if rec.get("status") == "ok":
            by_key[store.key(rec)][rec["release"]] = rec
    found = store.changes(records)
    points: dict[tuple[store.Key, str], int] = {}
    evidence = []
    for i, change in enumerate(found):
        anchor = f"hev-{framework}-{i}"
        points[(change.key, change.after)] = i
        op, variant, device, dimension = change.key
        evidence.append({"id": anchor, "op": op, "api": f"{variant}{'' if device == 'cpu' else '@' + device}",
                         "dimension": dimension, "old": change.old, "new": change.new, "kind": change.kind,
                         "before": _evidence(by_key[change.key].get(change.before)),
                         "after": _evidence(by_key[change.key].get(change.after))})
    rows = []
    for key in sorted({c.key for c in found}):
        op, variant, device, dimension = key
        cells = []
        for rel in releases:
            rec = by_key[key].get(rel)
            i = points.get((key, rel))
            cells.append({"text": rec["label"] if rec else "", "change": None if i is None else f"hev-{framework}-{i}"})
        rows.append({"op": op, "api": f"{variant}{'' if device == 'cpu' else '@' + device}", "dimension": dimension,
                     "cells": cells})
    api = sum(c.kind == "api" for c in found)
    return {"framework": framework, "releases": releases, "rows": rows, "evidence": evidence,
            "parts": [{"start": a, "stop": b, "releases": releases[a:b]} for a, b in parts(len(releases))],
            "stable": len(by_key) - len(rows), "failures": store.failures(records), "changes": len(found),
            "api_changes": api,
            # as every page counts them: every change, then those of behaviour
            "counted": f"{len(found)} ({len(found) - api} of behaviour)"}


def section(records: list[dict[str, Any]]) -> dict[str, Any] | None:
    """The History section's data from history records of any frameworks; None when there are none."""
    if not records:
        return None
    by_fw: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for rec in records:
        by_fw[rec["framework"]].append(rec)
    frameworks = [_framework(fw, recs) for fw, recs in sorted(by_fw.items())]
    n_changes = sum(f["changes"] for f in frameworks)
    n_api = sum(f["api_changes"] for f in frameworks)
    n_releases = sum(len(f["releases"]) for f in frameworks)
    spans = ", ".join(f"{f['framework']} {f['releases'][0]}–{f['releases'][-1]}" for f in frameworks)
    newest = max((r.get("measured", "") for r in records), default="")
    return {"frameworks": frameworks,
            "summary": f"{n_changes} label change{'s' if n_changes != 1 else ''} across {n_releases} releases of "
                       f"{len(frameworks)} framework{'s' if len(frameworks) != 1 else ''}",
            "breakdown": f"{n_changes - n_api} of behaviour (the same call did something else), {n_api} where an API "
                         f"arrived or went (unsupported on one side)",
            "spans": spans, "measured": newest,
            "order": sorted({r["release"] for r in records}, key=Version)}
