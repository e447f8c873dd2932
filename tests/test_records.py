"""Result records are typed (vocab.record.Record), versioned, described by a shipped JSON Schema, and read back from
older files; a file that is not a results file is said to be one, in one line, by every command that reads results."""

from __future__ import annotations

import json
import lzma
import sys
from pathlib import Path
from typing import Any

import pytest
from _cases import GATHER_IN_RANGE, records_of

import gather_scatter_conformance
from gather_scatter_conformance import resources
from gather_scatter_conformance.harness import cli
from gather_scatter_conformance.harness.run import records
from gather_scatter_conformance.vocab.record import OUTCOMES, SCHEMA_VERSION, Record, json_schema

ROOT = Path(__file__).resolve().parent.parent
RUNS = ROOT / "tests" / "data" / "runs"

CASES = GATHER_IN_RANGE + """\
  - id: oob
    source: test
    inputs: {data: [1, 2, 3], indices: [3]}
  - id: probe-oob
    source: test
    dimension: oob-positive
    inputs: {data: [10, 20, 30], indices: [7]}
  - id: probe-negative
    source: test
    dimension: negative-indices
    inputs: {data: [10, 20, 30], indices: [-1]}
"""
TAKE = """\
op: Take
cases:
  - id: fill
    source: test
    inputs: {data: [1, 2, 3], indices: [5]}
    attrs: {axis: 0, mode: fill}
"""


