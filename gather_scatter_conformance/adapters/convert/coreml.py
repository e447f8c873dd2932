"""torch -> coremltools -> Core ML: ``coremltools.convert`` of the traced torch call to an ML program (MIL).

The source is the torch adapter's eager call (adapters/torch_calls.py) in an ``nn.Module``, traced by
``torch.jit.trace`` on in-range example indices (adapters.convert.path.example_inputs) and converted with
``convert_to="mlprogram"`` for the newest deployment target coremltools 9.0 knows (iOS26): from iOS17 on, MIL's
gathers and scatters carry ``validate_indices`` and take int16 indices, and the converter writes the negative-index
fix-ups itself. Everything else is the converter's default (compute precision float16 included).

**Conversion only, here.** Converting works on Linux; running a Core ML model needs macOS (coremltools'
``libcoremlpython``, which loads Core ML.framework, exists only in its macOS wheels). On Linux the path converts,
records the program's MIL operators with the attributes that decide index behaviour (``gather(axis=0,
batch_dims=0, validate_indices=False)``, ``cast(int32->int16)`` narrowing the indices, the
``greater_equal, add, select`` fix-up that wraps negative indices) and the program's input dtypes (int64 indices
become int32), then raises :class:`~adapters.convert.path.NotRun`: the record's verdict is ``conversion-only``. On
macOS the same path loads the ``.mlpackage`` with ``coremltools.models.MLModel`` and runs it on the CPU
(``ComputeUnit.CPU_ONLY``); that branch is untested here.

coremltools dropped its ONNX frontend in 6.0; ``onnx~coremltools~coreml`` is registered to say so, as a one-line
reason (:class:`OnnxCoreml`), never a fake result.
"""

from __future__ import annotations

import importlib.metadata
import io
import os
import shutil
import sys
import tarfile
import tempfile
from typing import Any, ClassVar

import numpy as np

from gather_scatter_conformance.adapters.base import CaseData
from gather_scatter_conformance.adapters.convert.path import ConversionPath, Converted, NotRun
from gather_scatter_conformance.adapters.convert.torch_onnx import _module_source, _names, _tensors, module
from gather_scatter_conformance.adapters.torch_calls import expression

TARGET = "iOS26"  # coremltools.target.<TARGET>: the newest deployment target coremltools 9.0 knows
# MIL op inputs that decide index behaviour: shown in ``ops`` where they are constants
_SHOWN = ("axis", "batch_dims", "validate_indices", "mode", "dtype")
_PACKAGE = "case.mlpackage"


# coremltools' optional-dependency probe (coremltools._deps) imports TensorFlow and ExecuTorch at its import: 8.5 of
# its 17 s here, for frontends a traced torch program never reaches.
_PROBED_FRONTENDS = ("tensorflow", "executorch")


def _coremltools() -> Any:
    """``coremltools``, imported (once a process) without TensorFlow and ExecuTorch where neither is loaded yet: its
    probe then finds them absent, and a process that later imports either gets it whole. A process that has them
    already imports coremltools as it is."""
    if "coremltools" not in sys.modules:
        held = [m for m in _PROBED_FRONTENDS if m not in sys.modules]
        sys.modules.update(dict.fromkeys(held))  # None: `import m` raises ImportError, as for a missing package
        try:
            import coremltools  # noqa: F401
        finally:
            for m in held:
                if sys.modules.get(m, ...) is None:
                    del sys.modules[m]
    return sys.modules["coremltools"]


def _run_support() -> str | None:
    """Why a Core ML model cannot run in this process (one line), or None where it can (macOS with
    ``coremltools.libcoremlpython``, the native module that loads Core ML.framework)."""
    if sys.platform != "darwin":
        return f"running a Core ML model needs macOS (Core ML.framework); this is {sys.platform}"
    try:
        import coremltools.libcoremlpython  # noqa: F401
    except ImportError as exc:
        return f"coremltools.libcoremlpython does not load: {exc}"
    return None


def _immediate(value: Any) -> Any:
    """A MIL ``Value``'s immediate tensor as Python: a scalar for one element, else a list."""
    tensor = value.immediateValue.tensor
    kind = tensor.WhichOneof("value")
    if kind is None:
        return None
    items = list(getattr(tensor, kind).values)
    return items[0] if len(items) == 1 else items


def _dtype(value_type: Any) -> str:
    from coremltools.proto import MIL_pb2

    return MIL_pb2.DataType.Name(value_type.tensorType.dataType).lower()


