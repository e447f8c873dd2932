"""torch~coremltools~coreml and onnx~coremltools~coreml (adapters/convert/coreml.py): real conversions by coremltools
of the torch adapter's calls; off macOS the record keeps the ML program's MIL operators and index attributes, with
the verdict ``conversion-only``. coremltools' ONNX frontend is gone (6.0): checked against the installed release."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from gather_scatter_conformance import adapters
from gather_scatter_conformance.adapters.convert import path as convert_path
from gather_scatter_conformance.harness.cases.load import Case, load_file
from gather_scatter_conformance.harness.run.runner import InProcess, execute
from gather_scatter_conformance.vocab.record import Record

PATH = "torch~coremltools~coreml"
ROOT = Path(__file__).resolve().parents[1]
pytestmark = [pytest.mark.framework,
              pytest.mark.skipif(not adapters.is_available(PATH),
                                 reason=f"{PATH} needs {', '.join(adapters.missing(PATH))}")]
OFF_MACOS = pytest.mark.skipif(sys.platform == "darwin", reason="on macOS the converted model runs")


@pytest.fixture(autouse=True)
def _cache(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(convert_path.CACHE_ENV, str(tmp_path_factory.getbasetemp() / "coreml-conversions"))


def _case(nodeid: str) -> Case:
    file, _, cid = nodeid.partition("::")
    found = [c for c in load_file(ROOT / file, file) if isinstance(c, Case) and c.id == cid]
    assert found, f"{nodeid} not found"
    return found[0]


def _run(nodeid: str, variant: str) -> Record:
    record = execute(_case(nodeid), PATH, variant, InProcess())
    assert isinstance(record, Record), record
    return record


@OFF_MACOS
def test_index_select_converts_to_a_gather_with_validate_indices_and_a_negative_index_fix_up() -> None:
    rec = _run("cases/probes/gather.yaml::probe-negative-indices", "index_select")
    ops = rec.ops
    assert "gather(axis=0, batch_dims=0, validate_indices=False)" in ops, ops
    # torch refuses negative indices; the converter wraps them itself, before the gather: x >= 0 ? x : x + dim
    fix_up = ops.index("greater_equal")
    assert ops[fix_up:fix_up + 3] == ["greater_equal", "add", "select"], ops
    assert "cast(int32->int16)" in ops  # the indices narrowed again, to int16, for the gather
    conv = rec.conversion
    assert conv["narrowed_inputs"] == {"indices": "int64->int32"} and conv["opset"] == "CoreML9"
    assert conv["stage"] == "converted" and conv["preservation"] == "conversion-only"
    assert conv["source_label"] == "error"  # what torch itself did, natively
    assert rec.verdict == "conversion-only" and rec.reason.startswith("conversion-only: running a Core ML")


@OFF_MACOS
def test_torch_gather_and_scatter_keep_their_indices_unchecked_and_unwrapped() -> None:
    gather = _run("cases/probes/gather_elements.yaml::probe-negative-indices", "gather")
    assert gather.ops[-1] == "gather_along_axis(axis=1, validate_indices=False)" and "select" not in gather.ops
    scatter = _run("cases/probes/scatter_elements.yaml::probe-negative-indices", "scatter")
    assert scatter.ops[-1].startswith("scatter_along_axis(") and "mode=update" in scatter.ops[-1]
    assert "validate_indices=False" in scatter.ops[-1]


def test_an_operation_coremltools_cannot_convert_is_a_conversion_failure() -> None:
    rec = _run("cases/probes/scatter_elements.yaml::probe-duplicates-max", "scatter_reduce")
    conv = rec.conversion
    assert conv["preservation"] == "conversion-failed" and "scatter_reduce" in conv["summary"]
    assert rec.verdict == "n/a" and rec.ops is None


def test_the_preservation_a_baseline_keeps_and_the_report_cell() -> None:
    from gather_scatter_conformance.harness.judge.baseline import record_label
    from gather_scatter_conformance.harness.report.conversion import render_text, section

    rec = _run("cases/probes/gather.yaml::probe-negative-indices", "index_select")
    if sys.platform == "darwin":
        pytest.skip("on macOS the model runs: no conversion-only record")
    assert record_label(rec) == "conversion-only"
    sec = section([rec])
    cell = next(c for row in sec["rows"] for c in row["cells"] if c)
    assert (cell["kind"], cell["glyph"], cell["cls"]) == ("conversion-only", "◇", "conv-only")
    assert sec["details"][0]["entries"][0]["ops"].endswith("gather(axis=0, batch_dims=0, validate_indices=False)")
    assert "◇0/1" in render_text([rec])


def test_gather_nd_indices_are_narrowed_to_int16_even_past_int16_range() -> None:
    """coremltools 9.0's add_int16_cast keeps gather's indices int32 for an axis longer than 32767, not gather_nd's
    (docs/conversion.md): the program casts the stacked indices to int16 before the gather."""
    import coremltools as ct
    import torch

    from gather_scatter_conformance.adapters.convert.coreml import mil_ops

    class Pair(torch.nn.Module):
        def forward(self, data: Any, i: Any, j: Any) -> Any:
            return data[i, j]

    args = (torch.zeros(40000, 3), torch.zeros(2, dtype=torch.int64), torch.zeros(2, dtype=torch.int64))
    inputs = [ct.TensorType(name=n, shape=a.shape, dtype=a.numpy().dtype) for n, a in zip("dij", args, strict=True)]
    program = ct.convert(torch.jit.trace(Pair().eval(), args), inputs=inputs, convert_to="mlprogram",
                         minimum_deployment_target=ct.target.iOS26, skip_model_load=True)
    ops = mil_ops(program.get_spec())
    assert ops[-1] == "gather_nd(batch_dims=0, validate_indices=False)", ops
    assert ops[0].startswith("stack") and ops[1] == "cast(int32->int16)", ops  # row 39999 does not fit


def test_coremltools_has_no_onnx_frontend_so_the_onnx_path_says_so_in_one_line() -> None:
    import coremltools as ct
    from onnx import TensorProto, helper

    node = helper.make_node("Gather", ["data", "indices"], ["out"], axis=0)
    graph = helper.make_graph([node], "g", [helper.make_tensor_value_info("data", TensorProto.FLOAT, [3]),
                                            helper.make_tensor_value_info("indices", TensorProto.INT64, [1])],
                              [helper.make_tensor_value_info("out", TensorProto.FLOAT, [1])])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    with pytest.raises(ValueError, match="source framework"):  # measured: the reason below holds for this release
        ct.convert(model, convert_to="mlprogram")
    reason = adapters.get("onnx~coremltools~coreml").unavailable()
    assert reason and "no ONNX frontend" in reason and "\n" not in reason


def test_the_program_runs_where_core_ml_can_load_it() -> None:
    """On macOS the path runs the model (untested on this project's Linux machines)."""
    if sys.platform != "darwin":
        pytest.skip("running a Core ML model needs macOS")
    rec = _run("cases/gather.yaml::ov-gather8-example-1", "index_select")
    assert rec.outcome == "ok" and np.asarray(rec.observed).size


def test_coremltools_is_imported_without_the_frontends_a_torch_program_never_reaches() -> None:
    """#38: coremltools' import probes TensorFlow and ExecuTorch (17 s here, 8.5 without them). The path's import
    leaves both out where neither is loaded, and a later import of either still gets the whole package."""
    import subprocess

    code = ("import sys\nfrom gather_scatter_conformance.adapters.convert import coreml\n"
            "ct = coreml._coremltools()\n"
            "assert 'tensorflow' not in sys.modules and 'executorch' not in sys.modules, 'probed'\n"
            "from coremltools import _deps\nassert not _deps._HAS_TF\n"
            "assert coreml._coremltools() is ct\n")
    proc = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr[-2000:]
