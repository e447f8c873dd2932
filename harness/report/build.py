"""The report's tables, built with pandas from result records: header, behaviour, conformance, dtype, changes.

Every function takes plain records (dicts as the runner writes them) or behaviour rows (harness.report.behaviour.table)
and returns plain Python structures the template renders; nothing here formats HTML. Framework agreement is
harness.report.agreement.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import pandas as pd

from harness.cases.ops import OPS
from harness.judge.dimensions import DIMENSIONS, kind
from harness.run.records import record_key

FAMILIES = (
    ("Table 1: GatherND / ScatterND", ("GatherND", "ScatterND")),
    ("Table 2: Gather / Take", ("Gather", "Take")),
    ("Table 3: GatherElements / ScatterElements", ("GatherElements", "ScatterElements")),
)
STATUSES = ("conforms", "deviates", "dtype", "error", "crash", "timeout", "n/a")
GLYPH = {"conforms": "✓", "deviates": "✗", "dtype": "D", "error": "E", "crash": "C", "timeout": "T", "n/a": "·"}
DTYPE_PREFIXES = ("data-dtype:", "index-dtype:")

WORDS = {
    "wrap": "Wrap (supported)", "error": "Error", "zero": "Zero", "clamp": "Clamp", "fill-nan": "Fill (NaN/min)",
    "skip": "Dropped", "alias": "Reads neighbour", "garbage": "Garbage", "last-wins": "Last wins",
    "first-wins": "First wins", "accumulate": "Accumulate", "reduce-all": "Reduces all", "mixed": "Mixed order",
    "nondeterministic": "Non-deterministic", "keep-data": "Same as data", "ok": "Supported",
    "wrong": "Wrong result", "axis-0": "Outermost axis", "flatten": "Flattened",
    "first-non-batch": "First non-batch axis", "last": "Innermost axis", "required": "Required (no default)",
    "other": "Other axis", "unsupported": "Not expressible", "timeout": "Timeout (hang)",
    "unspecified": "Unspecified", "undefined": "Undefined",
}


def words(label: str | None, dimension: str | None = None) -> str:
    """Short blog-style cell text for a label (``a|b`` — different labels across probes — reads ``A / B``)."""
    if not label:
        return ""
    out = []
    for part in label.split("|"):
        if part.startswith("crash:"):
            out.append(f"Crash ({part.split(':', 1)[1]})")
        elif part == "error" and dimension in DIMENSIONS and kind(dimension) == "support":
            out.append("Not supported (error)")
        else:
            out.append(WORDS.get(part, part.capitalize()))
    return " / ".join(out)


def dedupe(records: Iterable[dict[str, Any]]) -> list[dict[str, Any]]:
    """One record per case × framework × variant × device; a later record wins (as ``harness merge`` does)."""
    merged: dict[tuple[str, str, str, str], dict[str, Any]] = {}
    for rec in records:
        merged[record_key(rec)] = rec
    return list(merged.values())


def column(rec: dict[str, Any]) -> str:
    """The ``framework:variant[@device]`` a record or behaviour row belongs to."""
    dev = rec.get("device", "cpu") or "cpu"
    return f"{rec['framework']}:{rec.get('variant', '')}" + ("" if dev == "cpu" else f"@{dev}")


def status(rec: dict[str, Any]) -> str:
    """conforms | deviates | dtype | error | crash | timeout | n/a — what a matrix cell shows.

    ``dtype`` is a refusal of an element type the canonical type constraints allow (a dtype deviation); a refusal
    of a type outside them conforms (harness.judge.verdict.judge).
    """
    outcome = rec.get("outcome")
    if outcome == "unsupported" or rec.get("verdict") == "n/a":
        return "n/a"
    if outcome in ("crash", "timeout"):
        return outcome
    if rec.get("verdict") == "conforms":
        return "conforms"
    if outcome == "error":
        return "dtype" if rec.get("deviation") == "dtype" else "error"
    return "deviates"


def frame(records: list[dict[str, Any]]) -> pd.DataFrame:
    """The records as a DataFrame with the derived columns the tables use (``rid`` is the record's index)."""
    rows = [{
        "rid": i, "case": r["case"], "op": r["op"], "framework": r["framework"],
        "variant": r.get("variant", ""), "device": r.get("device", "cpu") or "cpu", "col": column(r),
        "status": status(r), "outcome": r.get("outcome"), "verdict": r.get("verdict"),
        "version": r.get("framework_version", ""),
    } for i, r in enumerate(records)]
    cols = ["rid", "case", "op", "framework", "variant", "device", "col", "status", "outcome", "verdict", "version"]
    return pd.DataFrame(rows, columns=cols)


def columns(df: pd.DataFrame) -> list[dict[str, Any]]:
    """Every framework:variant column, grouped by framework (alphabetical), CPU before other devices."""
    cols = df[["col", "framework", "variant", "device"]].drop_duplicates()
    cols = cols.assign(gpu=cols["device"] != "cpu").sort_values(["framework", "gpu", "variant", "device"])
    return [{"col": c.col, "framework": c.framework, "variant": c.variant + ("" if c.device == "cpu" else
            f"@{c.device}")} for c in cols.itertuples()]


def header(records: list[dict[str, Any]]) -> dict[str, Any]:
    """Run metadata: time range, machines, and per framework its versions, devices and interpreters."""
    df = pd.DataFrame([{k: r.get(k) or "" for k in ("framework", "framework_version", "device", "python", "host",
                                                     "time")} for r in records],
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
        "frameworks": fws.to_dict("records"),
    }


def documented_columns(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The documented-only behaviour columns (harness.report.documented), after every measured one, with their
    reason."""
    seen: dict[str, dict[str, Any]] = {}
    for r in rows:
        if r.get("measured") is False and column(r) not in seen:
            dev = r.get("device", "cpu")
            seen[column(r)] = {"col": column(r), "framework": r["framework"],
                               "variant": r["variant"] + ("" if dev == "cpu" else f"@{dev}"), "doc_only": r["doc_only"]}
    return sorted(seen.values(), key=lambda c: (c["framework"], "@" in c["variant"], c["variant"]))


def _col_key(row: dict[str, Any]) -> str:
    return column(row)


def behaviour_tables(rows: list[dict[str, Any]], col_index: dict[str, int]) -> list[dict[str, Any]]:
    """The blog's Tables 1 and 2 (and one for the Elements pair): dimensions down, op → framework → variant across.

    Each cell is ``None`` or ``{"b": row index, "text", "cls", "doc", "blog", "title"}``.
    """
    beh = pd.DataFrame([{"measured": True, "doc_only": "", **r, "b": i, "col": _col_key(r)}
                        for i, r in enumerate(rows) if not r["dimension"].startswith(DTYPE_PREFIXES)])
    tables = []
    for title, ops in FAMILIES:
        part = beh[beh["op"].isin(ops)] if len(beh) else beh
        if part.empty:
            tables.append({"title": title, "ops": ops, "leaves": [], "groups": _groups([]), "rows": [], "doc": []})
            continue
        dims = [d for d in DIMENSIONS if d in set(part["dimension"])]
        dims += sorted(set(part["dimension"]) - set(dims))
        leaves = []  # (op, framework, col)
        for op in ops:
            sub = part[part["op"] == op]
            leaves += [(op, c["framework"], c["col"]) for c in sorted(
                ({"framework": fw, "col": col} for fw, col in set(zip(sub["framework"], sub["col"], strict=True))),
                key=lambda c: col_index.get(c["col"], 1 << 30))]
        cell = {(r.dimension, r.op, r.col): r.b for r in part.itertuples()}
        body = []
        for dim in dims:
            cells = [_beh_cell(rows[cell[(dim, op, col)]], cell[(dim, op, col)]) if (dim, op, col) in cell else None
                     for op, _fw, col in leaves]
            body.append({"dimension": dim, "question": DIMENSIONS.get(dim, ("",))[0], "cells": cells})
        doc = {r.col: r.doc_only for r in part.itertuples() if r.measured is False}
        tables.append({"title": title, "ops": ops, "leaves": leaves, "groups": _groups(leaves), "rows": body,
                       "doc": [doc.get(col, "") for _op, _fw, col in leaves]})
    return tables


def _groups(leaves: list[tuple[str, str, str]]) -> dict[str, list[dict[str, Any]]]:
    """Header spans: per op, and per (op, framework), each listing the leaf columns it covers."""
    ops: list[dict[str, Any]] = []
    fws: list[dict[str, Any]] = []
    for i, (op, fw, _col) in enumerate(leaves):
        if not ops or ops[-1]["name"] != op:
            ops.append({"name": op, "leaves": []})
        if not fws or (fws[-1]["op"], fws[-1]["name"]) != (op, fw):
            fws.append({"op": op, "name": fw, "leaves": []})
        ops[-1]["leaves"].append(i)
        fws[-1]["leaves"].append(i)
    return {"ops": ops, "frameworks": fws}


def shown_label(label: str) -> str:
    """The label a cell shows: probes the API cannot express (``unsupported``) drop out when others were measured."""
    parts = label.split("|")
    return "|".join(p for p in parts if p != "unsupported") or label if len(parts) > 1 else label


def _beh_cell(row: dict[str, Any], b: int) -> dict[str, Any]:
    from harness.judge.dimensions import conforms

    label, shown = row["label"], shown_label(row["label"])
    if row.get("measured") is False:
        src = " (secondary source: the 2020 blog)" if row.get("documented_kind") == "secondary" else ""
        title = [f"{row['doc_only'].capitalize()}.",
                 f"Documented{src}: {words(label, row['dimension'])} [{label}] — {row.get('documented_source')}",
                 f"Canonical (ONNX): {words(row.get('canonical') or 'any single order', row['dimension'])}"]
        return {"b": b, "text": words(label, row["dimension"]), "cls": "doconly", "title": "\n".join(title),
                "doc": False, "undoc": False, "blog": False}
    if shown == "unsupported":
        cls = "na"
    elif any(p.startswith("crash:") for p in shown.split("|")):
        cls = "crash"
    elif shown == label:
        cls = "pass" if row["conforms"] else "dev"
    else:
        cls = "pass" if all(conforms(row["op"], row["dimension"], p) for p in shown.split("|")) else "dev"
    title = [f"Measured: {words(label, row['dimension'])} [{label}]",
             f"Canonical (ONNX): {words(row.get('canonical') or 'any single order', row['dimension'])}"]
    if row.get("documented"):
        title.append(f"Documented: {words(row['documented'], row['dimension'])} — {row.get('documented_source')}")
    else:
        title.append("Documented: nothing (undocumented for this API version)")
    if row.get("blog_2020"):
        title.append(f"Blog 2020: {words(row['blog_2020'], row['dimension'])} — {row.get('blog_2020_source')}")
    return {"b": b, "text": words(shown, row["dimension"]), "cls": cls, "title": "\n".join(title),
            # An API that cannot express the probe neither agrees nor disagrees with what is written about it.
            "doc": row.get("agrees_with_docs") is False and shown != "unsupported",
            "undoc": row.get("documentation") == "undocumented" and shown != "unsupported",
            "blog": row.get("agrees_with_blog") is False and shown != "unsupported"}


def matrices(df: pd.DataFrame, col_index: dict[str, int]) -> list[dict[str, Any]]:
    """Per operator: its cases × its framework:variant columns, each cell ``(status, rid)`` or None."""
    out = []
    for op in [o for o in OPS if o in set(df["op"])] + sorted(set(df["op"]) - set(OPS)):
        part = df[df["op"] == op]
        cases = list(dict.fromkeys(part["case"]))
        cols = sorted(set(part["col"]), key=lambda c: col_index.get(c, 1 << 30))
        grid = {(case, col): (st, int(rid)) for case, col, st, rid in
                part[["case", "col", "status", "rid"]].itertuples(index=False)}
        rows = []
        for case in cases:
            cells = [grid.get((case, c)) for c in cols]
            bad = any(c and c[0] not in ("conforms", "n/a") for c in cells)
            rows.append({"case": case, "cells": cells, "bad": bad})
        foot = [dict(part[part["col"] == c]["status"].value_counts()) for c in cols]
        fws = [c.split(":", 1)[0] for c in cols]
        out.append({"op": op, "cols": cols, "frameworks": fws, "rows": rows, "foot": foot,
                    "groups": _groups([(op, fw, c) for fw, c in zip(fws, cols, strict=True)])["frameworks"]})
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
                text, cls = ("Not expressible", "na") if n == 0 else ("Supported", "pass") if ok == n else (
                    ("Not supported", "dev") if ok == 0 else (f"Partial {ok}/{n}", "part"))
                title = f"{ok} of {n} APIs ran it correctly"
                title += f"; {int(a['na'])} cannot express it" if a["na"] else ""
                cells.append({"text": text, "cls": cls, "bl": " ".join(map(str, a["b"])), "title": title})
        out.append({"framework": fw, "cells": cells})
    return {"groups": groups, "frameworks": sorted(set(beh["framework"])), "rows": out}


def changes(cur_rows: list[dict[str, Any]], base_rows: list[dict[str, Any]], cur: list[dict[str, Any]],
            base: list[dict[str, Any]]) -> dict[str, Any]:
    """What changed against a baseline results set: behaviour labels, and cases that started/stopped failing."""
    bkey = lambda r: (r["op"], r["dimension"], r["framework"], r.get("variant", ""), r.get("device", "cpu"))  # noqa: E731
    old = {bkey(r): r for r in base_rows if r.get("measured") is not False}
    labels = [{"b": i, "row": r, "old_version": old[bkey(r)].get("framework_version"),
               "old_words": words(old[bkey(r)]["label"], r["dimension"]),
               "new_words": words(r["label"], r["dimension"])}
              for i, r in enumerate(cur_rows) if bkey(r) in old and old[bkey(r)]["label"] != r["label"]]
    prev = {record_key(r): status(r) for r in base}
    started, stopped, other = [], [], []
    for i, r in enumerate(cur):
        was, now = prev.get(record_key(r)), status(r)
        if was is None or was == now:
            continue
        item = {"rid": i, "case": r["case"], "col": column(r), "was": was, "now": now}
        failing = ("deviates", "dtype", "error", "crash", "timeout")
        if was in ("conforms", "n/a") and now in failing:
            started.append(item)
        elif was in failing and now == "conforms":
            stopped.append(item)
        else:
            other.append(item)
    cur_keys = {record_key(r) for r in cur}
    return {"labels": labels, "started": started, "stopped": stopped, "other": other,
            "new": len(cur_keys - set(prev)), "gone": len(set(prev) - cur_keys)}
