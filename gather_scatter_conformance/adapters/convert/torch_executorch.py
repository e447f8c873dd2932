"""torch -> torch.export + executorch.exir.to_edge_transform_and_lower -> the ExecuTorch runtime, on the portable
kernels (``torch~torch-export~executorch``) or with the XNNPACK partitioner (``torch~torch-export-xnnpack~executorch``).

The export, lowering and run are the executorch adapter's own (adapters/executorch.py, executorch_program.py); what
a path adds is the torch source run natively beside it, so the preservation verdict says whether ExecuTorch kept
torch's behaviour, and a disk cache of the ``.pte`` programs. The two backends are two paths, as the torch ONNX paths
are one per exporter and target: a path's variants are the source's own (torch's eager calls).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from gather_scatter_conformance.adapters import executorch_program as et
from gather_scatter_conformance.adapters.base import Call, CaseData, delegation
from gather_scatter_conformance.adapters.convert.path import ConversionPath, Converted


class TorchExecuTorch(ConversionPath):
    source = "torch"
    target = "executorch"
    converter_requires = ("executorch",)

    def __init__(self, backend: str) -> None:
        super().__init__()
        self.backend = backend
        xnnpack = backend == et.XNNPACK
        self.converter_id = "torch-export-xnnpack" if xnnpack else "torch-export"
        self.converter = ("torch.export.export + to_edge_transform_and_lower(partitioner="
                          f"{'[XnnpackPartitioner()]' if xnnpack else 'None'})")
        self.options = {"partitioner": "XnnpackPartitioner" if xnnpack else None}

    def converter_version(self) -> str:
        import torch

        return f"torch {torch.__version__}, executorch {et.version()}"

    def convert(self, case: CaseData, variant: str, example: dict[str, np.ndarray]) -> Converted:
        from gather_scatter_conformance.adapters import executorch as et_adapter

        lowered = et_adapter.program(case, variant, self.backend)
        return Converted(lowered.buffer, lowered.ops, {"delegation": lowered.placement})

    def runner(self, converted: Converted) -> Any:
        return et.load(converted.artifact)

    def execute(self, runner: Any, inputs: dict[str, np.ndarray]) -> np.ndarray:
        from gather_scatter_conformance.adapters.torch import ADAPTER as TORCH
        from gather_scatter_conformance.adapters.torch import to_tensor

        return TORCH.to_numpy(et.execute(runner, [et.standard(to_tensor(a)) for a in inputs.values()]))

    def prepare(self, case: CaseData, variant: str) -> Call:
        call = super().prepare(case, variant)
        inner = call.run

        def run() -> np.ndarray:
            try:
                return inner()
            finally:  # the placement read at lowering (kept in the conversion's details, and in its disk cache)
                placement = call.facts.get("conversion", {}).get("delegation")
                if placement:
                    call.facts.update(delegation(placement, self.backend))

        call.run = run
        return call

    def repro(self, case: CaseData, variant: str) -> str:
        from gather_scatter_conformance.adapters import executorch as et_adapter

        expr, names = et_adapter.torch_call(case, variant)
        empty = tuple(n for n in names if case.inputs[n].size == 0)
        return "\n".join(et.source(expr, names, self.backend, empty))

    def dump(self, artifact: Any) -> bytes | None:
        return bytes(artifact)

    def load(self, blob: bytes) -> Any:
        return blob


PORTABLE = TorchExecuTorch(et.PORTABLE)
XNNPACK = TorchExecuTorch(et.XNNPACK)
