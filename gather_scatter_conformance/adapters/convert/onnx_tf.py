"""ONNX -> onnx2tf -> TensorFlow (the SavedModel it writes) and -> LiteRT (the float32 .tflite it writes).

The source is the case's one-node ONNX model (adapters/onnx_graph.py, the newest opset), run natively by ONNX's
own reference implementation (``onnx.reference.ReferenceEvaluator``, the onnx-reference adapter). onnx2tf turns
NCHW-style inputs of rank 3 and more into NHWC; the harness asks it to keep every input's layout
(``keep_ncw_or_nchw_or_ncdhw_input_names``), so the converted model takes the case's arrays as they are. One
conversion writes both targets' models, so the two paths share it (and the cache entry).
"""

from __future__ import annotations

import io
import os
import tarfile
import tempfile
from typing import Any, ClassVar

import numpy as np

from gather_scatter_conformance.adapters import litert_model, onnx_graph
from gather_scatter_conformance.adapters.base import CaseData
from gather_scatter_conformance.adapters.convert import targets
from gather_scatter_conformance.adapters.convert.path import ConversionPath, Converted

_TF_PLUMBING = {"Placeholder", "Identity", "Const", "NoOp", "StatefulPartitionedCall", "PartitionedCall"}


def _tar(folder: str) -> bytes:
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w") as tar:
        tar.add(folder, arcname=".")
    return buffer.getvalue()


def _load_saved_model(blob: bytes) -> Any:
    """The serving signature of the SavedModel in ``blob`` (a tar), loaded from a folder removed afterwards: loading
    restores its variables into memory, so nothing of it stays on disk."""
    import tensorflow as tf

    with tempfile.TemporaryDirectory(prefix="gsc-onnx2tf-") as folder:
        with tarfile.open(fileobj=io.BytesIO(blob)) as tar:
            tar.extractall(folder, filter="data")
        return tf.saved_model.load(folder).signatures["serving_default"]


class Onnx2Tf(ConversionPath):
    """onnx2tf.convert on the case's ONNX model; the target runs the SavedModel (tensorflow) or the tflite (litert)."""

    source = "onnx-reference"
    source_id = "onnx"
    converter = "onnx2tf.convert"
    converter_id = "onnx2tf"
    converter_requires = ("onnx2tf", "tf_keras")
    options: ClassVar[dict[str, Any]] = {"keep_ncw_or_nchw_or_ncdhw_input_names": "<inputs of rank 3-5>",
                                         "non_verbose": True}

    def __init__(self, target: str) -> None:
        super().__init__()
        self.target = target

    def converter_version(self) -> str:
        import onnx2tf

        return str(onnx2tf.__version__)

    def convert(self, case: CaseData, variant: str, example: dict[str, np.ndarray]) -> Converted:
        import onnx
        import onnx2tf

        model, _, _ = onnx_graph.build(case)
        with tempfile.TemporaryDirectory(prefix="gsc-onnx2tf-") as work:
            path = os.path.join(work, "case.onnx")
            onnx.save(model, path)
            out = os.path.join(work, "out")
            onnx2tf.convert(input_onnx_file_path=path, output_folder_path=out, non_verbose=True,
                            keep_ncw_or_nchw_or_ncdhw_input_names=_kept(case) or None)
            with open(os.path.join(out, "case_float32.tflite"), "rb") as fh:
                tflite = fh.read()
            for name in os.listdir(out):
                if name.endswith(".tflite"):
                    os.remove(os.path.join(out, name))
            saved = _tar(out)
        artifact = {"tflite": tflite, "saved_model": saved}
        details = {"opset": targets.onnx_opset(model), "tflite_ops": litert_model.ops(tflite),
                   "tf_ops": _tf_ops(saved)}
        return Converted(artifact, details["tflite_ops"], details)

    def ops_of(self, converted: Converted) -> list[str]:
        return converted.details["tf_ops" if self.target == "tensorflow" else "tflite_ops"]

    def dump(self, artifact: Any) -> bytes:
        tflite, saved = artifact["tflite"], artifact["saved_model"]
        return len(tflite).to_bytes(8, "little") + tflite + saved

    def load(self, blob: bytes) -> Any:
        n = int.from_bytes(blob[:8], "little")
        return {"tflite": blob[8:8 + n], "saved_model": blob[8 + n:]}

    def runner(self, converted: Converted) -> Any:
        if self.target == "litert":
            return litert_model.interpreter(converted.artifact["tflite"])
        return _load_saved_model(converted.artifact["saved_model"])

    def execute(self, runner: Any, inputs: dict[str, np.ndarray]) -> np.ndarray:
        if self.target == "litert":
            return targets.run_litert(runner, inputs)
        import tensorflow as tf

        named = onnx_graph.named_as(inputs, set(runner.structured_input_signature[1]))
        out = runner(**{n: tf.constant(v) for n, v in named.items()})
        return targets.text_as_str(np.asarray(next(iter(out.values()))))

    def repro(self, case: CaseData, variant: str) -> str:
        names = list(case.inputs)
        onnx_names = list(zip(names, onnx_graph.input_names(case), strict=True))  # the signature's argument names
        model, _, _ = onnx_graph.build(case)
        convert = ["import onnx", "import onnx2tf", "onnx.save(model, 'case.onnx')",
                   f"onnx2tf.convert(input_onnx_file_path='case.onnx', output_folder_path='out', non_verbose=True, "
                   f"keep_ncw_or_nchw_or_ncdhw_input_names={_kept(case) or None!r})"]
        if self.target == "litert":
            run = [targets.litert_repro("open('out/case_float32.tflite', 'rb').read()", names)]
        else:
            kwargs = ", ".join(f"{o}=tf.constant({n})" for n, o in onnx_names)
            run = ["import tensorflow as tf",
                   "signature = tf.saved_model.load('out').signatures['serving_default']",
                   f"result = next(iter(signature({kwargs}).values())).numpy()", targets.TEXT_AS_STR]
        return "\n".join([onnx_graph.model_source(model), *convert, *run])


def _kept(case: CaseData) -> list[str]:
    """The inputs whose layout onnx2tf would transpose (rank 3 to 5; it accepts the option for those only), by the
    model's (ONNX's) input names."""
    return [o for o, v in zip(onnx_graph.input_names(case), case.inputs.values(), strict=True) if 3 <= v.ndim <= 5]


def _tf_ops(saved: bytes) -> list[str]:
    """The TensorFlow ops of a SavedModel's serving signature (inner function graphs included), plumbing left out."""
    signature = _load_saved_model(saved)
    graph_def = signature.graph.as_graph_def()
    ops = [n.op for f in graph_def.library.function for n in f.node_def] + [n.op for n in graph_def.node]
    return [op for op in ops if op not in _TF_PLUMBING]


TENSORFLOW = Onnx2Tf("tensorflow")
LITERT = Onnx2Tf("litert")
