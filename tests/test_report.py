"""The compatibility report (harness/report): sections, counts, baseline changes, escaping, self-containment.

The results files here are written by hand with the fields the runner produces (harness/run/runner.py: execute and
judge); they are test input for the report, not a framework.
"""

from __future__ import annotations

import csv
import json
import re
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("pandas")
pytest.importorskip("jinja2")

from gather_scatter_conformance.harness.cli import main
from gather_scatter_conformance.harness.report import build, drilldown
from gather_scatter_conformance.harness.report.page import generate
from gather_scatter_conformance.harness.run.records import NotResultsFile, new_manifest
from gather_scatter_conformance.vocab.record import Record

GATHER6 = "cases/gather.yaml::ov-gather8-example-6"  # data [1..5], indices [0, -2, -1] -> [1, 4, 5]
GATHERND1 = "cases/gather_nd.yaml::blog-gathernd-example-1"
PROBE = "cases/probes/nonexistent.yaml::probe-oob"  # a probe the checkout lacks: evidence without inputs
NO_CLAIMS = Path("/nonexistent-claims")  # the repository's claims/ would make cells depend on its contents
EVIL = "bad </script><script>alert(1)</script> & <img src=x onerror=alert(2)>"


def rec(case: str, op: str, fw: str, variant: str, outcome: str = "ok", verdict: str = "conforms",
        **fields: Any) -> dict[str, Any]:
    """A result record as gather_scatter_conformance.harness.run.runner.execute writes it."""
    file, _, cid = case.partition("::")
    r: dict[str, Any] = {
        "case": case, "case_file": file, "case_id": cid, "op": op, "tags": [], "framework": fw,
        "framework_version": {"numpy": "2.4.6", "torch": "2.13.0", "tensorflow": "2.21.0"}.get(fw, "1.0"),
        "variant": variant, "api": f"{fw}.{variant}(data, indices)", "device": "cpu", "outcome": outcome,
        "error_type": None, "error_message": None, "signal": None, "duration_s": 0.001, "distinct_outputs": 1,
        "expected": [1.0, 4.0, 5.0], "python": "3.11.7", "host": "testhost", "time": "2026-01-02T03:04:05+00:00",
        "verdict": verdict, "reason": "",
    }
    if outcome == "ok":
        r.update({"max_abs_err": 0.0, "mismatches": 0, "first_mismatches": [], "observed": [1.0, 4.0, 5.0],
                  "observed_dtype": "float32", "observed_shape": [3]})
    elif outcome == "error":
        r.update({"error_type": "ValueError", "error_message": "index -2 is out of bounds", "distinct_outputs": None})
    elif outcome == "unsupported":
        r.update({"api": "", "reason": "cannot express", "distinct_outputs": None})
    r.update(fields)
    return r


def sample_records() -> list[dict[str, Any]]:
    """12 records: Gather on numpy, torch (2 variants), tensorflow; GatherND; two probes; a dtype probe."""
    wrong = {"observed": [1.0, 0.0, 0.0], "max_abs_err": 5.0, "mismatches": 2, "reason": "2 of 3 element(s) differ",
             "first_mismatches": [{"index": [1], "expected": 4.0, "observed": 0.0},
                                  {"index": [2], "expected": 5.0, "observed": 0.0}]}
    nd = {"expected": [[[1.0, 2.0]], [[5.0, 6.0]]], "observed": [[[1.0, 2.0]], [[5.0, 6.0]]],
          "observed_shape": [2, 1, 2]}
    return [
        rec(GATHER6, "Gather", "numpy", "take"),
        rec(GATHER6, "Gather", "torch", "indexing"),
        rec(GATHER6, "Gather", "torch", "index_select", verdict="deviates", **wrong),
        rec(GATHER6, "Gather", "tensorflow", "gather/eager", "error", "deviates", error_type="InvalidArgumentError",
            error_message=EVIL, reason="raised where canonical semantics give a value"),
        rec(GATHERND1, "GatherND", "numpy", "indexing", **nd),
        rec(GATHERND1, "GatherND", "torch", "indexing", **nd),
        rec(GATHERND1, "GatherND", "tensorflow", "gather_nd/eager", "crash", "deviates", signal="SIGSEGV",
            error_message="worker died", distinct_outputs=None, expected=nd["expected"]),
        rec(GATHERND1, "GatherND", "tensorflow", "gather_nd/xla", "unsupported", "n/a", expected=nd["expected"]),
        rec(PROBE, "Gather", "numpy", "take", "error", "conforms", expected="error", dimension="oob-positive",
            label="error"),
        rec(PROBE, "Gather", "torch", "indexing", "ok", "deviates", expected="error", dimension="oob-positive",
            label="wrap", observed=[30.0]),
        rec(PROBE, "Gather", "tensorflow", "gather/eager", "crash", "deviates", expected="error",
            dimension="oob-positive", label="crash:SIGFPE", signal="SIGFPE", distinct_outputs=None),
        rec("cases/probes/nonexistent.yaml::probe-bf16", "Gather", "torch", "indexing", "error", "deviates",
            dimension="data-dtype:bfloat16", label="error", deviation="dtype"),
    ]


def write(path: Path, records: list[dict[str, Any]]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in records))
    return path


