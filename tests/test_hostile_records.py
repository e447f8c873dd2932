"""Results files come from other machines, so every field of a record is hostile input (issue #37): a crafted record
must not put code into a repro script, a page outside ``--out``, a file of the builder's disk into the site, or
markup into an upstream issue; and a repro whose system is not installed says what it needs."""

from __future__ import annotations

import ast
import io
import json
import os
import subprocess
import sys
import tokenize
from pathlib import Path
from typing import Any

import pytest

from gather_scatter_conformance.harness.cases.load import Case, load_file
from gather_scatter_conformance.harness.run.repro import script
from gather_scatter_conformance.harness.run.runner import InProcess, execute
from gather_scatter_conformance.vocab.record import Record

PROBE = """\
op: GatherElements
cases:
  - id: ge-default-axis
    source: "test: numpy's take_along_axis defaults to the last axis"
    dimension: default-axis
    omit: [axis]
    inputs:
      data: {value: [[1, 2, 3], [4, 5, 6]], dtype: float32}
      indices: {value: [[1, 0, 1], [0, 1, 0]], dtype: int64}
"""
MARK = "PWNED"  # every hostile value carries it: it may appear only inside string literals and comments
CODE = f"__import__('os').system('touch {MARK}')"
FORBIDDEN = {"system", "__import__", "exec", "eval", "popen", "compile", "getattr"}


def _probe(folder: Path) -> Case:
    (folder / "mine").mkdir(exist_ok=True)
    (folder / "mine" / "probe.yaml").write_text(PROBE)
    (case,) = load_file(folder / "mine" / "probe.yaml", "mine/probe.yaml")
    assert isinstance(case, Case)
    return case


def _finding(case: Case) -> Record:
    record = execute(case, "numpy", "take_along_axis", InProcess())
    assert isinstance(record, Record), record
    assert record.verdict == "deviates" and record.native, record
    return record


def _hostile(record: Record, **fields: Any) -> Record:
    """``record`` with a crafted value in every field a repro script shows or checks (unvalidated: past the
    reader's checks)."""
    return record.model_copy(update={
        "native": f"{CODE}\nresult = np.asarray(data)",
        "framework_version": f"1\n{CODE}", "reason": f"r\n{CODE}\n",
        "dimension": f"default-axis\n{CODE}", "api": f"np.x()\n{CODE}",
        "observed_shape": f"0]); {CODE}; ([", "signal": f"SIGX'); {CODE}; print('",
        "error_type": f"E'}}{{{CODE}}}{{'", "observed_dtype": f"float32); {CODE}; (np.float32",
        **fields})


def _only_in_literals(text: str) -> None:
    """``text`` compiles, calls nothing the hostile values name, and holds MARK only in strings and comments."""
    tree = ast.parse(text)
    for node in ast.walk(tree):
        name = node.id if isinstance(node, ast.Name) else node.attr if isinstance(node, ast.Attribute) else None
        assert name not in FORBIDDEN, f"{name} in the generated script:\n{text}"
    for tok in tokenize.generate_tokens(io.StringIO(text).readline):
        if tok.type not in (tokenize.STRING, tokenize.COMMENT):
            assert MARK not in tok.string, f"{tok} outside a literal:\n{text}"


@pytest.mark.parametrize("fields", [
    {"outcome": "ok", "label": "last"},  # the observed values, cast to the recorded dtype
    {"outcome": "ok", "label": "garbage", "observed": None},  # an unchecked read: its shape is asserted
    {"outcome": "error", "label": None, "observed": None},
    {"outcome": "crash", "label": None, "observed": None},
    {"outcome": "crash", "label": None, "observed": None, "signal": "SIGSEGV"},
], ids=["values", "unchecked-read", "error", "crash", "heap-crash"])
@pytest.mark.slow
def test_a_repro_script_pastes_no_record_string_into_its_code(tmp_path: Path, fields: dict[str, Any]) -> None:
    case = _probe(tmp_path)
    text = script(case, _hostile(_finding(case), label=fields.pop("label"), **fields))
    _only_in_literals(text)
    assert "np.asarray(np.take_along_axis(data, indices))" in text  # the call, written by the adapter here
    if fields["outcome"] != "crash" or "signal" in fields:  # (an unknown signal's child would run 20 times)
        path = tmp_path / "run" / "repro.py"
        path.parent.mkdir()
        path.write_text(text)
        subprocess.run([sys.executable, str(path)], cwd=path.parent, capture_output=True, timeout=120, check=False)
        assert not (path.parent / MARK).exists()


