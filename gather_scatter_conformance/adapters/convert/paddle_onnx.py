"""paddle -> paddle2onnx -> onnxruntime.

The source is the paddle adapter's dynamic-graph call (adapters/paddle_calls.py): the same function is turned into a
static graph by ``paddle.jit.to_static`` with an ``InputSpec`` per input (the case's shapes and dtypes), saved by
``paddle.jit.save``, and exported by ``paddle2onnx.export(..., opset_version=13)``. Its default, 7 with
``auto_upgrade_opset=True``, aborts the process (SIGABRT, a C++ check: "While rank of index > 1, opset must >= 11
for operator: gather") on most gathers instead of upgrading; 13 is the opset of Gather-13 and GatherND-13.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import tempfile
from typing import Any, ClassVar

import numpy as np

from gather_scatter_conformance.adapters.base import CaseData
from gather_scatter_conformance.adapters.convert import targets
from gather_scatter_conformance.adapters.convert.path import ConversionPath, Converted

OPSET = 13


# The exporter's process: paddle2onnx imports paddle (about 3 s here), so one process serves a worker's exports, each
# with its output in files of its own; it is started again after it dies (an abort is one export's failure).
_SERVER = """
import json, os, sys, traceback
reply = os.fdopen(os.dup(1), "w")
import paddle2onnx
for line in sys.stdin:
    graph, params, out, stdout, stderr, opset = json.loads(line)
    sys.stdout.flush(); sys.stderr.flush()
    for fd, path in ((1, stdout), (2, stderr)):
        target = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        os.dup2(target, fd)
        os.close(target)
    status = 0
    try:
        paddle2onnx.export(graph, params, save_file=out, opset_version=opset, verbose=False)
    except BaseException:
        traceback.print_exc()  # what the interpreter would print, had it exited on it (status 1)
        status = 1
    sys.stdout.flush(); sys.stderr.flush()
    reply.write(json.dumps(status) + "\\n")
    reply.flush()
