"""Framework agreement (harness/report/agreement.py): per operator, dtype refusals apart, every disagreement listed.

The records are written by hand with the fields the runner produces (see tests/test_report.py's ``rec``).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("pandas")

from test_report import GATHER6, rec, sample_records

from gather_scatter_conformance.harness.evidence.cells import Cases
from gather_scatter_conformance.harness.report import build, drilldown
from gather_scatter_conformance.harness.report.agreement import agreement
from gather_scatter_conformance.vocab.record import Record

WRONG = {"observed": [1.0, 0.0, 0.0], "max_abs_err": 5.0, "mismatches": 2, "reason": "2 of 3 element(s) differ"}
DTYPE_REFUSAL = {"error_type": "TypeError", "error_message": "bfloat16 not supported", "deviation": "dtype",
                 "reason": "refused an element type the spec allows"}


def run(records: list[dict[str, Any]]) -> tuple[list[Record], dict[str, Any]]:
    """The records (as a results file holds them) read, deduplicated, and their agreement."""
    typed = build.dedupe(Record.read(r) for r in records)
    return typed, agreement(typed, build.frame(typed))


def cell(agree: dict[str, Any], fa: str, fb: str, op: str | None = None) -> dict[str, Any] | None:
    """The cell of row ``fa``, column ``fb`` in the table of ``op`` (None: all operators)."""
    table = next(t for t in agree["tables"] if t["op"] == op)
    fws = agree["frameworks"]
    row = table["rows"][fws.index(fa)]
    assert row["framework"] == fa
    return row["cells"][fws.index(fb)]


def case(i: int, op: str = "Gather") -> str:
    return f"cases/synthetic.yaml::{op.lower()}-{i}"


def mixed_records() -> list[dict[str, Any]]:
    """The report's sample plus Take and GatherElements cases with agreements, disagreements and dtype refusals."""
    out = sample_records()
    for op in ("Take", "GatherElements"):
        for i in range(4):
            c = case(i, op)
            out += [rec(c, op, "numpy", "take"), rec(c, op, "torch", "indexing"),
                    rec(c, op, "torch", "index_select", **(WRONG | {"verdict": "deviates"}) if i % 2 else {}),
                    rec(c, op, "tensorflow", "gather/eager", "error", "deviates", **DTYPE_REFUSAL) if i == 3 else
                    rec(c, op, "tensorflow", "gather/eager", "error", "deviates") if i == 2 else
                    rec(c, op, "tensorflow", "gather/eager")]
    return out


def test_agreement() -> None:
    records, agree = run(sample_records())
    fws = agree["frameworks"]
    assert fws == ["numpy", "tensorflow", "torch"]
    assert agree["ops"] == ["Gather", "GatherND"]  # gather_scatter_conformance.vocab.ops.OPS order
    assert [t["op"] for t in agree["tables"]] == [None, "Gather", "GatherND"]
    numpy_torch = cell(agree, "numpy", "torch")
    # numpy vs torch: Gather6 ×2 torch variants (agree, disagree), GatherND (agree), probe (refused vs value).
    assert (numpy_torch["n"], numpy_torch["agree"], numpy_torch["dtype"]) == (4, 2, 0)
    assert numpy_torch["cases"] == 3
    probe = "cases/probes/nonexistent.yaml::probe-oob"
    assert [records[a].case for a, _b in numpy_torch["diff"]] == [GATHER6, probe]
    same = cell(agree, "torch", "torch")
    assert (same["n"], same["agree"]) == (1, 0)  # indexing vs index_select on Gather6
    # GatherND: numpy and torch agree; tensorflow's crash against their values disagrees (it is no dtype refusal).
    assert cell(agree, "numpy", "torch", "GatherND")["share"] == 1.0
    assert cell(agree, "tensorflow", "numpy", "GatherND")["n"] == 1
    assert cell(agree, "tensorflow", "numpy", "GatherND")["share"] == 0.0


