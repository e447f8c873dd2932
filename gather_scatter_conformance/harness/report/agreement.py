"""Framework agreement: for each pair of frameworks, how often their APIs' results on a shared case agree.

For every case, every pair of results from two frameworks' API variants (framework:variant[@device] columns; a
framework against itself compares its own variants) is one *result pair*. Two results agree when both produced a
value and the values agree (element-wise, floats to 6 significant digits, when both observed values are stored,
else both conforming), or when both refused (error, crash or timeout). A value against a refusal disagrees; two
deviating values too large to compare are left out.

A value against a refusal *of an element type* says nothing about values, so such pairs are set apart as ``dtype``
pairs, counted and listed on their own: the refusing side refused a type the spec allows (``build.status`` is
``dtype``), or the case lies outside the spec's type constraints (a record's ``spec`` is ``outside (...)``), where a
refusal is allowed. Two refusals of such a case still agree (both refused).

The counts are given once over all operators and once per operator (a case belongs to one operator, so the
per-operator tables partition the all-operators one).
"""

from __future__ import annotations

import json
import math
from typing import TYPE_CHECKING, Any

import pandas as pd

from gather_scatter_conformance.harness.report.build import status
from gather_scatter_conformance.vocab.ops import OPS

if TYPE_CHECKING:
    from gather_scatter_conformance.vocab.record import Record

REFUSALS = ("error", "crash", "timeout")


def _value_key(rec: Record) -> str | None:
    """A comparable form of a small observed value (floats to 6 significant digits), else None."""
    obs = rec.observed
    if obs is None:
        return None

    def norm(x: Any) -> Any:
        if isinstance(x, list):
            return [norm(v) for v in x]
        if isinstance(x, float):
            return "nan" if math.isnan(x) else float(f"{x:.6g}")
        return x

    return json.dumps([rec.observed_shape, norm(obs)])


def _pairs(records: list[Record], df: pd.DataFrame) -> pd.DataFrame:
    """Every result pair on a shared case, once (framework_a < framework_b, or one framework and col_a < col_b),
    with ``agree``, ``both_refused``, ``dtype`` (set apart) and ``counted`` (in n) flags and the case's order."""
    runs = df[df["status"] != "n/a"]
    rids = runs["rid"].tolist()
    runs = runs.assign(
        refused=runs["outcome"].isin(REFUSALS),
        key=[_value_key(records[i]) for i in rids],
        # A refusal of an element type: one the spec allows (status dtype), or any refusal outside the spec.
        dtype_refusal=[status(records[i]) == "dtype" for i in rids],
        outside=[records[i].spec.startswith("outside") for i in rids],
        order=runs["case"].map({c: i for i, c in enumerate(dict.fromkeys(df["case"]))}),
    )[["op", "case", "order", "framework", "col", "rid", "refused", "key", "verdict", "dtype_refusal", "outside"]]
    pairs = runs.merge(runs.drop(columns=["order"]), on=["op", "case"], suffixes=("_a", "_b"))
    pairs = pairs[(pairs["framework_a"] < pairs["framework_b"]) | (
        (pairs["framework_a"] == pairs["framework_b"]) & (pairs["col_a"] < pairs["col_b"]))]
    ref_a, ref_b = pairs["refused_a"], pairs["refused_b"]
    both_val = ~ref_a & ~ref_b
    keyed = pairs["key_a"].notna() & pairs["key_b"].notna()
    conf = (pairs["verdict_a"] == "conforms") & (pairs["verdict_b"] == "conforms")
    agree_val = both_val & ((keyed & (pairs["key_a"] == pairs["key_b"])) | (~keyed & conf))
    unknown = both_val & ~keyed & ~conf & (pairs["verdict_a"] == "deviates") & (pairs["verdict_b"] == "deviates")
    dtype = (ref_a != ref_b) & ((ref_a & pairs["dtype_refusal_a"]) | (ref_b & pairs["dtype_refusal_b"])
                                | pairs["outside_a"] | pairs["outside_b"])
    return pairs.assign(agree=agree_val | (ref_a & ref_b), both_refused=ref_a & ref_b, dtype=dtype,
                        counted=~unknown & ~dtype)


def _listed(part: pd.DataFrame, keys: list[str]) -> dict[tuple[Any, ...], list[list[int]]]:
    """Per group of ``keys``: one ``[rid_a, rid_b]`` per case (its first pair by rid), in case order."""
    first = part.sort_values(["order", "rid_a", "rid_b"], kind="stable").drop_duplicates(keys + ["case"])
    out: dict[tuple[Any, ...], list[list[int]]] = {}
    for row in first[keys + ["rid_a", "rid_b"]].itertuples(index=False):
        out.setdefault(tuple(row[:-2]), []).append([int(row[-2]), int(row[-1])])
    return out


