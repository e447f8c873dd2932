"""The six operators: their inputs and attributes with defaults (ONNX names; Take after NumPy/MXNet/JAX)."""

from __future__ import annotations

from typing import Any

OPS = ("Gather", "GatherElements", "GatherND", "ScatterElements", "ScatterND", "Take")
GATHER_OPS = ("Gather", "GatherElements", "GatherND", "Take")
SCATTER_OPS = ("ScatterElements", "ScatterND")
REDUCTIONS = ("none", "add", "mul", "max", "min")
TAKE_MODES = ("raise", "wrap", "clip", "fill")

INPUTS: dict[str, tuple[str, ...]] = {
    "Gather": ("data", "indices"),
    "GatherElements": ("data", "indices"),
    "GatherND": ("data", "indices"),
    "Take": ("data", "indices"),
    "ScatterElements": ("data", "indices", "updates"),
    "ScatterND": ("data", "indices", "updates"),
}

# Canonical defaults: the newest ONNX opsets (Gather-13, GatherElements-13, GatherND-13, ScatterElements-18,
# ScatterND-18). Gather's batch_dims is not ONNX (it is OpenVINO's and TensorFlow's); 0 reproduces ONNX.
ATTRS: dict[str, dict[str, Any]] = {
    "Gather": {"axis": 0, "batch_dims": 0},
    "GatherElements": {"axis": 0},
    "GatherND": {"batch_dims": 0},
    "Take": {"axis": None, "mode": "raise"},
    "ScatterElements": {"axis": 0, "reduction": "none"},
    "ScatterND": {"reduction": "none"},
}

# The file each operator's cases live in.
FILE_NAMES = {
    "Gather": "gather.yaml",
    "GatherElements": "gather_elements.yaml",
    "GatherND": "gather_nd.yaml",
    "Take": "take.yaml",
    "ScatterElements": "scatter_elements.yaml",
    "ScatterND": "scatter_nd.yaml",
}


def with_defaults(op: str, attrs: dict[str, Any] | None) -> dict[str, Any]:
    """Return the operator's attributes with every default filled in (unknown names are kept for the caller)."""
    merged = dict(ATTRS[op])
    merged.update(attrs or {})
    return merged
