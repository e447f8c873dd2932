"""The adapter registry: framework name -> adapter module. Looking an adapter up imports no framework."""

from __future__ import annotations

import importlib
import importlib.metadata
import importlib.util
from functools import cache
from pathlib import Path

from adapters.base import Adapter

# name -> (adapter module, top-level module whose presence makes the adapter available)
REGISTRY: dict[str, tuple[str, str]] = {
    "numpy": ("adapters.numpy", "numpy"),
    "onnx-reference": ("adapters.onnx_reference", "onnx"),
    "onnxruntime": ("adapters.onnxruntime", "onnxruntime"),
    "openvino": ("adapters.openvino", "openvino"),
    "tensorflow": ("adapters.tensorflow", "tensorflow"),
    "torch": ("adapters.torch", "torch"),
    "jax": ("adapters.jax", "jax"),
    "mxnet": ("adapters.mxnet", "mxnet"),
    "tvm": ("adapters.tvm", "tvm"),
    # These two also need hardware or an OS (an NVIDIA GPU; Windows): without it, Adapter.unavailable() says why
    # and every case skips. onnxruntime-directml installs the same `onnxruntime` module as onnxruntime.
    "tensorrt": ("adapters.tensorrt", "tensorrt"),
    "directml": ("adapters.directml", "onnxruntime"),
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
    mod, framework = REGISTRY[name]
    if name in _DISTRIBUTION:
        try:
            importlib.metadata.distribution(_DISTRIBUTION[name])
        except importlib.metadata.PackageNotFoundError:
            return False
    try:
        return importlib.util.find_spec(mod) is not None and importlib.util.find_spec(framework) is not None
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
    module = importlib.import_module(REGISTRY[name][0])
    return module.ADAPTER
