"""tensorflow -> tf2onnx -> onnxruntime, and tensorflow -> openvino.convert_model -> OpenVINO CPU.

The source is the tensorflow adapter's call in graph mode (its ``<api>/function`` variants: adapters/tensorflow.py,
adapters/tensorflow_calls.py): ``Spec.fn``, a function of tensors, wrapped in ``tf.function`` with an
``input_signature`` of one ``tf.TensorSpec(shape, dtype, name=...)`` per argument, as a user exporting a graph
writes it. Both converters read the traced graph, never execute it, so the case's values (out-of-range indices
included) reach only the runtimes. Each converter runs with its own defaults: tf2onnx picks its default opset
(15 in 1.17.0), openvino.convert_model takes the tf.function as it is.

tf2onnx does not raise on a TensorFlow op it has no mapping for (``TensorScatterAdd``): it logs ``Unsupported
ops`` and returns a model that still holds the TensorFlow op, which no ONNX runtime can load. That is the
converter failing, and is recorded as such (stage ``convert``), with the op's name.

The converted models keep the argument names (``data``, ``indices``, ``updates``); they are fed by those names,
since ``tf.scatter_nd`` takes no ``data``. openvino.convert_model may give the model more outputs than the
function has (tnp.take_along_axis: the condition of its assertion comes first): the path reads the output that is
the function's own result, found by its tensor name, and records the outputs (``outputs`` in the details).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from gather_scatter_conformance.adapters.base import CaseData
from gather_scatter_conformance.adapters.convert import targets
from gather_scatter_conformance.adapters.convert.path import ConversionPath, Converted

MODE = "function"  # the source mode the paths convert: a tf.function graph


def _spec(case: CaseData, variant: str) -> Any:
    """The tensorflow adapter's call of ``case`` (gather_scatter_conformance.adapters.tensorflow_calls.Spec)."""
    from gather_scatter_conformance.adapters.tensorflow import build_spec, split_variant, tf_module

    api, _ = split_variant(variant)
    return build_spec(tf_module(), case, api)


def signature(case: CaseData, args: tuple[str, ...]) -> list[Any]:
    """One tf.TensorSpec per argument of the call: the case's shape and dtype, named after the argument."""
    from gather_scatter_conformance.adapters.tensorflow import tf_module

    tf = tf_module()
    out = []
    for name in args:
        arr = case.inputs[name]
        dtype = tf.string if arr.dtype == object else tf.as_dtype(arr.dtype)
        out.append(tf.TensorSpec(arr.shape, dtype, name=name))
    return out


def graph_function(case: CaseData, variant: str) -> tuple[Any, list[Any], tuple[str, ...]]:
    """(the call as a tf.function with an input signature, that signature, the argument names)."""
    from gather_scatter_conformance.adapters.tensorflow import tf_module

    spec = _spec(case, variant)
    sig = signature(case, spec.args)
    return tf_module().function(spec.fn, input_signature=sig), sig, spec.args


def unmapped_ops(model: Any) -> list[str]:
    """The nodes of an ONNX model that are no operator of their domain's schema (what tf2onnx leaves in place
    of a TensorFlow op it cannot convert)."""
    import onnx

    return [n.op_type for n in model.graph.node
            if not onnx.defs.has(n.op_type, n.domain if n.domain != "ai.onnx" else "")]


def function_output(model: Any, fn: Any) -> int:
    """The index of the openvino.Model output that is the tf.function's own result: the model may have more
    (openvino.convert_model keeps, e.g., the condition of an assertion as an output, and puts it first)."""
    if len(model.outputs) == 1:  # the only one (its tensor names need not include the function's)
        return 0
    name = fn.get_concrete_function().outputs[0].name
    for i, out in enumerate(model.outputs):
        if name in out.get_names():
            return i
    raise LookupError(f"no output of the converted model is the function's result {name!r}")


# The statements that rebuild the signature and the tf.function after the source's own statements (which bind the
# inputs as tf.constant and define ``f``, the call).
def _signature_source(args: tuple[str, ...]) -> list[str]:
    specs = ", ".join(f"tf.TensorSpec({n}.shape, {n}.dtype, name={n!r})" for n in args)
    return [f"signature = [{specs}]",
            "graph_fn = tf.function(f, input_signature=signature)"]