def test_per_operator_tables_partition_the_all_operators_table() -> None:
    records, agree = run(mixed_records())
    assert agree["ops"] == ["Gather", "GatherElements", "GatherND", "Take"]
    fws = agree["frameworks"]
    order = list(dict.fromkeys(r.case for r in records))
    for fa in fws:
        for fb in fws:
            total = cell(agree, fa, fb)
            parts = [c for op in agree["ops"] if (c := cell(agree, fa, fb, op)) is not None]
            if total is None:
                assert not parts
                continue
            for k in ("n", "agree", "refused", "dtype", "cases"):
                assert total[k] == sum(p[k] for p in parts), (fa, fb, k)
            for k in ("diff", "dtype_diff"):
                assert sorted(map(tuple, total[k])) == sorted(tuple(d) for p in parts for d in p[k]), (fa, fb, k)
                cases = [records[a].case for a, _b in total[k]]
                assert cases == sorted(set(cases), key=order.index)  # one pair per case, in case order
    # The mirror cell holds the same counts, its pairs seen from the other row.
    a, b = cell(agree, "numpy", "torch"), cell(agree, "torch", "numpy")
    assert {k: a[k] for k in ("n", "agree", "refused", "dtype", "cases")} == {
        k: b[k] for k in ("n", "agree", "refused", "dtype", "cases")}
    assert b["diff"] == [[y, x] for x, y in a["diff"]]
    assert a["diff"] and all(records[x].framework == "numpy" and records[y].framework == "torch"
                             for x, y in a["diff"])


def test_a_dtype_refusal_is_set_apart() -> None:
    c = case(0)
    records, agree = run([rec(c, "Gather", "numpy", "take"),
                          rec(c, "Gather", "torch", "indexing", "error", "deviates", **DTYPE_REFUSAL),
                          rec(c, "Gather", "torch", "index_select", "error", "deviates", **DTYPE_REFUSAL),
                          rec(c, "Gather", "tensorflow", "gather/eager", "error", "deviates")])
    assert build.status(records[1]) == "dtype" and build.status(records[3]) == "error"
    numpy_torch = cell(agree, "numpy", "torch")
    assert (numpy_torch["n"], numpy_torch["dtype"], numpy_torch["share"], numpy_torch["cases"]) == (0, 2, None, 0)
    assert numpy_torch["diff"] == [] and numpy_torch["dtype_diff"] == [[0, 1]]  # one pair per case
    assert cell(agree, "torch", "numpy")["dtype_diff"] == [[1, 0]]
    assert cell(agree, "numpy", "torch", "Gather") == numpy_torch
    # An ordinary refusal against a value still disagrees.
    numpy_tf = cell(agree, "numpy", "tensorflow")
    assert (numpy_tf["n"], numpy_tf["agree"], numpy_tf["dtype"], numpy_tf["diff"]) == (1, 0, 0, [[0, 3]])
    # Two refusals agree, a dtype refusal among them: both refused.
    torch_tf = cell(agree, "torch", "tensorflow")
    assert (torch_tf["n"], torch_tf["agree"], torch_tf["refused"], torch_tf["dtype"]) == (2, 2, 2, 0)
    assert (cell(agree, "torch", "torch")["n"], cell(agree, "torch", "torch")["refused"]) == (1, 1)
    assert cell(agree, "numpy", "numpy") is None  # one variant: nothing to compare with itself


