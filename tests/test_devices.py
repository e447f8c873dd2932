"""``--gsc-device``: GPU runs of torch, tensorflow, onnxruntime and jax, and what happens where there is no GPU.

Where a framework sees no GPU (every CI machine of this project), its GPU tests are skipped with a one-line reason
and nothing is recorded; where it sees one, the same case must run there and be recorded with ``device: gpu``.
Either way the assertion below can fail: a GPU adapter that silently ran on the CPU, or one that crashed instead
of skipping, is caught.
"""

from __future__ import annotations

import numpy as np
import pytest
from _cases import records_of

from gather_scatter_conformance import adapters
from gather_scatter_conformance.harness.run.runner import InProcess, Skipped, execute
from tests._shipped import shipped_cases

pytestmark = pytest.mark.framework  # make check runs none of these (docs/development.md)

# Every adapter that can run on either device (its own devices say so); GPU-only ones have their own tests.
GPU_FRAMEWORKS = [n for n in adapters.names() if {"cpu", "gpu"} <= set(adapters.get(n).devices)]


def _gather_case():
    return next(c for c in shipped_cases() if c.op == "Gather" and c.spec.expected is not None and not c.spec.omit)


@pytest.mark.parametrize("framework", GPU_FRAMEWORKS)
def test_gpu_run_is_a_gpu_result_or_a_skip_with_reason(framework: str) -> None:
    if not adapters.is_available(framework):
        pytest.skip(f"{framework} is not installed in this interpreter")
    assert "gpu" in adapters.get(framework).devices
    case = _gather_case()
    variant = adapters.get(framework).variants("Gather")[0]
    record = execute(case, framework, variant, InProcess(), "gpu")
    if isinstance(record, Skipped):  # not a result: a reason and the device, nothing else
        # The reason names the framework and says what is missing, in one line.
        assert framework in record.reason and "\n" not in record.reason, record
        assert record.device == "gpu", record
        return
    assert record.device == "gpu", record
    assert record.device_name, record
    assert record.verdict == "conforms", record


@pytest.mark.parametrize("framework", GPU_FRAMEWORKS)
def test_cpu_run_is_pinned_to_the_cpu(framework: str) -> None:
    """A CPU run says cpu even on a machine with a GPU (TF and JAX would pick the GPU by default)."""
    if not adapters.is_available(framework):
        pytest.skip(f"{framework} is not installed in this interpreter")
    case = _gather_case()
    variant = adapters.get(framework).variants("Gather")[0]
    record = execute(case, framework, variant, InProcess(), "cpu")
    assert record.device == "cpu" and record.verdict == "conforms", record


def test_cpu_only_adapter_has_no_gpu_items_and_gpu_ids_end_in_at_gpu(pytester: pytest.Pytester) -> None:
    cases = pytester.mkdir("cases")
    (cases / "gather.yaml").write_text(
        "op: Gather\ncases:\n  - id: g\n    source: test\n    inputs: {data: [1, 2, 3], indices: [2, 0]}\n"
        "    expected: [3, 1]\n"
    )
    result = pytester.runpytest_subprocess(
        "cases", "--framework", "numpy,torch", "--gsc-device", "cpu,gpu", "--collect-only", "-q", "-p",
        "no:cacheprovider", "--variants", "default",
    )
    ids = [line for line in result.stdout.lines if "::" in line]
    assert "cases/gather.yaml::g[numpy]" in ids
    assert "cases/gather.yaml::g[torch]" in ids
    assert "cases/gather.yaml::g[torch@gpu]" in ids
    assert not any("numpy@gpu" in i for i in ids)


def test_skipped_gpu_tests_write_no_records(pytester: pytest.Pytester) -> None:
    import torch

    if torch.cuda.is_available():
        pytest.skip("this machine has a CUDA device: the GPU test runs instead of skipping")
    cases = pytester.mkdir("cases")
    (cases / "gather.yaml").write_text(
        "op: Gather\ncases:\n  - id: g\n    source: test\n    inputs: {data: [1, 2, 3], indices: [2, 0]}\n"
        "    expected: [3, 1]\n"
    )
    result = pytester.runpytest_subprocess(
        "cases", "--framework", "torch", "--gsc-device", "all", "--results", "r.jsonl", "-rs", "-p", "no:cacheprovider",
        "--variants", "default", "--isolation", "none",
    )
    result.assert_outcomes(passed=1, skipped=1)
    assert "gpu: torch" in result.stdout.str() and "sees no CUDA device" in result.stdout.str()
    records = records_of(pytester.path / "r.jsonl")
    assert [r["device"] for r in records] == ["cpu"]


def test_unknown_device_is_a_usage_error(pytester: pytest.Pytester) -> None:
    pytester.mkdir("cases")
    result = pytester.runpytest_subprocess("cases", "--gsc-device", "tpu", "-p", "no:cacheprovider")
    assert "--gsc-device: unknown tpu" in result.stderr.str()
    assert np.int64(result.ret) != 0
