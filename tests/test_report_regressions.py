"""The report's upstream-report table (harness.report.regressions): each regression case's status on every system."""

from __future__ import annotations

from gather_scatter_conformance.harness.report import regressions
from gather_scatter_conformance.vocab.record import Record

CASE = "cases/regression/gather_elements.yaml::pytorch-196106-take-along-dim-wraps"


def _rec(framework: str, variant: str, outcome: str, verdict: str, device: str = "cpu") -> dict:
    return {"case": CASE, "framework": framework, "variant": variant, "outcome": outcome, "verdict": verdict,
            "device": device, "tags": ["regression", "torch", "out-of-bounds"]}


def test_each_system_shows_its_worst_variant_and_the_bug_comes_from_the_case_file() -> None:
    records = [
        _rec("torch", "gather", "error", "conforms"),
        _rec("torch", "take_along_dim", "ok", "deviates"),
        _rec("numpy", "take_along_axis", "error", "conforms"),
        _rec("tfjs", "wasm:gather", "unsupported", "n/a"),
        {**_rec("numpy", "take", "ok", "conforms"), "case": "cases/gather.yaml::x", "tags": []},  # not a regression
    ]
    [row] = regressions.table(map(Record.read, records))
    assert row["issue"] == "pytorch#196106"
    assert row["url"] == "https://github.com/pytorch/pytorch/issues/196106"
    assert row["reported_on"] == "torch"
    assert row["cells"]["torch"] == {"status": "deviates", "variants": ["take_along_dim"]}
    assert row["deviating"] == ["torch"]
    assert row["counts"]["conforms"] == 1 and row["counts"]["n/a"] == 1 and row["counts"]["deviates"] == 1