def mil_ops(spec: Any) -> list[str]:
    """An ML program's MIL operations in order, constants left out, each with the inputs that decide index
    behaviour where they are constants: ``gather(axis=0, batch_dims=0, validate_indices=False)``,
    ``scatter_along_axis(axis=0, mode=update, validate_indices=False)``; a cast shows both dtypes
    (``cast(int32->int16)``)."""
    function = spec.mlProgram.functions["main"]
    block = function.block_specializations[function.opset]
    consts: dict[str, Any] = {}
    dtypes = {i.name: _dtype(i.type) for i in function.inputs}
    out = []
    for op in block.operations:
        for o in op.outputs:
            dtypes[o.name] = _dtype(o.type)
        if op.type == "const":
            consts[op.outputs[0].name] = _immediate(op.attributes["val"])
            continue
        shown = {}
        for key in _SHOWN:
            if key not in op.inputs:
                continue
            arg = op.inputs[key].arguments[0]
            value = _immediate(arg.value) if arg.HasField("value") else consts.get(arg.name)
            if value is not None:
                shown[key] = value.decode() if isinstance(value, bytes) else value
        if op.type == "cast" and "x" in op.inputs:
            source = dtypes.get(op.inputs["x"].arguments[0].name, "?")
            out.append(f"cast({source}->{_dtype(op.outputs[0].type)})")
            continue
        text = ", ".join(f"{k}={v}" for k, v in shown.items())
        out.append(f"{op.type}({text})" if text else op.type)
    return out


def input_dtypes(spec: Any) -> dict[str, str]:
    """The ML program's inputs' dtypes as it declares them (``{"indices": "int32"}`` for int64 indices)."""
    return {i.name: _dtype(i.type) for i in spec.mlProgram.functions["main"].inputs}


class TorchCoreml(ConversionPath):
    """coremltools.convert(torch.jit.trace(module), convert_to="mlprogram") -> Core ML (macOS only)."""

    source = "torch"
    converter = "coremltools.convert"
    converter_id = "coremltools"
    converter_requires = ("coremltools",)
    target = "coreml"  # the OS's Core ML runtime: no adapter of its own
    options: ClassVar[dict[str, Any]] = {"convert_to": "mlprogram", "minimum_deployment_target": TARGET,
                                         "trace": "torch.jit.trace"}

    @property
    def requires(self) -> tuple[str, ...]:  # type: ignore[override]
        from gather_scatter_conformance import adapters

        return tuple(dict.fromkeys((*adapters.get(self.source).requires, *self.converter_requires)))

    def converter_version(self) -> str:
        return importlib.metadata.version("coremltools")

    def versions(self) -> dict[str, str]:
        from gather_scatter_conformance import adapters

        # Core ML is the OS's: its version is the macOS one where it runs, and nothing where it cannot
        target = f"macOS {_mac_version()}" if sys.platform == "darwin" else "not run (Core ML needs macOS)"
        return {"source": adapters.get(self.source).version(), "converter": self.converter_version(),
                "target": target}

    def import_converter(self) -> None:
        _coremltools()

    def convert(self, case: CaseData, variant: str, example: dict[str, np.ndarray]) -> Converted:
        import torch

        ct = _coremltools()

        model, names, _ = module(case, variant)
        args = _tensors(example, names)
        traced = torch.jit.trace(model, args)
        inputs = [ct.TensorType(name=n, shape=example[n].shape, dtype=example[n].dtype) for n in names]
        mlmodel = ct.convert(traced, inputs=inputs, convert_to="mlprogram",
                             minimum_deployment_target=getattr(ct.target, TARGET), skip_model_load=True)
        spec = mlmodel.get_spec()
        declared = input_dtypes(spec)
        narrowed = {n: f"{example[n].dtype}->{declared[n]}" for n in names
                    if n in declared and declared[n] != _mil_name(example[n].dtype)}
        with tempfile.TemporaryDirectory(prefix="gsc-coreml-") as work:
            mlmodel.save(os.path.join(work, _PACKAGE))
            blob = _tar(os.path.join(work, _PACKAGE))
        if getattr(mlmodel, "is_temp_package", False):  # ct.convert wrote an .mlpackage to /tmp; its __del__ would
            shutil.rmtree(mlmodel.package_path, ignore_errors=True)  # remove it, but not in a worker that is killed
            mlmodel.is_temp_package = False
        details = {"opset": function_opset(spec), "input_dtypes": declared, "narrowed_inputs": narrowed}
        return Converted(blob, mil_ops(spec), details)

    def dump(self, artifact: Any) -> bytes:
        return artifact

    def load(self, blob: bytes) -> Any:
        return blob

    def runner(self, converted: Converted) -> Any:
        why = _run_support()
        if why:
            raise NotRun(why)
        import coremltools as ct  # macOS: untested here (docs/conversion.md)

        folder = tempfile.mkdtemp(prefix="gsc-coreml-")
        with tarfile.open(fileobj=io.BytesIO(converted.artifact)) as tar:
            tar.extractall(folder, filter="data")
        return ct.models.MLModel(os.path.join(folder, _PACKAGE), compute_units=ct.ComputeUnit.CPU_ONLY)

    def execute(self, runner: Any, inputs: dict[str, np.ndarray]) -> np.ndarray:
        declared = input_dtypes(runner.get_spec())
        feeds = {n: a.astype(_NUMPY.get(declared.get(n, ""), a.dtype)) for n, a in inputs.items()}
        out = runner.predict(feeds)
        return np.asarray(out[runner.get_spec().description.output[0].name])

    def repro(self, case: CaseData, variant: str) -> str:
        names = _names(case)
        expr = expression(case.op, variant, {n: case.inputs[n].shape for n in names}, case.attrs, case.omit)
        specs = ", ".join(f"ct.TensorType(name={n!r}, shape={n}.shape, dtype={n}.dtype)" for n in names)
        return "\n".join([
            *_module_source(expr, names),
            "import coremltools as ct",
            "traced = torch.jit.trace(Case(), example)",
            f"mlmodel = ct.convert(traced, inputs=[{specs}], convert_to='mlprogram', "
            f"minimum_deployment_target=ct.target.{TARGET}, skip_model_load=True)",
            "print(mlmodel._mil_program)  # the MIL program: what runs on Core ML",
            "# Running needs macOS (Core ML.framework):",
            "mlmodel.save('case.mlpackage')",
            "loaded = ct.models.MLModel('case.mlpackage', compute_units=ct.ComputeUnit.CPU_ONLY)",
            f"outputs = loaded.predict({{{', '.join(f'{n!r}: {n}.numpy()' for n in names)}}})",
            "result = np.asarray(outputs[loaded.get_spec().description.output[0].name])",
        ])


