"""The report's site (harness.report.site): a page and a JSON file per cell, operator, system and port.

Built from a real run (tests/data/runs/2026-11-27-probes-tflite.jsonl.xz: the probe cases on TensorFlow, OpenVINO,
LiteRT and the tensorflow~tflite~litert converter path) with the committed release history. Expected contents come
from the behaviour rows the site is built from (behaviour.json), never from a past site.
"""

from __future__ import annotations

import json
import lzma
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from packaging.version import Version

from gather_scatter_conformance.harness.report import site, site_model, upstream
from gather_scatter_conformance.harness.report.page import generate

ROOT = Path(__file__).resolve().parents[1]
RUN = ROOT / "tests" / "data" / "runs" / "2026-11-27-probes-tflite.jsonl.xz"
PATH = "tensorflow~tflite~litert"


def build(tmp: Path) -> dict[str, Any]:
    """The report and its site from the real run, in ``tmp``: the output folder, the results file and the rows."""
    results = tmp / "results.jsonl"
    results.write_bytes(lzma.decompress(RUN.read_bytes()))
    out = generate([results], tmp / "out", history_dir=ROOT / "history")
    return {"out": tmp / "out", "results": results, "rows": json.loads(out["behaviour.json"].read_text())}


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    return build(tmp_path_factory.mktemp("site"))


def _row(rows: list[dict[str, Any]], op: str, framework: str, variant: str, dimension: str) -> dict[str, Any]:
    return next(r for r in rows if (r["op"], r["framework"], r["variant"], r["dimension"]) ==
                (op, framework, variant, dimension) and r.get("measured", True))


@pytest.mark.slow
def test_a_cell_has_a_stable_readable_address_and_its_json_beside(built: dict[str, Any]) -> None:
    """#28: "link me to the cell for OpenVINO GatherND-8 negative indices"."""
    page = built["out"] / "GatherND" / "openvino" / "GatherND-8" / "negative-indices.html"
    data = json.loads(page.with_suffix(".json").read_text())
    row = _row(built["rows"], "GatherND", "openvino", "GatherND-8", "negative-indices")
    assert data["url"] == "GatherND/openvino/GatherND-8/negative-indices.html"
    assert (data["label"], data["api"], data["version"]) == (row["label"], row["api"], row["framework_version"])
    assert [c["case"] for c in data["cases"]] == row["cases"]
    html = page.read_text()
    assert f"<code>{row['label']}</code>" in html and row["question"].replace("'", "&#39;") in html
    # The history strip: every release the sweep measured for this key, oldest first.
    hist = [json.loads(line) for line in (ROOT / "history" / "openvino.jsonl").read_text().splitlines()]
    swept = sorted((r for r in hist if r.get("status") == "ok" and (r["op"], r["variant"], r["dimension"]) ==
                    ("GatherND", "GatherND-8", "negative-indices")), key=lambda r: Version(r["release"]))
    assert [(h["release"], h["label"]) for h in data["history"]] == [(r["release"], r["label"]) for r in swept]
    assert len(swept) > 5 and html.count('<li class="sev-') == len(swept)


def test_every_link_of_every_page_resolves(built: dict[str, Any]) -> None:
    out: Path = built["out"]
    pages = sorted(out.rglob("*.html"))
    assert len(pages) > 500
    missing = []
    for page in pages:
        for href in re.findall(r'href="([^"#]+)', page.read_text()):
            if not href.startswith(("http://", "https://")) and not (page.parent / href).resolve().exists():
                missing.append(f"{page.relative_to(out)} -> {href}")
    assert not missing, missing[:10]


def test_every_json_file_validates_against_the_published_schema(built: dict[str, Any]) -> None:
    jsonschema = pytest.importorskip("jsonschema")
    out: Path = built["out"]
    schema = json.loads((out / "api" / "schema.json").read_text())
    kinds = {"Index": 0, "History": 0, "System": 0, "Port": 0, "Cell": 0}
    for path in sorted(out.rglob("*.json")):
        rel = path.relative_to(out).as_posix()
        if rel in ("behaviour.json", "provenance.json", "api/schema.json"):  # the page's files, not the API's
            continue
        kind = ("Index" if rel == "api/index.json" else "History" if rel.startswith("api/history/") else
                "System" if rel.startswith("systems/") else "Port" if rel.startswith("port/") else "Cell")
        validator = jsonschema.Draft202012Validator({**schema, "$ref": f"#/$defs/{kind}"})
        errors = list(validator.iter_errors(json.loads(path.read_text())))
        assert not errors, (rel, errors[0].message)
        kinds[kind] += 1
    assert all(kinds.values()), kinds
    index = json.loads((out / "api" / "index.json").read_text())
    assert len(index["cells"]) == kinds["Cell"] == sum(1 for r in built["rows"] if r.get("measured", True))


def test_the_shipped_schema_is_the_models_schema() -> None:
    shipped = ROOT / "gather_scatter_conformance" / "schemas" / "site.schema.json"
    assert json.loads(shipped.read_text()) == json.loads(json.dumps(site_model.schema())), \
        "regenerate it: gsc schema --site --out gather_scatter_conformance/schemas/site.schema.json"


def _expected_port(rows: list[dict[str, Any]], variant: str) -> set[tuple[str, str]]:
    return {(r["op"], r["dimension"]) for r in rows if r["framework"] == PATH and r["variant"] == variant
            and r.get("preservation") and r["preservation"] != "preserved" and r["label"] != r["source_label"]}


