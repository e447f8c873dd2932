"""TF -> TFLite -> LiteRT in four functions: convert a concrete function, list a model's ops, run it, the version.

This is the shared, framework-level half of the LiteRT adapter (adapters/litert.py), written so that converter paths
(TF -> TFLite -> LiteRT, ONNX -> onnx2tf -> LiteRT) can reuse it: :func:`convert` turns a ``tf.function``'s concrete
function into a builtins-only TFLite flatbuffer, :func:`ops` says which builtins that flatbuffer holds in execution
order, :func:`run` runs it with ``ai_edge_litert.interpreter.Interpreter`` as a user would, and :func:`version` is
ai-edge-litert's version. Importing this module imports no framework; each function imports what it needs.
"""

from __future__ import annotations

import importlib.metadata
from collections.abc import Sequence
from typing import Any

import numpy as np

DISTRIBUTION = "ai-edge-litert"
# What the TFLite converter says when a graph needs TensorFlow kernels (Flex / TF Select) or a type TFLite lacks: a
# builtins-only conversion cannot express the graph at all (adapters/litert.py turns it into Unsupported).
_NOT_BUILTIN_MARKERS = (
    "neither a custom op nor a flex op",
    "ERROR_NEEDS_FLEX_OPS",
    "TF Select ops",
    "Unsupported TensorFlow type",
)


def version() -> str:
    """The installed ai-edge-litert version (read from its distribution metadata: imports nothing)."""
    return importlib.metadata.version(DISTRIBUTION)


def convert(concrete_function: Any) -> bytes:
    """The builtins-only TFLite flatbuffer of ``concrete_function`` (a ``tf.function(...).get_concrete_function()``).

    The converter is ``tf.lite.TFLiteConverter.from_concrete_functions`` with ``supported_ops = [TFLITE_BUILTINS]``
    and nothing else set: no Flex (SELECT_TF_OPS), no optimizations, no quantization. The function is handed over
    with a ``tf.Module`` holding it as ``trackable_obj`` (without one TensorFlow takes its deprecated conversion
    path); the model's inputs are then named ``serving_default_<argument>:0``. Raises the converter's own exception
    when it cannot convert (``ConverterError`` when an op or type needs Flex: see :func:`needs_flex`).
    """
    import tensorflow as tf

    holder = tf.Module()
    holder.f = concrete_function
    converter = tf.lite.TFLiteConverter.from_concrete_functions([concrete_function], holder)
    converter.target_spec.supported_ops = [tf.lite.OpsSet.TFLITE_BUILTINS]
    return bytes(converter.convert())


def needs_flex(exc: BaseException) -> str | None:
    """One line saying why the converter refused a builtins-only model (an op or a type that only Flex/TensorFlow
    has), or None when ``exc`` is some other failure."""
    text = str(exc)
    if not any(marker in text for marker in _NOT_BUILTIN_MARKERS):
        return None
    for line in text.splitlines():  # the converter's own summary line where it has one
        if line.startswith("TF Select ops:"):
            return line.strip()
    for line in text.splitlines():
        if "Unsupported TensorFlow type" in line:
            return line.strip()
    for line in text.splitlines():
        if "neither a custom op nor a flex op" in line:
            op = line.split("error:", 1)[-1].strip()
            return f"{op} (needs TensorFlow kernels; no TFLite builtin for these types)"
    return "the graph needs TensorFlow (Flex) ops"


def interpreter(model: bytes, delegates: bool = True) -> Any:
    """An ``ai_edge_litert.interpreter.Interpreter`` of ``model``, tensors allocated.

    ``delegates=True`` is what a user gets from ``Interpreter(model_content=model)``: the builtin ops with the default
    delegates (XNNPACK on CPU takes the float arithmetic it supports; gathers and scatters stay builtin kernels).
    ``delegates=False`` resolves builtins only (``BUILTIN_WITHOUT_DEFAULT_DELEGATES``).
    """
    from ai_edge_litert.interpreter import Interpreter, OpResolverType

    if delegates:
        interp = Interpreter(model_content=model)
    else:
        interp = Interpreter(model_content=model,
                             experimental_op_resolver_type=OpResolverType.BUILTIN_WITHOUT_DEFAULT_DELEGATES)
    interp.allocate_tensors()
    return interp


def ops(model: bytes) -> list[str]:
    """The builtin operator names of ``model`` in execution order (``["RESHAPE", "GATHER"]``), as the interpreter
    lists its nodes before any delegate replaces some of them (so no ``DELEGATE`` entries)."""
    from ai_edge_litert.interpreter import Interpreter, OpResolverType

    interp = Interpreter(model_content=model,
                         experimental_op_resolver_type=OpResolverType.BUILTIN_WITHOUT_DEFAULT_DELEGATES)
    return [str(node["op_name"]) for node in interp._get_ops_details()]


def invoke(interp: Any, inputs: Sequence[np.ndarray]) -> np.ndarray:
    """Set ``inputs`` (in the model's input order), invoke, and return a copy of the first output."""
    details = interp.get_input_details()
    if len(details) != len(inputs):
        raise ValueError(f"the model takes {len(details)} inputs, {len(inputs)} given")
    for detail, arr in zip(details, inputs, strict=True):
        interp.set_tensor(detail["index"], arr)
    interp.invoke()
    return np.asarray(interp.get_tensor(interp.get_output_details()[0]["index"]))


def input_names(interp: Any) -> list[str]:
    """The model's input names in its input order, as the concrete function's argument names (the converter's
    ``serving_default_`` prefix and ``:0`` suffix taken off)."""
    return [_argument(str(d["name"])) for d in interp.get_input_details()]


def _argument(name: str) -> str:
    name = name.removeprefix("serving_default_")
    return name[:-2] if name.endswith(":0") else name


def run(model: bytes, inputs: Sequence[np.ndarray]) -> np.ndarray:
    """Run ``model`` once on ``inputs`` (in the model's input order, which :func:`input_names` gives: models from
    :func:`convert` order them by argument name, not by position) with a fresh default ``Interpreter`` and return
    its first output as a NumPy array (tf.string outputs come back as arrays of bytes)."""
    return invoke(interpreter(model), inputs)
