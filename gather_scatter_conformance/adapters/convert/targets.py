"""The runtimes converted models run on, shared by every path that targets them: load, run, and the same as
repro statements. Feeds go by position: a converted model's inputs keep the source function's order (data,
indices, updates), whatever names the converter gave them."""

from __future__ import annotations

import tempfile
from pathlib import Path
from typing import Any

import numpy as np

from gather_scatter_conformance.adapters import onnx_graph

# ONNX attributes that decide what a gather/scatter node does: shown in a converted graph's op list.
_SHOWN = ("axis", "batch_dims", "reduction", "mode")
_DEFAULT_REDUCTION = ("ScatterND", "ScatterElements")  # reduction=none is implicit: shown, so it reads plainly


def onnx_ops(model: Any) -> list[str]:
    """A converted ONNX model's nodes in graph order, with the attributes that matter here:
    ``["Unsqueeze", "ScatterND(reduction=add)"]``; nodes of sub-graphs and functions are not expanded."""
    from onnx import helper

    out = []
    for node in model.graph.node:
        attrs = {a.name: helper.get_attribute_value(a) for a in node.attribute if a.name in _SHOWN}
        if node.op_type in _DEFAULT_REDUCTION:
            attrs.setdefault("reduction", b"none")
        text = ", ".join(f"{k}={v.decode() if isinstance(v, bytes) else v}" for k, v in attrs.items())
        out.append(f"{node.op_type}({text})" if text else node.op_type)
    return out


def onnx_opset(model: Any) -> int | None:
    """The default-domain opset a model imports."""
    return next((o.version for o in model.opset_import if o.domain in ("", "ai.onnx")), None)


def runnable_ir(model: Any) -> Any:
    """``model`` with an IR version onnxruntime and OpenVINO accept (onnx 1.23 writes 14; they take 10)."""
    model.ir_version = min(model.ir_version, onnx_graph.ir_version())
    return model


class OnnxArtifact:
    """For a path whose converter makes an ONNX ModelProto: its bytes are what the disk cache keeps."""

    def dump(self, artifact: Any) -> bytes:
        return artifact.SerializeToString()

    def load(self, blob: bytes) -> Any:
        import onnx

        return onnx.load_from_string(blob)


