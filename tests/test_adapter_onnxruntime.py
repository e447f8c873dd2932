"""The onnxruntime adapter: every shipped case on every variant, and the translation in detail."""

from __future__ import annotations

from pathlib import Path

import ml_dtypes
import numpy as np
import pytest
from _cases import records_of
from _installed import require

from gather_scatter_conformance.adapters.base import CaseData, Unsupported
from gather_scatter_conformance.adapters.onnxruntime import (
    ADAPTER,
    PROVIDERS_ENV,
    THREADS_ENV,
    build_model,
    device_of,
    new_session,
    providers,
    threads,
    variant_model,
    variant_target,
)
from gather_scatter_conformance.harness.run.worker import run_case
from gather_scatter_conformance.vocab.record import Record

require("onnxruntime")  # looked up, not imported: tests/_installed.py

pytestmark = pytest.mark.framework  # make check runs none of these (docs/development.md)

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(autouse=True)
def _cpu_provider(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every test starts on the default (CPU) provider, whatever GSC_ORT_PROVIDERS the session runs with."""
    monkeypatch.delenv(PROVIDERS_ENV, raising=False)

# --- variants --------------------------------------------------------------------------------------------------


def test_variants_are_operator_versions_newest_first() -> None:
    assert ADAPTER.variants("Gather") == ["Gather-13", "Gather-11", "Gather-1", "Gather-13/constant",
                                          "Gather-13/dynamic"]
    assert ADAPTER.variants("GatherElements") == ["GatherElements-13", "GatherElements-11",
                                                  "GatherElements-13/constant", "GatherElements-13/dynamic"]
    assert ADAPTER.variants("GatherND") == ["GatherND-13", "GatherND-12", "GatherND-11", "GatherND-13/constant",
                                            "GatherND-13/dynamic"]
    assert ADAPTER.variants("ScatterElements") == [
        "ScatterElements-18", "ScatterElements-16", "ScatterElements-13", "ScatterElements-11", "Scatter-11",
        "Scatter-9", "ScatterElements-18/constant", "ScatterElements-18/dynamic", "ScatterElements-18/threads"]
    assert ADAPTER.variants("ScatterND") == ["ScatterND-18", "ScatterND-16", "ScatterND-13", "ScatterND-11",
                                             "ScatterND-18/constant", "ScatterND-18/dynamic", "ScatterND-18/threads"]
    assert ADAPTER.variants("Take") == ["Gather-13", "Gather-11", "Gather-1", "Gather-13/constant",
                                        "Gather-13/dynamic"]
    assert [v for v in ADAPTER.variants("Gather") if ADAPTER.is_slow(v)] == ["Gather-13/constant",
                                                                             "Gather-13/dynamic"]
    assert variant_target("ScatterElements", "Scatter-9") == ("Scatter", 9)
    assert variant_target("GatherND", "GatherND-12") == (None, 12)
    with pytest.raises(ValueError):
        variant_target("Gather", "Gather-12")


def _case(op: str, attrs: dict, opset: int | None = None, **inputs: np.ndarray) -> CaseData:
    return CaseData(op=op, inputs=inputs, attrs=attrs, opset=opset)


F = np.arange(12, dtype=np.float32).reshape(3, 4)


def test_api_names_node_version_attributes_and_provider() -> None:
    case = _case("Gather", {"axis": 1, "batch_dims": 0}, data=F, indices=np.array([3, 0]))
    call = ADAPTER.prepare(case, "Gather-11")
    assert call.api == ("onnxruntime.InferenceSession(model: Gather-11(data, indices, axis=1))"
                        ".run(None, {data, indices})  # CPUExecutionProvider, intra_op_num_threads=1")
    assert call.device == "cpu"
    np.testing.assert_array_equal(ADAPTER.to_numpy(call.run()), F[:, [3, 0]])


def test_case_opset_overrides_only_the_default_variant() -> None:
    case = _case("ScatterND", {"reduction": "none"}, opset=13, data=F, indices=np.array([[1]]),
                 updates=np.ones((1, 4), np.float32))
    assert "ScatterND-13(" in ADAPTER.prepare(case, "ScatterND-18").api
    assert "ScatterND-11(" in ADAPTER.prepare(case, "ScatterND-11").api


def test_reduction_attribute_and_unsupported_versions() -> None:
    case = _case("ScatterElements", {"axis": 1, "reduction": "max"}, data=F, indices=np.array([[0, 0]]),
                 updates=np.array([[50, 7]], np.float32))
    call = ADAPTER.prepare(case, "ScatterElements-18")
    assert "reduction='max'" in call.api
    assert ADAPTER.to_numpy(call.run())[0, 0] == 50
    for variant in ("ScatterElements-16", "ScatterElements-13", "Scatter-9"):
        with pytest.raises(Unsupported):
            ADAPTER.prepare(case, variant)
    with pytest.raises(Unsupported):
        ADAPTER.prepare(_case("Gather", {"axis": 1, "batch_dims": 1}, data=F, indices=np.array([[0], [1], [2]])),
                        "Gather-13")


def test_take_flattened_keeps_the_requested_gather_version() -> None:
    case = _case("Take", {"axis": None, "mode": "raise"}, data=F, indices=np.array([11, 5]))
    for variant, opset in (("Gather-13", 13), ("Gather-11", 11), ("Gather-1", 5)):
        model, text, _ = build_model(case if variant == "Gather-13" else CaseData("Take", case.inputs, case.attrs,
                                                                                 int(variant.split("-")[1])), None)
        assert model.opset_import[0].version == opset
        assert text.startswith("Reshape(data, [-1]) -> Gather-")
        np.testing.assert_array_equal(ADAPTER.prepare(case, variant).run(), [11, 5])
    with pytest.raises(Unsupported):
        ADAPTER.prepare(_case("Take", {"axis": 0, "mode": "wrap"}, data=F, indices=np.array([7])), "Gather-13")


# --- session cache ---------------------------------------------------------------------------------------------


def test_cases_differing_only_in_values_share_one_session() -> None:
    ADAPTER.cache.clear()
    a = _case("GatherElements", {"axis": 0}, data=F, indices=np.array([[0, 1, 2, 0]]))
    b = _case("GatherElements", {"axis": 0}, data=F + 100, indices=np.array([[2, 2, 2, 2]]))
    np.testing.assert_array_equal(ADAPTER.prepare(a, "GatherElements-13").run(), [[0, 5, 10, 3]])
    np.testing.assert_array_equal(ADAPTER.prepare(b, "GatherElements-13").run(), [[108, 109, 110, 111]])
    assert (len(ADAPTER.cache), ADAPTER.cache.hits, ADAPTER.cache.misses) == (1, 1, 1)
    # Another version, dtype or shape is another session.
    ADAPTER.prepare(a, "GatherElements-11").run()
    ADAPTER.prepare(_case("GatherElements", {"axis": 0}, data=F, indices=np.array([[0, 1, 2, 0]], np.int32)),
                    "GatherElements-13").run()
    assert (len(ADAPTER.cache), ADAPTER.cache.misses) == (3, 3)


def test_a_session_onnxruntime_cannot_build_is_not_cached() -> None:
    ADAPTER.cache.clear()
    case = _case("ScatterElements", {"axis": 0, "reduction": "none"}, data=np.zeros(3, np.float32),
                 indices=np.array([1]), updates=np.ones(1, np.float32))
    for _ in range(2):
        with pytest.raises(Exception, match="deprecated"):
            ADAPTER.prepare(case, "Scatter-11").run()
    assert (len(ADAPTER.cache), ADAPTER.cache.misses) == (0, 2)
    model = build_model(_case("Gather", {"axis": 0, "batch_dims": 0}, data=F, indices=np.array([0])), None)[0]
    assert new_session(model, ["CPUExecutionProvider"], 2).get_session_options().intra_op_num_threads == 2


# --- errors, providers, dtypes -----------------------------------------------------------------------------------


def test_a_model_onnxruntime_rejects_is_an_error_of_run_with_its_api() -> None:
    case = _case("ScatterElements", {"axis": 0, "reduction": "none"}, data=np.zeros(3, np.float32),
                 indices=np.array([1]), updates=np.ones(1, np.float32))
    call = ADAPTER.prepare(case, "Scatter-11")  # Scatter is deprecated at opset 11: the session cannot be built
    assert "Scatter-11(data, indices, updates, axis=0)" in call.api
    with pytest.raises(Exception, match="deprecated"):
        call.run()
    np.testing.assert_array_equal(ADAPTER.prepare(case, "Scatter-9").run(), [0, 1, 0])
    from gather_scatter_conformance.vocab import wire

    payload = {"op": case.op, "inputs": {k: wire.encode(v) for k, v in case.inputs.items()}, "attrs": case.attrs}
    res = run_case("onnxruntime", "Scatter-11", payload)
    assert res["outcome"] == "error" and "Scatter-11" in res["api"]


def test_a_case_onnx_cannot_say_is_filed_with_the_providers_device(monkeypatch: pytest.MonkeyPatch) -> None:
    # The OpenVINO EP run (make report) recorded its unexpressible cases on "cpu" with onnxruntime 1.24.1, so
    # `gsc baseline` moved the CPU baseline's pin from 1.32.0 to 1.24.1 and rewrote its ranges.
    import onnxruntime

    from gather_scatter_conformance.vocab import wire

    other = [p for p in onnxruntime.get_available_providers() if device_of(p) not in ("cpu", "gpu")]
    if not other:
        pytest.skip("no provider here runs on a device of its own (onnxruntime has Azure's; onnxruntime-openvino "
                    "OpenVINO's)")
    case = _case("ScatterElements", {"axis": 1, "reduction": "max"}, data=F, indices=np.array([[0, 0]]),
                 updates=np.array([[50, 7]], np.float32))
    payload = {"op": case.op, "inputs": {k: wire.encode(v) for k, v in case.inputs.items()}, "attrs": case.attrs}
    monkeypatch.delenv(PROVIDERS_ENV, raising=False)
    assert run_case("onnxruntime", "Scatter-9", payload)["device"] == "cpu"
    monkeypatch.setenv(PROVIDERS_ENV, f"{other[0]}, CPUExecutionProvider")
    with pytest.raises(Unsupported) as raised:
        ADAPTER.prepare(case, "Scatter-9")
    assert raised.value.device == device_of(other[0])
    res = run_case("onnxruntime", "Scatter-9", payload)
    assert (res["outcome"], res["device"]) == ("unsupported", device_of(other[0]))


def test_threads_from_environment_are_a_session_option_and_part_of_the_key(monkeypatch: pytest.MonkeyPatch) -> None:
    case = _case("Gather", {"axis": 0, "batch_dims": 0}, data=F, indices=np.array([1]))
    monkeypatch.delenv(THREADS_ENV, raising=False)
    assert threads() == 1
    ADAPTER.cache.clear()
    ADAPTER.prepare(case, "Gather-13").run()
    monkeypatch.setenv(THREADS_ENV, "2")
    call = ADAPTER.prepare(case, "Gather-13")
    assert call.api.endswith("intra_op_num_threads=2")
    np.testing.assert_array_equal(call.run(), F[[1]])
    assert ADAPTER.cache.misses == 2
    options = [s.get_session_options().intra_op_num_threads for s in ADAPTER.cache.values()]
    assert options == [1, 2]


def test_providers_from_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(PROVIDERS_ENV, raising=False)
    assert providers() == ["CPUExecutionProvider"]
    import onnxruntime

    for other in [p for p in onnxruntime.get_available_providers() if device_of(p) not in ("cpu", "gpu")][:1]:
        monkeypatch.setenv(PROVIDERS_ENV, f"{other}, CPUExecutionProvider")  # Azure's, OpenVINO's
        assert providers() == [other, "CPUExecutionProvider"]
    # Not installed: an error naming the installed ones, never a silent run on the CPU provider.
    monkeypatch.setenv(PROVIDERS_ENV, "NoSuchExecutionProvider, CPUExecutionProvider")
    with pytest.raises(ValueError, match=r"NoSuchExecutionProvider not available .*; available: .*CPUExecution"):
        providers()
    assert device_of("CUDAExecutionProvider") == "gpu"
    assert device_of("DmlExecutionProvider") == "gpu"
    assert device_of("OpenVINOExecutionProvider") == "openvino"
    assert device_of("CPUExecutionProvider") == "cpu"


def test_bfloat16_goes_through_ort_values_and_comes_back_as_bfloat16() -> None:
    data = F.astype(ml_dtypes.bfloat16)
    call = ADAPTER.prepare(_case("Gather", {"axis": 0, "batch_dims": 0}, data=data, indices=np.array([2, 0])),
                           "Gather-13")
    assert "run_with_ort_values" in call.api and "TensorProto.BFLOAT16" in call.api
    out = ADAPTER.to_numpy(call.run())
    assert out.dtype == np.dtype(ml_dtypes.bfloat16)
    np.testing.assert_array_equal(out.astype(np.float32), F[[2, 0]])
    empty = ADAPTER.prepare(_case("Gather", {"axis": 0, "batch_dims": 0}, data=data,
                                  indices=np.zeros(0, np.int64)), "Gather-13").run()
    assert empty.shape == (0, 4) and empty.dtype == np.dtype(ml_dtypes.bfloat16)
    with pytest.raises(Exception, match="bfloat16"):  # Gather-11's type list has no bfloat16
        ADAPTER.prepare(_case("Gather", {"axis": 0, "batch_dims": 0}, data=data, indices=np.array([0])),
                        "Gather-11").run()


def test_strings_and_index_dtypes_pass_through_unchanged() -> None:
    words = np.array(["a", "bb", "ccc"], dtype=object)
    out = ADAPTER.prepare(_case("Gather", {"axis": 0, "batch_dims": 0}, data=words, indices=np.array([2, 0])),
                          "Gather-13").run()
    assert out.dtype == object and out.tolist() == ["ccc", "a"]
    # No cast to int64: int32 indices reach the model as int32 (GatherND-13 accepts only int64).
    with pytest.raises(Exception, match=r"tensor\(int32\)"):
        ADAPTER.prepare(_case("GatherND", {"batch_dims": 0}, data=F, indices=np.array([[1, 2]], np.int32)),
                        "GatherND-13").run()


# --- execution providers: a usage error where absent, and which provider ran each node ---------------------------

_GATHER_FILE = ("op: Gather\ncases:\n  - id: g\n    source: test\n"
                "    inputs: {data: [1.0, 2.0, 3.0], indices: [2, 0]}\n    expected: [3.0, 1.0]\n")


def _available() -> list[str]:
    import onnxruntime

    return onnxruntime.get_available_providers()


def _records(pytester: pytest.Pytester) -> list[dict]:

    return records_of(pytester.path / "r.jsonl")


@pytest.mark.parametrize("how", ["option", "environment"])
def test_an_unavailable_provider_is_a_one_line_usage_error_naming_the_available_ones(
        pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch, how: str) -> None:
    # The case: OpenVINO's provider asked for where onnxruntime-openvino is not installed.
    absent = "OpenVINOExecutionProvider" if "OpenVINOExecutionProvider" not in _available() else "NoSuchProvider"
    pytester.mkdir("cases").joinpath("gather.yaml").write_text(_GATHER_FILE)
    args = ["cases", "--framework", "onnxruntime", "--results", "r.jsonl", "-p", "no:cacheprovider"]
    if how == "option":
        args += ["--gsc-ort-providers", absent]
    else:
        monkeypatch.setenv(PROVIDERS_ENV, absent)
    result = pytester.runpytest_subprocess(*args)
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    errors = [line for line in result.stderr.lines if line.strip()]
    assert errors == [f"ERROR: {PROVIDERS_ENV}={absent}: execution provider {absent} not available in this "
                      f"onnxruntime; available: {', '.join(_available())}"], result.stderr.lines
    assert not (pytester.path / "r.jsonl").exists()  # no records, not a column of CPU results


def test_the_record_says_which_provider_ran_each_node_and_that_it_fell_back(pytester: pytest.Pytester) -> None:
    # Neither Azure's provider (in every onnxruntime wheel) nor OpenVINO's has a Gather kernel for strings: the
    # node falls back to the CPU provider.
    first = next((p for p in ("OpenVINOExecutionProvider", "AzureExecutionProvider") if p in _available()), None)
    if first is None:
        pytest.skip(f"this onnxruntime has no provider to fall back from ({', '.join(_available())})")
    pytester.mkdir("cases").joinpath("gather.yaml").write_text(
        "op: Gather\ncases:\n  - id: s\n    source: test\n    inputs:\n      data: {value: [a, b], dtype: string}\n"
        "      indices: {value: [1], dtype: int64}\n    expected: [b]\n")
    result = pytester.runpytest_subprocess(
        "cases", "--framework", "onnxruntime", "--variants", "default", "--results", "r.jsonl", "-p",
        "no:cacheprovider", "--gsc-ort-providers", f"{first},CPUExecutionProvider")
    result.assert_outcomes(passed=1)
    [record] = _records(pytester)
    assert record["providers"] == {"Gather": "CPUExecutionProvider"} and record["fallback"] is True, record
    assert record["device"] == device_of(first) and f"{first}, CPUExecutionProvider" in record["api"]


def test_the_report_panel_shows_the_placement_and_the_fallback() -> None:
    pytest.importorskip("markupsafe", reason="the report extra is not installed")
    from gather_scatter_conformance.harness.report.drilldown import blob, placement_text

    fields = {"case": "c.yaml::s", "op": "Gather", "framework": "onnxruntime", "variant": "Gather-13",
              "outcome": "ok", "verdict": "conforms", "providers": {"Reshape": "OpenVINOExecutionProvider",
                                                                     "Gather": "CPUExecutionProvider"},
              "fallback": True}
    record = Record.read(fields)
    text = "Reshape: OpenVINOExecutionProvider, Gather: CPUExecutionProvider (fallback: not every node ran"
    assert placement_text(record).startswith(text)
    assert placement_text(Record.read({**fields, "fallback": False})) == text.split(" (")[0]
    assert placement_text(Record.read({k: v for k, v in fields.items() if k != "providers"})) is None
    page = blob([record], ["onnxruntime:Gather-13"], [], {"frameworks": [], "ops": [], "tables": []})
    assert page["str"][page["recs"][0]["pv"]].startswith(text)


def test_a_cpu_run_records_no_placement(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(PROVIDERS_ENV, raising=False)
    call = ADAPTER.prepare(_case("Gather", {"axis": 0, "batch_dims": 0}, data=F, indices=np.array([1])), "Gather-13")
    call.run()
    assert call.facts == {}


def test_openvino_provider_runs_nodes_and_falls_back_for_strings(monkeypatch: pytest.MonkeyPatch) -> None:
    if "OpenVINOExecutionProvider" not in _available():
        pytest.skip("onnxruntime-openvino is not installed (it replaces onnxruntime: tox -e onnxruntime-openvino)")
    monkeypatch.setenv(PROVIDERS_ENV, "OpenVINOExecutionProvider")
    floats = ADAPTER.prepare(_case("Gather", {"axis": 0, "batch_dims": 0}, data=F, indices=np.array([2])), "Gather-13")
    np.testing.assert_array_equal(floats.run(), F[[2]])
    assert floats.device == "openvino"
    assert floats.facts == {"providers": {"Gather": "OpenVINOExecutionProvider"}, "fallback": False}
    words = np.array(["a", "bb"], dtype=object)
    strings = ADAPTER.prepare(_case("Gather", {"axis": 0, "batch_dims": 0}, data=words, indices=np.array([1])),
                              "Gather-13")
    assert strings.run().tolist() == ["bb"]
    assert strings.facts == {"providers": {"Gather": "CPUExecutionProvider"}, "fallback": True}


def test_the_dynamic_variant_declares_symbolic_dimensions_and_serves_every_size_of_a_rank() -> None:
    """Dynamic shapes (#40): ``/dynamic`` declares each input dimension a dim_param, so the session plans for any
    size; its value, and its repro's, are the parent's."""
    a = _case("GatherElements", {"axis": 0}, data=F, indices=np.array([[0, 1, 2, 0]]))
    call = ADAPTER.prepare(a, "GatherElements-13/dynamic")
    np.testing.assert_array_equal(call.run(), [[0, 5, 10, 3]])
    assert "dimensions symbolic" in call.api
    model, _, _ = variant_model(a, "GatherElements-13/dynamic")
    assert [[d.dim_param for d in i.type.tensor_type.shape.dim] for i in model.graph.input] == [
        ["data_d0", "data_d1"], ["indices_d0", "indices_d1"]]
    scope: dict = {"np": np, "data": a.inputs["data"], "indices": a.inputs["indices"]}
    exec(call.source, scope)  # the repro builds the same model, dim_params included
    np.testing.assert_array_equal(scope["result"], [[0, 5, 10, 3]])
    assert "'data_d0'" in call.source


def test_the_constant_variant_holds_the_indices_in_the_model_and_a_session_per_index_value() -> None:
    """Index provenance (#40): ``/constant`` makes the indices an initializer, so a session holds one index value."""
    ADAPTER.cache.clear()
    a = _case("GatherElements", {"axis": 0}, data=F, indices=np.array([[0, 1, 2, 0]]))
    b = _case("GatherElements", {"axis": 0}, data=F + 100, indices=np.array([[2, 2, 2, 2]]))
    call = ADAPTER.prepare(a, "GatherElements-13/constant")
    np.testing.assert_array_equal(call.run(), [[0, 5, 10, 3]])
    assert "indices=constant" in call.api
    np.testing.assert_array_equal(ADAPTER.prepare(b, "GatherElements-13/constant").run(), [[108, 109, 110, 111]])
    assert (len(ADAPTER.cache), ADAPTER.cache.misses) == (2, 2)  # another index value, another session
    model, _, _ = variant_model(a, "GatherElements-13/constant")
    assert [i.name for i in model.graph.input] == ["data"]
    assert [t.name for t in model.graph.initializer] == ["indices"]
    scope: dict = {"np": np, "data": a.inputs["data"], "indices": a.inputs["indices"]}
    exec(call.source, scope)  # the repro builds the same model, feeds data only
    np.testing.assert_array_equal(scope["result"], [[0, 5, 10, 3]])
