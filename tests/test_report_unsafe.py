"""The report leads with memory-unsafe findings grouped by access: writes, reads, uninitialised, crashes."""

from __future__ import annotations

import json
from pathlib import Path

from gather_scatter_conformance.harness.report.unsafe import evidence_text, load_evidence, section
from gather_scatter_conformance.vocab.record import Record


def _rec(case: str, op: str, label: str | None, outcome: str = "ok", **extra: object) -> dict:
    rec = {"case": f"cases/probes/x.yaml::{case}", "framework": "tvm", "variant": "v", "api": "relax.op.x", "op": op,
           "outcome": outcome, "verdict": "deviates", **extra}
    if label:
        rec.update(label=label, dimension="oob-positive")
    return rec


def test_findings_are_grouped_by_access_from_the_value_or_the_checker(tmp_path: Path) -> None:
    records = [
        _rec("scatter-alias", "ScatterND", "alias-write"),
        _rec("gather-alias", "Gather", "alias"),
        _rec("gather-garbage", "Take", "garbage|zero", distribution={"garbage": 3, "zero": 2}),
        _rec("scatter-crash", "ScatterND", "crash:SIGABRT", outcome="crash"),
        _rec("take-wrong", "Take", "wrong"),  # deterministic: memory-unsafe only by a checker's evidence
        _rec("seed-crash", "Gather", None, outcome="crash", signal="SIGSEGV"),
        _rec("clamp", "Gather", "clamp"),
    ]
    evidence_file = tmp_path / "memcheck.jsonl"
    ev = {"case": "cases/probes/x.yaml::take-wrong", "framework": "tvm", "variant": "v", "verdict": "read",
          "reason": "memcheck: Invalid read of size 4; Address 0x2dbbd3fc is 4 bytes before a block of size 24"}
    evidence_file.write_text(json.dumps(ev) + "\n")
    evidence = load_evidence([evidence_file, tmp_path / "absent.jsonl"])
    out = section([Record.read(r) for r in records], evidence)
    by = {g["key"]: [e["case"] for f in g["frameworks"] for e in f["entries"]] for g in out["groups"]}
    assert [g["key"] for g in out["groups"]] == ["write", "read", "uninitialised", "crash"]  # writes lead
    assert by["write"] == ["scatter-alias"]
    assert by["read"] == ["gather-alias", "gather-garbage", "take-wrong"]
    assert by["crash"] == ["scatter-crash", "seed-crash"] and by["uninitialised"] == []
    assert out["counts"]["tvm"] == {"write": 1, "read": 3, "uninitialised": 0, "crash": 2}
    items = {e["case"]: e for g in out["groups"] for f in g["frameworks"] for e in f["entries"]}
    assert items["gather-garbage"]["distribution"] == "garbage 3/5, zero 2/5"
    assert items["take-wrong"]["evidence"] == ev["reason"]
    assert "no checker" in items["scatter-alias"]["evidence"]
    assert evidence_text({"verdict": "unprovable", "reason": "memcheck ran 74 s, 0 errors"}) == (
        "memcheck ran 74 s, 0 errors")
