"""Thread twins (issue #40 item 5): a scatter's duplicate targets run with the intra-op thread count the system
runs by default and with the other one, where it exposes the setting (ONNX Runtime, OpenVINO, torch)."""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np
import pytest
from _installed import require

from gather_scatter_conformance import adapters
from gather_scatter_conformance.adapters.base import CaseData
from gather_scatter_conformance.vocab import variants
from gather_scatter_conformance.vocab.dimensions import thread_sensitive
from gather_scatter_conformance.vocab.ops import with_defaults

ROOT = Path(__file__).resolve().parent.parent
CORES = os.cpu_count() or 1


def _duplicates(op: str = "ScatterElements") -> CaseData:
    """probe-duplicates-add: both duplicate updates are added whatever the order, so every thread count agrees."""
    inputs = {"data": np.array([10, 20, 30, 40, 50], np.float32), "indices": np.array([1, 1, 3]),
              "updates": np.array([1, 2, 5], np.float32)}
    if op == "ScatterND":
        inputs["indices"] = inputs["indices"].reshape(3, 1)
    return CaseData(op=op, inputs=inputs, attrs=with_defaults(op, {"reduction": "add"}))


def test_a_thread_twin_names_its_parent_and_is_no_index_or_shape_twin() -> None:
    assert variants.twin("ScatterND-18", variants.THREADS_MODE) == "ScatterND-18/threads"
    assert variants.threads_of("ScatterNDUpdate-15/one_thread") == ("ScatterNDUpdate-15", "one_thread")
    assert variants.twin_of("index_put/threads") == ("index_put", "threads")
    assert variants.threads_of("Gather-13/constant") is None
    assert variants.twins("ScatterND-18") == ["ScatterND-18/constant", "ScatterND-18/dynamic"]


def test_thread_twins_run_on_the_duplicate_target_probes_only(pytester: pytest.Pytester) -> None:
    assert thread_sensitive("duplicates") and thread_sensitive("duplicates-add")
    assert not thread_sensitive("oob-positive") and not thread_sensitive(None)
    (pytester.mkdir("cases") / "scatter_elements.yaml").write_text((ROOT / "cases/probes/scatter_elements.yaml")
                                                                  .read_text())
    result = pytester.runpytest_subprocess("cases", "--framework", "onnxruntime,torch", "--collect-only", "-q",
                                           "-p", "no:cacheprovider")
    ids = [line for line in result.stdout.lines if "::" in line]
    threads = [i for i in ids if "/threads]" in i]
    assert {"onnxruntime:ScatterElements-18/threads", "torch:scatter/threads", "torch:scatter_reduce/threads"} == {
        i.split("[", 1)[1].rstrip("]") for i in threads}, threads
    assert all("::probe-duplicates" in i for i in threads), threads
    assert any("::probe-duplicates-many[onnxruntime:ScatterElements-18/threads]" in i for i in threads)


@pytest.mark.framework
def test_onnxruntime_threads_twin_runs_a_thread_a_core() -> None:
    require("onnxruntime")
    adapter = adapters.get("onnxruntime")
    assert "ScatterND-18/threads" in adapter.variants("ScatterND")
    assert not any(variants.threads_of(v) for v in adapter.variants("Gather"))
    case = _duplicates("ScatterND")
    parent, twin = adapter.prepare(case, "ScatterND-18"), adapter.prepare(case, "ScatterND-18/threads")
    assert "intra_op_num_threads=1" in parent.api
    assert f"intra_op_num_threads={CORES}" in twin.api and f"intra_op_num_threads = {CORES}" in twin.source
    assert adapter.to_numpy(twin.run()).tolist() == adapter.to_numpy(parent.run()).tolist() == [10, 23, 30, 45, 50]


@pytest.mark.framework
def test_openvino_one_thread_twin_compiles_with_one_inference_thread() -> None:
    require("openvino")
    adapter = adapters.get("openvino")
    assert "ScatterElementsUpdate-12/one_thread" in adapter.variants("ScatterElements")
    call = adapter.prepare(_duplicates(), "ScatterElementsUpdate-12/one_thread")
    assert "{'INFERENCE_NUM_THREADS': 1}" in call.api and "{'INFERENCE_NUM_THREADS': 1}" in call.source
    assert "INFERENCE_NUM_THREADS" not in adapter.prepare(_duplicates(), "ScatterElementsUpdate-12").api
    assert adapter.to_numpy(call.run()).tolist() == [10, 23, 30, 45, 50]


@pytest.mark.framework
def test_torch_threads_twin_sets_the_threads_around_its_call_only() -> None:
    require("torch")
    import torch

    adapter = adapters.get("torch")
    assert "index_put/threads" in adapter.variants("ScatterND")
    assert not any(variants.threads_of(v) for v in adapter.variants("GatherND"))
    call = adapter.prepare(_duplicates(), "scatter_reduce/threads")
    assert f"torch.set_num_threads({CORES})" in call.api and f"torch.set_num_threads({CORES})" in call.source
    before = torch.get_num_threads()
    assert adapter.to_numpy(call.run()).tolist() == [10, 23, 30, 45, 50]
    assert torch.get_num_threads() == before
