"""The DirectML adapter: DML_GATHER's fields mapped to ONNX Gather on the seed's examples (pure, runs anywhere), the
model and session it builds, the whole-framework skip off Windows, and real runs where onnxruntime-directml is.

What ran where: on Linux, everything but the tests marked ``windows``; those need Windows with onnxruntime-directml
and a DirectX 12 device (``tox -e directml``, the windows-latest job of .github/workflows/directml.yml).
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from _cases import records_of
from _shipped import shipped_cases

from gather_scatter_conformance.adapters.base import CaseData
from gather_scatter_conformance.adapters.directml import (
    ADAPTER,
    PROVIDER,
    DmlGather,
    dml_gather_to_onnx,
    dml_variants,
    onnx_gather_to_dml,
    platform_problem,
)
from gather_scatter_conformance.harness.cases.load import Case

ROOT = Path(__file__).resolve().parents[1]
windows = pytest.mark.skipif(platform_problem() is not None, reason=platform_problem() or "")

# DML_GATHER_OPERATOR_DESC of each example in seed 004_17f7ba8a51c3d1ca.txt, as printed, and the original rank of
# its InputTensor (before DirectML's padding with leading 1s; examples 4 and 5 pad one).
SEED = {
    1: (DmlGather((4,), (5,), (5,), axis=0, index_dimensions=1), 1),
    2: (DmlGather((3, 2), (1, 4), (4, 2), axis=0, index_dimensions=1), 2),
    3: (DmlGather((3, 2), (1, 2), (3, 2), axis=1, index_dimensions=2), 2),
    4: (DmlGather((1, 3, 3), (1, 1, 2), (3, 1, 2), axis=2, index_dimensions=2), 2),
    5: (DmlGather((1, 3, 2), (1, 2, 2), (2, 2, 2), axis=1, index_dimensions=2), 2),
}


def _seed_case(n: int) -> Case:
    (case,) = [c for c in shipped_cases() if c.id == f"directml-gather-example-{n}"]
    return case


@pytest.mark.parametrize("n", sorted(SEED))
def test_dml_gather_fields_give_the_seed_cases_canonical_gather(n: int) -> None:
    desc, rank = SEED[n]
    case = _seed_case(n)
    axis, indices, output = dml_gather_to_onnx(desc, rank)
    assert axis == case.attrs["axis"]
    assert indices == case.inputs()["indices"].shape
    assert output == np.shape(case.spec.expected)
    # Right-aligned into the printed DimensionCount, the canonical output is the printed OutputTensor.Sizes, except
    # in example 3, whose printed {3,2} contradicts its own formula (3 relevant dimensions in 2; see seed-coverage).
    aligned = output[len(output) - len(desc.output_sizes):] if len(output) >= len(desc.output_sizes) else output
    assert (aligned == desc.output_sizes) == (n != 3)


@pytest.mark.parametrize("n", [1, 2, 4, 5])
def test_onnx_gather_gives_back_the_printed_dml_descs(n: int) -> None:
    desc, _ = SEED[n]
    case = _seed_case(n)
    data, indices = case.inputs()["data"].shape, case.inputs()["indices"].shape
    assert onnx_gather_to_dml(data, indices, case.attrs["axis"], len(desc.input_sizes)) == desc


def test_example_3_does_not_fit_its_dimension_count() -> None:
    case = _seed_case(3)
    data, indices = case.inputs()["data"].shape, case.inputs()["indices"].shape
    with pytest.raises(ValueError, match="exceeds DimensionCount 2"):
        onnx_gather_to_dml(data, indices, 1, 2)
    assert onnx_gather_to_dml(data, indices, 1, 3) == DmlGather((1, 3, 2), (1, 1, 2), (3, 1, 2), 2, 2)


def test_padding_and_negative_axes() -> None:
    assert onnx_gather_to_dml((5,), (2, 3), -1, 4) == DmlGather((1, 1, 1, 5), (1, 1, 2, 3), (1, 1, 2, 3), 3, 2)
    assert dml_gather_to_onnx(DmlGather((1, 1, 1, 5), (1, 1, 2, 3), (1, 1, 2, 3), 3, 2), 1) == (0, (2, 3), (2, 3))
    with pytest.raises(ValueError, match="padding"):
        dml_gather_to_onnx(DmlGather((1, 1, 1, 5), (1, 1, 2, 3), (1, 1, 2, 3), 1, 2), 1)


# --- the adapter --------------------------------------------------------------------------------------------------

def test_platform_problem_names_what_is_missing() -> None:
    assert platform_problem("linux") == "DirectML needs Windows (onnxruntime-directml); this is linux"
    assert platform_problem("darwin").startswith("DirectML needs Windows")
    from importlib import metadata

    try:
        metadata.version("onnxruntime-directml")
        assert platform_problem("win32") is None
    except metadata.PackageNotFoundError:
        assert platform_problem("win32") == ("DirectML needs onnxruntime-directml (pip install onnxruntime-directml); "
                                             "only plain onnxruntime is installed")


def test_default_variant_is_the_newest_opset_directml_supports() -> None:
    assert dml_variants("ScatterElements") == ["ScatterElements-16", "ScatterElements-13", "ScatterElements-11",
                                               "Scatter-11", "Scatter-9", "ScatterElements-18"]
    assert dml_variants("ScatterND") == ["ScatterND-16", "ScatterND-13", "ScatterND-11", "ScatterND-18"]
    assert dml_variants("Gather") == ["Gather-13", "Gather-11", "Gather-1"]


def test_prepare_pins_the_variant_version_and_names_the_provider() -> None:
    pytest.importorskip("onnx")
    data = np.zeros((3, 4), np.float32)
    case = CaseData("ScatterND", {"data": data, "indices": np.array([[1]]), "updates": np.ones((1, 4), np.float32)},
                    {"reduction": "none"})
    call = ADAPTER.prepare(case, "ScatterND-16")
    assert "ScatterND-16(" in call.api and PROVIDER in call.api and call.device == "gpu"
    assert "ScatterND-18(" in ADAPTER.prepare(case, "ScatterND-18").api
    own = CaseData(case.op, case.inputs, case.attrs, opset=13)
    assert "ScatterND-13(" in ADAPTER.prepare(own, "ScatterND-16").api  # the default honours a case's own opset


def test_off_windows_every_case_skips_with_the_reason_and_nothing_is_recorded(tmp_path: Path) -> None:
    reason = platform_problem()
    if reason is None:
        pytest.skip("DirectML can run here: the cases run instead")
    results = tmp_path / "r.jsonl"
    cmd = [sys.executable, "-m", "pytest", "cases/gather.yaml", "-q", "-rs", "-p", "no:cacheprovider",
           "--framework", "directml", "-k", "directml-gather", "--variants", "default", "--results", str(results)]
    out = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stdout + out.stderr
    assert "5 skipped" in out.stdout
    assert "SKIPPED [5] gather_scatter_conformance/harness/run/pytest_plugin.py:" in out.stdout
    assert reason in out.stdout
    assert records_of(results) == []  # the run's manifest line only


# --- on Windows with onnxruntime-directml (tox -e directml) -------------------------------------------------------

@windows
def test_sessions_run_on_directml_only() -> None:
    case = CaseData("Gather", {"data": np.arange(12, dtype=np.float32).reshape(3, 4), "indices": np.array([2, 0])},
                    {"axis": 0, "batch_dims": 0})
    ADAPTER.cache.clear()
    out = ADAPTER.prepare(case, "Gather-13").run()
    np.testing.assert_array_equal(out, [[8, 9, 10, 11], [0, 1, 2, 3]])
    (session,) = ADAPTER.cache.values()
    assert session.get_providers()[0] == PROVIDER
    assert session.get_session_options().enable_mem_pattern is False


@windows
def test_every_shipped_case_gives_a_result_on_directml() -> None:
    from gather_scatter_conformance.harness.run.runner import InProcess, execute

    problems = []
    for case in shipped_cases():
        record = execute(case, "directml", ADAPTER.variants(case.op)[0], InProcess(), "gpu")
        if record.outcome not in ("ok", "error", "unsupported") or record.device != "gpu":
            problems.append((case.nodeid, record.outcome, record.device))
    assert not problems
