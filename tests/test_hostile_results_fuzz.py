"""A standing hostile-input suite (issue #37): hypothesis corrupts a real results file at random (cut short, garbage
lines, lines dropped or repeated, hostile strings, paths and numbers in any field, deep nesting) and every command
that reads results must answer in one line or work: no traceback, no file written outside its output, and no
generated script that runs anything but the framework's call.

The reader is the boundary (harness.run.records.read), so it takes the most examples; the commands behind it take
fewer, each in process."""

from __future__ import annotations

import ast
import io
import json
import tokenize
from pathlib import Path
from typing import Any

import pytest

hypothesis = pytest.importorskip("hypothesis")
from hypothesis import HealthCheck, given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

from gather_scatter_conformance.harness import cli  # noqa: E402
from gather_scatter_conformance.harness.run import records  # noqa: E402
from gather_scatter_conformance.vocab.record import Record  # noqa: E402

MARK = "PWNED"
CODE = f"__import__('os').system('touch {MARK}')"
CASES = """\
op: GatherElements
cases:
  # numpy's take_along_axis takes the last axis when none is given: a probe with a label, a finding
  - id: ge-default-axis
    source: "test: numpy's default axis"
    dimension: default-axis
    omit: [axis]
    inputs:
      data: {value: [[1, 2, 3], [4, 5, 6]], dtype: float32}
      indices: {value: [[1, 0, 1], [0, 1, 0]], dtype: int64}
  # an index past the end: numpy raises, as ONNX wants
  - id: oob
    source: test
    dimension: oob-positive
    inputs:
      data: {value: [[1, 2], [3, 4]], dtype: float32}
      indices: {value: [[0, 5], [1, 0]], dtype: int64}
    attrs: {axis: 1}
"""
HOSTILE_VALUES = [
    CODE, f"x'); {CODE}; ('", f"x\n{CODE}\n", f'"""\n{CODE}\n"""', "../../../etc/passwd", "/etc/passwd",
    "..", "<script>alert(1)</script>", "[x](javascript:alert(1))", "`" * 5, "\x00\x1b[2J", "SIGSEGV; " + CODE,
    "a" * 5000, -1, 2**70, 1e308, float("nan"), None, True, [], {}, ["3); " + CODE], {"__class__": CODE},
    [[[[[[[[]]]]]]]],
]
FIELDS = ["case", "case_file", "case_id", "op", "framework", "framework_version", "variant", "api", "device",
          "outcome", "error_type", "error_message", "signal", "verdict", "reason", "observed", "observed_dtype",
          "observed_shape", "expected", "dimension", "label", "baseline", "native", "distribution", "conversion",
          "tags", "duration_s", "fault", "gsc_manifest"]


@pytest.fixture(scope="module")
def base(tmp_path_factory: pytest.TempPathFactory) -> bytes:
    """A real results file: numpy's run of two probes (with its manifest line)."""
    import subprocess
    import sys

    run = tmp_path_factory.mktemp("run")
    (run / "mine").mkdir()
    (run / "mine" / "probe.yaml").write_text(CASES)
    done = subprocess.run([sys.executable, "-m", "gather_scatter_conformance", "run", "mine", "--framework", "numpy",
                           "--results", "r.jsonl"], cwd=run, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    return (run / "r.jsonl").read_bytes()


def _nested(depth: int) -> Any:
    value: Any = 1
    for _ in range(depth):
        value = [value]
    return value


@st.composite
def corrupted(draw: st.DrawFn, base: bytes) -> bytes:
    """``base`` with one to three random corruptions."""
    lines = base.splitlines(keepends=True)
    for _ in range(draw(st.integers(1, 3))):
        kind = draw(st.sampled_from(["cut", "garbage", "drop", "repeat", "field", "deep", "swap"]))
        at = draw(st.integers(0, max(0, len(lines) - 1)))
        if kind == "cut":
            text = b"".join(lines)
            return text[: draw(st.integers(0, len(text)))]
        if kind == "garbage":
            lines.insert(at, draw(st.binary(max_size=80)) + draw(st.sampled_from([b"\n", b""])))
        elif kind == "drop" and lines:
            lines.pop(at)
        elif kind == "repeat" and lines:
            lines.insert(at, lines[at])
        elif kind == "swap" and len(lines) > 1:
            other = draw(st.integers(0, len(lines) - 1))
            lines[at], lines[other] = lines[other], lines[at]
        elif kind in ("field", "deep") and lines:
            try:
                obj = json.loads(lines[at])
            except ValueError:
                continue
            if not isinstance(obj, dict):  # a garbage line that happens to be JSON ("[]", "7"): no fields
                continue
            value = _nested(draw(st.integers(40, 600))) if kind == "deep" else draw(
                st.sampled_from(HOSTILE_VALUES) | st.text(max_size=40) | st.integers())
            target = obj["gsc_manifest"] if isinstance(obj.get("gsc_manifest"), dict) and draw(st.booleans()) else obj
            target[draw(st.sampled_from(FIELDS))] = value
            lines[at] = (json.dumps(target if target is obj else obj) + "\n").encode()
    return b"".join(lines)


def _only_in_literals(text: str) -> None:
    """A generated script parses, names none of the calls a hostile value would make, and holds MARK only in its
    strings and comments."""
    tree = ast.parse(text)
    for node in ast.walk(tree):
        name = node.id if isinstance(node, ast.Name) else node.attr if isinstance(node, ast.Attribute) else None
        assert name not in {"system", "__import__", "exec", "eval", "popen"}, f"{name} in:\n{text}"
    for tok in tokenize.generate_tokens(io.StringIO(text).readline):
        if tok.type not in (tokenize.STRING, tokenize.COMMENT):
            assert MARK not in tok.string, f"{tok} outside a literal:\n{text}"


SETTINGS = dict(deadline=None, database=None, derandomize=True,
                suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow,
                                       HealthCheck.data_too_large])


