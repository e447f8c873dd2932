"""Converter paths (adapters/convert): the torch paths on the seed examples, one preservation verdict of each kind
measured on real conversions, the conversion cache, a failed conversion as a result, a converter or target that
kills its process charged to the right stage, the repro script that converts and runs, and the paths' registry
entries."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from _cases import records_of
from _invalid_attrs import computed_invalid, invalid_cases

from gather_scatter_conformance import adapters
from gather_scatter_conformance.adapters.convert import path as convert_path
from gather_scatter_conformance.adapters.convert import torch_onnx
from gather_scatter_conformance.harness.cases.load import Case, load_file
from gather_scatter_conformance.harness.run.repro import script
from gather_scatter_conformance.harness.run.runner import InProcess, execute
from gather_scatter_conformance.vocab.record import Record

pytestmark = pytest.mark.framework  # make check runs none of these (docs/development.md)

ROOT = Path(__file__).resolve().parents[1]
PATHS = [n for n in adapters.names() if adapters.is_path(n)]
TORCH_PATHS = [n for n in PATHS if n.startswith("torch~") and adapters.is_available(n)]
PYTORCH_61034 = "cases/regression/scatter_nd.yaml::pytorch-61034-onnx-export-index-put-accumulate"


def needs(*paths: str) -> pytest.MarkDecorator:
    """Skip unless every one of ``paths`` can run here (the reason names what the first missing one lacks)."""
    missing = [p for p in paths if p not in TORCH_PATHS]
    return pytest.mark.skipif(bool(missing), reason=f"{missing[0]} needs {', '.join(adapters.missing(missing[0]))}"
                              if missing else "")
# One seed example per operator: spec and documentation worked examples (cases/*.yaml).
SEEDS = [
    "cases/gather.yaml::ov-gather8-example-1",
    "cases/gather_elements.yaml::onnx-gatherelements13-example-1",
    "cases/gather_nd.yaml::blog-gathernd-example-2",
    "cases/scatter_elements.yaml::onnx-scatterelements18-example-1",
    "cases/scatter_nd.yaml::onnx-scatternd18-example-1",
    "cases/take.yaml::numpy-take-example-1",
]


def _case(nodeid: str) -> Case:
    file, _, cid = nodeid.partition("::")
    found = [c for c in load_file(ROOT / file, file) if isinstance(c, Case) and c.id == cid]
    assert found, f"{nodeid} not found"
    return found[0]


@pytest.fixture(autouse=True)
def _cache(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> None:
    # One conversion cache for this module's tests (a fresh one: what is measured is converted here).
    monkeypatch.setenv(convert_path.CACHE_ENV, str(tmp_path_factory.getbasetemp() / "conversions"))


def _run(case: Case, path: str, variant: str | None = None) -> Record:
    record = execute(case, path, variant or adapters.get(path).variants(case.op)[0], InProcess())
    assert isinstance(record, Record), record
    return record


# --- registry ------------------------------------------------------------------------------------------------------


def test_every_path_is_named_source_converter_target_and_converts_source_variants() -> None:
    assert len(PATHS) >= 5
    for name in PATHS:
        path = adapters.get(name)
        source, converter, target = name.split("~")
        assert (path.source_id or path.source, path.converter_id, path.target) == (source, converter, target)
        assert path.focus_only and path.is_slow(path.variants("Gather")[0])
        for op in ("Gather", "GatherElements", "GatherND", "ScatterElements", "ScatterND", "Take"):
            assert set(path.variants(op)) <= set(adapters.get(path.source).variants(op)), (name, op)


# --- the torch paths on the seed examples ---------------------------------------------------------------------


# A path that cannot be measured here says why in one line instead (onnx~coremltools: no ONNX frontend since 6.0).
AVAILABLE = [n for n in PATHS if adapters.is_available(n) and adapters.get(n).unavailable() is None]


@pytest.mark.slow
@pytest.mark.parametrize("path", AVAILABLE)
def test_each_path_on_the_seed_examples_and_invalid_attributes(path: str, tmp_path: Path,
                                                               monkeypatch: pytest.MonkeyPatch) -> None:
    """The seed examples survive the path, and the path computes no value for an invalid axis or batch_dims that
    its source was not handed as is (tests/_invalid_attrs.py; the frameworks': tests/test_adapter_attrs.py). One
    worker per path for both: its start (a source, a converter and a target imported) is most of the time."""
    from gather_scatter_conformance.harness.run.isolation import Isolated

    # In a worker process of the path's own, as a run makes them: paddle, TensorFlow, torch and JAX in one test
    # process (an xdist worker that ran other paths) crashed it, and MNN's session on the invalid GatherND another.
    executor = Isolated(timeout=180.0)
    try:
        seeds = [problem for nodeid in SEEDS for problem in _seed_problems(nodeid, path, executor)]
        invalid = computed_invalid(path, invalid_cases(tmp_path, monkeypatch), executor)
    finally:
        executor.close()
    assert not seeds and not invalid, {"seed examples": seeds, "invalid attributes": invalid}


def _seed_problems(nodeid: str, path: str, executor: Any) -> list[str]:
    """What is wrong with ``path`` on one seed example: nothing when the converted model did what the source did and
    conforms (or the source cannot write the case, the converter failed, the source itself deviates, or the change is
    listed in known/<path>.yaml)."""
    case = _case(nodeid)
    variants = adapters.get(path).variants(case.op)
    if not variants:
        return []
    rec = execute(case, path, variants[0], executor)
    if rec.outcome == "unsupported":  # the source API cannot write the case (e.g. jnp.take mode raise)
        return []
    conv = rec.conversion
    if conv["preservation"] == "conversion-failed" or conv.get("source_label") != "ok":
        return []  # the converter's error is recorded; a source that deviates natively is its own adapter's finding
    if rec.known_change:
        return []  # a change known/<path>.yaml explains (the record says why)
    bad = []
    if conv["preservation"] != "preserved" or rec.verdict != "conforms":
        bad.append(f"{nodeid}: {conv['summary']}, {rec.verdict} ({rec.reason})")
    if not rec.ops:
        bad.append(f"{nodeid}: the converted graph's operators are not recorded")
    return bad


@needs("torch~onnx-dynamo~onnxruntime")
def test_a_converted_graph_names_its_operators() -> None:
    rec = _run(_case(PYTORCH_61034),
               "torch~onnx-dynamo~onnxruntime")
    assert "ScatterND(reduction=add)" in rec.ops
    assert rec.conversion["opset"] >= 18 and rec.conversion["versions"]["source"].startswith("2.")


# --- one preservation verdict of each kind, measured ------------------------------------------------------------


@needs("torch~onnx-torchscript~onnxruntime")
def test_changed_pytorch_61034_the_torchscript_exporter_drops_duplicate_accumulations() -> None:
    rec = _run(_case(PYTORCH_61034), "torch~onnx-torchscript~onnxruntime")
    conv = rec.conversion
    assert conv["preservation"] == "changed" and conv["summary"] == "changed: ok -> wrong"
    assert conv["source_value"][2] == [3.0, 3.0, 3.0] and rec.observed[2] == [2.0, 2.0, 2.0]
    assert "ScatterND(reduction=none)" in rec.ops and "Add" in rec.ops  # scatter on zeros, then add
    assert rec.verdict == "deviates" and rec.native


@needs("torch~onnx-dynamo~onnxruntime")
def test_preserved_the_dynamo_exporter_keeps_them() -> None:
    rec = _run(_case(PYTORCH_61034), "torch~onnx-dynamo~onnxruntime")
    assert rec.conversion["preservation"] == "preserved" and rec.verdict == "conforms"
    assert rec.conversion["source_label"] == rec.conversion["target_label"] == "ok"


@needs("torch~ov-convert~openvino")
def test_conversion_failed_is_a_result_and_the_next_case_runs() -> None:
    rec = _run(_case(PYTORCH_61034), "torch~ov-convert~openvino")
    conv = rec.conversion
    assert conv["preservation"] == "conversion-failed" and conv["stage"] == "convert"
    assert "aten::index_put" in conv["summary"]  # OpenVINO's PyTorch frontend has no rule for it (2026.4.1)
    assert rec.outcome == "error" and rec.verdict == "n/a"
    after = _run(_case(SEEDS[0]), "torch~ov-convert~openvino")
    assert after.conversion["preservation"] == "preserved"


@needs("torch~onnx-torchscript~onnxruntime")
def test_a_probe_change_reads_source_label_to_target_label() -> None:
    # index_select refuses negative indices in eager torch; the exported Gather counts them from the end.
    case = _case("cases/probes/gather.yaml::probe-negative-indices")
    rec = _run(case, "torch~onnx-torchscript~onnxruntime", "index_select")
    assert rec.conversion["summary"] == "changed: error -> wrap"
    assert rec.label == "wrap" and rec.conversion["source_label"] == "error"


# --- cache, repro --------------------------------------------------------------------------------------------------


class _Counting(torch_onnx.TorchOnnx):
    def __init__(self) -> None:
        super().__init__(dynamo=False, target="onnxruntime")
        self.converted = 0

    def convert(self, *args: Any) -> Any:
        self.converted += 1
        return super().convert(*args)


@needs("torch~onnx-torchscript~onnxruntime")
def test_conversions_are_cached_by_signature_in_memory_and_on_disk(tmp_path: Path,
                                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(convert_path.CACHE_ENV, str(tmp_path))  # empty: the first conversion is made here
    case = _case(SEEDS[0])
    one = _Counting()
    for _ in range(2):
        one.prepare(_data(case), "index_select").run()
    assert one.converted == 1  # the same signature converts once
    fresh = _Counting()  # another process (same cache folder): the disk answers
    out = fresh.prepare(_data(case), "index_select").run()
    assert fresh.converted == 0 and out.tolist() == case.reference().tolist()


def _data(case: Case) -> Any:
    from gather_scatter_conformance.adapters.base import CaseData

    return CaseData(op=case.op, inputs=case.inputs(), attrs=case.attrs, opset=case.spec.opset,
                    omit=tuple(case.spec.omit))


@needs("torch~onnx-torchscript~onnxruntime")
def test_the_repro_script_converts_runs_and_reproduces(tmp_path: Path) -> None:
    case = _case(PYTORCH_61034)
    rec = _run(case, "torch~onnx-torchscript~onnxruntime")
    path = tmp_path / "repro.py"
    path.write_text(script(case, rec))
    text = path.read_text()
    assert "torch.onnx.export" in text and "onnxruntime.InferenceSession" in text
    proc = subprocess.run([sys.executable, str(path)], capture_output=True, text=True, timeout=300, cwd=tmp_path)
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-2000:]


@pytest.mark.parametrize(("path", "variant"), [("torch~onnx-dynamo~onnxruntime", "index_select"),
                                              ("paddle~paddle2onnx~onnxruntime", "gather")])
def test_a_bfloat16_repro_passes_the_converted_model_what_the_harness_passed(tmp_path: Path, path: str,
                                                                            variant: str) -> None:
    """#28: the repro of torch~onnx-dynamo~onnxruntime on bfloat16 data raised TypeError in its own `data.numpy()`
    (torch refuses bfloat16 there) before ONNX Runtime saw the data, where the record says RuntimeError: ONNX
    Runtime's refusal of the ml_dtypes array the harness passed; paddle2onnx's exported a uint16 model (a bfloat16
    tensor's .numpy() is uint16) and raised paddle's InvalidArgument. Both scripts now pass that array."""
    missing = adapters.missing(path)
    if missing:
        pytest.skip(f"{path} needs {', '.join(missing)}")
    case = _case("cases/probes/gather.yaml::probe-data-dtype-bfloat16")
    rec = _run(case, path, variant)
    assert rec.outcome == "error", rec
    path = tmp_path / "repro.py"
    path.write_text(script(case, rec))
    proc = subprocess.run([sys.executable, str(path)], capture_output=True, text=True, timeout=300, cwd=tmp_path)
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-2000:]
    assert f"raised {rec.error_type}" in proc.stdout


@needs("torch~onnx-torchscript~onnxruntime", "torch~ov-convert~openvino")
def test_the_report_shows_each_kind_in_its_conversion_section(tmp_path: Path) -> None:
    pytest.importorskip("jinja2")
    import json

    from gather_scatter_conformance.harness.report.page import generate

    case = _case(PYTORCH_61034)
    records = [_run(case, "torch~onnx-torchscript~onnxruntime"), _run(case, "torch~onnx-dynamo~onnxruntime"),
               _run(case, "torch~ov-convert~openvino"), _run(_case(SEEDS[0]), "numpy"),
               _run(_case("cases/probes/gather.yaml::probe-negative-indices"), "torch~onnx-torchscript~onnxruntime",
                    "index_select")]
    results = tmp_path / "r.jsonl"
    results.write_text("".join(json.dumps(r.dump()) + "\n" for r in records))
    out = generate([results], tmp_path / "out")
    html = out["index.html"].read_text()
    section = html[html.index('<section id="conversion"'):html.index("</section>", html.index('id="conversion"'))]
    assert "sev-ok" in section and "sev-wrong" in section and "conv-failed" in section and "ok→wrong" in section
    # a changed cell opens its drill-down: the converted graph and the source call travel in the evidence file
    assert "data-cv=" in section and "ScatterND(reduction=none)" not in section
    data = json.loads(out["report-data.js"].read_text().split(" = ", 1)[1].rstrip().rstrip(";"))
    entries = [e for d in data["conv"] for e in d["entries"]]
    assert any("ScatterND(reduction=none)" in e["ops"] for e in entries)
    assert "torch.onnx.export" in section  # the converter, in its column's head
    assert any(e["source_api"] and e["target"] for e in entries)
    rows = json.loads((tmp_path / "out" / "behaviour.json").read_text())
    path_rows = [r for r in rows if r["framework"] == "torch~onnx-torchscript~onnxruntime"]
    assert [(r["dimension"], r["source_label"], r["label"], r["preservation"]) for r in path_rows] == [
        ("negative-indices", "error", "wrap", "changed: error -> wrap")]


# --- a run that dies: whose death it was ---------------------------------------------------------------------


def _isolated(case: Case, path: str, variant: str) -> Record:
    from gather_scatter_conformance.harness.run.isolation import Isolated

    executor = Isolated(timeout=180.0)  # the crash takes a forked child down, not this test process
    try:
        record = execute(case, path, variant, executor)
    finally:
        executor.close()
    assert isinstance(record, Record), record
    return record


@pytest.mark.slow
@needs("torch~onnx-dynamo~openvino")
def test_a_target_that_crashes_is_a_change_and_the_source_result_survives_it() -> None:
    # OpenVINO 2026.4.1's CPU Gather divides by an empty axis: SIGFPE where torch returns an empty tensor. The path
    # noted the source's result and the converted graph before running the target, so the record keeps both.
    rec = _isolated(_case("cases/probes/gather.yaml::probe-empty-data"), "torch~onnx-dynamo~openvino",
                    "index_select")
    assert (rec.outcome, rec.signal) == ("crash", "SIGFPE")
    conv = rec.conversion
    assert conv["stage"] == "run" and conv["source_label"] == "ok" and conv["source_shape"] == [0, 3]
    assert conv["summary"] == "changed: ok -> crash:SIGFPE" and "Gather(axis=0)" in rec.ops


@pytest.mark.slow
@needs("torch~onnx-torchscript~onnxruntime")
def test_a_converter_that_crashes_is_a_failed_conversion() -> None:
    # torch.onnx.export(dynamo=False) 2.13.0 dies of SIGFPE exporting torch.take on an empty tensor.
    rec = _isolated(_case("cases/probes/take.yaml::probe-empty-data"), "torch~onnx-torchscript~onnxruntime", "take")
    conv = rec.conversion
    assert (rec.outcome, conv["stage"], conv["preservation"]) == ("crash", "convert", "conversion-failed")
    assert conv["summary"] == "conversion-failed: the converter crashed (SIGFPE)"
    assert conv["source_label"] == "ok" and rec.verdict == "n/a"


@pytest.mark.slow
def test_a_converter_that_exits_is_a_failed_conversion_not_a_harness_fault(tmp_path: Path) -> None:
    # onnx2tf 1.28 ends its ScatterElements conversion of reduction=add with sys.exit(1): the converter's refusal.
    pytest.importorskip("onnx2tf")
    import subprocess
    import sys

    results = tmp_path / "r.jsonl"
    cases = ROOT / "cases" / "probes" / "scatter_elements.yaml"
    cmd = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", str(cases),
           "-k", "probe-duplicates-add and not many", "--gsc-framework", "onnx~onnx2tf~tensorflow",
           "--gsc-results", str(results)]
    subprocess.run(cmd, cwd=tmp_path, capture_output=True, text=True, timeout=600)
    (record,) = records_of(results)
    assert record["outcome"] != "harness-error" and record["verdict"] == "n/a"
    assert record["conversion"]["preservation"] == "conversion-failed"
    assert "SystemExit" in record["conversion"]["summary"]


@pytest.mark.skipif(not adapters.is_available("tensorflow~tflite~litert"),
                    reason="tensorflow~tflite~litert needs tensorflow and ai-edge-litert")
def test_a_string_output_of_litert_is_text_as_the_sources_is() -> None:
    """LiteRT returns tf.string outputs as bytes (b'eps'); read as they came, every string probe of a TFLite path
    was a "change" from the source's 'eps' to a wrong value, a fault of the harness and not of the converter."""
    case = _case("cases/probes/take.yaml::probe-data-dtype-string")
    rec = _run(case, "tensorflow~tflite~litert", "gather/function")
    assert rec.conversion["preservation"] == "preserved", rec.conversion["summary"]
    assert rec.observed == ["eps", "alpha"] and rec.verdict == "conforms"


def test_one_paddle2onnx_process_serves_the_exports_and_an_abort_costs_one(tmp_path: Path,
                                                                            monkeypatch: pytest.MonkeyPatch) -> None:
    """#38: paddle2onnx imports paddle (about 3 s), once a case when each export had a process of its own. One
    process now serves a worker's exports; the export that aborts it (index_put: "the conversion is aborted",
    SIGABRT) fails alone, with the abort in its error, and the next export gets a fresh process."""
    name = "paddle~paddle2onnx~onnxruntime"
    if adapters.missing(name):
        pytest.skip(f"{name} needs {', '.join(adapters.missing(name))}")
    from gather_scatter_conformance.adapters.convert import paddle_onnx

    # Every conversion below is made here: none from the disk cache or the path's memory of an earlier test.
    monkeypatch.setenv(convert_path.CACHE_ENV, str(tmp_path))
    adapters.get(name).release()
    gather = [_case("cases/gather.yaml::ov-gather8-example-1"), _case("cases/gather_nd.yaml::blog-gathernd-example-2")]
    assert [_run(c, name).verdict for c in gather] == ["conforms", "conforms"]
    first = paddle_onnx._EXPORTER.proc
    assert first is not None and first.poll() is None  # still up, for the next export
    assert _run(gather[0], name, "index_select").verdict == "conforms"  # not cached: another variant's program
    assert paddle_onnx._EXPORTER.proc is first
    aborted = _run(_case("cases/scatter_nd.yaml::onnx-scatternd18-example-1"), name, "index_put")
    assert aborted.outcome == "error" and aborted.error_message is not None
    assert aborted.error_message.startswith("RuntimeError: paddle2onnx.export killed by SIGABRT:")
    assert "aborted" in aborted.error_message
    assert first.poll() is not None  # that process is gone
    assert _run(_case("cases/gather_elements.yaml::onnx-gatherelements13-example-1"), name).verdict == "conforms"
    assert paddle_onnx._EXPORTER.proc is not first


def test_a_paths_warm_up_imports_its_converter_before_the_template_forks() -> None:
    """#38: a risky case runs in a forked child of the path's template, which is forked after warm(): a converter
    imported there is loaded in every child (coremltools took 16 s to import, once a risky case)."""
    name = "jax~jax2onnx~onnxruntime"
    if adapters.missing(name):
        pytest.skip(f"{name} needs {', '.join(adapters.missing(name))}")
    code = ("import sys; from gather_scatter_conformance import adapters; "
            f"print('jax2onnx' in sys.modules); adapters.get({name!r}).warm(); print('jax2onnx' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)
    assert out.stdout.split() == ["False", "True"], out.stderr[-2000:]