@pytest.fixture(scope="module")
def run_records(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A real run: numpy and JAX (whose indexing clamps an index past the end) on a few cases, by the plugin."""
    import subprocess

    tmp = tmp_path_factory.mktemp("run")
    (tmp / "cases").mkdir()
    (tmp / "cases" / "gather.yaml").write_text(CASES)
    (tmp / "cases" / "take.yaml").write_text(TAKE)
    done = subprocess.run([sys.executable, "-m", "pytest", "cases", "--framework", "numpy,jax", "--results",
                           "r.jsonl", "-q", "-p", "no:cacheprovider", "--isolation", "none"],
                          cwd=tmp, capture_output=True, text=True, timeout=600)
    assert done.returncode in (0, 1), done.stdout[-2000:] + done.stderr[-2000:]
    return tmp / "r.jsonl"


def _lines(path: Path) -> list[dict[str, Any]]:
    return records_of(path)


@pytest.mark.framework
def test_records_of_a_real_run_are_valid_typed_records(run_records: Path) -> None:
    recs = _lines(run_records)
    assert {r["outcome"] for r in recs} >= {"ok", "error", "unsupported"}
    fields = set(Record.model_fields)
    for rec in recs:
        Record.model_validate(rec)  # this version's record: no field filled in for it
        assert set(rec) <= fields, set(rec) - fields
        assert rec["schema_version"] == SCHEMA_VERSION
        assert rec["harness_version"] == gather_scatter_conformance.__version__
    # A no-error deviation keeps the value it returned (JAX's clamp of index 7 reads 30).
    clamp = next(r for r in recs if r["framework"] == "jax" and r["case_id"] == "probe-oob" and r["label"] == "clamp")
    assert clamp["deviation"] == "no-error" and clamp["observed"] == [30.0]


def test_records_follow_the_shipped_json_schema(run_records: Path) -> None:
    schema = json.loads(resources.record_schema_path().read_text())
    assert schema == json_schema(), "gather_scatter_conformance/schemas/record.schema.json is stale: make schema"
    # What a JSON Schema validator checks first, by hand (jsonschema is not a dependency): the required fields are
    # there, every field is described, and outcomes and verdicts are the schema's.
    enums = {name: set(prop.get("enum", ())) for name, prop in schema["properties"].items()}
    for rec in _lines(run_records):
        assert set(schema["required"]) <= set(rec)
        assert set(rec) <= set(schema["properties"])
        assert rec["outcome"] in enums["outcome"] and rec["verdict"] in enums["verdict"]
    assert set(enums["outcome"]) == set(OUTCOMES) == set(records.OUTCOMES)


def test_gsc_schema_prints_the_records_schema(capsys: pytest.CaptureFixture[str]) -> None:
    assert cli.main(["schema", "--records"]) == 0
    assert json.loads(capsys.readouterr().out) == json.loads(resources.record_schema_path().read_text())
    assert '"schemas/*.json"' in (ROOT / "pyproject.toml").read_text()  # shipped in the wheel


def test_records_of_earlier_versions_read(tmp_path: Path) -> None:
    with lzma.open(RUNS / "2026-11-24T21-00.jsonl.xz", "rt") as fh:
        head = [next(fh) for _ in range(400)]
    old = tmp_path / "old.jsonl"
    old.write_text("".join(head))
    recs = list(records.read([old]))
    assert len(recs) == 400
    for line, typed in zip(head, recs, strict=True):
        rec = json.loads(line)  # as the file holds it
        assert "schema_version" not in rec
        assert typed.schema_version == 0 and typed.harness_version == "" and typed.case == rec["case"]
        assert typed == Record.read(rec)


GARBAGE = b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR"
COMMANDS = [
    ["summary", "{f}"], ["behaviour", "{f}"], ["conversion", "{f}"], ["merge", "{f}", "--out", "{out}/m.jsonl"],
    ["diff", "{ok}", "{f}"], ["report", "{f}", "--out", "{out}/report"],
    ["repro", "{f}", "--case", "in-range", "--framework", "numpy"], ["baseline", "{f}", "--dir", "{out}/b"],
    ["gate", "{f}", "--baselines", "{out}"],
]


@pytest.mark.parametrize("kind", ["history", "yaml", "garbage", "missing"])
@pytest.mark.parametrize("command", COMMANDS, ids=[c[0] for c in COMMANDS])
def test_a_file_that_is_not_results_is_said_to_be_one(kind: str, command: list[str], run_records: Path,
                                                      tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    files = {"history": ROOT / "history" / "onnxruntime.jsonl", "yaml": ROOT / "cases" / "gather.yaml",
             "garbage": tmp_path / "x.jsonl", "missing": tmp_path / "missing.jsonl"}
    (tmp_path / "x.jsonl").write_bytes(GARBAGE)
    argv = [a.format(f=files[kind], ok=run_records, out=tmp_path) for a in command]
    assert cli.main(argv) == 2
    out = capsys.readouterr()
    lines = out.err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith(f"gsc {command[0]}: {files[kind]}: "), out.err
    assert "expected the JSON lines of result records a run writes" in lines[0]
    hint = {"history": "release sweep", "yaml": "looks like YAML", "garbage": "not UTF-8", "missing": "cannot be read"}
    assert hint[kind] in lines[0]


def test_a_results_file_still_reads(run_records: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert cli.main(["summary", str(run_records)]) == 0
    assert "numpy" in capsys.readouterr().out


@pytest.mark.parametrize(("command", "module"), [(["report", "{f}", "--out", "{out}/r"], "jinja2"),
                                                 (["report", "{f}", "--out", "{out}/r"], "pandas"),
                                                 (["report", "{f}", "--out", "{out}/r"], "markupsafe")])
def test_a_missing_optional_package_names_the_extra(command: list[str], module: str, run_records: Path,
                                                    tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                    capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setitem(sys.modules, module, None)  # import fails as if it were not installed
    for loaded in [m for m in sys.modules if m.startswith("gather_scatter_conformance.harness.report")]:
        monkeypatch.delitem(sys.modules, loaded)  # imported afresh, so the missing package is missed
    argv = [a.format(f=run_records, out=tmp_path) for a in command]
    assert cli.main(argv) == 2
    err = capsys.readouterr().err
    assert err.strip() == (f"gsc {command[0]} needs {module}, which is not installed: "
                           "pip install 'gather-scatter-conformance[report]'")


@pytest.mark.framework
@pytest.mark.parametrize("command", ["repro", "issue"])
def test_repro_and_issue_need_none_of_the_report_extra(command: str, run_records: Path,
                                                       monkeypatch: pytest.MonkeyPatch,
                                                       capsys: pytest.CaptureFixture[str]) -> None:
    """A finding's repro script and upstream issue are for users who installed no report extra: with jinja2,
    pandas and markupsafe missing, both are written (gsc repro needed markupsafe before)."""
    for module in ("jinja2", "pandas", "markupsafe"):
        monkeypatch.setitem(sys.modules, module, None)
    for loaded in [m for m in sys.modules if m.startswith("gather_scatter_conformance.harness.report")]:
        monkeypatch.delitem(sys.modules, loaded)
    monkeypatch.chdir(run_records.parent)  # where the run's case files are
    assert cli.main([command, str(run_records), "--case", "oob", "--framework", "jax"]) == 0, capsys.readouterr().err
    out = capsys.readouterr().out
    assert "def run(" in out and ("## Repro" in out if command == "issue" else out.startswith("#!"))
