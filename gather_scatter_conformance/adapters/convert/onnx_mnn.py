"""ONNX -> MNN: MNN's converter (``mnnconvert -f ONNX``) makes a ``.mnn`` model, run by MNN's Interpreter and Session
on the CPU backend.

The source is the case's one-node ONNX model (adapters/onnx_graph.py, the newest opset) run natively by ONNX's
reference implementation (the onnx-reference adapter). The converter is called, in a child Python process (see
:func:`mnnconvert`), through the function the ``MNN.tools.mnnconvert`` console script calls,
``_tools.mnnconvert(argv)`` of the MNN wheel: that script's ``main``
then builds a usage logger (``MNN.tools.utils.log``) that ``pip install``s ``aliyun-log-python-sdk`` when it is
missing and posts the conversion's details to Alibaba's log service, neither of which a measurement should do.

The ``.mnn`` runs through ``MNN.Interpreter(path).createSession({"backend": "CPU", "numThread": 1})``: inputs are
copied in with the element type the converted model declares (MNN keeps indices as int32: int64 indices are cast,
as an MNN user must), ``runSessionWithCallBackInfo`` runs it and names each op as it executes.

Recorded: ``ops``, the op types of the converted graph (``MNN.expr.load_as_list``; ``Input`` left out), e.g.
``["Shape", ..., "BinaryOp(ADD)", "BinaryOp(MOD)", "GatherV2"]`` where the converter rewrites a Gather's indices;
``providers``, each op type the session executed -> the backend MNN reports for the session's pipeline
(``getSessionInfo(session, BACKENDS)``: MNN reports one forward type per pipeline, not per op); ``CPU_EXTENSION``
(13) is MNN's CPU backend with the host's extension instruction set, which MNN activates itself when the CPU is
asked for, so it is no fallback.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import tempfile
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from gather_scatter_conformance.adapters import onnx_graph
from gather_scatter_conformance.adapters.base import CaseData, Unsupported, delegation
from gather_scatter_conformance.adapters.convert import targets
from gather_scatter_conformance.adapters.convert.path import ConversionPath, Converted

BACKENDS_CODE = 2  # Interpreter::SessionInfoCode BACKENDS
# MNNForwardType values (MNNForwardType.h) -> names; CPU_EXTENSION is the CPU backend MNN picks itself.
FORWARD_TYPES = {0: "CPU", 1: "METAL", 2: "CUDA", 3: "OPENCL", 4: "AUTO", 5: "NN", 6: "OPENGL", 7: "VULKAN",
                 13: "CPU_EXTENSION"}
CPU_BACKENDS = ("CPU", "CPU_EXTENSION")
# MNN's ErrorCode values (ErrorCode.hpp) -> names.
ERROR_CODES = {1: "OUT_OF_MEMORY", 2: "NOT_SUPPORT", 3: "COMPUTE_SIZE_ERROR", 4: "NO_EXECUTION", 5: "INVALID_VALUE",
               10: "INPUT_DATA_ERROR", 11: "CALL_BACK_STOP", 20: "TENSOR_NOT_SUPPORT", 21: "TENSOR_NEED_DIVIDE"}
CONFIG = {"backend": "CPU", "numThread": 1}
CONVERT_ARGS = ["-f", "ONNX", "--bizCode", "gsc"]
CONVERT_TIMEOUT = 300  # seconds; a one-node model converts in under one
# The child that converts: the function the MNN.tools.mnnconvert console script calls, ``_tools.mnnconvert(argv)``;
# it returns a truthy value on success.
_CONVERT_CHILD = "import sys, _tools; sys.exit(0 if _tools.mnnconvert(sys.argv[1:]) else 1)"
# Halide type of a session tensor -> the NumPy dtype its data is copied in and out as.
_HALIDE = (("Halide_Type_Float", np.float32), ("Halide_Type_Int", np.int32), ("Halide_Type_Int64", np.int64),
           ("Halide_Type_Double", np.float64), ("Halide_Type_Uint8", np.uint8))


def mnnconvert(onnx_bytes: bytes) -> bytes:
    """The ``.mnn`` model MNN's converter makes of an ONNX model; RuntimeError when it reports failure, crashes or
    outlives CONVERT_TIMEOUT.

    The converter runs in a child Python process: its module ``_tools`` registers TensorFlow's protobuf messages
    (MNN converts TensorFlow models too), and importing it into a process that has already imported TensorFlow
    aborts that process (``descriptor_database.cc: Symbol name "tensorflow.ResourceHandleProto" conflicts``, then
    ``Check failed`` and SIGABRT; measured with MNN 3.6.1 and TensorFlow 2.20). A pytest worker that ran a
    TensorFlow test first is such a process.
    """
    with tempfile.TemporaryDirectory(prefix="gsc-mnn-") as tmp:
        src, dst = os.path.join(tmp, "model.onnx"), os.path.join(tmp, "model.mnn")
        with open(src, "wb") as fh:
            fh.write(onnx_bytes)
        argv = ["mnnconvert", *CONVERT_ARGS, "--modelFile", src, "--MNNModel", dst]
        try:
            done = subprocess.run([sys.executable, "-c", _CONVERT_CHILD, *argv], capture_output=True, text=True,
                                  errors="replace", timeout=CONVERT_TIMEOUT, check=False)
        except subprocess.TimeoutExpired as exc:
            raise RuntimeError(f"mnnconvert -f ONNX did not finish in {CONVERT_TIMEOUT} s") from exc
        # the converter's last words, with the temporary folder left out so that a record is the same in every run
        said = " ".join((done.stdout + done.stderr).replace(tmp + os.sep, "").split())[-300:]
        if done.returncode < 0:
            raise RuntimeError(f"mnnconvert -f ONNX crashed ({signal.Signals(-done.returncode).name}): {said}")
        if done.returncode or not os.path.exists(dst):  # _tools.mnnconvert returns True on some failures
            raise RuntimeError(f"mnnconvert -f ONNX reported failure (exit {done.returncode}); no .mnn written: "
                               f"{said}")
        with open(dst, "rb") as fh:
            return fh.read()


def graph_ops(mnn_bytes: bytes) -> list[str]:
    """The op types of a ``.mnn`` graph in MNN's order (``expr.load_as_list``), inputs left out."""
    import MNN.expr as F

    with tempfile.TemporaryDirectory(prefix="gsc-mnn-") as tmp:
        path = os.path.join(tmp, "model.mnn")
        with open(path, "wb") as fh:
            fh.write(mnn_bytes)
        return [str(v.op_type) for v in F.load_as_list(path) if str(v.op_type) != "Input"]