@pytest.fixture
def report(tmp_path: Path) -> dict[str, Any]:
    results = write(tmp_path / "results.jsonl", sample_records())
    paths = generate([results], tmp_path / "out", claims_dir=NO_CLAIMS)
    return {"paths": paths, "html": paths["index.html"].read_text(encoding="utf-8"), "tmp": tmp_path}


def data_text(html: str, out: Path) -> str:
    """The evidence the page loads on its first drill-down: the file its meta tag names, beside it."""
    m = re.search(r'<meta name="gsc-data" content="([^"]+)">', html)
    assert m, "the page names no evidence file"
    text = (out / m.group(1)).read_text(encoding="utf-8")
    assert text.startswith("window.GSC_REPORT_DATA = ") and text.endswith(";\n")
    return text.removeprefix("window.GSC_REPORT_DATA = ").removesuffix(";\n")


def blob(html: str, out: Path) -> dict[str, Any]:
    return json.loads(data_text(html, out))


def test_sections_and_files(report: dict[str, Any]) -> None:
    html = report["html"]
    for section in ("findings", "run", "legend", "behaviour", "conformance", "dtypes", "agreement", "changes"):
        assert f'<section id="{section}"' in html
    assert 'id="no-changes"' in html and 'id="changed-labels"' not in html  # changes only with --baseline
    assert 'id="harness-faults"' not in html  # listed only where the harness failed
    assert 'id="beh-Gather"' in html  # one behaviour table per operator (the probes here are Gather's)
    assert "testhost" in html and "2.13.0" in html and "3.11.7" in html  # header: machine, versions, Python
    rows = json.loads(report["paths"]["behaviour.json"].read_text())
    assert {(r["framework"], r["dimension"], r["label"]) for r in rows} >= {
        ("numpy", "oob-positive", "error"), ("torch", "oob-positive", "wrap"),
        ("tensorflow", "oob-positive", "crash:SIGFPE"), ("torch", "data-dtype:bfloat16", "error")}
    # Blog-style words, with a severity class and its symbol (gather_scatter_conformance.harness.report.severity).
    cell = r'<td class="{cls}[^"]*" data-b="[\d ]+"[^>]*><span class="sym">{sym}</span> {text}<'
    assert re.search(cell.format(cls="sev-ok", sym="✓", text="Error"), html)
    assert re.search(cell.format(cls="sev-alt", sym="◇", text=r"Wrap \(supported\)"), html)
    assert re.search(cell.format(cls="sev-unsafe", sym="⚠", text=r"Crash \(SIGFPE\)"), html)
    assert "What happens to an index &gt;= s?" in html  # the dimension's question, escaped
    assert re.search(r'<td class="sev-alt" data-bl="\d+"[^>]*>◇</td>', html)  # dtype matrix: no API runs it


def test_harness_faults_are_listed_apart(tmp_path: Path) -> None:
    fault = {"phase": "prepare", "where": "/site/gather_scatter_conformance/adapters/paddle.py:12", "traceback": "…"}
    faults = [rec(case, op, "paddle", "gather", "harness-error", "n/a", error_type="NameError",
                  error_message="name 'sorce' is not defined", reason="harness fault (prepare)", fault=fault)
              for case, op in ((GATHER6, "Gather"), (GATHERND1, "GatherND"))]
    paths = generate([write(tmp_path / "r.jsonl", [*sample_records(), *faults])], tmp_path / "out",
                     claims_dir=NO_CLAIMS)
    html = paths["index.html"].read_text(encoding="utf-8")
    section = html[html.index('<section id="harness-faults"'):]
    section = section[:section.index("</section>")]
    assert "<td>paddle:gather</td><td>prepare</td>" in section
    assert "gather_scatter_conformance/adapters/paddle.py:12" in section and "/site/" not in section
    assert "NameError: name &#39;sorce&#39; is not defined" in section and '<td class="num">2</td>' in section
    findings = html[html.index('<section id="findings"'):]
    assert "paddle" not in findings[:findings.index("</section>")]  # no finding
    rows = list(csv.DictReader(paths["matrix.csv"].open()))
    assert {r["paddle:gather"] for r in rows if r.get("paddle:gather")} == {"n/a"}


def test_matrix_csv_and_counts(report: dict[str, Any]) -> None:
    with open(report["paths"]["matrix.csv"], newline="") as fh:
        rows = list(csv.DictReader(fh))
    by_case = {r["case"]: r for r in rows}
    assert by_case[GATHER6]["torch:index_select"] == "deviates"
    assert by_case[GATHER6]["tensorflow:gather/eager"] == "error"
    assert by_case[GATHERND1]["tensorflow:gather_nd/eager"] == "crash"
    assert by_case[GATHERND1]["tensorflow:gather_nd/xla"] == "n/a"
    assert by_case[GATHERND1]["torch:index_select"] == ""  # not run
    counts = {c["op"]: c for c in build.counts(build.frame(build.dedupe(map(Record.read, sample_records()))))}
    # The bfloat16 probe's refusal is a dtype deviation (a type the spec allows), apart from the eager error.
    assert {k: counts["Gather"][k] for k in build.STATUSES} == {
        "conforms": 3, "deviates": 2, "dtype": 1, "error": 1, "crash": 1, "timeout": 0, "n/a": 0}
    assert by_case["cases/probes/nonexistent.yaml::probe-bf16"]["torch:indexing"] == "dtype"
    assert {k: counts["GatherND"][k] for k in build.STATUSES} == {
        "conforms": 2, "deviates": 0, "dtype": 0, "error": 0, "crash": 1, "timeout": 0, "n/a": 1}
    assert counts["all"]["total"] == 12
    row = re.search(r'<tr class="o\d"><th>GatherND</th>(.*?)</tr>', report["html"]).group(1)
    assert re.findall(r'data-status="[^"]+">(\d+)<', row) == ["2", "0", "0", "0", "1", "0", "1"]


