"""paddle -> paddle2onnx -> onnxruntime.

The source is the paddle adapter's dynamic-graph call (adapters/paddle_calls.py): the same function is turned into a
static graph by ``paddle.jit.to_static`` with an ``InputSpec`` per input (the case's shapes and dtypes), saved by
``paddle.jit.save``, and exported by ``paddle2onnx.export`` with its defaults (``opset_version=7`` and
``auto_upgrade_opset=True``: it raises the opset to what the graph's operators need), as its README shows.
"""

from __future__ import annotations

import os
import tempfile
from typing import Any

import numpy as np

from adapters.base import CaseData
from adapters.convert import targets
from adapters.convert.path import ConversionPath, Converted


def _static_variants(op: str) -> list[str]:
    from adapters.paddle_calls import STATIC, VARIANTS

    return [v for v in VARIANTS[op] if not v.endswith("/" + STATIC)]


class Paddle2Onnx(ConversionPath):
    source = "paddle"
    converter = "paddle2onnx.export"
    converter_id = "paddle2onnx"
    target = "onnxruntime"

    def source_variants(self, op: str) -> list[str]:
        return _static_variants(op)

    def converter_version(self) -> str:
        import paddle2onnx

        return str(paddle2onnx.__version__)

    def convert(self, case: CaseData, variant: str, example: dict[str, np.ndarray]) -> Converted:
        import onnx
        import paddle
        import paddle2onnx

        from adapters import paddle_calls

        names, fn = paddle_calls.function(paddle, case.op, variant, {n: v.shape for n, v in case.inputs.items()},
                                          case.attrs, case.omit)
        spec = [paddle.static.InputSpec(list(case.inputs[n].shape), str(case.inputs[n].dtype), n) for n in names]
        static = paddle.jit.to_static(fn, input_spec=spec, full_graph=True)
        with tempfile.TemporaryDirectory(prefix="gsc-paddle2onnx-") as work:
            prefix = os.path.join(work, "case")
            paddle.jit.save(static, prefix)
            graph = prefix + (".json" if os.path.exists(prefix + ".json") else ".pdmodel")
            out = os.path.join(work, "case.onnx")
            paddle2onnx.export(graph, prefix + ".pdiparams", save_file=out, verbose=False)
            model = onnx.load(out)
        return Converted(model, targets.onnx_ops(model), {"opset": targets.onnx_opset(model)})

    def dump(self, artifact: Any) -> bytes:
        return artifact.SerializeToString()

    def load(self, blob: bytes) -> Any:
        import onnx

        return onnx.load_from_string(blob)

    def runner(self, converted: Converted) -> Any:
        return targets.onnxruntime_session(converted.artifact)

    def execute(self, runner: Any, inputs: dict[str, np.ndarray]) -> np.ndarray:
        return targets.run_onnxruntime(runner, inputs)

    def repro(self, case: CaseData, variant: str) -> str:
        from adapters import paddle_calls

        names = paddle_calls.arg_names(case.op)
        expr = paddle_calls.expression(case.op, variant, {n: v.shape for n, v in case.inputs.items()}, case.attrs,
                                       case.omit)
        arrays = [f"{n}_array" for n in names]
        return "\n".join([
            "import onnx, paddle2onnx",
            *(f"{n}_array = {n}.numpy() if hasattr({n}, 'numpy') else {n}" for n in names),
            f"def fn({', '.join(names)}):",
            f"    return {expr}",
            "spec = [" + ", ".join(f"paddle.static.InputSpec(list({a}.shape), str({a}.dtype), {n!r})"
                                   for n, a in zip(names, arrays, strict=True)) + "]",
            "paddle.jit.save(paddle.jit.to_static(fn, input_spec=spec, full_graph=True), 'case')",
            "import os",
            "graph = 'case.json' if os.path.exists('case.json') else 'case.pdmodel'",
            "paddle2onnx.export(graph, 'case.pdiparams', save_file='case.onnx')",
            "model = onnx.load('case.onnx')",
            targets.onnxruntime_repro(arrays),
        ])


ADAPTER = Paddle2Onnx()
