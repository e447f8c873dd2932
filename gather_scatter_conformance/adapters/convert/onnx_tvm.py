"""ONNX -> TVM Relax: ``tvm.relax.frontend.onnx.from_onnx``, built for ``llvm``, run on the Relax VM (CPU).

The source is the case's one-node ONNX model (adapters/onnx_graph.py, the newest opset) run natively by ONNX's
reference implementation (the onnx-reference adapter); the import and build are the tvm adapter's own
(:func:`adapters.tvm.from_onnx`). A compiled module is no file here, so conversions are kept in memory only.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from gather_scatter_conformance.adapters import onnx_graph
from gather_scatter_conformance.adapters.base import CaseData
from gather_scatter_conformance.adapters.convert import targets
from gather_scatter_conformance.adapters.convert.path import ConversionPath, Converted


class OnnxTvm(ConversionPath):
    source = "onnx-reference"
    source_id = "onnx"
    converter = "tvm.relax.frontend.onnx.from_onnx"
    converter_id = "relax"
    target = "tvm"

    def converter_version(self) -> str:
        from gather_scatter_conformance.adapters import tvm as tvm_adapter

        return tvm_adapter.version()

    def convert(self, case: CaseData, variant: str, example: dict[str, np.ndarray]) -> Converted:
        from gather_scatter_conformance.adapters import tvm as tvm_adapter

        model, _, _ = onnx_graph.build(case)
        run, ops = tvm_adapter.from_onnx(model)
        return Converted(run, ops, {"opset": targets.onnx_opset(model)})

    def runner(self, converted: Converted) -> Any:
        return converted.artifact

    def execute(self, runner: Any, inputs: dict[str, np.ndarray]) -> np.ndarray:
        return runner(inputs)

    def repro(self, case: CaseData, variant: str) -> str:
        model, names, _ = onnx_graph.build(case)
        return "\n".join([
            onnx_graph.model_source(model),
            "import tvm",
            "from tvm import relax",
            "from tvm.relax.frontend.onnx import from_onnx",
            "mod = from_onnx(model)",
            "executable = tvm.compile(mod, target='llvm')",
            "vm = relax.VirtualMachine(executable, tvm.cpu())",
            f"result = vm['main']({', '.join(f'tvm.runtime.tensor({n})' for n in names)}).numpy()",
        ])


ADAPTER = OnnxTvm()
