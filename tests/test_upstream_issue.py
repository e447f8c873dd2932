"""``gsc issue``: a finding's upstream issue body from a real run, with the documentation quoted, the release history's
"since", the memory checker's evidence, and a repro that runs (harness.report.upstream)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from gather_scatter_conformance.harness.report import upstream
from gather_scatter_conformance.vocab.record import Record

GSC = [sys.executable, "-m", "gather_scatter_conformance"]
PROBE = """\
op: GatherElements
cases:
  # numpy's take_along_axis has no default axis in ONNX's sense: omitted, it flattens or uses the last one.
  - id: ge-default-axis
    source: "test: numpy's take_along_axis defaults to the last axis, ONNX to axis 0"
    dimension: default-axis
    omit: [axis]
    inputs:
      data: {value: [[1, 2, 3], [4, 5, 6]], dtype: float32}
      indices: {value: [[1, 0, 1], [0, 1, 0]], dtype: int64}
"""
# A documentation claim written for the test: it says the default is the outermost axis, which the run contradicts.
CLAIM = """\
framework: numpy
claims:
  - op: GatherElements
    api: np.take_along_axis
    dimension: default-axis
    label: axis-0
    text: "If axis is omitted, the outermost axis is used."
    source: https://example.org/take_along_axis
"""


def _run(tmp_path: Path) -> Path:
    (tmp_path / "mine").mkdir()
    (tmp_path / "mine" / "probe.yaml").write_text(PROBE)
    run = subprocess.run([*GSC, "run", "mine", "--framework", "numpy,onnx-reference", "--results", "r.jsonl"],
                         cwd=tmp_path, capture_output=True, text=True, timeout=300)
    assert run.returncode == 0, run.stdout + run.stderr
    return tmp_path / "r.jsonl"


def _history(tmp_path: Path, by_release: dict[str, str]) -> Path:
    from gather_scatter_conformance.harness.history import store

    for release, label in by_release.items():
        store.write_release(tmp_path / "history", "numpy", release, [{
            "framework": "numpy", "release": release, "status": "ok", "op": "GatherElements",
            "variant": "take_along_axis", "device": "cpu", "dimension": "default-axis", "label": label,
            "labels": {"mine/probe.yaml::ge-default-axis": label}}])
    return tmp_path / "history"


@pytest.mark.slow  # over 5 s here (make check: tests under 5 s each)
def test_an_issue_quotes_the_documentation_it_contradicts_and_its_repro_runs(tmp_path: Path) -> None:
    _run(tmp_path)
    (tmp_path / "claims").mkdir()
    (tmp_path / "claims" / "numpy.yaml").write_text(CLAIM)
    history = _history(tmp_path, {"1.26.4": "axis-0", "2.0.0": "last", "2.1.0": "last"})
    made = subprocess.run([*GSC, "issue", "r.jsonl", "--case", "ge-default-axis", "--framework", "numpy",
                           "--claims", "claims", "--history", str(history)],
                          cwd=tmp_path, capture_output=True, text=True, timeout=120)
    assert made.returncode == 0, made.stderr
    text = made.stdout
    title = text.splitlines()[0]
    # The heading is markdown: the record-derived title's markup characters are escaped (upstream.md).
    assert title.startswith("# np.take\\_along\\_axis (GatherElements): which axis is used when none is given: "
                            "Innermost axis, documented as Outermost axis \\[numpy "), title
    assert "**Kind:** documentation contradiction." in text
    assert "> If axis is omitted, the outermost axis is used.\n>\n> https://example.org/take_along_axis" in text
    assert "Documented: Outermost axis; measured: Innermost axis: the measurement contradicts it." in text
    assert "Since 2.0.0; 1.26.4 gave Outermost axis." in text
    # The repro in the body is the script gsc repro writes, and it reproduces.
    script = text.split("```python\n", 1)[1].split("\n```", 1)[0]
    (tmp_path / "repro.py").write_text(script)
    ran = subprocess.run([sys.executable, "repro.py"], cwd=tmp_path, capture_output=True, text=True, timeout=120)
    assert ran.returncode == 0, ran.stdout + ran.stderr


@pytest.mark.slow  # over 5 s here (make check: tests under 5 s each)
def test_no_issue_for_a_conforming_record(tmp_path: Path) -> None:
    _run(tmp_path)
    none = subprocess.run([*GSC, "issue", "r.jsonl", "--case", "ge-default-axis", "--framework", "onnx-reference"],
                          cwd=tmp_path, capture_output=True, text=True, timeout=120)
    assert none.returncode == 2 and "not a finding" in none.stderr and not none.stdout


def _unsafe_record() -> dict:
    return {"case": "cases/probes/scatter_nd.yaml::probe-oob-negative", "framework": "tvm", "variant": "v",
            "framework_version": "0.27.0.post1", "device": "cpu", "op": "ScatterND", "dimension": "oob-negative",
            "outcome": "ok", "verdict": "deviates", "label": "crash:SIGSEGV|skip", "observed": [1.0],
            "observed_dtype": "float32", "distribution": {"crash:SIGSEGV": 4, "skip": 1}, "api": "relax.op.f(x)"}


def test_a_memory_unsafe_finding_leads_with_its_distribution_and_the_checkers_access() -> None:
    record = Record.read(_unsafe_record())
    evidence = {"verdict": "write", "reason": "memcheck: Invalid write of size 4", "measured": "t", "checkers": []}
    assert upstream.kind(record) == "memory-unsafe"
    assert upstream.title(record, None, evidence) == ("relax.op.f (ScatterND): what happens to an index < -s: writes "
                                                      "out of bounds [tvm 0.27.0.post1]")
    assert upstream.title(record).endswith(": Crash (SIGSEGV) / Dropped [tvm 0.27.0.post1]")
    history = [{"status": "ok", "release": r, "variant": "v", "device": "cpu", "dimension": "oob-negative",
                "labels": {record.case: label}} for r, label in (("0.26.0", "skip"), ("0.27.0", "crash:SIGABRT"),
                                                                    ("0.27.0.post1", "timeout"))]
    # any label of the memory-unsafe class shows it: a crash in one release, a hang in the next
    assert upstream.since(record, history).startswith("Since 0.27.0; 0.26.0 gave Dropped.")
    fixed = [*history, {**history[0], "release": "0.28.0"}]
    assert upstream.since(record, fixed).startswith("Seen in 0.27.0, 0.27.0.post1, not in the newest swept release.")
    assert "not swept" in upstream.since(Record.read({**_unsafe_record(), "case": "other.yaml::x"}), history)


def test_a_converter_change_is_titled_by_its_converter_and_both_sides() -> None:
    record = Record.read({
        "case": "cases/probes/gather.yaml::probe-oob-positive", "framework": "onnx~mnnconvert~mnn",
        "variant": "Gather-13", "op": "Gather", "dimension": "oob-positive", "outcome": "ok", "verdict": "deviates",
        "label": "wrap", "conversion": {"preservation": "changed", "source_label": "error", "target_label": "wrap",
                                        "converter": "mnnconvert -f ONNX", "source": "onnx-reference",
                                        "target": "mnn", "versions": {"converter": "3.6.1"}}})
    assert upstream.kind(record) == "converter change"
    assert upstream.title(record) == ("mnnconvert -f ONNX 3.6.1: Gather (what happens to an index >= s) changes from "
                                      "Error to Wrap (supported) (onnx-reference -> mnn)")
    assert "no release history" in upstream.since(record, None)
    # #28: a path that kept its source's deviation was titled "changes from Wrap (supported) to Wrap (supported)"
    kept = record.model_copy(update={"conversion": {**(record.conversion or {}), "preservation": "preserved",
                                                    "source_label": "wrap"}})
    assert upstream.kind(kept) == "deviation"
    assert upstream.title(kept) == ("mnnconvert -f ONNX 3.6.1: Gather (what happens to an index >= s) keeps the "
                                    "source's Wrap (supported) (onnx-reference -> mnn)")


def test_the_cli_help_names_the_command() -> None:
    done = subprocess.run([*GSC, "issue", "--help"], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0 and "--framework" in done.stdout
    assert json.dumps(upstream.KINDS)  # the kinds are plain strings a page can show


def test_a_statement_api_is_named_by_its_variant_and_alternatives_count_as_measured() -> None:
    from gather_scatter_conformance.harness.report.claims import Claim

    record = Record.read({**_unsafe_record(), "framework": "mxnet", "variant": "np.setitem",
                          "api": "npx.set_np(); out = data.copy(); out[(indices,)] = updates"})
    assert upstream.title(record).startswith("np.setitem (ScatterND): ")
    dup = Record.read({"case": "c.yaml::d", "framework": "keras", "variant": "v", "op": "ScatterND",
                       "dimension": "duplicates", "outcome": "ok", "verdict": "conforms",
                       "label": "nondeterministic|last-wins", "distribution": {"nondeterministic": 4, "last-wins": 1},
                       "api": "keras.ops.scatter_update(d, i, u)"})
    claim = Claim(framework="keras", op="ScatterND", dimension="duplicates", label="last-wins", text="t",
                  source="https://example.org/keras")
    # the documented label is among what the runs saw: no contradiction (as the report's cells judge it)
    assert upstream.measured(dup) == ["nondeterministic", "last-wins"]
    assert upstream.kind(dup, claim) == "alternative" and "documented as" not in upstream.title(dup, claim)
    assert upstream.kind(dup, claim.model_copy(update={"label": "first-wins"})) == "documentation contradiction"