def _cells(pairs: pd.DataFrame, keys: list[str]) -> dict[tuple[Any, ...], dict[str, Any]]:
    """One cell per group of ``keys`` (ending in framework_a, framework_b) with any counted or dtype pair; rids in
    ``diff`` and ``dtype_diff`` are [framework_a's, framework_b's]."""
    counted = pairs[pairs["counted"]]
    agg = counted.groupby(keys).agg(n=("agree", "size"), agree=("agree", "sum"), refused=("both_refused", "sum"),
                                    cases=("case", "nunique")).to_dict("index")
    dtype = pairs[pairs["dtype"]].groupby(keys).size().to_dict()
    diff = _listed(counted[~counted["agree"]], keys)
    dtype_diff = _listed(pairs[pairs["dtype"]], keys)
    cells: dict[tuple[Any, ...], dict[str, Any]] = {}
    zero = {"n": 0, "agree": 0, "refused": 0, "cases": 0}
    for key in sorted(set(agg) | set(dtype)):
        a = agg.get(key, zero)
        n, agree = int(a["n"]), int(a["agree"])
        cells[key] = {"n": n, "agree": agree, "refused": int(a["refused"]), "dtype": int(dtype.get(key, 0)),
                      "share": agree / n if n else None, "cases": int(a["cases"]),
                      "diff": diff.get(key, []), "dtype_diff": dtype_diff.get(key, [])}
    return cells


def _oriented(cell: dict[str, Any] | None, swap: bool) -> dict[str, Any] | None:
    """The cell as seen from the other framework's row: the same counts, each listed pair's rids swapped."""
    if cell is None or not swap:
        return cell
    return {**cell, "diff": [[b, a] for a, b in cell["diff"]], "dtype_diff": [[b, a] for a, b in cell["dtype_diff"]]}


def _grid(cells: dict[tuple[str, str], dict[str, Any]], fws: list[str]) -> list[dict[str, Any]]:
    return [{"framework": fa, "cells": [_oriented(cells.get((min(fa, fb), max(fa, fb))), fa > fb) for fb in fws]}
            for fa in fws]


def agreement(records: list[Record], df: pd.DataFrame) -> dict[str, Any]:
    """Framework × framework agreement, over all operators and per operator (see the module docstring).

    ``df`` is ``build.frame(records)`` (its ``rid`` indexes ``records``). Returns
    ``{"frameworks": [...], "ops": [...], "tables": [{"op": None | op, "rows": [...]}, ...]}``: ``frameworks`` every
    framework in ``df``, sorted; ``ops`` the operators in ``df`` in ``vocab.ops.OPS`` order (others sorted
    after); ``tables`` first the one over all operators (``op`` None), then one per operator in ``ops`` order. Each
    table's ``rows`` is ``[{"framework": fa, "cells": [cell for fb in frameworks]}]``; a cell is None when the two
    frameworks share no compared result pair (on that operator), else::

        {"n": result pairs counted, "agree": of them agreeing, "refused": of those both refused,
         "dtype": pairs set apart as a refusal of an element type (not in n), "share": agree / n (None when n is 0),
         "cases": distinct cases among the counted pairs,
         "diff": [[rid_row, rid_col], ...]  # every disagreeing case, its first pair by rid, in case order
         "dtype_diff": [[rid_row, rid_col], ...]}  # every case with a dtype pair, likewise

    A rid indexes ``records``; the first of a listed pair belongs to the row's framework, the second to the
    column's (on the diagonal, the variant whose column name sorts first). The cells of (fa, fb) and (fb, fa) hold
    the same counts and pairs. Nothing is truncated.
    """
    fws = sorted(set(df["framework"]))
    present = set(df["op"])
    ops = [o for o in OPS if o in present] + sorted(present - set(OPS))
    pairs = _pairs(records, df)
    everywhere = _cells(pairs, ["framework_a", "framework_b"])
    per_op = _cells(pairs, ["op", "framework_a", "framework_b"])
    tables = [{"op": None, "rows": _grid(everywhere, fws)}]
    for op in ops:
        tables.append({"op": op, "rows": _grid({k[1:]: c for k, c in per_op.items() if k[0] == op}, fws)})
    return {"frameworks": fws, "ops": ops, "tables": tables}
