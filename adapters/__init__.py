"""The adapter registry: framework or converter path name -> adapter. Looking an adapter up imports no framework."""

from __future__ import annotations

import importlib
import importlib.metadata
import importlib.util
from functools import cache
from pathlib import Path

from adapters.base import Adapter

# name -> (adapter module, top-level modules whose presence makes the adapter available, comma-separated). A module
# holding several adapters names one as ``module:ATTRIBUTE``; else the module's ``ADAPTER``.
REGISTRY: dict[str, tuple[str, str]] = {
    "numpy": ("adapters.numpy", "numpy"),
    "onnx-reference": ("adapters.onnx_reference", "onnx"),
    "onnxruntime": ("adapters.onnxruntime", "onnxruntime"),
    "openvino": ("adapters.openvino", "openvino"),
    "tensorflow": ("adapters.tensorflow", "tensorflow"),
    "torch": ("adapters.torch", "torch"),
    "jax": ("adapters.jax", "jax"),
    "mxnet": ("adapters.mxnet", "mxnet"),
    "litert": ("adapters.litert", "ai_edge_litert"),
    "paddle": ("adapters.paddle", "paddle"),
    "tvm": ("adapters.tvm", "tvm"),
    # These two also need hardware or an OS (an NVIDIA GPU; Windows): without it, Adapter.unavailable() says why
    # and every case skips. onnxruntime-directml installs the same `onnxruntime` module as onnxruntime.
    "tensorrt": ("adapters.tensorrt", "tensorrt"),
    "directml": ("adapters.directml", "onnxruntime"),
    # Converter paths, <source>~<converter>~<target> (adapters/convert, docs/conversion.md).
    "torch~onnx-dynamo~onnxruntime": ("adapters.convert.torch_onnx:DYNAMO_ONNXRUNTIME", "torch,onnxscript,onnxruntime"),
    "torch~onnx-torchscript~onnxruntime": ("adapters.convert.torch_onnx:TORCHSCRIPT_ONNXRUNTIME",
                                           "torch,onnx,onnxruntime"),
    "torch~onnx-dynamo~openvino": ("adapters.convert.torch_onnx:DYNAMO_OPENVINO", "torch,onnxscript,openvino"),
    "torch~onnx-torchscript~openvino": ("adapters.convert.torch_onnx:TORCHSCRIPT_OPENVINO", "torch,onnx,openvino"),
    "torch~ov-convert~openvino": ("adapters.convert.torch_onnx:CONVERT_MODEL", "torch,openvino"),
    "tensorflow~tf2onnx~onnxruntime": ("adapters.convert.tf_onnx:TF2ONNX_ONNXRUNTIME",
                                       "tensorflow,tf2onnx,onnxruntime"),
    "tensorflow~tflite~litert": ("adapters.convert.tf_tflite", "tensorflow,ai_edge_litert"),
    "tensorflow~ov-convert~openvino": ("adapters.convert.tf_onnx:CONVERT_MODEL", "tensorflow,openvino"),
    "onnx~onnx2tf~tensorflow": ("adapters.convert.onnx_tf:TENSORFLOW", "onnx,onnx2tf,tensorflow,tf_keras"),
    "onnx~onnx2tf~litert": ("adapters.convert.onnx_tf:LITERT", "onnx,onnx2tf,tensorflow,tf_keras,ai_edge_litert"),
    "onnx~relax~tvm": ("adapters.convert.onnx_tvm", "onnx,tvm"),
    "jax~jax2onnx~onnxruntime": ("adapters.convert.jax_onnx:JAX2ONNX_ONNXRUNTIME", "jax,jax2onnx,onnxruntime"),
    "paddle~paddle2onnx~onnxruntime": ("adapters.convert.paddle_onnx", "paddle,paddle2onnx,onnxruntime"),
}
# Adapters whose module is shared with another distribution: available only where this one is installed, so that
# plain onnxruntime does not bring in a DirectML column of skips.
_DISTRIBUTION = {"directml": "onnxruntime-directml"}


def names() -> list[str]:
    """Every registered adapter name, in report order."""
    return list(REGISTRY)


def is_available(name: str) -> bool:
    """True when the adapter module exists and its framework is installed in this interpreter (nothing imported)."""
    if name not in REGISTRY:
        return False
    mod, frameworks = REGISTRY[name]
    if name in _DISTRIBUTION:
        try:
            importlib.metadata.distribution(_DISTRIBUTION[name])
        except importlib.metadata.PackageNotFoundError:
            return False
    try:
        return importlib.util.find_spec(mod.split(":")[0]) is not None and all(
            importlib.util.find_spec(f) is not None for f in frameworks.split(","))
    except (ImportError, ValueError):
        return False


def venv_pythons(root: Path) -> dict[str, str]:
    """Framework -> interpreter for every framework not installed here that has a project venv
    ``<root>/.venv-<name>`` (MXNet's ``.venv-mxnet``): how runs reach a framework in another interpreter."""
    out = {}
    for name in names():
        venv = root / f".venv-{name}" / "bin" / "python"
        if venv.exists() and not is_available(name):
            out[name] = str(venv)
    return out


@cache
def get(name: str) -> Adapter:
    """Return the (cached) adapter instance for ``name``; its framework is imported only when it runs a case."""
    if name not in REGISTRY:
        raise KeyError(f"unknown framework {name!r}; known: {', '.join(REGISTRY)}")
    module, _, attribute = REGISTRY[name][0].partition(":")
    return getattr(importlib.import_module(module), attribute or "ADAPTER")


def is_path(name: str) -> bool:
    """True for a converter path (``<source>~<converter>~<target>``), False for a framework's own adapter."""
    return "~" in name
