"""The report's delegation table (harness.report.delegation): which backend ran each operator, fallbacks marked."""

from __future__ import annotations

from gather_scatter_conformance.adapters.base import delegation
from gather_scatter_conformance.harness.report import delegation as table_of
from gather_scatter_conformance.vocab.record import Record


def _record(case: str, framework: str, variant: str, device: str, placement: dict[str, str], asked: str) -> dict:
    return {"case": case, "framework": framework, "variant": variant, "device": device, "op": "GatherND",
            **delegation(placement, asked)}


def _read(obj: dict) -> Record:
    """A hand-written record as a results file's reader gives it (an ok, conforming result unless it says)."""
    return Record.read({"outcome": "ok", "verdict": "conforms", **obj})


def test_delegation_facts_say_what_ran_and_whether_it_fell_back() -> None:
    facts = delegation({"GatherND": "CPUExecutionProvider", "Cast": "OpenVINOExecutionProvider"},
                       "OpenVINOExecutionProvider")
    assert facts == {"providers": {"GatherND": "CPUExecutionProvider", "Cast": "OpenVINOExecutionProvider"},
                     "fallback": True, "delegate": "OpenVINOExecutionProvider"}
    assert delegation({"aten.gather": "XnnpackBackend"}, "XnnpackBackend")["fallback"] is False


def test_one_row_per_system_op_and_backend_with_fallbacks_first() -> None:
    ov = "OpenVINOExecutionProvider"
    records = [
        _record("a.yaml::1", "onnxruntime", "GatherND-13", "openvino", {"GatherND": "CPUExecutionProvider"}, ov),
        _record("a.yaml::2", "onnxruntime", "GatherND-13", "openvino", {"GatherND": "CPUExecutionProvider"}, ov),
        _record("a.yaml::3", "onnxruntime", "GatherND-13", "openvino", {"GatherND": ov}, ov),
        _record("b.yaml::1", "executorch", "gather/xnnpack", "cpu", {"aten.gather.default": "portable"},
                "XnnpackBackend"),
        {"case": "c.yaml::1", "framework": "numpy", "variant": "take", "device": "cpu", "op": "Gather"},
    ]
    rows = table_of.table(map(_read, records))
    assert [(r["col"], r["op"], r["backend"], r["fallback"], r["cases"]) for r in rows] == [
        ("executorch:gather/xnnpack", "aten.gather.default", "portable", True, 1),
        ("onnxruntime:GatherND-13@openvino", "GatherND", "CPUExecutionProvider", True, 2),
        ("onnxruntime:GatherND-13@openvino", "GatherND", ov, False, 1),
    ]
    assert table_of.summary(rows) == {"columns": 2, "fallbacks": 2, "fallback_cases": 3}
    # the landing page's line per system (#28: the rows moved to each system's page)
    assert table_of.by_system(rows) == [
        {"system": "executorch", "apis": 1, "ops": 1, "backends": ["portable"], "fallbacks": 1, "fallback_cases": 1},
        {"system": "onnxruntime@openvino", "apis": 1, "ops": 1, "backends": ["CPUExecutionProvider", ov],
         "fallbacks": 1, "fallback_cases": 2}]


def test_each_system_page_lists_its_rows_and_the_landing_page_one_line_per_system(tmp_path) -> None:
    """Rendered: the landing page's Delegation section links each system to its page, whose table holds that
    system's rows only, fallbacks marked."""
    import json

    from gather_scatter_conformance.harness.report.page import generate

    ov = "OpenVINOExecutionProvider"
    base = {"op": "GatherND", "dimension": "negative-indices", "outcome": "ok", "verdict": "conforms",
            "label": "wrap", "framework_version": "1.31.1", "api": "onnxruntime.InferenceSession", "duration_s": 0.0,
            "spec": "inside", "tags": ["probe"], "python": "3.11.7", "host": "vm", "time": "2026-11-27T08:00:00+00:00"}
    records = [{**base, **_record("cases/probes/gathernd.yaml::probe-negative-indices", "onnxruntime", "GatherND-13",
                                  "openvino", {"GatherND": "CPUExecutionProvider"}, ov)},
               {**base, **_record("cases/probes/gathernd.yaml::probe-negative-indices", "onnxruntime", "GatherND-13",
                                  "cpu", {"GatherND": "CPUExecutionProvider"}, "CPUExecutionProvider")}]
    results = tmp_path / "r.jsonl"
    results.write_text("".join(json.dumps(r) + "\n" for r in records))
    out = generate([results], tmp_path / "out")
    landing = out["index.html"].read_text()
    section = landing[landing.index('<section id="delegation"'):]
    section = section[:section.index("</section>")]
    assert 'href="systems/onnxruntime@openvino.html#delegation"' in section
    assert 'href="systems/onnxruntime.html#delegation"' in section and "<code>GatherND</code>" not in section
    page = (tmp_path / "out" / "systems" / "onnxruntime@openvino.html").read_text()
    table = page[page.index('id="delegation-table"'):page.index("</table>", page.index('id="delegation-table"'))]
    assert table.count('<tr class="fallback">') == 1 and "onnxruntime:GatherND-13@openvino" in table
    assert "onnxruntime:GatherND-13<" not in table  # the CPU system's row is on its own page