def test_injection_is_text(report: dict[str, Any], tmp_path: Path) -> None:
    html = report["html"]
    assert "<script>alert" not in html and "<img src=x" not in html
    assert html.count("</script>") == 2  # the classes' and the page script's own closing tags only
    data = data_text(html, report["paths"]["index.html"].parent)
    assert "<" not in data and ">" not in data and "&" not in data
    assert "\\u003c/script\\u003e" in data
    assert EVIL in blob(html, report["paths"]["index.html"].parent)["str"]  # the message survives, exactly, as data
    # Framework-supplied text in attributes and cells is escaped too.
    # A name the harness never writes is refused where the file is read (harness.run.records); free text such as
    # a version reaches the page escaped.
    evil = sample_records()[:1]
    evil[0].update(variant='"><script>alert(3)</script>', outcome="crash", signal="SIGSEGV", verdict="deviates")
    with pytest.raises(NotResultsFile, match="variant"):
        generate([write(tmp_path / "evil.jsonl", evil)], tmp_path / "evil", claims_dir=NO_CLAIMS)
    evil = sample_records()[:1]
    evil[0].update(framework_version="<b>1</b><script>alert(3)</script>", outcome="crash", signal="SIGSEGV",
                   verdict="deviates")
    out = generate([write(tmp_path / "evil.jsonl", evil)], tmp_path / "evil", claims_dir=NO_CLAIMS)
    text = out["index.html"].read_text()
    assert "<script>alert" not in text and "<b>1</b>" not in text and "&lt;script&gt;alert(3)" in text


def test_a_behaviour_cell_names_the_data_dtypes_behind_each_label(tmp_path: Path) -> None:
    # Issue #40: OpenVINO's Gather-8 past the end gives 0 on float data, garbage on int32 data. A dtype name comes
    # from a results file's tags (free text): it reaches the pages escaped.
    bad = "<img src=x onerror=alert(4)>"

    def probe(cid: str, label: str, dtype: str) -> dict[str, Any]:
        return rec(f"cases/probes/nonexistent.yaml::{cid}", "Gather", "openvino", "Gather-8", verdict="deviates",
                   dimension="oob-positive", label=label, tags=["probe", f"data:{dtype}"], observed=[0.0])

    out = generate([write(tmp_path / "r.jsonl", [probe("oob-i32", "garbage", "int32"), probe("oob-f32", "zero",
                                                                                              "float32"),
                                                 probe("oob-bad", "garbage", bad)])],
                   tmp_path / "out", claims_dir=NO_CLAIMS)
    (row,) = json.loads(out["behaviour.json"].read_text())
    assert row["label"] == "garbage|zero" and row["by_data_dtype"] == {"int32": "garbage", "float32": "zero",
                                                                       bad: "garbage"}
    split = "zero: float32 · garbage: int32, " + bad  # a name vocab.dtypes does not know comes last
    html = out["index.html"].read_text(encoding="utf-8")
    assert bad not in html and "<img" not in html
    esc = split.replace("<", "&lt;").replace(">", "&gt;")
    (cell,) = re.findall(r'<td class="sev-[^"]*" data-b="0" title="([^"]*)"[^>]*>(.*?)</td>', html)
    assert f"By data dtype: {esc}" in cell[0].split("\n")  # the hover
    # The text stays the combined label (its colour the combined severity); a line under it gives the split.
    assert cell[1].endswith(f'<span class="dsplit">{esc}</span>') and build.words("garbage|zero", "oob-positive") \
        in cell[1]
    # The cell's JSON carries it; its page lists it, escaped.
    page = out["index.html"].parent / "Gather" / "openvino" / "Gather-8" / "oob-positive.html"
    assert json.loads(page.with_suffix(".json").read_text())["by_data_dtype"] == row["by_data_dtype"]
    text = page.read_text(encoding="utf-8")
    assert "<img" not in text and ("<code>zero</code>: float32 · <code>garbage</code>: int32, "
                                   "&lt;img src=x onerror=alert(4)&gt;") in text
    # Dtypes that agree: no split anywhere.
    out = generate([write(tmp_path / "s.jsonl", [probe("oob-i32", "zero", "int32"), probe("oob-f32", "zero",
                                                                                           "float32")])],
                   tmp_path / "same", claims_dir=NO_CLAIMS)
    assert "by_data_dtype" not in json.loads(out["behaviour.json"].read_text())[0]
    assert 'class="dsplit"' not in out["index.html"].read_text(encoding="utf-8")
    page = out["index.html"].parent / "Gather" / "openvino" / "Gather-8" / "oob-positive.json"
    assert json.loads(page.read_text())["by_data_dtype"] is None