class OnnxCoreml(ConversionPath):
    """ONNX -> coremltools: not possible with coremltools >= 6.0, which removed the ONNX frontend
    (``coremltools.converters.onnx``); ``coremltools.convert`` takes TensorFlow, PyTorch and MIL programs only.
    Registered so that the matrix says so, in one line (:meth:`unavailable`); tests/test_convert_coreml.py checks the
    reason against the installed coremltools."""

    source = "onnx-reference"
    source_id = "onnx"
    converter = "coremltools.convert"
    converter_id = "coremltools"
    converter_requires = ("coremltools",)
    target = "coreml"

    requires = TorchCoreml.requires
    versions = TorchCoreml.versions
    converter_version = TorchCoreml.converter_version

    def unavailable(self) -> str | None:
        try:
            version = importlib.metadata.version("coremltools")
        except importlib.metadata.PackageNotFoundError:
            return None  # missing: the plugin says what to install
        major = int(version.split(".")[0]) if version.split(".")[0].isdigit() else 0
        if major >= 6:
            return (f"coremltools {version} has no ONNX frontend (removed in 6.0; coremltools.convert takes "
                    "TensorFlow, PyTorch and MIL programs)")
        return "coremltools < 6 converts ONNX to neural networks only, not ML programs: not measured"

    def convert(self, case: CaseData, variant: str, example: dict[str, np.ndarray]) -> Converted:
        import coremltools as ct

        from gather_scatter_conformance.adapters import onnx_graph

        model, _, _ = onnx_graph.build(case)
        mlmodel = ct.convert(model, convert_to="mlprogram", skip_model_load=True)  # raises on 9.0 (docstring)
        return Converted(b"", mil_ops(mlmodel.get_spec()))

    def runner(self, converted: Converted) -> Any:
        raise NotRun(self.unavailable() or "not measured")

    def repro(self, case: CaseData, variant: str) -> str:
        from gather_scatter_conformance.adapters import onnx_graph

        model, _, _ = onnx_graph.build(case)
        return "\n".join([onnx_graph.model_source(model), "import coremltools as ct",
                          "mlmodel = ct.convert(model, convert_to='mlprogram')  # ValueError on coremltools >= 6",
                          "result = None"])


_NUMPY = {"int32": np.int32, "fp32": np.float32, "float32": np.float32, "fp16": np.float16, "float16": np.float16}


def _mil_name(dtype: np.dtype) -> str:
    """A NumPy dtype as MIL's DataType names it, lower case (float32, int64...)."""
    return np.dtype(dtype).name


def function_opset(spec: Any) -> str:
    """The ML program's opset (``CoreML9`` for iOS26)."""
    return str(spec.mlProgram.functions["main"].opset)


def _mac_version() -> str:
    import platform

    return platform.mac_ver()[0] or "?"


def _tar(folder: str) -> bytes:
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w") as tar:
        tar.add(folder, arcname=_PACKAGE)
    return buffer.getvalue()


TORCH = TorchCoreml()
ONNX = OnnxCoreml()