def test_a_refusal_outside_the_spec_is_set_apart() -> None:
    outside = {"spec": "outside (int32 indices)"}
    c, d = case(0), case(1)
    records, agree = run([
        rec(c, "Gather", "numpy", "take", **outside),
        rec(c, "Gather", "torch", "indexing", "error", "conforms", **outside),  # allowed: conforms, not dtype
        rec(c, "Gather", "tensorflow", "gather/eager", "error", "conforms", **outside),
        rec(d, "Gather", "numpy", "take", spec="inside"),
        rec(d, "Gather", "torch", "indexing", "error", "deviates", spec="inside"),
    ])
    assert build.status(records[1]) == "conforms"
    numpy_torch = cell(agree, "numpy", "torch")
    assert (numpy_torch["n"], numpy_torch["agree"], numpy_torch["dtype"]) == (1, 0, 1)
    assert numpy_torch["dtype_diff"] == [[0, 1]] and numpy_torch["diff"] == [[3, 4]]
    assert cell(agree, "numpy", "tensorflow")["dtype_diff"] == [[0, 2]]
    assert cell(agree, "numpy", "tensorflow")["n"] == 0
    # Two refusals of an outside-spec case still count, as agreeing.
    torch_tf = cell(agree, "torch", "tensorflow")
    assert (torch_tf["n"], torch_tf["agree"], torch_tf["refused"], torch_tf["dtype"]) == (1, 1, 1, 0)


def test_every_disagreement_is_listed() -> None:
    recs = []
    for i in range(75):
        recs += [rec(case(i), "Gather", "numpy", "take"),
                 rec(case(i), "Gather", "torch", "indexing", verdict="deviates", **WRONG),
                 rec(case(i), "Gather", "torch", "index_select", verdict="deviates", **WRONG)]
    records, agree = run(recs)
    numpy_torch = cell(agree, "numpy", "torch")
    assert (numpy_torch["n"], numpy_torch["agree"], numpy_torch["cases"]) == (150, 0, 75)
    assert len(numpy_torch["diff"]) == 75  # no truncation, one (the first) pair per case
    assert [records[a].case for a, _b in numpy_torch["diff"]] == [case(i) for i in range(75)]
    assert numpy_torch["diff"][0] == [0, 1]
    # The diagonal: torch's two variants give the same wrong values, and agree.
    same = cell(agree, "torch", "torch")
    assert (same["n"], same["agree"], same["diff"]) == (75, 75, [])


def test_diagonal_compares_own_variants() -> None:
    c = case(0)
    big = {"observed": None, "observed_shape": [4096], "verdict": "deviates", "reason": "too large to store"}
    records, agree = run([
        rec(c, "Gather", "torch", "indexing"),
        rec(c, "Gather", "torch", "index_select", verdict="deviates", **WRONG),
        rec(c, "Gather", "torch", "take", "crash", "deviates", signal="SIGSEGV", distinct_outputs=None),
        rec(c, "Gather", "torch", "gather", "ok", "n/a"),  # n/a: not compared
        rec(case(1), "Gather", "torch", "indexing", **big),
        rec(case(1), "Gather", "torch", "index_select", **big),  # two deviating values too large: left out
    ])
    same = cell(agree, "torch", "torch")
    assert same["n"] == 3 and same["agree"] == 0 and same["cases"] == 1
    # One pair for the case, its first by rid: indexing (rid 0) against take; in (index_select, indexing) the
    # row side is index_select, whose column sorts first.
    assert same["diff"] == [[0, 2]]
    assert [records[r].variant for r in same["diff"][0]] == ["indexing", "take"]
    assert [t["rows"][0]["cells"] for t in agree["tables"]] == [[same], [same]]


def test_page_data_holds_every_table(tmp_path: Path) -> None:
    records, agree = run(mixed_records())
    cols = [c["col"] for c in build.columns(build.frame(records))]
    data = drilldown.blob(records, cols, [], agree, Cases(tmp_path))
    assert "fws" not in data
    assert data["agree"]["fws"] == agree["frameworks"] and data["agree"]["ops"] == agree["ops"]
    assert len(data["agree"]["tables"]) == 1 + len(agree["ops"])
    assert data["agree"]["tables"][0] == [row["cells"] for row in agree["tables"][0]["rows"]]
    assert data["agree"]["tables"][2][0][2] == cell(agree, "numpy", "torch", "GatherElements")
