"""The report's tables, built with pandas from result records: header, behaviour, conformance, dtype, changes.

Every function takes result records (:class:`~gather_scatter_conformance.vocab.record.Record`, as
harness.run.records.read yields them) or behaviour rows (dicts: harness.report.behaviour.table) and returns plain
Python structures the template renders; nothing here formats HTML. Framework agreement is harness.report.agreement.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

import pandas as pd

from gather_scatter_conformance.harness.judge.dimensions import DIMENSIONS, canonical_label, conforms
from gather_scatter_conformance.harness.report import severity
from gather_scatter_conformance.harness.report.behaviour import SIDES, provenance_changes, twin_rows
from gather_scatter_conformance.harness.report.rows import Key, dtype_split_text
from gather_scatter_conformance.vocab import variants
from gather_scatter_conformance.vocab.dimensions import words
from gather_scatter_conformance.vocab.ops import OPS

if TYPE_CHECKING:
    from gather_scatter_conformance.vocab.record import Record

STATUSES = ("conforms", "deviates", "dtype", "error", "crash", "timeout", "n/a")
GLYPH = {"conforms": "✓", "deviates": "✗", "dtype": "D", "error": "E", "crash": "C", "timeout": "T", "n/a": "·"}
# Documentation states, most telling first: the one a merged behaviour cell shows.
DOC_RANK = {"contradicts": 0, "undocumented": 1, "unspecified": 2, "agrees": 3}
DTYPE_PREFIXES = ("data-dtype:", "index-dtype:")



def dedupe(records: Iterable[Record]) -> list[Record]:
    """One record per case × framework × variant × device; a later record wins (as ``harness merge`` does)."""
    merged: dict[tuple[str, str, str, str], Record] = {}
    for rec in records:
        merged[rec.key] = rec
    return list(merged.values())


def column_name(framework: str, variant: str, device: str | None) -> str:
    """``framework:variant[@device]``: a column of the matrices and behaviour tables (no ``@`` on the CPU)."""
    dev = device or "cpu"
    return f"{framework}:{variant}" + ("" if dev == "cpu" else f"@{dev}")


def column(rec: Record) -> str:
    """The ``framework:variant[@device]`` a record belongs to."""
    return column_name(rec.framework, rec.variant, rec.device)


def row_column(row: dict[str, Any]) -> str:
    """The ``framework:variant[@device]`` a behaviour row (harness.report.behaviour.table) belongs to."""
    return column_name(row["framework"], row.get("variant", ""), row.get("device", "cpu"))


def system_name(framework: str, device: str | None) -> str:
    """The system a cell belongs to: the framework, with ``@device`` off the CPU (``onnxruntime@openvino``)."""
    return framework if device in (None, "", "cpu") else f"{framework}@{device}"


def status(rec: Record) -> str:
    """conforms | deviates | dtype | error | crash | timeout | n/a — what a matrix cell shows.

    ``dtype`` is a refusal of an element type the canonical type constraints allow (a dtype deviation); a refusal
    of a type outside them conforms (gather_scatter_conformance.harness.judge.verdict.judge).
    """
    outcome = rec.outcome
    if outcome == "unsupported" or rec.verdict == "n/a":
        return "n/a"
    if outcome in ("crash", "timeout"):
        return outcome
    if rec.verdict == "conforms":
        return "conforms"
    if outcome == "error":
        return "dtype" if rec.deviation == "dtype" else "error"
    return "deviates"


def frame(records: list[Record]) -> pd.DataFrame:
    """The records as a DataFrame with the derived columns the tables use (``rid`` is the record's index)."""
    rows = [{
        "rid": i, "case": r.case, "op": r.op, "framework": r.framework,
        "variant": r.variant, "device": r.device or "cpu", "col": column(r),
        "status": status(r), "outcome": r.outcome, "verdict": r.verdict,
        "version": r.framework_version,
    } for i, r in enumerate(records)]
    cols = ["rid", "case", "op", "framework", "variant", "device", "col", "status", "outcome", "verdict", "version"]
    return pd.DataFrame(rows, columns=cols)


def columns(df: pd.DataFrame) -> list[dict[str, Any]]:
    """Every framework:variant column, grouped by framework (alphabetical), CPU before other devices."""
    cols = df[["col", "framework", "variant", "device"]].drop_duplicates()
    cols = cols.assign(gpu=cols["device"] != "cpu").sort_values(["framework", "gpu", "variant", "device"])
    return [{"col": c.col, "framework": c.framework, "variant": c.variant + ("" if c.device == "cpu" else
            f"@{c.device}")} for c in cols.itertuples()]


def header(records: list[Record]) -> dict[str, Any]:
    """Run metadata: time range, machines, how many records were reused from the result cache (``cached``), and per
    framework its versions, devices and interpreters."""
    df = pd.DataFrame([{"framework": r.framework, "framework_version": r.framework_version, "device": r.device,
                        "python": r.python, "host": r.host, "time": r.time} for r in records],
                      columns=["framework", "framework_version", "device", "python", "host", "time"])
    join = lambda s: ", ".join(sorted({str(x) for x in s if x}))  # noqa: E731
    fws = df.groupby("framework", sort=True).agg(
        version=("framework_version", join), device=("device", join), python=("python", join),
        host=("host", join), records=("framework", "size"),
    ).reset_index()
    times = sorted(t for t in df["time"] if t)
    return {
        "first": times[0] if times else "", "last": times[-1] if times else "",
        "hosts": join(df["host"]), "pythons": join(df["python"]), "records": len(df),
        "cached": sum(bool(r.cached) for r in records),  # reused from the result cache (harness.run.cache)
        "frameworks": fws.to_dict("records"),
    }


def documented_columns(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The documented-only behaviour columns (harness.report.documented), after every measured one, with their
    reason."""
    seen: dict[str, dict[str, Any]] = {}
    for r in rows:
        if r.get("measured") is False and row_column(r) not in seen:
            dev = r.get("device", "cpu")
            seen[row_column(r)] = {"col": row_column(r), "framework": r["framework"],
                               "variant": r["variant"] + ("" if dev == "cpu" else f"@{dev}"), "doc_only": r["doc_only"]}
    return sorted(seen.values(), key=lambda c: (c["framework"], "@" in c["variant"], c["variant"]))


def behaviour_tables(rows: list[dict[str, Any]], col_index: dict[str, int],
                     sevs: list[str | None]) -> list[dict[str, Any]]:
    """One table per operator: its API groups down, its behaviour dimensions across, canonical ONNX first.

    Dimensions run across because an operator has at most about 15 of them, so a table fits a 1,600 px screen
    whatever the number of APIs. A framework's variants whose cells all read the same are one row (``variants``
    lists them); a documented-only column is a row of its own (``doc_only`` says why). A table's ``rows`` are the
    measured ones and its ``doc_rows`` the documented-only ones, which the page folds under the table (a small run
    would otherwise show more quotations than measurements). Each cell is ``None`` or
    ``{"b": [behaviour row indices], "text", "sev", "sym", "doc", "blog", "title", "split"}`` (``split``: which
    data dtypes gave which label, '' where they agree); ``sevs`` is :func:`severities` of the rows.
    """
    beh = [(i, r) for i, r in enumerate(rows) if not r["dimension"].startswith(DTYPE_PREFIXES)]
    tables = []
    for op in [o for o in OPS if any(r["op"] == o for _i, r in beh)]:
        part = [(i, r) for i, r in beh if r["op"] == op]
        present = {r["dimension"] for _i, r in part}
        dims = [d for d in DIMENSIONS if d in present] + sorted(present - set(DIMENSIONS))
        by_col: dict[str, dict[str, int]] = {}
        for i, r in part:
            by_col.setdefault(row_column(r), {})[r["dimension"]] = i
        groups: dict[tuple[Any, ...], dict[str, Any]] = {}
        for col in sorted(by_col, key=lambda c: col_index.get(c, 1 << 30)):
            first = rows[next(iter(by_col[col].values()))]
            cells = [_beh_cell(rows[by_col[col][d]], by_col[col][d], sevs[by_col[col][d]]) if d in by_col[col]
                     else None for d in dims]
            doc_only = first.get("doc_only") or "" if first.get("measured") is False else ""
            # Variants that behave alike share a row; their documentation may differ (a claim per operator
            # version), so a merged cell shows the most telling documentation state of its variants.
            sig = (first["framework"], first.get("device", "cpu"), doc_only,
                   tuple(None if c is None else (c["text"], c["sev"], c["blog"], c["split"]) for c in cells))
            variant = col.split(":", 1)[1]
            if sig in groups:
                g = groups[sig]
                g["variants"].append(variant)
                for have, c in zip(g["cells"], cells, strict=True):
                    if have is not None and c is not None:
                        have["b"] += c["b"]
                        if DOC_RANK.get(c["doc"], 9) < DOC_RANK.get(have["doc"], 9):
                            have["doc"] = c["doc"]
            else:
                groups[sig] = {"framework": first["framework"], "variants": [variant], "cells": cells,
                               "doc_only": doc_only}
        canonical = [{"dim": d, "question": DIMENSIONS.get(d, ("",))[0],
                      "canonical": words(canonical_label(op, d) or "any single order", d)
                      if d in DIMENSIONS else ""} for d in dims]
        every = list(groups.values())
        tables.append({"op": op, "dims": canonical, "rows": [g for g in every if not g["doc_only"]],
                       "doc_rows": [g for g in every if g["doc_only"]]})
    return tables


def shown_label(label: str) -> str:
    """The label a cell shows: probes the API cannot express (``unsupported``) drop out when others were measured."""
    parts = label.split("|")
    return "|".join(p for p in parts if p != "unsupported") or label if len(parts) > 1 else label


def severities(rows: list[dict[str, Any]]) -> list[str | None]:
    """Each behaviour row's severity (harness.report.severity); None for a documented-only row. Computed once per
    page: the tables, the key findings and the evidence all read it."""
    return [row_severity(r) if r.get("measured") is not False else None for r in rows]


def row_severity(row: dict[str, Any]) -> str:
    """The severity (gather_scatter_conformance.harness.report.severity) of a measured behaviour row's shown label."""
    label, shown = row["label"], shown_label(row["label"])
    ok = all(conforms(row["op"], row["dimension"], p) for p in shown.split("|")) if shown != label else bool(
        row["conforms"])
    return severity.of_label(shown, ok, row["op"], row["dimension"])


def _beh_cell(row: dict[str, Any], b: int, sev: str | None) -> dict[str, Any]:
    label, shown = row["label"], shown_label(row["label"])
    dim = row["dimension"]
    if row.get("measured") is False:
        src = " (secondary source: the 2020 blog)" if row.get("documented_kind") == "secondary" else ""
        title = [f"{row['doc_only'].capitalize()}.",
                 f"Documented{src}: {words(label, dim)} [{label}] — {row.get('documented_source')}",
                 f"Canonical (ONNX): {words(row.get('canonical') or 'any single order', dim)}"]
        return {"b": [b], "text": words(label, dim), "sev": "doconly", "sym": "", "title": "\n".join(title),
                "doc": "", "blog": False, "split": ""}
    # A cell's hover adds what its text and colour do not say: the label's key and what is written about it (the
    # canonical answer is the table's first row; the panel has the rest).
    title = [f"[{label}]"]
    # Where the data dtypes gave different labels, the text stays the combined label (and its colour the combined
    # severity); the hover and a line under the text say which dtypes gave which.
    split = dtype_split_text(row.get("by_data_dtype"))
    if split:
        title.append(f"By data dtype: {split}")
    doc = "" if sev == "na" else (row.get("documentation") or "")
    if row.get("documented"):
        title.append(f"Documented ({doc}): {words(row['documented'], dim)} — {row.get('documented_source')}")
    else:
        title.append("Documented: nothing (undocumented for this API version)")
    if row.get("blog_2020"):
        title.append(f"Blog 2020: {words(row['blog_2020'], dim)} — {row.get('blog_2020_source')}")
    # An API that cannot express the probe neither agrees nor disagrees with what is written about it.
    return {"b": [b], "text": words(shown, dim), "sev": sev, "sym": severity.symbol(sev), "title": "\n".join(title),
            "doc": doc, "blog": row.get("agrees_with_blog") is False and sev != "na", "split": split}


def matrices(df: pd.DataFrame, col_index: dict[str, int]) -> list[dict[str, Any]]:
    """Per operator: its case and API counts, how many of its cases fail somewhere, and its columns (indices into
    the page's column list, in order). The page draws the case × API grid from the records when it is opened."""
    out = []
    for op in [o for o in OPS if o in set(df["op"])] + sorted(set(df["op"]) - set(OPS)):
        part = df[df["op"] == op]
        cols = sorted(set(part["col"]), key=lambda c: col_index.get(c, 1 << 30))
        failing = part[~part["status"].isin(["conforms", "n/a"])]
        out.append({"op": op, "cases": int(part["case"].nunique()), "apis": len(cols),
                    "bad": int(failing["case"].nunique()), "cols": [col_index[c] for c in cols]})
    return out


def counts(df: pd.DataFrame) -> list[dict[str, Any]]:
    """Per operator (and in total): how many results passed, deviated, raised, crashed, timed out, were n/a."""
    tab = pd.crosstab(df["op"], df["status"]).reindex(columns=list(STATUSES), fill_value=0)
    tab.loc["all"] = tab.sum()
    order = [o for o in OPS if o in tab.index] + sorted(set(tab.index) - set(OPS) - {"all"}) + ["all"]
    return [{"op": op, **{s: int(tab.at[op, s]) for s in STATUSES}, "total": int(tab.loc[op].sum())}
            for op in order]


def dtype_matrix(rows: list[dict[str, Any]]) -> dict[str, Any]:
    """Framework × dtype support from ``data-dtype:*`` / ``index-dtype:*`` probes, over every op and variant."""
    beh = pd.DataFrame([{"b": i, "framework": r["framework"], "dimension": r["dimension"], "label": r["label"]}
                        for i, r in enumerate(rows)
                        if r["dimension"].startswith(DTYPE_PREFIXES) and r.get("measured") is not False],
                       columns=["b", "framework", "dimension", "label"])
    if beh.empty:
        return {"groups": [], "frameworks": [], "rows": []}
    beh["ok"] = beh["label"] == "ok"
    beh["na"] = beh["label"] == "unsupported"  # the API cannot express the probe: says nothing about the dtype
    dims = [d for d in DIMENSIONS if d in set(beh["dimension"])] + sorted(set(beh["dimension"]) - set(DIMENSIONS))
    groups = [{"name": "data dtype" if p == "data-dtype:" else "index dtype",
               "dims": [d for d in dims if d.startswith(p)]} for p in DTYPE_PREFIXES]
    groups = [g for g in groups if g["dims"]]
    agg = beh.groupby(["framework", "dimension"]).agg(ok=("ok", "sum"), na=("na", "sum"), n=("ok", "size"),
                                                      b=("b", list))
    out = []
    for fw in sorted(set(beh["framework"])):
        cells = []
        for g in groups:
            for d in g["dims"]:
                if (fw, d) not in agg.index:
                    cells.append(None)
                    continue
                a = agg.loc[(fw, d)]
                ok, n = int(a["ok"]), int(a["n"] - a["na"])
                text, cls = ("·", "sev-na") if n == 0 else ("✓", "sev-ok") if ok == n else (
                    ("◇", "sev-alt") if ok == 0 else (f"{ok}/{n}", "part"))
                title = f"{ok} of {n} APIs ran it correctly"
                title += f"; {int(a['na'])} cannot express it" if a["na"] else ""
                cells.append({"text": text, "cls": cls, "bl": " ".join(map(str, a["b"])), "title": title})
        out.append({"framework": fw, "cells": cells})
    return {"groups": groups, "frameworks": sorted(set(beh["framework"])), "rows": out}


def changes(cur_rows: list[dict[str, Any]], base_rows: list[dict[str, Any]], cur: list[Record],
            base: list[Record]) -> dict[str, Any]:
    """What changed against a baseline results set: behaviour labels, and cases that started/stopped failing."""
    bkey = lambda r: (r["op"], r["dimension"], r["framework"], r.get("variant", ""), r.get("device", "cpu"))  # noqa: E731
    old = {bkey(r): r for r in base_rows if r.get("measured") is not False}
    labels = [{"b": i, "row": r, "old_version": old[bkey(r)].get("framework_version"),
               "old_words": words(old[bkey(r)]["label"], r["dimension"]),
               "new_words": words(r["label"], r["dimension"])}
              for i, r in enumerate(cur_rows) if bkey(r) in old and old[bkey(r)]["label"] != r["label"]]
    prev = {r.key: status(r) for r in base}
    started, stopped, other = [], [], []
    for i, r in enumerate(cur):
        was, now = prev.get(r.key), status(r)
        if was is None or was == now:
            continue
        item = {"rid": i, "case": r.case, "col": column(r), "was": was, "now": now}
        failing = ("deviates", "dtype", "error", "crash", "timeout")
        if was in ("conforms", "n/a") and now in failing:
            started.append(item)
        elif was in failing and now == "conforms":
            stopped.append(item)
        else:
            other.append(item)
    cur_keys = {r.key for r in cur}
    return {"labels": labels, "started": started, "stopped": stopped, "other": other,
            "new": len(cur_keys - set(prev)), "gone": len(set(prev) - cur_keys)}


def provenance(rows: list[dict[str, Any]], cell_urls: dict[Key, str] | None = None) -> dict[str, Any] | None:
    """The Index provenance and dynamic shapes section: None where no twin was measured; else the labels a twin
    changes (harness.report.behaviour.provenance_changes), each with its column, the two sides' names and words and
    both cells' pages (``parent_url``, ``twin_url``; None without the site's ``cell_urls``)."""
    if not twin_rows(rows):
        return None
    urls = cell_urls or {}
    items = []
    for change in provenance_changes(rows):
        op, dim, fw, dev, variant = (change["op"], change["dimension"], change["framework"], change["device"],
                                     change["variant"])
        given, twin = SIDES[change["twin"]]
        items.append({**change, "col": column_name(fw, variant, dev), "parent_side": given, "twin_side": twin,
                      "parent_words": words(change["parent_label"], dim),
                      "twin_words": words(change["twin_label"], dim),
                      "parent_url": urls.get((op, dim, fw, variant, dev)),
                      "twin_url": urls.get((op, dim, fw, variants.twin(variant, change["twin"]), dev))})
    return {"changes": items}
