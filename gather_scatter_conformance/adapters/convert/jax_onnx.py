"""jax -> jax2onnx -> onnxruntime.

The source is the jax adapter's eager call (its variants without ``/jit``: adapters/jax.py), the same pure function
of arrays with the attributes bound, given to ``jax2onnx.to_onnx(fn, [jax.ShapeDtypeStruct(...) per input])``.
jax2onnx traces abstractly (shapes and dtypes only) and writes its default opset (23 in 0.17.1).

One option depends on the case: ``enable_double_precision``. The jax adapter runs with ``jax_enable_x64`` (else
int64/float64 inputs silently become 32-bit); jax2onnx by default exports every float as float32 and every int64
as int32, and with ``enable_double_precision=True`` every float as float64 (float32 inputs included). So, as a user
with 64-bit data would, the path sets it exactly when the data is 64-bit (float64, int64, uint64); the value is
recorded in the conversion's details. Where the converted model then declares an input dtype other than the
case's (int64 indices exported as int32), the input is cast to the declared dtype before the run, as a user must
to feed the model at all; the casts are recorded (``input_casts``) and are part of what the path does.

A JAX primitive jax2onnx has no plugin for raises during ``to_onnx``: that is the converter failing (stage
``convert``), recorded with its message.
"""

from __future__ import annotations

from typing import Any, ClassVar

import numpy as np

from gather_scatter_conformance.adapters.base import Call, CaseData, Unsupported
from gather_scatter_conformance.adapters.convert import targets
from gather_scatter_conformance.adapters.convert.path import ConversionPath, Converted

_WIDE = ("float64", "int64", "uint64", "complex128")


def double_precision(case: CaseData) -> bool:
    """jax2onnx's ``enable_double_precision`` for the case: True exactly when ``data`` is 64-bit."""
    return str(case.inputs["data"].dtype) in _WIDE


def _function(case: CaseData, variant: str) -> tuple[Any, str]:
    """(the jax adapter's pure function of the inputs for ``case`` in ``variant``, its expression)."""
    from gather_scatter_conformance.adapters.jax import ADAPTER

    _, fn, api = ADAPTER._translate(case, variant)
    return fn, api


def _onnx_dtype(elem_type: int) -> np.dtype:
    from onnx import helper

    return np.dtype(helper.tensor_dtype_to_np_dtype(elem_type))



def refuse_take_raise(case: CaseData) -> None:
    """Raise Unsupported for a Take with mode='raise': the jax adapter finds this when jnp.take runs (it raises
    NotImplementedError whatever the input), so a path from jax has nothing to convert."""
    if case.op == "Take" and case.attrs.get("mode") == "raise":
        raise Unsupported("jnp.take has no working mode='raise' (NotImplementedError: The 'raise' mode to "
                          "jnp.take is not supported)")

class JaxOnnx(targets.OnnxArtifact, ConversionPath):
    """jax2onnx.to_onnx on the jax call, run by onnxruntime on CPU."""

    source = "jax"
    converter = "jax2onnx.to_onnx"
    converter_id = "jax2onnx"
    converter_requires = ("jax2onnx",)
    target = "onnxruntime"
    options: ClassVar[dict[str, Any]] = {"enable_double_precision": "True where data is 64-bit"}

    def prepare(self, case: CaseData, variant: str) -> Call:
        refuse_take_raise(case)
        return super().prepare(case, variant)

    def converter_version(self) -> str:
        import importlib.metadata

        return importlib.metadata.version("jax2onnx")  # the package has no __version__

    def convert(self, case: CaseData, variant: str, example: dict[str, np.ndarray]) -> Converted:
        from gather_scatter_conformance.adapters.jax import _jax

        jax, _ = _jax()  # x64 on, as the source runs
        import jax2onnx

        fn, _ = _function(case, variant)
        shapes = [jax.ShapeDtypeStruct(a.shape, a.dtype) for a in example.values()]
        double = double_precision(case)
        model = jax2onnx.to_onnx(fn, shapes, enable_double_precision=double)
        declared = [_onnx_dtype(i.type.tensor_type.elem_type) for i in model.graph.input]
        casts = {name: f"{arr.dtype} -> {dtype}" for (name, arr), dtype in zip(example.items(), declared, strict=False)
                 if arr.dtype != dtype}
        details = {"opset": targets.onnx_opset(model), "enable_double_precision": double,
                   "inputs": [str(d) for d in declared]}
        if casts:
            details["input_casts"] = casts
        return Converted(model, targets.onnx_ops(model), details)


    def runner(self, converted: Converted) -> Any:
        return targets.onnxruntime_session(converted.artifact), [np.dtype(d) for d in converted.details["inputs"]]

    def execute(self, runner: Any, inputs: dict[str, np.ndarray]) -> np.ndarray:
        session, declared = runner
        # The model's declared dtypes: jax2onnx may narrow int64 to int32 (recorded as input_casts).
        fed = {n: a if a.dtype == d else a.astype(d) for (n, a), d in zip(inputs.items(), declared, strict=False)}
        return targets.run_onnxruntime(session, fed)

    def repro(self, case: CaseData, variant: str) -> str:
        _, api = _function(case, variant)
        names = list(case.inputs)
        args = ", ".join(names)
        shapes = ", ".join(f"jax.ShapeDtypeStruct({n}.shape, {n}.dtype)" for n in names)
        return "\n".join([
            "import jax2onnx",
            "from onnx import helper",
            f"def fn({args}):",
            f"    return {api}",
            f"model = jax2onnx.to_onnx(fn, [{shapes}], enable_double_precision={double_precision(case)})",
            "# feed the dtypes the model declares (jax2onnx may export int64 inputs as int32)",
            "declared = [helper.tensor_dtype_to_np_dtype(i.type.tensor_type.elem_type) for i in model.graph.input]",
            f"arrays = [np.asarray(a).astype(d) for a, d in zip([{args}], declared)]",
            targets.onnxruntime_repro(["*arrays"]),
        ])


JAX2ONNX_ONNXRUNTIME = JaxOnnx()