def test_drilldown_evidence(report: dict[str, Any]) -> None:
    from gather_scatter_conformance.harness.cases.load import Case, load_file
    from gather_scatter_conformance.harness.run.repro import snippet

    data = blob(report["html"], report["paths"]["index.html"].parent)
    cases = {c["id"]: c for c in data["cases"]}
    g = cases[GATHER6]
    assert g["inputs"] == [["data", "float32", [5]], ["indices", "int64", [3]]]
    assert g["attrs"] == {"axis": 0, "batch_dims": 0} and g["exp"] == [1.0, 4.0, 5.0]
    case = next(c for c in load_file(Path("cases/gather.yaml"), "cases/gather.yaml")
                if isinstance(c, Case) and c.id == "ov-gather8-example-6")
    api = "torch.index_select(data, 0, indices)"
    assert g["repro"] + "\n" + api == snippet(case, api)  # the page's join equals harness.run.repro.snippet
    assert "missing" in cases[PROBE]  # a case the checkout lacks still shows its record
    dev = next(r for r in data["recs"] if r["s"] == "deviates" and data["cols"][r["k"]] == "torch:index_select")
    assert dev["fm"][0] == {"index": [1], "expected": 4.0, "observed": 0.0} and dev["obs"] == [1.0, 0.0, 0.0]
    assert data["str"][dev["api"]] == "torch.index_select(data, indices)"


TORCH_CLAIMS = """\
framework: torch
title: test claims
claims:
  - op: Gather
    dimension: oob-positive
    label: error
    text: "index <must> be in range"
    source: https://docs.pytorch.org/docs/stable/generated/torch.index_select.html
"""


def _blog(*claims: str) -> str:
    """A claims file of the 2020 blog (a secondary source) holding ``claims``, one flow mapping each."""
    return ("framework: blog-2020\ntitle: the 2020 blog\ndefaults: {source: "
            '"https://www.pathpartnertech.com/gather-scatter-operation-in-deep-learning-framework/", '
            "source_kind: secondary}\nclaims:\n" + "".join(f"  - {c}\n" for c in claims))


def _generate_with_claims(tmp_path: Path, files: dict[str, str]) -> dict[str, Path]:
    """The report of the sample records with ``files`` (name: text) as its claims directory."""
    claims = tmp_path / "claims"
    claims.mkdir()
    for name, text in files.items():
        (claims / name).write_text(text)
    return generate([write(tmp_path / "r.jsonl", sample_records())], tmp_path / "out", claims_dir=claims)


BLOG_CLAIMS = _blog(
    '{op: Gather, dimension: oob-positive, label: wrap, text: "Supported with different modes", about: numpy}',
    '{op: Gather, dimension: oob-positive, label: wrap, text: "Supported", about: torch}',
)


def test_documented_and_blog_marks(tmp_path: Path) -> None:
    out = _generate_with_claims(tmp_path, {"torch.yaml": TORCH_CLAIMS, "blog-2020.yaml": BLOG_CLAIMS})
    html = out["index.html"].read_text()
    # torch measured wrap: contradicts its docs (error) but not the blog (wrap).
    sym = r'[^>]*><span class="sym">.</span> '
    cell = re.search(r'<td class="sev-alt dc" data-b="\d+" title="([^"]*)"' + sym + r'Wrap \(supported\)(.*?)</td>',
                     html)
    assert cell and 'class="dm dc"' in cell.group(2) and 'class="dm bc"' not in cell.group(2)
    assert ("Documented (contradicts): Error — https://docs.pytorch.org/docs/stable/generated/torch.index_select.html"
            in cell.group(1))
    # numpy measured error: no documented claim here, but contradicts the blog (wrap).
    numpy_cell = re.search(r'<td class="sev-ok" data-b="\d+" title="([^"]*)"' + sym + r'Error(.*?)</td>', html)
    assert numpy_cell and 'class="dm bc"' in numpy_cell.group(2) and 'class="dm dc"' not in numpy_cell.group(2)
    assert 'class="dm du"' in numpy_cell.group(2)  # no claim about numpy's take: undocumented, and shown
    assert "Blog 2020: Wrap (supported) — https://www.pathpartnertech.com/" in numpy_cell.group(1)
    data = blob(html, out["index.html"].parent)
    beh = {data["cols"][b["k"]]: b for b in data["beh"] if b["dim"] == "oob-positive"}
    torch = beh["torch:indexing"]
    text = data["str"]  # texts many cells share are stored once
    assert torch["adoc"] is False and torch["ablog"] is True and text[torch["dtext"]] == "index <must> be in range"
    assert text[torch["dhref"]] == "https://docs.pytorch.org/docs/stable/generated/torch.index_select.html"
    assert torch["ds"] == "contradicts" and torch["sev"] == "alt"
    assert beh["numpy:take"]["ablog"] is False


def test_baseline_changes(tmp_path: Path) -> None:
    base = sample_records()
    now = sample_records()
    now[2] = rec(GATHER6, "Gather", "torch", "index_select")  # deviated, now conforms
    now[0] = rec(GATHER6, "Gather", "numpy", "take", "error", "deviates")  # conformed, now raises
    now[9] = {**now[9], "label": "clamp", "framework_version": "2.14.0"}  # torch probe: wrap -> clamp
    now.append(rec("cases/gather.yaml::new-case", "Gather", "numpy", "take"))
    out = generate([write(tmp_path / "now.jsonl", now)], tmp_path / "out", [write(tmp_path / "base.jsonl", base)],
                   claims_dir=NO_CLAIMS)
    html = out["index.html"].read_text()
    assert '<section id="changes">' in html
    started = re.search(r'<table class="plain" id="changes-started">(.*?)</table>', html, re.S).group(1)
    stopped = re.search(r'<table class="plain" id="changes-stopped">(.*?)</table>', html, re.S).group(1)
    labels = re.search(r'<table class="plain" id="changed-labels">(.*?)</table>', html, re.S).group(1)
    assert "numpy:take" in started and "torch:index_select" not in started
    assert "torch:index_select" in stopped
    assert "Wrap (supported)" in labels and "Clamp" in labels and "2.14.0" in labels
    assert "1 new, 0 no longer present" in html


