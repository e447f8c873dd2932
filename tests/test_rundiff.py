"""``harness diff``: records matched by key, every changed outcome, verdict and label counted per framework."""

from __future__ import annotations

import json
from pathlib import Path

from gather_scatter_conformance.harness.cli import main
from gather_scatter_conformance.harness.report.rundiff import diff
from gather_scatter_conformance.vocab.record import Record


def _rec(case: str, fw: str, verdict: str, outcome: str = "ok", **kw: str) -> dict[str, str]:
    return {"case": case, "framework": fw, "variant": "v", "device": "cpu", "verdict": verdict, "outcome": outcome,
            **kw}


OLD = [_rec("a", "ort", "deviates", "error"), _rec("b", "ort", "conforms"), _rec("c", "tf", "conforms", label="wrap"),
       _rec("gone", "tf", "conforms")]
NEW = [_rec("a", "ort", "conforms", "error"), _rec("b", "ort", "conforms"), _rec("c", "tf", "conforms", label="clamp"),
       _rec("new", "tf", "conforms")]


def test_changes_are_counted_per_framework_and_field() -> None:
    d = diff(map(Record.read, OLD), map(Record.read, NEW))
    assert d.changed == {("ort", "verdict", "deviates", "conforms"): 1, ("tf", "label", "wrap", "clamp"): 1}
    assert (d.same, d.only_old, d.only_new) == (1, 1, 1)
    assert d.examples[("ort", "verdict", "deviates", "conforms")] == ["a [v]"]


def test_the_command_prints_the_changes(tmp_path: Path, capsys) -> None:
    for name, recs in (("old", OLD), ("new", NEW)):
        (tmp_path / f"{name}.jsonl").write_text("".join(json.dumps(r) + "\n" for r in recs))
    # The exit status is gsc gate's against the old run (docs/gate.md): tf's probe label changed (8); ort's case
    # deviating no more, and a case new to the run, fail nothing.
    assert main(["diff", str(tmp_path / "old.jsonl"), str(tmp_path / "new.jsonl")]) == 8
    out = capsys.readouterr().out
    assert "ort             verdict  deviates -> conforms: 1" in out and "label    wrap -> clamp: 1" in out
    assert out.rstrip().endswith("gate: exit status 8 (1 label-change)")
    assert main(["diff", str(tmp_path / "old.jsonl"), str(tmp_path / "new.jsonl"), "--json",
                 "--ignore", "label-change"]) == 0
    said = json.loads(capsys.readouterr().out)
    assert said["changes"]["changed"][1] == {"framework": "tf", "field": "label", "old": "wrap", "new": "clamp",
                                             "count": 1, "examples": ["c [v]"]}
    assert said["gate"]["counts"]["label-change"] == 1 and said["gate"]["exit_status"] == 0
    assert main(["summary", str(tmp_path / "new.jsonl"), "--previous", str(tmp_path / "old.jsonl"), "--json"]) == 8
    summary = json.loads(capsys.readouterr().out)
    assert summary["systems"]["tf"]["changed"] == 1 and summary["gate"]["findings"][0]["key"] == "c[v]"
    assert main(["summary", str(tmp_path / "new.jsonl")]) == 0  # nothing earlier: nothing to judge