def _numpy_dtype(halide: Any) -> Any:
    """The NumPy dtype a session tensor of ``halide`` type is copied as; Unsupported for a type MNN's Python API
    names no constant for (int8: the model declares it, but Python cannot copy it in or out)."""
    import MNN

    for name, dtype in _HALIDE:
        if halide == getattr(MNN, name):
            return dtype
    raise Unsupported("the converted model has a tensor of a type MNN's Python API cannot copy (its numeric Halide "
                      "types are float, double, int32, int64 and uint8: no int8)")


@dataclass
class Session:
    """An Interpreter and its CPU session for one ``.mnn`` model."""

    interpreter: Any
    session: Any
    inputs: list[str]
    output: str
    facts: dict[str, Any] = field(default_factory=dict)

    def run(self, arrays: list[np.ndarray]) -> np.ndarray:
        """Copy ``arrays`` (by position) into the inputs, run, return the output; records ``providers``."""
        import MNN

        self.facts.clear()
        caffe = MNN.Tensor_DimensionType_Caffe
        for name, arr in zip(self.inputs, arrays, strict=True):
            tensor = self.interpreter.getSessionInput(self.session, name)
            halide = tensor.getDataType()
            host = np.ascontiguousarray(arr.astype(_numpy_dtype(halide)))
            tensor.copyFrom(MNN.Tensor(list(arr.shape), halide, host, caffe))
        executed: list[str] = []

        def after(tensors: Any, info: Any) -> bool:
            executed.append(str(info.getType()))
            return True

        code = self.interpreter.runSessionWithCallBackInfo(self.session, lambda tensors, info: True, after)
        if code:  # MNN reports a failed run by its ErrorCode only (and a line on stdout); the output is then empty
            raise RuntimeError(f"MNN runSession returned ErrorCode {code} ({ERROR_CODES.get(code, 'unknown')})")
        backend = int(self.interpreter.getSessionInfo(self.session, BACKENDS_CODE))
        name = FORWARD_TYPES.get(backend, str(backend))
        self.facts.update(delegation(dict.fromkeys(executed, name), name if name in CPU_BACKENDS else "CPU"))
        out = self.interpreter.getSessionOutput(self.session, self.output)
        shape = list(out.getShape())
        host = MNN.Tensor(shape, out.getDataType(), np.zeros(shape, _numpy_dtype(out.getDataType())), caffe)
        out.copyToHostTensor(host)
        return np.array(host.getNumpyData()).reshape(shape)


