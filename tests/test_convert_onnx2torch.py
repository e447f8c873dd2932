"""onnx~onnx2torch~torch (adapters/convert/onnx_torch.py): real conversions of the harness's one-node ONNX models by
onnx2torch, run on CPU torch, compared with ONNX's reference implementation and the canonical semantics; the
torchvision stand-in that lets onnx2torch import beside the CPU torch."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from gather_scatter_conformance import adapters
from gather_scatter_conformance.adapters.base import CaseData
from gather_scatter_conformance.adapters.convert import path as convert_path
from gather_scatter_conformance.harness.cases.load import Case, load_file
from gather_scatter_conformance.harness.run.repro import script
from gather_scatter_conformance.harness.run.runner import InProcess, execute
from gather_scatter_conformance.vocab.record import Record

PATH = "onnx~onnx2torch~torch"
ROOT = Path(__file__).resolve().parents[1]
pytestmark = [pytest.mark.framework,
              pytest.mark.skipif(not adapters.is_available(PATH),
                                 reason=f"{PATH} needs {', '.join(adapters.missing(PATH))}")]


@pytest.fixture(autouse=True)
def _cache(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(convert_path.CACHE_ENV, "off")  # onnx2torch's GraphModules are kept in memory only anyway


def _case(nodeid: str) -> Case:
    file, _, cid = nodeid.partition("::")
    found = [c for c in load_file(ROOT / file, file) if isinstance(c, Case) and c.id == cid]
    assert found, f"{nodeid} not found"
    return found[0]


def _run(nodeid: str) -> Record:
    case = _case(nodeid)
    record = execute(case, PATH, adapters.get(PATH).variants(case.op)[0], InProcess())
    assert isinstance(record, Record), record
    return record


def test_a_gather_with_negative_indices_converts_and_runs_to_the_reference_result() -> None:
    from onnx.reference import ReferenceEvaluator

    from gather_scatter_conformance.adapters import onnx_graph

    data = np.arange(12, dtype=np.float32).reshape(4, 3)
    case = CaseData("Gather", {"data": data, "indices": np.array([[-1, 0], [2, -4]], np.int64)},
                    {"axis": 0, "batch_dims": 0})
    path = adapters.get(PATH)
    call = path.prepare(case, path.variants("Gather")[0])
    out = path.to_numpy(call.run())
    model, _, _ = onnx_graph.build(case)
    expected = ReferenceEvaluator(model).run(None, dict(case.inputs))[0]
    np.testing.assert_array_equal(out, expected)
    np.testing.assert_array_equal(out, np.take(data, case.inputs["indices"], axis=0))
    assert call.facts["ops"] == ["OnnxGather(axis=0)"]
    assert call.facts["conversion"]["opset"] == 13 and call.facts["conversion"]["stage"] == "run"


def test_the_probe_records_are_judged_as_a_paths() -> None:
    rec = _run("cases/probes/gather.yaml::probe-negative-indices")
    assert rec.conversion["preservation"] == "preserved" and rec.label == "wrap"
    assert rec.ops == ["OnnxGather(axis=0)"]


def test_gather_elements_with_negative_indices_raises_in_torch_where_onnx_wraps() -> None:
    # onnx2torch 1.5.15 lowers GatherElements to torch.gather, which refuses negative indices (ONNX allows them).
    rec = _run("cases/probes/gather_elements.yaml::probe-negative-indices")
    conv = rec.conversion
    assert conv["summary"] == "changed: wrap -> error", conv["summary"]
    assert rec.ops == ["OnnxGatherElements(axis=1)"] and "out of bounds" in rec.error_message


def test_scatter_elements_has_no_converter_a_recorded_conversion_failure() -> None:
    rec = _run("cases/probes/scatter_elements.yaml::probe-negative-indices")
    conv = rec.conversion
    assert conv["preservation"] == "conversion-failed" and "Converter is not implemented" in conv["summary"]
    assert rec.verdict == "n/a"


def test_onnx2torch_imports_beside_a_torchvision_that_does_not_load() -> None:
    # In a fresh interpreter: whatever torchvision is installed, onnx2torch imports, and the record says which
    # torchvision it got; the stand-in's ops refuse to run.
    code = ("from gather_scatter_conformance.adapters.convert import onnx_torch as o\n"
            "o.import_onnx2torch(); used = o.torchvision_used(); print(used)\n"
            "import torchvision\n"
            "if used.startswith('stand-in'):\n"
            "    try:\n"
            "        torchvision.ops.nms(None, None, 0.5)\n"
            "    except o.TorchvisionStandIn as exc:\n"
            "        print('refused:', exc)\n")
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr[-2000:]
    first = proc.stdout.splitlines()[0]
    if first.startswith("stand-in"):  # this machine: PyPI's CUDA torchvision beside torch's CPU build
        assert first.startswith("stand-in (") and "refused: torchvision.ops.nms" in proc.stdout


def test_the_repro_script_converts_runs_and_reproduces(tmp_path: Path) -> None:
    case = _case("cases/probes/gather_elements.yaml::probe-negative-indices")
    rec = execute(case, PATH, adapters.get(PATH).variants(case.op)[0], InProcess())
    path = tmp_path / "repro.py"
    path.write_text(script(case, rec))
    assert "onnx2torch.convert(model)" in path.read_text()
    proc = subprocess.run([sys.executable, str(path)], capture_output=True, text=True, timeout=300, cwd=tmp_path)
    assert "out of bounds" in proc.stdout + proc.stderr, proc.stdout[-2000:] + proc.stderr[-2000:]
