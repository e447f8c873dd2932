"""How the adapter tests run shipped cases without harming the test process: the OpenVINO cases that would kill it
in-process, and the MXNet workers (MXNet lives in .venv-mxnet and scatters without a bounds check)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np

from gather_scatter_conformance.adapters.base import CaseData, Unsupported
from gather_scatter_conformance.adapters.mxnet import ADAPTER as MXNET
from gather_scatter_conformance.harness.cases.load import Case, ExpectedError
from gather_scatter_conformance.vocab.ops import GATHER_OPS, SCATTER_OPS

ROOT = Path(__file__).resolve().parent.parent
MXNET_PYTHON = ROOT / ".venv-mxnet" / "bin" / "python"
PYTHONS = {"mxnet": str(MXNET_PYTHON)}


def crash_risk(case: Case, variant: str) -> str | None:
    """Why running ``case`` on ``variant`` could kill this process (measured on 2026.4.1 in throwaway
    subprocesses); None when it is safe. These belong to the isolated run, not to an in-process test."""
    tags = case.tags
    if "crash" in tags or "empty" in tags:
        return "tagged crash/empty"
    inputs = case.inputs()
    data, indices = inputs["data"], inputs.get("indices", np.zeros(0, np.int64))  # TensorScatter may leave it out
    if indices.size == 0 or (case.op in ("Gather", "Take") and data.size == 0):
        # SIGFPE inside core.compile_model whenever a Gather's output has zero elements (any version, ONNX too).
        return "Gather with an empty output: SIGFPE in compile_model"
    if variant == "ScatterUpdate-3" and data.dtype == object:
        return "ScatterUpdate-3 on string data corrupts the heap (SIGABRT 'munmap_chunk(): invalid pointer' later)"
    if case.op == "GatherND" and isinstance(case.reference(), ExpectedError):
        return "GatherND reads out of bounds for out-of-range indices (garbage; far indices SIGSEGV)"
    if case.op == "ScatterElements":
        dim = data.shape[int(case.attrs["axis"])] if data.ndim else 0
        wide = indices.astype(np.float64)  # compare without integer wrap-around
        if np.any(wide < -dim) or np.any(wide >= 2**31):
            # below -dim the CPU node writes before the buffer; beyond 31 bits, i32 truncation may make it so
            return "ScatterElementsUpdate writes out of bounds for indices < -dim (SIGSEGV/SIGABRT)"
    return None


# Which cases get a worker of their own, fitted to what MXNet 1.9.1 does (measured; the harness's rule, is_risky,
# goes by tags and would restart MXNet — about 4 s of import — for every out-of-bounds gather):
# - its scatters (scatter_nd, item assignment, index_copy) have no bounds check, and negative indices are not
#   wrapped: any index outside [0, dim) writes outside the array. The heap damage surfaces later (an abort or a
#   hang in whatever runs next), so each such case runs in a throwaway worker whose exit status is checked;
# - its gathers raise, clamp or wrap out-of-range indices (take, pick, gather_nd, indexing), and the ones that
#   crash (take from an empty axis) crash at once: they share the warm worker.
OUTSIDE_TIMEOUT = 30.0


def _case_data(case: Case) -> CaseData:
    return CaseData(op=case.op, inputs=case.inputs(), attrs=case.attrs, opset=case.spec.opset)


def writes_outside(case: Case, variant: str) -> bool:
    """True when ``variant`` reaches an MXNet scatter with a coordinate outside [0, dim) for its dimension."""
    if case.op not in SCATTER_OPS:
        return False
    try:
        MXNET.prepare(_case_data(case), variant)
    except (Unsupported, ValueError):
        return False
    data, indices = case.inputs()["data"], case.inputs()["indices"].astype(np.int64)
    if case.op == "ScatterND":
        k = indices.shape[-1] if indices.ndim else 0
        if k > data.ndim:
            return False
        return bool(((indices < 0) | (indices >= np.array(data.shape[:k], dtype=np.int64))).any())
    axis = int(case.attrs["axis"])
    if not -data.ndim <= axis < data.ndim or indices.ndim != data.ndim:
        return False
    # The aranges that spell the other coordinates run over indices' dims, which may exceed data's (an invalid case).
    wider = any(i > n for d, (i, n) in enumerate(zip(indices.shape, data.shape, strict=True)) if d != axis % data.ndim)
    return wider or bool(((indices < 0) | (indices >= data.shape[axis])).any())


class WarmMxnet:
    """The shared MXNet worker; gathers stay in it even when the harness would give them a worker of their own."""

    def __init__(self) -> None:
        from gather_scatter_conformance.harness.run.isolation import Isolated  # execnet: only where MXNet runs

        self.isolated = Isolated(PYTHONS, timeout=120.0)

    def run(self, framework: str, variant: str, payload: dict[str, Any]) -> dict[str, Any]:
        if payload["op"] in GATHER_OPS:
            payload = {**payload, "fresh": False}
        return self.isolated.run(framework, variant, payload)


class FreshMxnet:
    """A throwaway worker for one case; its exit status is checked, so a crash at exit is that case's crash."""

    def run(self, framework: str, variant: str, payload: dict[str, Any]) -> dict[str, Any]:
        from gather_scatter_conformance.harness.run.isolation import Isolated

        isolated = Isolated(PYTHONS, timeout=OUTSIDE_TIMEOUT)
        try:
            return isolated.run(framework, variant, {**payload, "fresh": True})
        finally:
            isolated.close()