def test_a_hostile_device_is_not_rewritten_as_a_call(tmp_path: Path) -> None:
    """A device this process does not run (an execution provider's, or crafted): its call is not written for the
    CPU instead; the recorded text is shown as text and the script says so."""
    case = _probe(tmp_path)
    text = script(case, _hostile(_finding(case), device=f"cpu\r{CODE}", outcome="error", label=None))
    _only_in_literals(text)
    assert "np.asarray(np.take_along_axis(data, indices))" not in text and "from the results file" in text


def test_a_call_that_cannot_be_rewritten_here_is_shown_as_text_and_exits(tmp_path: Path) -> None:
    """A framework this machine has no adapter for: the recorded call text is a comment said to come from the
    results file, and the script exits non-zero with one line instead of running it."""
    case = _probe(tmp_path)
    text = script(case, _hostile(_finding(case), framework="no-such-framework", outcome="error", label=None))
    _only_in_literals(text)
    assert "from the results file" in text
    path = tmp_path / "repro.py"
    path.write_text(text)
    ran = subprocess.run([sys.executable, str(path)], cwd=tmp_path, capture_output=True, text=True, timeout=60)
    assert ran.returncode != 0 and not (tmp_path / MARK).exists()
    assert "Traceback" not in ran.stderr and "no-such-framework" in ran.stderr.strip().splitlines()[-1]


SECRET = "SECRET-7f3a9c"


@pytest.mark.parametrize("fields", [
    {"op": "../../../escaped-op"},
    {"variant": "../../../escaped-variant"},
    {"variant": ".."},
    {"framework": "../../../escaped-fw", "variant": "../../x"},
    {"case": "../outside/probe.yaml::ge-default-axis"},
    {"case": "{outside}/probe.yaml::ge-default-axis"},
], ids=["op", "variant", "dotdot-variant", "framework", "dotdot-case", "absolute-case"])
def test_the_site_writes_only_under_out_and_reads_only_its_cases(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                                 fields: dict[str, str]) -> None:
    """Hostile op, framework, variant and case: every file written lies under --out, and a case file outside the
    case corpus (absolute, or ``..``) is not read: its secret appears nowhere in the output."""
    pytest.importorskip("jinja2")
    from gather_scatter_conformance.harness.report.page import generate

    work = tmp_path / "work"
    work.mkdir()
    record = _finding(_probe(work))
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "probe.yaml").write_text(PROBE.replace("test: numpy's", f"{SECRET}: numpy's"))
    results = work / "r.jsonl"
    fields = {k: v.format(outside=outside) for k, v in fields.items()}
    results.write_text(json.dumps({**record.dump(), **fields}) + "\n")
    monkeypatch.chdir(work)
    before = set(tmp_path.rglob("*"))
    from gather_scatter_conformance.harness.run.records import NotResultsFile

    # The reader refuses a name the harness never writes (harness.run.records; a case may be named with '..' as
    # its run named it); past it, with the check off, the site still writes only under --out and reads no case
    # outside the corpus.
    try:
        generate([results], work / "out")
    except NotResultsFile:
        assert "case" not in fields
        monkeypatch.setattr("gather_scatter_conformance.vocab.record.Record.read",
                            classmethod(lambda cls, obj: cls.model_construct(**obj)))
        try:
            generate([results], work / "out")
        except (ValueError, KeyError) as exc:  # refusing a hostile record is fine; writing outside is not
            print("refused:", exc)
    written = set(tmp_path.rglob("*")) - before
    out = (work / "out").resolve()
    assert written and all(p.resolve().is_relative_to(out) for p in written), sorted(map(str, written))
    for p in (work / "out").rglob("*"):
        if p.is_file():
            assert SECRET not in p.read_text(errors="replace"), p