def test_self_contained(tmp_path: Path) -> None:
    """Nothing is fetched: no src/href resources, no url()/@import, no network calls; <a href> links are allowed."""
    resource_attrs = {"src", "srcset", "href", "data", "poster", "action", "formaction", "background", "xlink:href"}

    class Resources(HTMLParser):
        def __init__(self) -> None:
            super().__init__()
            self.bad: list[str] = []
            self.code: list[str] = []
            self.tag = ""

        def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
            self.tag = tag if tag != "script" or ("type", "application/json") not in attrs else "json"
            for name, value in attrs:
                if (name in resource_attrs and not (tag == "a" and name == "href")) or (
                        name == "style" and value and re.search(r"url\(|@import", value)):
                    self.bad.append(f"<{tag} {name}={value!r}>")

        def handle_data(self, data: str) -> None:
            if self.tag in ("style", "script"):
                self.code.append(data)

    # Citations (URLs) in the claims make the check meaningful: they must appear only as text or <a href>.
    records = sample_records()
    records[1]["error_message"] = "see https://example.com/x.png"
    out = generate([write(tmp_path / "r.jsonl", records)], tmp_path / "out")
    parser = Resources()
    parser.feed(out["index.html"].read_text())
    assert parser.bad == []
    code = "\n".join(parser.code)
    assert "function" in code  # the page's own script was seen
    # One script is loaded, on the first drill-down: the evidence file beside the page that its meta tag names.
    loads = re.findall(r"\.src\s*=\s*([^;]+);", code)
    assert loads == ["document.querySelector('meta[name=\"gsc-data\"]').content"]
    meta = re.search(r'<meta name="gsc-data" content="([^"]+)">', out["index.html"].read_text())
    assert meta and "/" not in meta.group(1) and (out["index.html"].parent / meta.group(1)).is_file()
    assert not re.search(r"https?://|url\(|@import|\bfetch\(|XMLHttpRequest|\bimport\(", code)


def test_words() -> None:
    assert build.words("wrap") == "Wrap (supported)"
    assert build.words("crash:SIGFPE") == "Crash (SIGFPE)"
    assert build.words("skip") == "Dropped" and build.words("alias") == "Reads neighbour"
    assert build.words("keep-data") == "Same as data" and build.words("fill-nan") == "Fill (NaN/min)"
    assert build.words("error", "negative-axis") == "Not supported (error)"
    assert build.words("error|wrap", "oob-positive") == "Error / Wrap (supported)"


def test_embed_json_escapes() -> None:
    text = str(drilldown.embed_json({"m": "</script><!-- & \u2028", "x": float("nan")}))
    assert not set(text) & set("<>&\u2028")
    assert json.loads(text) == {"m": "</script><!-- & \u2028", "x": "NaN"}