def test_the_port_planner_lists_what_the_path_did_not_preserve(built: dict[str, Any]) -> None:
    """#28: "what changes if I port from tf.gather to LiteRT?"."""
    data = json.loads((built["out"] / "port" / PATH / "gather-function.json").read_text())
    expected = _expected_port(built["rows"], "gather/function")
    assert expected and {(d["op"], d["dimension"]) for d in data["differences"]} == expected
    assert data["source_api"] == "tf.gather" and data["target"] == "litert"
    assert data["compared"] == sum(1 for r in built["rows"] if r["framework"] == PATH
                                   and r["variant"] == "gather/function")
    cli = subprocess.run([sys.executable, "-m", "gather_scatter_conformance", "port", str(built["results"]),
                          "--from", "tensorflow:gather/function", "--to", PATH, "--json"],
                         capture_output=True, text=True, check=True)
    assert json.loads(cli.stdout)["differences"] == data["differences"]


@pytest.mark.slow  # over 5 s here (make check: tests under 5 s each)
def test_gsc_port_compares_two_systems_own_apis(built: dict[str, Any]) -> None:
    cli = subprocess.run([sys.executable, "-m", "gather_scatter_conformance", "port", str(built["results"]),
                          "--from", "tensorflow:gather/eager", "--to", "openvino:Gather-8", "--json"],
                         capture_output=True, text=True, check=True)
    port = json.loads(cli.stdout)
    rows = built["rows"]
    tf = {(r["op"], r["dimension"]): r["label"] for r in rows if (r["framework"], r["variant"]) ==
          ("tensorflow", "gather/eager")}
    ov = {(r["op"], r["dimension"]): r["label"] for r in rows if (r["framework"], r["variant"]) ==
          ("openvino", "Gather-8")}
    both = tf.keys() & ov.keys()
    assert {(d["op"], d["dimension"]) for d in port["differences"]} == {k for k in both if tf[k] != ov[k]}
    assert port["compared"] == len(both) > 40  # Gather and Take: tf.gather and Gather-8 serve both
    assert port["source_api"] == "tf.gather" and port["url"] == ""  # no page is made for such a port
    from gather_scatter_conformance.harness.report.site import port_api_name

    assert port_api_name("data[np.arange(2)[:, None], indices]", "indexing") == "indexing"  # was "data[np.arange"
    assert port_api_name("ov.opset7.gather(data, indices, axis=0)  # Gather-7", "x") == "Gather-7"
    bad = subprocess.run([sys.executable, "-m", "gather_scatter_conformance", "port", str(built["results"]),
                          "--from", "tensorflow", "--to", "nosuch"], capture_output=True, text=True)
    assert bad.returncode == 2 and "no cell of nosuch" in bad.stderr and "Traceback" not in bad.stderr


def test_a_finding_has_its_upstream_issue_escaped_on_its_page(built: dict[str, Any]) -> None:
    """A converter's message holds '<string>:1:1': the page shows it as text, the JSON keeps it as is."""
    index = json.loads((built["out"] / "api" / "index.json").read_text())
    assert index["findings"]
    for finding in index["findings"][:20]:
        cell = json.loads((built["out"] / finding["url"].replace(".html", ".json")).read_text())
        html = (built["out"] / finding["url"]).read_text()
        assert cell["upstream"].startswith(f"# {upstream.md(finding['title'])}")  # the title, escaped as markdown
        assert 'id="issue"' in html and 'data-copy="issue"' in html
    failed = [p for p in (built["out"] / "Gather" / PATH).rglob("*.json")
              if "<string>" in json.dumps(json.loads(p.read_text())["cases"])]
    assert failed
    html = failed[0].with_suffix(".html").read_text()
    assert "&lt;string&gt;" in html and "<string>" not in html


def test_the_pandas_example_reads_the_api(built: dict[str, Any]) -> None:
    pytest.importorskip("pandas")
    out = subprocess.run([sys.executable, str(ROOT / "examples" / "site_api_pandas.py"), str(built["out"])],
                         capture_output=True, text=True, check=True).stdout
    n = sum(1 for r in built["rows"] if r.get("measured", True))
    assert out.startswith(f"{n} cells of 4 systems")
    assert "memory-unsafe cells per system and operator" in out


def test_slugs_keep_addresses_readable_and_distinct() -> None:
    assert site.cell_url("Take", "jax", "take/jit", "index-dtype:int8") == "Take/jax/take-jit/index-dtype-int8.html"
    assert site.system_name("onnxruntime", "openvino") == "onnxruntime@openvino"
    assert site.slug("onnxruntime@openvino") == "onnxruntime@openvino"
    assert site.verdict("conversion-failed: ConverterError: Could not translate") == \
        "conversion-failed (ConverterError)"
    assert site.verdict("changed: ok -> error") == "changed: ok -> error"


def test_site_pages_fetch_nothing(built: dict[str, Any]) -> None:
    """Offline: no page loads a resource (links, and the JSON named as an alternate, are not loads), and its script
    names no URL."""
    bad = []
    for page in sorted(built["out"].rglob("*.html")):
        if page.name == "index.html" and page.parent == built["out"]:
            continue  # the landing page: tests/test_report.py::test_self_contained
        html = page.read_text()
        for tag, attrs in re.findall(r"<(\w+)([^>]*)>", html):
            for name in re.findall(r'\s(src|srcset|href|data|poster|action|background)=', attrs):
                if not (tag == "a" and name == "href") and not (tag == "link" and 'rel="alternate"' in attrs):
                    bad.append(f"{page.name}: <{tag} {name}>")
        for code in re.findall(r"<script>(.*?)</script>", html, re.S):
            if re.search(r"https?://|\bfetch\(|XMLHttpRequest|\bimport\(|\.src\s*=", code):
                bad.append(f"{page.name}: script")
    assert not bad, bad[:5]