class TfOnnx(targets.OnnxArtifact, ConversionPath):
    """tf2onnx.convert.from_function on the tf.function, run by onnxruntime on CPU."""

    source = "tensorflow"
    source_mode = MODE
    converter = "tf2onnx.convert.from_function"
    converter_id = "tf2onnx"
    converter_requires = ("tf2onnx",)
    target = "onnxruntime"

    def converter_version(self) -> str:
        import tf2onnx

        return tf2onnx.__version__

    def convert(self, case: CaseData, variant: str, example: dict[str, np.ndarray]) -> Converted:
        from gather_scatter_conformance.adapters.tensorflow import tf_module

        tf_module()  # TensorFlow first, quietly and with the adapter's thread pools
        import tf2onnx

        fn, sig, args = graph_function(case, variant)
        model, _ = tf2onnx.convert.from_function(fn, input_signature=sig)
        missing = unmapped_ops(model)
        if missing:
            raise NotImplementedError(f"tf2onnx has no ONNX mapping for the TensorFlow op(s) {', '.join(missing)}: "
                                      "it logs 'Unsupported ops' and leaves them in the graph, which no ONNX "
                                      "runtime loads")
        return Converted(model, targets.onnx_ops(model), {"opset": targets.onnx_opset(model), "inputs": list(args)})


    def runner(self, converted: Converted) -> Any:
        return targets.onnxruntime_session(converted.artifact), converted.details["inputs"]

    def execute(self, runner: Any, inputs: dict[str, np.ndarray]) -> np.ndarray:
        session, args = runner
        return targets.run_onnxruntime(session, {n: inputs[n] for n in args})

    def repro(self, case: CaseData, variant: str) -> str:
        args = _spec(case, variant).args
        return "\n".join([*_signature_source(args), "import tf2onnx",
                          "model, _ = tf2onnx.convert.from_function(graph_fn, input_signature=signature)",
                          targets.onnxruntime_repro([f"{n}.numpy()" for n in args])])


class TfOpenVino(ConversionPath):
    """openvino.convert_model on the tf.function, compiled for OpenVINO's CPU."""

    source = "tensorflow"
    source_mode = MODE
    converter = "openvino.convert_model"
    converter_id = "ov-convert"
    target = "openvino"

    def converter_version(self) -> str:
        from gather_scatter_conformance import adapters

        return adapters.get("openvino").version()

    def convert(self, case: CaseData, variant: str, example: dict[str, np.ndarray]) -> Converted:
        import openvino as ov

        fn, _, args = graph_function(case, variant)
        model = ov.convert_model(fn)
        details: dict[str, Any] = {"inputs": list(args), "output": function_output(model, fn)}
        if len(model.outputs) > 1:  # e.g. the condition of an assertion tnp.take_along_axis makes, kept as output 0
            details["outputs"] = [sorted(o.get_names()) for o in model.outputs]
        return Converted(model, targets.openvino_ops(model), details)

    def dump(self, artifact: Any) -> bytes:
        return targets.openvino_dump(artifact)

    def load(self, blob: bytes) -> Any:
        return targets.openvino_load(blob)

    def runner(self, converted: Converted) -> Any:
        details = converted.details
        return targets.openvino_compiled(converted.artifact), details["inputs"], details["output"]

    def execute(self, runner: Any, inputs: dict[str, np.ndarray]) -> np.ndarray:
        compiled, args, output = runner
        return targets.run_openvino(compiled, {n: inputs[n] for n in args}, output)

    def repro(self, case: CaseData, variant: str) -> str:
        args = _spec(case, variant).args
        return "\n".join([*_signature_source(args), "import openvino as ov",
                          "model = ov.convert_model(graph_fn)",
                          "name = graph_fn.get_concrete_function().outputs[0].name  # the function's own output",
                          "output = next((i for i, o in enumerate(model.outputs) if name in o.get_names()), 0)",
                          targets.openvino_repro([f"{n}.numpy()" for n in args], onnx_model=False,
                                                 output="output")])


TF2ONNX_ONNXRUNTIME = TfOnnx()
CONVERT_MODEL = TfOpenVino()