def test_cli(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    results = write(tmp_path / "r.jsonl", sample_records())
    assert main(["report", str(results), "--out", str(tmp_path / "o"), "--baseline", str(results)]) == 0
    names = {p.name for p in (tmp_path / "o").iterdir()}
    page_files = {"index.html", "report-data.js", "behaviour.json", "provenance.json", "matrix.csv"}
    site_dirs = {"api", "systems", "port"}  # harness.report.site; then a folder per operator measured
    assert page_files | site_dirs <= names and names - page_files - site_dirs <= set(build.OPS)
    assert "index.html" in capsys.readouterr().out


def test_empty_results(tmp_path: Path) -> None:
    # A run that recorded nothing still wrote its manifest; a file with no line at all is no results file.
    with pytest.raises(NotResultsFile, match="empty"):
        generate([write(tmp_path / "r.jsonl", [])], tmp_path / "out", claims_dir=NO_CLAIMS)
    manifest = new_manifest(["gsc", "run"], ["numpy"]).model_copy(update={"status": "complete", "records": 0})
    (tmp_path / "r.jsonl").write_bytes(manifest.line())
    out = generate([tmp_path / "r.jsonl"], tmp_path / "out", claims_dir=NO_CLAIMS)
    html = out["index.html"].read_text()
    assert '<section id="conformance">' in html and "No probe results" in html
    assert json.loads(out["behaviour.json"].read_text()) == []


CAFFE2_CLAIMS = """\
framework: caffe2
title: test claims
claims:
  - op: Gather
    api: Gather
    dimension: default-axis
    label: axis-0
    text: "gathers entries of the outer-most dimension"
    source: pytorch/pytorch caffe2/operators/gather_op.cc @ 0bf218b1bb3233f8bc0eaead051f6028fbca63ba
"""
TF_GPU_CLAIMS = """\
framework: tensorflow
title: test claims
claims:
  - {op: Gather, api: tf.gather, dimension: oob-positive, label: error, device: cpu, text: "an error is returned",
     source: "https://www.tensorflow.org/api_docs/python/tf/gather"}
  - {op: Gather, api: tf.gather, dimension: oob-positive, label: zero, device: gpu, text: "a 0 is stored",
     source: "https://www.tensorflow.org/api_docs/python/tf/gather"}
"""
BLOG_ON_CAFFE2 = _blog('{op: Gather, dimension: oob-positive, label: error, text: "Not Supported", about: caffe2}')


def test_documented_only_columns_are_marked_and_never_shadow_measurements(tmp_path: Path) -> None:
    out = _generate_with_claims(tmp_path, {"caffe2.yaml": CAFFE2_CLAIMS, "tensorflow.yaml": TF_GPU_CLAIMS,
                                           "blog-2020.yaml": BLOG_ON_CAFFE2})
    html = out["index.html"].read_text()
    rows = json.loads(out["behaviour.json"].read_text())
    doc = {(r["framework"], r["variant"], r["device"], r["dimension"]): r for r in rows if r["measured"] is False}
    # Caffe2: its own claim, completed by the blog's statement about it; never measured.
    assert doc[("caffe2", "Gather", "cpu", "default-axis")]["label"] == "axis-0"
    blog = doc[("caffe2", "Gather", "cpu", "oob-positive")]
    assert blog["label"] == "error" and blog["documented_kind"] == "secondary"
    assert "no runnable build" in blog["doc_only"]
    # TensorFlow was measured on the CPU only: its GPU claim becomes a documented-only column, its CPU one doesn't.
    assert doc[("tensorflow", "tf.gather", "gpu", "oob-positive")]["label"] == "zero"
    assert not any(k[0] == "tensorflow" and k[2] == "cpu" for k in doc)
    assert html.count('<span class="docbadge">documented only</span>') == 2  # caffe2:Gather, tensorflow@gpu
    assert re.search(r'<td class="doconly" data-b="\d+" title="Documented only \(no runnable build', html)
    data = blob(html, out["index.html"].parent)
    only = [b for b in data["beh"] if b.get("only")]
    assert only and all(b["recs"] == [] for b in only)
    # Documented-only rows never count as measured dtype support or as label changes.
    assert "caffe2" not in build.dtype_matrix(rows)["frameworks"]


class BehaviourRows(HTMLParser):
    """The behaviour tables' rows (``tr[data-fw]``), each with the ``<details>`` it sits in (None: shown), the folds'
    summaries, and the Frameworks filter's checkboxes."""

    def __init__(self) -> None:
        super().__init__()
        self.rows: list[dict[str, Any]] = []
        self.folds: list[dict[str, Any]] = []
        self.filter: list[str] = []
        self._details: list[dict[str, Any]] = []
        self._summary: list[str] | None = None
        self._label: list[str] | None = None

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        a = dict(attrs)
        if tag == "details":
            self._details.append({"class": a.get("class") or "", "open": "open" in a, "summary": "", "rows": 0})
            self.folds.append(self._details[-1])
        elif tag == "summary":
            self._summary = []
        elif tag == "input" and "data-fw" in a:
            self._label = []
        elif tag == "tr" and "data-fw" in a:
            fold = self._details[-1] if self._details else None
            self.rows.append({"fw": a["data-fw"], "class": (a.get("class") or "").split(), "fold": fold})
            if fold is not None:
                fold["rows"] += 1

    def handle_endtag(self, tag: str) -> None:
        if tag == "details":
            self._details.pop()
        elif tag == "summary" and self._summary is not None:
            self._details[-1]["summary"] = " ".join("".join(self._summary).split())
            self._summary = None
        elif tag == "label" and self._label is not None:
            self.filter.append("".join(self._label).strip())
            self._label = None

    def handle_data(self, data: str) -> None:
        for buf in (self._summary, self._label):
            if buf is not None:
                buf.append(data)


def _behaviour_rows(html: str) -> BehaviourRows:
    parser = BehaviourRows()
    parser.feed(html)
    parser.close()
    return parser


def test_the_frameworks_filter_lists_only_the_systems_in_the_results(tmp_path: Path) -> None:
    """Issue #39: a documented-only system (caffe2 here, from its claims) is no choice in the Frameworks filter, and
    its rows carry no framework class (which the filter would hide); a measured framework's documented-only device
    column (tensorflow@gpu) keeps its framework's."""
    out = _generate_with_claims(tmp_path, {"caffe2.yaml": CAFFE2_CLAIMS, "tensorflow.yaml": TF_GPU_CLAIMS})
    page = _behaviour_rows(out["index.html"].read_text())
    measured = sorted({r["framework"] for r in sample_records()})
    assert page.filter == measured == ["numpy", "tensorflow", "torch"]
    caffe2 = [r for r in page.rows if r["fw"] == "caffe2"]
    assert caffe2 and not any(re.fullmatch(r"f\d+", c) for r in caffe2 for c in r["class"])
    tf_gpu = [r for r in page.rows if r["fw"] == "tensorflow" and "doconly" in r["class"]]
    assert tf_gpu and all(f"f{measured.index('tensorflow')}" in r["class"] for r in tf_gpu)


def test_documented_only_rows_are_folded_under_their_table(tmp_path: Path) -> None:
    """Issue #39: documented-only rows are in the page, but in a closed <details> under their table whose summary
    counts them; measured rows are never folded."""
    out = _generate_with_claims(tmp_path, {"caffe2.yaml": CAFFE2_CLAIMS, "tensorflow.yaml": TF_GPU_CLAIMS,
                                           "blog-2020.yaml": BLOG_ON_CAFFE2})
    html = out["index.html"].read_text()
    page = _behaviour_rows(html)
    doc = [r for r in page.rows if "doconly" in r["class"]]
    assert {r["fw"] for r in doc} == {"caffe2", "tensorflow"}  # caffe2:Gather, tensorflow:tf.gather@gpu
    assert len(doc) == 2 and all(r["fold"] is not None and r["fold"]["class"] == "docfold" for r in doc)
    assert not any(r["fold"]["open"] for r in doc)  # folded by default
    assert [r for r in page.rows if r["fold"] is None] == [r for r in page.rows if "doconly" not in r["class"]]
    assert len(page.rows) > len(doc)  # the measured rows are there, unfolded
    folds = [f for f in page.folds if f["class"] == "docfold"]
    assert len(folds) == 1 and folds[0]["rows"] == 2  # both are Gather's
    assert "2 documented-only rows (not measured in these results): show" in folds[0]["summary"]
    assert re.search(r'id="doc-rows-note">2 documented-only rows \(', html)
    # The legend and each row's badge stay.
    assert "documented only, not measured" in html and html.count('<span class="docbadge">documented only</span>') == 2


def test_a_report_with_nothing_documented_only_has_no_fold(report: dict[str, Any]) -> None:
    page = _behaviour_rows(report["html"])
    assert page.rows and not [f for f in page.folds if f["class"] == "docfold"]
    assert 'id="doc-rows-note"' not in report["html"]


def test_gpu_results_get_their_own_columns_beside_cpu(tmp_path: Path) -> None:
    recs = sample_records()
    gpu = [dict(r, device="gpu", device_name="NVIDIA H100", label="zero") if "label" in r else dict(r, device="gpu")
           for r in recs if r["framework"] == "tensorflow"]
    out = generate([write(tmp_path / "r.jsonl", recs + gpu)], tmp_path / "out", claims_dir=NO_CLAIMS)
    data = blob(out["index.html"].read_text(), out["index.html"].parent)
    assert "tensorflow:gather/eager" in data["cols"] and "tensorflow:gather/eager@gpu" in data["cols"]
    rows = json.loads(out["behaviour.json"].read_text())
    probe = {(r["framework"], r["device"]): r["label"] for r in rows if r["dimension"] == "oob-positive"}
    assert probe[("tensorflow", "cpu")] == "crash:SIGFPE" and probe[("tensorflow", "gpu")] == "zero"


def _history(tmp_path: Path) -> Path:
    """Three onnxruntime releases: negative indices error on 1.0.0, wrap from 1.1.0; one release failed to import."""
    from gather_scatter_conformance.harness.history import store

    directory = tmp_path / "history"
    for release, label in (("1.0.0", "error"), ("1.1.0", "wrap"), ("1.2.0", "wrap")):
        store.write_release(directory, "onnxruntime", release, [{
            "framework": "onnxruntime", "release": release, "version": release, "status": "ok", "op": "Gather",
            "variant": "Gather-13", "device": "cpu", "dimension": "negative-indices", "label": label,
            "labels": {"cases/probes/gather.yaml::probe-negative-indices": label}, "outcomes": {"ok": 1},
            "packages": {"onnxruntime": release, "numpy": "1.26.4"}, "measured": "2026-11-24"}])
    store.write_release(directory, "onnxruntime", "0.9.0", [{
        "framework": "onnxruntime", "release": "0.9.0", "status": "import-failed", "reason": EVIL}])
    return directory


def test_history_section_shows_labels_per_release_and_links_each_change_to_both_releases(tmp_path: Path) -> None:
    """The landing page counts each framework's changes and links to its page (#28: the tables weighed 0.66 MB of
    the landing page on the full run), where the labels per release and the evidence of each change are."""
    results = write(tmp_path / "r.jsonl", sample_records())
    paths = generate([results], tmp_path / "out", claims_dir=NO_CLAIMS, history_dir=_history(tmp_path))
    page = paths["index.html"].read_text()
    section = page[page.index('<section id="history">'):]
    section = section[:section.index("</section>")]
    text = re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", section))
    assert "1 label change across 4 releases of 1 framework" in text
    assert 'href="systems/onnxruntime.html#history"' in section and 'class="hchg"' not in section
    system = (tmp_path / "out" / "systems" / "onnxruntime.html").read_text()
    history = system[system.index('<h2 id="history">'):]
    # the change point: a highlighted cell on 1.1.0 linking to its evidence, which names both releases' cases
    link = re.search(r'<td class="hchg"><a href="#(hev-onnxruntime-0)">wrap</a></td>', history)
    assert link, history[:2000]
    evidence = history[history.index(f'id="{link.group(1)}"'):]
    assert "error on 1.0.0 → wrap on 1.1.0" in re.sub(r"<[^>]+>", "", evidence)
    assert evidence.count("cases/probes/gather.yaml::probe-negative-indices") >= 2
    assert "0.9.0 (import-failed" in re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", history))  # says why it did not run
    assert EVIL not in page + system and "&lt;img src=x" in history  # its reason is escaped
    assert 'href="#history"' in page


def test_without_previous_results_the_page_says_there_is_nothing_to_compare(tmp_path: Path) -> None:
    results = write(tmp_path / "r.jsonl", sample_records())
    missing = tmp_path / "previous.jsonl"  # as `make report` passes it on a first run
    page = generate([results], tmp_path / "out", [missing], claims_dir=NO_CLAIMS)["index.html"].read_text()
    assert 'id="no-changes"' in page and 'id="kf-no-previous"' in page and 'id="history"' not in page
    write(missing, sample_records()[:4])
    page = generate([results], tmp_path / "out2", [missing], claims_dir=NO_CLAIMS)["index.html"].read_text()
    assert 'id="no-changes"' not in page and 'id="kf-no-previous"' not in page


def _ov_probe(dimension: str, variant: str, label: str, outcome: str = "ok", **fields: Any) -> dict[str, Any]:
    """OpenVINO's Gather probe on one variant (``read_model/constant``: the indices a constant)."""
    return rec(f"cases/probes/nonexistent.yaml::probe-{dimension}", "Gather", "openvino", variant, outcome,
               "deviates", dimension=dimension, label=label, **fields)


def test_the_report_lists_the_labels_index_provenance_changes(tmp_path: Path) -> None:
    # Issue #40, OpenVINO 2026.4.1: empty indices crash read_model (SIGFPE), a constant gives a wrong value; a
    # memory-unsafe cell's chance flip is not listed. The version is free text from the results file: escaped.
    version = "2026.4.1<script>alert(5)</script>"
    records = [_ov_probe("empty-indices", "read_model", "crash:SIGFPE", "crash", signal="SIGFPE",
                         distinct_outputs=None),
               _ov_probe("empty-indices", "read_model/constant", "wrong"),
               _ov_probe("oob-positive", "Gather-8", "zero"), _ov_probe("oob-positive", "Gather-8/constant",
                                                                        "zero|garbage")]
    for r in records:
        r["framework_version"] = version
    out = generate([write(tmp_path / "r.jsonl", records)], tmp_path / "out", claims_dir=NO_CLAIMS)
    assert json.loads(out["provenance.json"].read_text()) == [
        {"op": "Gather", "dimension": "empty-indices", "framework": "openvino", "framework_version": version,
         "device": "cpu", "variant": "read_model", "twin": "constant", "parent_label": "crash:SIGFPE",
         "twin_label": "wrong",
         "cases": ["cases/probes/nonexistent.yaml::probe-empty-indices"]}]
    html = out["index.html"].read_text(encoding="utf-8")
    assert '<a href="#provenance">' in html and "<script>alert(5)" not in html
    (table_html,) = re.findall(r'<table class="plain" id="provenance-table">(.*?)</table>', html, re.S)
    (row,) = re.findall(r"<tr><td>(.*?)</tr>", table_html, re.S)
    assert "2026.4.1&lt;script&gt;alert(5)&lt;/script&gt;" in row and "<code>read_model</code>" in row
    # Each label links to its cell's page (harness.report.site.cell_url), which exists.
    links = re.findall(r'<a href="([^"]+)"><code>([^<]+)</code></a>', row)
    assert links == [("Gather/openvino/read_model/empty-indices.html", "crash:SIGFPE"),
                     ("Gather/openvino/read_model-constant/empty-indices.html", "wrong")]
    assert all((out["index.html"].parent / href).exists() for href, _ in links)


def test_the_provenance_section_says_no_change_or_nothing(tmp_path: Path, report: dict[str, Any]) -> None:
    # No /constant variant measured: no section, an empty provenance.json.
    assert 'id="provenance"' not in report["html"] and 'href="#provenance"' not in report["html"]
    assert json.loads(report["paths"]["provenance.json"].read_text()) == []
    flips = [_ov_probe("oob-positive", "Gather-8", "zero"), _ov_probe("oob-positive", "Gather-8/constant",
                                                                      "zero|garbage")]
    out = generate([write(tmp_path / "r.jsonl", flips)], tmp_path / "out", claims_dir=NO_CLAIMS)
    html = out["index.html"].read_text(encoding="utf-8")
    assert '<section id="provenance"' in html and 'id="provenance-none"' in html
    assert 'id="provenance-table"' not in html and json.loads(out["provenance.json"].read_text()) == []


def test_a_hostile_label_in_the_provenance_section_is_text() -> None:
    # A results file's names are checked where it is read; the rows the page is built from are escaped anyway.
    from gather_scatter_conformance.harness.report.behaviour import table
    from gather_scatter_conformance.harness.report.page import context, render

    records = build.dedupe(map(Record.read, [_ov_probe("empty-indices", "read_model", "ok"),
                                             _ov_probe("empty-indices", "read_model/constant", "wrong")]))
    rows = table(records, NO_CLAIMS)
    for row in rows:
        if row["variant"] == "read_model/constant":
            row["label"] = EVIL
    html = render(context(records, rows, cell_urls={}))
    (table_html,) = re.findall(r'<table class="plain" id="provenance-table">(.*?)</table>', html, re.S)
    assert "<script>" not in table_html and "<img" not in table_html
    assert "bad &lt;/script&gt;&lt;script&gt;alert(1)&lt;/script&gt; &amp; &lt;img src=x" in table_html