def feeds(names: list[str], inputs: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
    """The model's input names -> the case's arrays, by position."""
    arrays = list(inputs.values())
    if len(names) != len(arrays):
        raise ValueError(f"the converted model takes {len(names)} inputs ({', '.join(names)}), the case has "
                         f"{len(arrays)} ({', '.join(inputs)})")
    return dict(zip(names, arrays, strict=True))


# --- onnxruntime -------------------------------------------------------------------------------------------------

def onnxruntime_session(model: Any) -> Any:
    """A CPU InferenceSession of an ONNX ModelProto, with the harness's thread setting (adapters.onnxruntime)."""
    from gather_scatter_conformance.adapters import onnxruntime as ort_adapter

    return ort_adapter.new_session(runnable_ir(model), ["CPUExecutionProvider"], ort_adapter.threads())


def run_onnxruntime(session: Any, inputs: dict[str, np.ndarray]) -> np.ndarray:
    """The session's first output on the case's inputs."""
    return session.run(None, feeds([i.name for i in session.get_inputs()], inputs))[0]


def onnxruntime_repro(names: list[str]) -> str:
    """Statements: ``model`` (a ModelProto) run by onnxruntime on the arrays ``names``; assign ``result``."""
    return "\n".join([
        "import onnxruntime",
        "model.ir_version = min(model.ir_version, 10)  # onnxruntime 1.31 reads IR <= 10",
        "session = onnxruntime.InferenceSession(model.SerializeToString(), providers=['CPUExecutionProvider'])",
        f"result = session.run(None, dict(zip([i.name for i in session.get_inputs()], [{', '.join(names)}])))[0]",
    ])


# --- OpenVINO ----------------------------------------------------------------------------------------------------

def openvino_compiled(model: Any) -> Any:
    """An OpenVINO CPU compiled model of an ONNX ModelProto (through the ONNX frontend) or an ``openvino.Model``."""
    from gather_scatter_conformance.adapters import openvino as ov_adapter

    core = ov_adapter.ADAPTER.core
    if hasattr(model, "SerializeToString"):
        model = core.read_model(runnable_ir(model).SerializeToString())
    return core.compile_model(model, "CPU")


def run_openvino(compiled: Any, inputs: dict[str, np.ndarray], output: int = 0) -> np.ndarray:
    """The compiled model's output ``output`` (the first by default) on the case's inputs (in order)."""
    from gather_scatter_conformance.adapters import openvino as ov_adapter

    request = compiled.create_infer_request()
    request.infer([ov_adapter.to_tensor(a) for a in inputs.values()])
    return ov_adapter.from_tensor(request.get_output_tensor(output))


def openvino_ops(model: Any) -> list[str]:
    """An openvino.Model's operations in topological order, without Parameter/Result/Constant:
    ``["ScatterNDUpdate-15(reduction=sum)"]`` (type, opset version where OpenVINO says it, key attributes)."""
    out = []
    for node in model.get_ordered_ops():
        kind = node.get_type_name()
        if kind in ("Parameter", "Result", "Constant"):
            continue
        info = node.get_type_info()
        version = str(getattr(info, "version_id", "") or "").removeprefix("opset")
        try:
            attrs = node.get_attributes()
        except Exception:
            attrs = {}
        shown = {k: v for k, v in attrs.items() if k in ("axis", "batch_dims", "reduction", "mode")}
        name = f"{kind}-{version}" if version.isdigit() else kind
        out.append(f"{name}({', '.join(f'{k}={v}' for k, v in shown.items())})" if shown else name)
    return out


def openvino_dump(model: Any) -> bytes:
    """An openvino.Model as bytes (its IR: the XML's length as 8 little-endian bytes, the XML, the weights), for
    the conversion cache; :func:`openvino_load` reads it back."""
    import openvino as ov

    with tempfile.TemporaryDirectory() as tmp:
        xml = Path(tmp) / "model.xml"
        ov.save_model(model, xml, compress_to_fp16=False)  # weights as converted: no fp16 compression
        text, weights = xml.read_bytes(), xml.with_suffix(".bin").read_bytes()
    return len(text).to_bytes(8, "little") + text + weights


def openvino_load(blob: bytes) -> Any:
    """The openvino.Model that :func:`openvino_dump` wrote."""
    from gather_scatter_conformance.adapters import openvino as ov_adapter

    size = int.from_bytes(blob[:8], "little")
    with tempfile.TemporaryDirectory() as tmp:
        xml = Path(tmp) / "model.xml"
        xml.write_bytes(blob[8:8 + size])
        xml.with_suffix(".bin").write_bytes(blob[8 + size:])
        return ov_adapter.ADAPTER.core.read_model(str(xml))


def openvino_repro(names: list[str], onnx_model: bool = True, output: str = "0") -> str:
    """Statements: ``model`` (a ModelProto, or an openvino.Model) compiled for OpenVINO's CPU and run on the
    arrays ``names``; assign its output ``output`` (an expression; the first by default) to ``result``."""
    load = ["model.ir_version = min(model.ir_version, 10)",
            "model = core.read_model(model.SerializeToString())"] if onnx_model else []
    return "\n".join([
        "import openvino as ov",
        "core = ov.Core()",
        *load,
        "compiled = core.compile_model(model, 'CPU')",
        f"result = compiled([{', '.join(names)}])[{output}]",
    ])


# --- LiteRT (adapters/litert_model.py) ------------------------------------------------------------------------

def run_litert(interpreter: Any, inputs: dict[str, np.ndarray]) -> np.ndarray:
    """The LiteRT interpreter's first output on the case's inputs, matched to the model's inputs by name (TFLite
    models may order their inputs by name, not by the function's argument order), else by position."""
    from gather_scatter_conformance.adapters import litert_model

    names = litert_model.input_names(interpreter)
    named = onnx_graph.named_as(inputs, set(names))  # a model converted from ONNX names its inputs as ONNX does
    if sorted(names) == sorted(named):
        arrays = [named[n] for n in names]
    else:
        arrays = list(inputs.values())
    details = interpreter.get_input_details()
    out = litert_model.invoke(interpreter, [np.asarray(a, dtype=d["dtype"]) for a, d in zip(arrays, details,
                                                                                          strict=False)])
    return text_as_str(out)


def text_as_str(out: np.ndarray) -> np.ndarray:
    """A TensorFlow or LiteRT string output (bytes) as an object array of str, as the reference engine has strings
    and the tensorflow and litert adapters give them; other outputs as they are. Without it a converted model that
    returns b'eps' read as a wrong value where the source returned 'eps'."""
    from gather_scatter_conformance.adapters.tensorflow import from_tensor

    return from_tensor(out)


# The repro's statements doing what text_as_str does to ``result``.
TEXT_AS_STR = ("result = np.vectorize(lambda b: b.decode('utf-8'), otypes=[object])(result) "
               "if result.dtype.kind in 'OS' and result.size else result")


def litert_repro(model_expr: str, names: list[str]) -> str:
    """Statements: the TFLite model ``model_expr`` (an expression giving its bytes) run by LiteRT on the arrays
    ``names`` (matched to the model's inputs by name); assign ``result``."""
    return "\n".join([
        "from ai_edge_litert.interpreter import Interpreter",
        f"interpreter = Interpreter(model_content={model_expr})",
        "interpreter.allocate_tensors()",
        f"arrays = {{{', '.join(f'{n!r}: {n}' for n in names)}}}",
        "for detail in interpreter.get_input_details():",
        "    name = detail['name'].removeprefix('serving_default_').removesuffix(':0')",
        "    interpreter.set_tensor(detail['index'], arrays[name].astype(detail['dtype']))",
        "interpreter.invoke()",
        "result = interpreter.get_tensor(interpreter.get_output_details()[0]['index'])",
        TEXT_AS_STR,
    ])
