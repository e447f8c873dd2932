"""ONNX -> IREE: ``iree-import-onnx`` of the case's one-node ONNX model, compiled for ``llvm-cpu`` with
``input_type="onnx"`` and run on IREE's ``local-sync`` device.

The source is the case's ONNX model (adapters/onnx_graph.py, the newest opset) run natively by ONNX's reference
implementation (the onnx-reference adapter). The import, the compile and the run are the iree adapter's own
(adapters/iree.py, its ``import_onnx`` variant): one implementation. The artifact is the .vmfb, kept on disk too.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from gather_scatter_conformance.adapters import iree, onnx_graph
from gather_scatter_conformance.adapters.base import CaseData
from gather_scatter_conformance.adapters.convert import targets
from gather_scatter_conformance.adapters.convert.path import ConversionPath, Converted


class VmfbArtifact:
    """Mixin: a path whose artifact is an IREE .vmfb (bytes), stored as it is in the conversion cache; the
    converted graph's ``ops`` are its dispatches (adapters.iree.dispatches)."""

    target = "iree"

    def converter_version(self) -> str:
        return iree.version()

    def dump(self, artifact: Any) -> bytes:
        return bytes(artifact)

    def load(self, blob: bytes) -> Any:
        return blob

    def runner(self, converted: Converted) -> Any:
        return converted.artifact

    def execute(self, runner: Any, inputs: dict[str, np.ndarray]) -> np.ndarray:
        return iree.run_module(runner, list(inputs.values()))


def vmfb(text: str, input_type: str, details: dict[str, Any]) -> Converted:
    """``text`` compiled by the iree adapter's compile: the .vmfb with its dispatches as the graph's ops."""
    compiled = iree.compile_module(text, input_type)
    return Converted(compiled.vmfb, list(compiled.dispatches), {**details, "input_type": input_type})


class OnnxIree(VmfbArtifact, ConversionPath):
    source = "onnx-reference"
    source_id = "onnx"
    converter = "iree-import-onnx"
    converter_id = "iree-import-onnx"
    target = "iree"

    def convert(self, case: CaseData, variant: str, example: dict[str, np.ndarray]) -> Converted:
        model, _, _ = onnx_graph.build(case)
        return vmfb(iree.import_onnx(model), "onnx", {"opset": targets.onnx_opset(model)})

    def repro(self, case: CaseData, variant: str) -> str:
        model, names, _ = onnx_graph.build(case)
        return "\n".join([onnx_graph.model_source(model), iree.import_source(), iree.compile_source("mlir", "onnx"),
                          iree.run_source(names)])


ADAPTER = OnnxIree()