"""
EXPORT_TIMEOUT = 300.0  # seconds for one export


class _Exporter:
    """The paddle2onnx process of this process (a forked child starts its own: the pipes are its parent's)."""

    def __init__(self) -> None:
        self.proc: subprocess.Popen[str] | None = None
        self.owner = 0

    def export(self, graph: str, params: str, out: str) -> None:
        """Export like ``paddle2onnx.export(graph, params, save_file=out, opset_version=OPSET)`` in a process of
        its own; RuntimeError saying how it failed, as the process's exit and its ERROR lines say."""
        import select

        if self.proc is None or self.proc.poll() is not None or self.owner != os.getpid():
            self.proc = subprocess.Popen([sys.executable, "-c", _SERVER], stdin=subprocess.PIPE,
                                         stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
            self.owner = os.getpid()
        proc = self.proc
        assert proc.stdin is not None and proc.stdout is not None
        logs = os.path.join(os.path.dirname(out), "export")
        request = [graph, params, out, logs + ".out", logs + ".err", OPSET]
        try:
            proc.stdin.write(json.dumps(request) + "\n")
            proc.stdin.flush()
        except OSError:
            pass  # it died on its way up: its exit status says how
        ready, _, _ = select.select([proc.stdout], [], [], EXPORT_TIMEOUT)
        if not ready:
            proc.kill()
            proc.wait()
            raise subprocess.TimeoutExpired(["paddle2onnx.export", graph], EXPORT_TIMEOUT)
        line = proc.stdout.readline()
        code = json.loads(line) if line else proc.wait()
        if code != 0:
            stdout, stderr = (_read(logs + ext) for ext in (".out", ".err"))
            how = f"killed by {signal.Signals(-code).name}" if code < 0 else f"exit {code}"
            said = [line for line in (stdout + stderr).splitlines() if "ERROR" in line or "Error" in line]
            raise RuntimeError(f"paddle2onnx.export {how}: {' '.join(said[-2:]) or (stderr or stdout)[-300:]}")


def _read(path: str) -> str:
    try:
        with open(path, errors="replace") as f:
            return f.read()
    except OSError:
        return ""


_EXPORTER = _Exporter()


def _export(graph: str, params: str, out: str) -> None:
    """``paddle2onnx.export`` in a process of its own: on an operator it cannot convert it aborts the process
    (SIGABRT after "[ERROR][Paddle2ONNX] Due to the unsupported operators, the conversion is aborted."), which is
    the converter failing on this case, not the end of the harness's worker."""
    _EXPORTER.export(graph, params, out)


class Paddle2Onnx(targets.OnnxArtifact, ConversionPath):
    source = "paddle"
    converter = "paddle2onnx.export"
    converter_id = "paddle2onnx"
    converter_requires = ("paddle2onnx",)
    target = "onnxruntime"
    options: ClassVar[dict[str, Any]] = {"opset_version": OPSET}

    def converter_version(self) -> str:
        import paddle2onnx

        return str(paddle2onnx.__version__)

    def convert(self, case: CaseData, variant: str, example: dict[str, np.ndarray]) -> Converted:
        import onnx
        import paddle

        from gather_scatter_conformance.adapters import paddle_calls

        names, fn = paddle_calls.function(paddle, case.op, variant, {n: v.shape for n, v in case.inputs.items()},
                                          case.attrs, case.omit)
        spec = [paddle.static.InputSpec(list(case.inputs[n].shape), str(case.inputs[n].dtype), n) for n in names]
        static = paddle.jit.to_static(fn, input_spec=spec, full_graph=True)
        with tempfile.TemporaryDirectory(prefix="gsc-paddle2onnx-") as work:
            prefix = os.path.join(work, "case")
            paddle.jit.save(static, prefix)
            graph = prefix + (".json" if os.path.exists(prefix + ".json") else ".pdmodel")
            out = os.path.join(work, "case.onnx")
            _export(graph, prefix + ".pdiparams", out)
            model = onnx.load(out)
        return Converted(model, targets.onnx_ops(model), {"opset": targets.onnx_opset(model)})


    def runner(self, converted: Converted) -> Any:
        return targets.onnxruntime_session(converted.artifact)

    def execute(self, runner: Any, inputs: dict[str, np.ndarray]) -> np.ndarray:
        return targets.run_onnxruntime(runner, inputs)

    def repro(self, case: CaseData, variant: str) -> str:
        from gather_scatter_conformance.adapters import paddle_calls

        names = paddle_calls.arg_names(case.op)
        expr = paddle_calls.expression(case.op, variant, {n: v.shape for n, v in case.inputs.items()}, case.attrs,
                                       case.omit)
        arrays = [f"{n}_array" for n in names]
        return "\n".join([
            "import onnx, paddle2onnx",
            # the arrays the harness exports with and passes: their own dtype, bfloat16 as ml_dtypes' (a bfloat16
            # tensor's .numpy() gives uint16)
            *(f"{n}_array = ({n}.astype('float32').numpy().astype(ml_dtypes.bfloat16) if {n}.dtype == paddle.bfloat16"
              f" else {n}.numpy()) if hasattr({n}, 'numpy') else {n}" for n in names),
            f"def fn({', '.join(names)}):",
            f"    return {expr}",
            "spec = [" + ", ".join(f"paddle.static.InputSpec(list({a}.shape), str({a}.dtype), {n!r})"
                                   for n, a in zip(names, arrays, strict=True)) + "]",
            "paddle.jit.save(paddle.jit.to_static(fn, input_spec=spec, full_graph=True), 'case')",
            "import os",
            "graph = 'case.json' if os.path.exists('case.json') else 'case.pdmodel'",
            f"paddle2onnx.export(graph, 'case.pdiparams', save_file='case.onnx', opset_version={OPSET})",
            "model = onnx.load('case.onnx')",
            targets.onnxruntime_repro(arrays),
        ])


ADAPTER = Paddle2Onnx()
