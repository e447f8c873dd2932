"""The report's delegation table (harness.report.delegation): which backend ran each operator, fallbacks marked."""

from __future__ import annotations

from gather_scatter_conformance.adapters.base import delegation
from gather_scatter_conformance.harness.report import delegation as table_of


def _record(case: str, framework: str, variant: str, device: str, placement: dict[str, str], asked: str) -> dict:
    return {"case": case, "framework": framework, "variant": variant, "device": device, "op": "GatherND",
            **delegation(placement, asked)}


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
    rows = table_of.table(records)
    assert [(r["col"], r["op"], r["backend"], r["fallback"], r["cases"]) for r in rows] == [
        ("executorch:gather/xnnpack", "aten.gather.default", "portable", True, 1),
        ("onnxruntime:GatherND-13@openvino", "GatherND", "CPUExecutionProvider", True, 2),
        ("onnxruntime:GatherND-13@openvino", "GatherND", ov, False, 1),
    ]
    assert table_of.summary(rows) == {"columns": 2, "fallbacks": 2, "fallback_cases": 3}
