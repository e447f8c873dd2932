"""tensorflow -> the TFLite converter (builtins only) -> LiteRT.

The source is the tensorflow adapter's ``<api>/function`` call, as tf2onnx's path takes it
(adapters/convert/tf_onnx.py: a tf.function with an input signature); the converter is the LiteRT adapter's
(:func:`adapters.litert_model.convert`: ``TFLiteConverter.from_concrete_functions`` with builtins only, no Flex,
no optimizations), and LiteRT's ``Interpreter`` runs the flatbuffer. A graph that needs Flex (TensorFlow kernels)
is a failed conversion here: a builtins-only deployment cannot run it.
"""

from __future__ import annotations

from typing import Any, ClassVar

import numpy as np

from gather_scatter_conformance.adapters import litert_model
from gather_scatter_conformance.adapters.base import CaseData
from gather_scatter_conformance.adapters.convert import targets
from gather_scatter_conformance.adapters.convert.path import ConversionPath, Converted
from gather_scatter_conformance.adapters.convert.tf_onnx import (
    MODE,
    _signature_source,
    _spec,
    graph_function,
)


class TfTflite(ConversionPath):
    source = "tensorflow"
    source_mode = MODE
    converter = "tf.lite.TFLiteConverter.from_concrete_functions"
    converter_id = "tflite"
    target = "litert"
    options: ClassVar[dict[str, Any]] = {"supported_ops": "TFLITE_BUILTINS"}

    def converter_version(self) -> str:
        from gather_scatter_conformance.adapters.tensorflow import tf_module

        return str(tf_module().__version__)

    def convert(self, case: CaseData, variant: str, example: dict[str, np.ndarray]) -> Converted:
        fn, _, args = graph_function(case, variant)
        model = litert_model.convert(fn.get_concrete_function())
        return Converted(model, litert_model.ops(model), {"inputs": list(args)})

    def dump(self, artifact: Any) -> bytes:
        return artifact

    def load(self, blob: bytes) -> Any:
        return blob

    def runner(self, converted: Converted) -> Any:
        return litert_model.interpreter(converted.artifact), converted.details["inputs"]

    def execute(self, runner: Any, inputs: dict[str, np.ndarray]) -> np.ndarray:
        interpreter, args = runner
        return targets.run_litert(interpreter, {n: inputs[n] for n in args})

    def repro(self, case: CaseData, variant: str) -> str:
        args = _spec(case, variant).args
        return "\n".join([
            *_signature_source(args),
            "holder = tf.Module()",
            "holder.f = graph_fn.get_concrete_function()",
            "converter = tf.lite.TFLiteConverter.from_concrete_functions([holder.f], holder)",
            "converter.target_spec.supported_ops = [tf.lite.OpsSet.TFLITE_BUILTINS]",
            "flatbuffer = converter.convert()",
            *(f"{n} = {n}.numpy()" for n in args),
            targets.litert_repro("flatbuffer", list(args)),
        ])


ADAPTER = TfTflite()