@pytest.mark.slow
def test_the_reader_refuses_in_one_line_or_yields_checked_records(base: bytes, tmp_path: Path) -> None:
    path = tmp_path / "r.jsonl"

    @settings(max_examples=1700, **SETTINGS)
    @given(data=corrupted(base), lenient=st.booleans())
    def check(data: bytes, lenient: bool) -> None:
        path.write_bytes(data)
        warned: list[str] = []
        try:
            got = list(records.read([path], lenient=lenient, warn=warned.append))
        except records.NotResultsFile as exc:
            assert "\n" not in str(exc) and str(path) in str(exc)
            return
        for rec in got:  # every record yielded is one, checked: a typed Record whose line reads back as itself
            assert isinstance(rec, Record) and Record.read(rec.dump()) == rec
        assert all("\n" not in w for w in warned)

    check()


COMMANDS = {
    "summary": ["summary", "{f}"],
    "merge": ["merge", "{f}", "--out", "{out}/m.jsonl"],
    "repro": ["repro", "{f}", "--case", "ge-default-axis", "--framework", "numpy", "--out", "{out}/repro.py"],
    "issue": ["issue", "{f}", "--case", "ge-default-axis", "--framework", "numpy", "--out", "{out}/issue.md"],
    "port": ["port", "{f}", "--from", "numpy", "--to", "numpy"],
    "diff": ["diff", "{f}", "{f}"],
}


@pytest.mark.slow
def test_the_commands_answer_in_one_line_write_only_their_output_and_run_nothing(
        base: bytes, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    pytest.importorskip("markupsafe")
    work = tmp_path / "work"
    work.mkdir()
    monkeypatch.chdir(work)
    path = work / "r.jsonl"

    @settings(max_examples=300, **SETTINGS)
    @given(data=corrupted(base), command=st.sampled_from(sorted(COMMANDS)), lenient=st.booleans())
    def check(data: bytes, command: str, lenient: bool) -> None:
        out = tmp_path / "out"
        out.mkdir(exist_ok=True)
        for old in out.iterdir():
            old.unlink()
        path.write_bytes(data)
        before = {p for p in tmp_path.rglob("*") if not p.is_relative_to(out)}
        argv = [a.format(f=path, out=out) for a in COMMANDS[command]] + (["--lenient"] if lenient else [])
        code = cli.main(argv)
        said = capsys.readouterr()
        assert code in (0, 1, 2), (code, said.err[-500:])
        assert "Traceback" not in said.err
        if code == 2:
            assert said.err.strip(), "refused without a word"
        assert {p for p in tmp_path.rglob("*") if not p.is_relative_to(out)} == before
        assert not (work / MARK).exists() and not (tmp_path / MARK).exists()
        for script in out.glob("*.py"):
            _only_in_literals(script.read_text())
        for issue in out.glob("*.md"):
            text = issue.read_text()
            assert "<script" not in text.lower()
            for block in text.split("```python")[1:]:
                _only_in_literals(block.split("```")[0])

    check()