def test_case_files_resolve_only_inside_a_case_corpus(tmp_path: Path) -> None:
    from gather_scatter_conformance import resources
    from gather_scatter_conformance.vocab import safe

    corpus = resources.cases_dir()
    (tmp_path / "mine").mkdir()
    (tmp_path / "mine" / "a.yaml").write_text("op: Gather\ncases: []\n")
    assert safe.case_file("mine/a.yaml", [tmp_path], corpus) == tmp_path / "mine" / "a.yaml"
    assert safe.case_file("cases/gather.yaml", [], corpus) is not None
    for bad in (str(tmp_path / "mine" / "a.yaml"), "../mine/a.yaml", "mine/../mine/a.yaml", "cases/../pyproject.toml",
                "/etc/passwd", "", None, 3):
        assert safe.case_file(bad, [tmp_path / "mine"], corpus) is None, bad
    assert safe.shape([2, 0, 3]) == [2, 0, 3] and safe.shape("[2]") is None and safe.shape([-1]) is None
    assert safe.shape([True]) is None and safe.signal_name("SIGSEGV") == "SIGSEGV"
    assert safe.signal_name("SIGSEGV'; x") is None and safe.error_type("torch.OutOfMemoryError")
    assert safe.error_type("E'}{x}") is None


HTML = "<img src=x onerror=alert(1)>"


def test_an_issue_escapes_markup_from_every_record_field(tmp_path: Path) -> None:
    markdown_it = pytest.importorskip("markdown_it")
    from gather_scatter_conformance.harness.report import upstream

    case = _probe(tmp_path)
    record = _finding(case)
    hostile = {k: f"{v}{HTML}`{HTML}" for k, v in record
               if isinstance(v, str) and k not in ("case", "op", "framework", "outcome", "verdict", "dimension")}
    for fields in ({**hostile}, {**hostile, "outcome": "error", "error_type": f"`{HTML}",
                                 "error_message": f"</p>{HTML}"},
                   {**hostile, "outcome": "crash", "signal": HTML, "label": None}):
        rec = record.model_copy(update={**fields, "observed": [HTML], "expected": [f"``{HTML}"]})
        text = upstream.body(rec, case, f"print('{HTML}')\n```\n{HTML}\n", upstream.Sources())
        html = markdown_it.MarkdownIt("commonmark").render(text)
        assert "<img" not in html, text
        assert HTML in html.replace("&lt;", "<").replace("&gt;", ">")  # shown, as text
        assert "<img" not in markdown_it.MarkdownIt("commonmark").render(text.splitlines()[0])  # its title


def test_a_tfjs_repro_without_its_packages_says_what_it_needs(tmp_path: Path) -> None:
    """Run outside the checkout, the script cannot find TensorFlow.js's npm packages: one line says what it needs
    and it exits non-zero (not a FileNotFoundError read as "expected Error, got FileNotFoundError")."""
    from gather_scatter_conformance.adapters import tfjs

    source = tfjs._source(("data", "indices"), "return tf.gather(data, indices);", "cpu", [])
    text = "\n".join(["import numpy as np", "data = np.array([1.0, 2.0], dtype=np.float32)",
                      "indices = np.array([1], dtype=np.int32)", source, "print(result)", ""])
    path = tmp_path / "repro.py"
    path.write_text(text)
    env = {k: v for k, v in os.environ.items() if k != tfjs.DIR_ENV}
    ran = subprocess.run([sys.executable, str(path)], cwd=tmp_path, capture_output=True, text=True, timeout=60,
                         env={**env, "GSC_TFJS_DIR": str(tmp_path / "nowhere")})
    assert ran.returncode != 0
    last = ran.stderr.strip().splitlines()[-1]
    assert "Traceback" not in ran.stderr and "needs" in last and "FileNotFoundError" not in ran.stderr, ran.stderr



def test_site_paths_are_made_of_plain_names(tmp_path: Path) -> None:
    pytest.importorskip("jinja2")
    from gather_scatter_conformance.harness.report import site

    for text in ("..", ".", "...", ".hidden", "a/../b", "/etc"):
        assert site.slug(text) not in ("..", ".") and not site.slug(text).startswith("."), text
    assert ".." not in site.cell_url("..", "..", "..", "..").split("/")
    for url in ("../x.html", "/etc/x.html", "a/../../x.html", "a//x.html"):
        with pytest.raises(ValueError):
            site.under(tmp_path, url)
    assert site.under(tmp_path, "GatherND/numpy/take/negative-indices.html").is_relative_to(tmp_path)