def load(mnn_bytes: bytes, inputs: list[str], output: str) -> Session:
    """An Interpreter and CPU session (one thread) for a ``.mnn`` model."""
    import MNN

    with tempfile.TemporaryDirectory(prefix="gsc-mnn-") as tmp:
        path = os.path.join(tmp, "model.mnn")
        with open(path, "wb") as fh:
            fh.write(mnn_bytes)
        interpreter = MNN.Interpreter(path)
        session = interpreter.createSession(dict(CONFIG))
    return Session(interpreter, session, inputs, output)


class OnnxMnn(ConversionPath):
    source = "onnx-reference"
    source_id = "onnx"
    converter = "mnnconvert -f ONNX"
    converter_id = "mnnconvert"
    target = "mnn"
    converter_requires = ("_tools",)

    def converter_version(self) -> str:
        from gather_scatter_conformance.adapters import mnn

        return mnn.version()  # the converter ships in the MNN wheel

    def convert(self, case: CaseData, variant: str, example: dict[str, np.ndarray]) -> Converted:
        model, names, _ = onnx_graph.build(case)
        blob = mnnconvert(model.SerializeToString())
        return Converted(blob, graph_ops(blob), {"opset": targets.onnx_opset(model), "inputs": names,
                                                 "output": model.graph.output[0].name})

    def runner(self, converted: Converted) -> Session:
        return load(converted.artifact, converted.details["inputs"], converted.details["output"])

    def execute(self, runner: Session, inputs: dict[str, np.ndarray]) -> np.ndarray:
        return runner.run(list(inputs.values()))

    def target_facts(self, runner: Session) -> dict[str, Any]:
        return dict(runner.facts)

    def dump(self, artifact: Any) -> bytes:
        return bytes(artifact)

    def load(self, blob: bytes) -> Any:
        return blob

    def repro(self, case: CaseData, variant: str) -> str:
        model, names, _ = onnx_graph.build(case)
        lines = [onnx_graph.model_source(model), "import MNN, _tools", "onnx.save(model, 'model.onnx')",
                 f"_tools.mnnconvert(['mnnconvert', *{CONVERT_ARGS!r}, '--modelFile', 'model.onnx', "
                 "'--MNNModel', 'model.mnn'])",
                 "interpreter = MNN.Interpreter('model.mnn')",
                 f"session = interpreter.createSession({CONFIG!r})",
                 "types = {MNN.Halide_Type_Float: np.float32, MNN.Halide_Type_Int: np.int32, MNN.Halide_Type_Int64: "
                 "np.int64, MNN.Halide_Type_Double: np.float64, MNN.Halide_Type_Uint8: np.uint8}",
                 f"for name, arr in zip({names!r}, [{', '.join(names)}]):",
                 "    t = interpreter.getSessionInput(session, name)",
                 "    host = np.ascontiguousarray(arr.astype(types[t.getDataType()]))",
                 "    t.copyFrom(MNN.Tensor(list(arr.shape), t.getDataType(), host, "
                 "MNN.Tensor_DimensionType_Caffe))",
                 "code = interpreter.runSession(session)",
                 "assert code == 0, f'MNN runSession returned ErrorCode {code}'",
                 f"out = interpreter.getSessionOutput(session, {model.graph.output[0].name!r})",
                 "host = MNN.Tensor(list(out.getShape()), out.getDataType(), "
                 "np.zeros(out.getShape(), types[out.getDataType()]), MNN.Tensor_DimensionType_Caffe)",
                 "out.copyToHostTensor(host)",
                 "result = np.array(host.getNumpyData()).reshape(out.getShape())"]
        return "\n".join(lines)


ADAPTER = OnnxMnn()
