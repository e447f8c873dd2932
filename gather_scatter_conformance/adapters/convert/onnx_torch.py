"""ONNX -> onnx2torch -> torch: ``onnx2torch.convert`` of the case's one-node ONNX model, a ``torch.fx.GraphModule``
run eagerly on CPU torch.

The source is the case's ONNX model (adapters/onnx_graph.py, the newest opset) run natively by ONNX's reference
implementation (the onnx-reference adapter). The converted graph's operators are the fx nodes' targets: onnx2torch's
modules (``OnnxGather(axis=0)``, ``OnnxGatherND(batch_dims=0)``, ``OnnxScatterND(reduction=none)``) with the
attributes that decide index behaviour, or torch functions.

**torchvision.** onnx2torch imports torchvision at import time, for its NonMaxSuppression and RoiAlign converters
only (``onnx2torch/node_converters/nms.py``, ``roialign.py``). PyPI's torchvision is a CUDA build, which does not load
beside torch's CPU build (``RuntimeError: operator torchvision::nms does not exist``), and installing a torch to suit
it would bring the CUDA torch in. So :func:`import_onnx2torch` imports the real torchvision where it loads, and
otherwise places a stand-in ``torchvision`` module first, whose ``ops.nms``, ``ops.roi_align`` and
``ops.box_convert`` raise :class:`TorchvisionStandIn`: a model with NMS or RoiAlign then fails loudly, never
silently; no case here has either. Which one was used is recorded (``conversion.torchvision``).
"""

from __future__ import annotations

import sys
import types
from typing import Any

import numpy as np

from gather_scatter_conformance.adapters import onnx_graph
from gather_scatter_conformance.adapters.base import CaseData
from gather_scatter_conformance.adapters.convert import targets
from gather_scatter_conformance.adapters.convert.path import ConversionPath, Converted, _one_line

# What import_onnx2torch found: torchvision's version, or "stand-in (<why the real one did not load>)".
_TORCHVISION: str | None = None
# onnx2torch modules' attributes that decide index behaviour (shown in ``ops``)
_SHOWN = ("_axis", "_batch_dims", "_reduction")


class TorchvisionStandIn(RuntimeError):
    """A torchvision operator was called, but only the harness's stand-in module is loaded (module docstring)."""


def _stand_in(why: str) -> types.ModuleType:
    """A ``torchvision`` module with an ``ops`` submodule whose functions raise :class:`TorchvisionStandIn`."""
    def refuse(name: str) -> Any:
        def call(*args: Any, **kwargs: Any) -> Any:
            raise TorchvisionStandIn(f"torchvision.ops.{name}: torchvision does not load here ({why}); the harness "
                                     "placed a stand-in so that onnx2torch imports (docs/conversion.md)")
        return call

    package = types.ModuleType("torchvision", "Stand-in for torchvision (gather_scatter_conformance onnx2torch path)")
    ops = types.ModuleType("torchvision.ops")
    for name in ("nms", "roi_align", "box_convert"):  # what onnx2torch's nms.py and roialign.py use
        setattr(ops, name, refuse(name))
    package.ops = ops  # type: ignore[attr-defined]
    package.__version__ = "stand-in"  # type: ignore[attr-defined]
    return package


def import_onnx2torch() -> Any:
    """The ``onnx2torch`` module, imported beside the real torchvision where that loads, else beside a stand-in
    whose ``ops`` raise (module docstring). Idempotent."""
    global _TORCHVISION
    if _TORCHVISION is None:
        try:
            import torchvision

            _TORCHVISION = str(torchvision.__version__)
        except Exception as exc:  # ImportError where absent; RuntimeError for PyPI's CUDA build beside CPU torch
            _TORCHVISION = f"stand-in ({_one_line(exc)[:200]})"
            for name in [n for n in sys.modules if n.split(".")[0] in ("torchvision", "onnx2torch")]:
                del sys.modules[name]  # what a failed import left half-made
            package = _stand_in(_one_line(exc)[:200])
            sys.modules["torchvision"], sys.modules["torchvision.ops"] = package, package.ops
    import onnx2torch

    return onnx2torch


def torchvision_used() -> str | None:
    """What onnx2torch was imported beside: torchvision's version, ``stand-in (<why>)``, or None before import."""
    return _TORCHVISION


def fx_ops(module: Any) -> list[str]:
    """A GraphModule's operators in graph order: ``OnnxGather(axis=0)`` for a submodule (its class, with the
    attributes that decide index behaviour), the qualified name of a function or method; placeholders, outputs
    and attribute reads left out."""
    out = []
    for node in module.graph.nodes:
        if node.op == "call_module":
            sub = module.get_submodule(node.target)
            attrs = {k.lstrip("_"): getattr(sub, k) for k in _SHOWN if hasattr(sub, k)}
            text = ", ".join(f"{k}={getattr(v, 'value', v)}" for k, v in attrs.items())
            out.append(f"{type(sub).__name__}({text})" if text else type(sub).__name__)
        elif node.op == "call_function":
            target = node.target
            out.append(f"{getattr(target, '__module__', '') or ''}.{getattr(target, '__name__', target)}".lstrip("."))
        elif node.op == "call_method":
            out.append(f"Tensor.{node.target}")
    return out


class OnnxTorch(ConversionPath):
    """onnx2torch.convert on the case's ONNX model; the GraphModule runs eagerly on CPU torch."""

    source = "onnx-reference"
    source_id = "onnx"
    converter = "onnx2torch.convert"
    converter_id = "onnx2torch"
    converter_requires = ("onnx2torch",)
    target = "torch"

    def import_converter(self) -> None:
        import_onnx2torch()  # beside a torchvision stand-in where the real one does not load (module docstring)

    def converter_version(self) -> str:
        import importlib.metadata

        return importlib.metadata.version("onnx2torch")  # onnx2torch has no __version__

    def convert(self, case: CaseData, variant: str, example: dict[str, np.ndarray]) -> Converted:
        model, _, _ = onnx_graph.build(case)
        module = import_onnx2torch().convert(model)
        return Converted(module, fx_ops(module), {"opset": targets.onnx_opset(model),
                                                  "torchvision": torchvision_used()})

    def runner(self, converted: Converted) -> Any:
        return converted.artifact.eval()

    def execute(self, runner: Any, inputs: dict[str, np.ndarray]) -> np.ndarray:
        import torch

        from gather_scatter_conformance.adapters import torch as torch_adapter

        with torch.no_grad():
            out = runner(*(torch_adapter.to_tensor(a) for a in inputs.values()))
        return torch_adapter.ADAPTER.to_numpy(out)

    def repro(self, case: CaseData, variant: str) -> str:
        model, names, _ = onnx_graph.build(case)
        return "\n".join([
            onnx_graph.model_source(model),
            "import torch",
            "# onnx2torch imports torchvision (for NMS/RoiAlign only): the real one where it loads, else a stand-in",
            "from gather_scatter_conformance.adapters.convert.onnx_torch import import_onnx2torch",
            "onnx2torch = import_onnx2torch()",
            "module = onnx2torch.convert(model).eval()",
            "with torch.no_grad():",
            f"    result = module({', '.join(f'torch.from_numpy({n})' for n in names)}).numpy()",
        ])


ADAPTER = OnnxTorch()
