"""Any ONNX backend as an adapter: ``--onnx-backend MODULE`` runs the cases through ONNX's backend API
(``onnx.backend.base.Backend``; docs/onnx-backend.md), without an adapter written for the runtime.

The case becomes the same one-node ONNX model as for onnxruntime (:mod:`adapters.onnx_graph`; it passes
``onnx.checker.check_model(full_check=True)`` wherever ONNX's schemas admit its types), and runs as the backend API
says: ``rep = backend.prepare(model, "CPU")``, then ``rep.run([data, indices, ...])[0]``. Variants are the ONNX
operator versions of the onnxruntime adapter (``Gather-13``, ...), so the two compare variant by variant.

``MODULE`` names the backend: a module that offers the API as functions (``onnxruntime.backend``), or
``MODULE:ATTR``, a Backend class or object in it. One adapter per backend, named ``onnx-backend-<MODULE[.ATTR]>``.
Such adapters are made at run time, so they have no entry point: the registry maps the name to
``"gather_scatter_conformance.adapters.onnx_backend:<MODULE[:ATTR]>"`` (:func:`register`), which
:func:`__getattr__` of this module resolves, in the pytest process and in every worker the table reaches.
"""

from __future__ import annotations

import functools
import importlib
import importlib.metadata
import unittest
from typing import Any

import numpy as np

from gather_scatter_conformance.adapters.base import Adapter, Call, CaseData, NoDevice, Unsupported
from gather_scatter_conformance.adapters.cache import LRU
from gather_scatter_conformance.adapters.onnx_graph import model_source
from gather_scatter_conformance.adapters.onnxruntime import _variants, variant_model

PREFIX = "onnx-backend-"
CACHE_SIZE = 256
_DEVICE = {"cpu": "CPU", "gpu": "CUDA"}  # our device -> the backend API's device string (onnx.backend.base.Device)


def adapter_name(spec: str) -> str:
    """The adapter name of the backend ``spec`` (``onnxruntime.backend`` -> ``onnx-backend-onnxruntime.backend``):
    no ``:`` in it, since ``framework:variant`` is how test ids, repro and report columns split names."""
    return PREFIX + spec.replace(":", ".")


def register(spec: str) -> str:
    """Add the adapter of backend ``spec`` to this process's registry and return its name; the workers the run
    starts get it with the table (gather_scatter_conformance.adapters.table)."""
    from gather_scatter_conformance import adapters

    name = adapter_name(spec)
    adapters.register(name, f"{__name__}:{spec}")
    return name


def problem(spec: str) -> str | None:
    """Why ``spec`` names no usable backend here, as one line (its module missing, no ``prepare``); None when it
    does. Imports the backend's module."""
    module, _, attribute = spec.partition(":")
    try:
        backend: Any = importlib.import_module(module)
    except ImportError as exc:
        return f"--onnx-backend {spec}: cannot import {module} ({exc}); install the package that provides it"
    if attribute:
        backend = getattr(backend, attribute, None)
        if backend is None:
            return f"--onnx-backend {spec}: {module} has no {attribute}"
    if not callable(getattr(backend, "prepare", None)):
        return (f"--onnx-backend {spec}: not an ONNX backend (onnx.backend.base.Backend's API: prepare(model, "
                f"device) returning a BackendRep)")
    return None


def __getattr__(spec: str) -> OnnxBackendAdapter:
    """The adapter of backend ``spec`` (PEP 562): how the registry's ``"<this module>:<spec>"`` resolves."""
    if spec.startswith("__"):  # copy, pickle and friends probe dunder names: those are not backends
        raise AttributeError(spec)
    return _adapter(spec)


@functools.cache
def _adapter(spec: str) -> OnnxBackendAdapter:
    return OnnxBackendAdapter(spec)


class OnnxBackendAdapter(Adapter):
    """ONNX's backend API on the backend ``spec`` (``MODULE`` or ``MODULE:ATTR``)."""

    devices = ("cpu", "gpu")
    mapping = "docs/onnx-backend.md"

    def __init__(self, spec: str) -> None:
        self.spec = spec
        self.module, _, self.attribute = spec.partition(":")
        self.name = adapter_name(spec)
        # The backend's top-level package, and onnx, which builds the models.
        self.requires = tuple(dict.fromkeys((self.module.partition(".")[0], "onnx")))
        # Prepared models keyed by the model's bytes (op, version, attributes, input shapes and types) and device:
        # cases that differ only in values reuse one, as the onnxruntime adapter reuses its sessions.
        self.cache: LRU[Any] = LRU(CACHE_SIZE)

    def backend(self) -> Any:
        """The backend object: the module, or its ``ATTR``."""
        module = importlib.import_module(self.module)
        return getattr(module, self.attribute) if self.attribute else module

    def version(self) -> str:
        top = importlib.import_module(self.requires[0])
        version = getattr(top, "__version__", None)
        if version is None:  # a package without __version__: its distribution's, where one has its name
            try:
                version = importlib.metadata.version(self.requires[0])
            except importlib.metadata.PackageNotFoundError:
                version = "unknown"
        return str(version)

    def warm(self) -> None:
        self.backend()

    def variants(self, op: str) -> list[str]:
        return _variants(op)

    def prepare(self, case: CaseData, variant: str) -> Call:
        model, text, _ = variant_model(case, variant)  # the onnxruntime adapter's model; Unsupported where ONNX
        # cannot say the case
        names = list(case.inputs)
        arrays = [case.inputs[n] for n in names]  # rep.run takes the inputs as a list, in the graph's order
        device = _DEVICE[case.device]
        binding = (f"from {self.module} import {self.attribute} as backend" if self.attribute
                   else f"import {self.module} as backend")
        source = "\n".join([
            model_source(model), binding,
            f"rep = backend.prepare(model, {device!r})",
            f"result = np.asarray(rep.run([{', '.join(names)}])[0])",
        ])
        api = f"{self.spec}.prepare(model: {text}, {device!r}).run([{', '.join(names)}])[0]"

        def run() -> Any:
            rep = self.cache.get_or_make((model.SerializeToString(), device), lambda: self._prepare(model, device))
            return rep.run(arrays)[0]

        return Call(api, run, case.device, source=source)

    def _prepare(self, model: Any, device: str) -> Any:
        backend = self.backend()
        supports = getattr(backend, "supports_device", None)
        if supports is not None and not supports(device):
            raise NoDevice(f"{self.spec} does not support device {device!r}")
        try:
            return backend.prepare(model, device)
        except unittest.SkipTest as exc:
            # The backend API's way to decline a model it cannot run (onnxruntime.backend: an unreleased opset):
            # the case cannot be expressed there, which is not an error of the runtime.
            raise Unsupported(f"{self.spec} declines the model: {exc}") from exc

    def to_numpy(self, out: Any) -> np.ndarray:
        return np.asarray(out)

    def release(self) -> None:
        self.cache.clear()
