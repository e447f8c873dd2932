"""The operators: one entry each (inputs, attributes with defaults and choices, case file, kind, reference module).

Everything else that enumerates operators (the reference engine's dispatch, the case schema and loader, the
report's and fuzzer's lists) reads this table, so a new operator is one :class:`OpSpec` here, its reference module,
its case files and the adapters that can express it.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

REDUCTIONS = ("none", "add", "mul", "max", "min")
TAKE_MODES = ("raise", "wrap", "clip", "fill")
TENSOR_SCATTER_MODES = ("linear", "circular")


@dataclass(frozen=True)
class OpSpec:
    """One operator as the harness knows it.

    ``inputs`` are the case-file input names in the operator's ONNX input order; ``optional`` the ones a case may
    leave out (the operator then behaves as its spec says for an absent input). ``onnx_inputs`` renames them where
    ONNX names them otherwise (what the ONNX adapters emit). ``attrs`` are the canonical defaults, ``choices`` the
    allowed values of string attributes. ``kind`` is ``gather`` or ``scatter`` (which index policies apply, which
    probes make sense); ``module`` names the reference engine's module (``harness/reference/<module>.py``).
    """

    name: str
    inputs: tuple[str, ...]
    attrs: dict[str, Any]
    file_name: str
    kind: str
    module: str
    optional: tuple[str, ...] = ()
    onnx_inputs: dict[str, str] = field(default_factory=dict)
    choices: dict[str, tuple[str, ...]] = field(default_factory=dict)


_GATHER = ("data", "indices")
_SCATTER = ("data", "indices", "updates")

# Canonical defaults: the newest ONNX opsets (Gather-13, GatherElements-13, GatherND-13, ScatterElements-18,
# ScatterND-18, TensorScatter-24). Gather's batch_dims is not ONNX (it is OpenVINO's and TensorFlow's); 0 reproduces
# ONNX. Take is NumPy/MXNet/JAX's take.
OPERATORS: tuple[OpSpec, ...] = (
    OpSpec("Gather", _GATHER, {"axis": 0, "batch_dims": 0}, "gather.yaml", "gather", "gather"),
    OpSpec("GatherElements", _GATHER, {"axis": 0}, "gather_elements.yaml", "gather", "gather_elements"),
    OpSpec("GatherND", _GATHER, {"batch_dims": 0}, "gather_nd.yaml", "gather", "gather_nd"),
    OpSpec("ScatterElements", _SCATTER, {"axis": 0, "reduction": "none"}, "scatter_elements.yaml", "scatter",
           "scatter_elements", choices={"reduction": REDUCTIONS}),
    OpSpec("ScatterND", _SCATTER, {"reduction": "none"}, "scatter_nd.yaml", "scatter", "scatter_nd",
           choices={"reduction": REDUCTIONS}),
    OpSpec("Take", _GATHER, {"axis": None, "mode": "raise"}, "take.yaml", "gather", "take",
           choices={"mode": TAKE_MODES}),
    # ONNX names the inputs past_cache, update and write_indices. Case files call them data, updates and indices,
    # as every other scatter's: the loader, judge, classifier, fuzzer and report read inputs by those names (about
    # 80 places), so renaming here, once, costs nothing there. The ONNX adapters emit ONNX's names (onnx_inputs).
    OpSpec("TensorScatter", ("data", "updates", "indices"), {"mode": "linear", "axis": -2}, "tensor_scatter.yaml",
           "scatter", "tensor_scatter", optional=("indices",),
           onnx_inputs={"data": "past_cache", "updates": "update", "indices": "write_indices"},
           choices={"mode": TENSOR_SCATTER_MODES}),
)

SPECS: dict[str, OpSpec] = {spec.name: spec for spec in OPERATORS}
OPS = tuple(SPECS)
GATHER_OPS = tuple(s.name for s in OPERATORS if s.kind == "gather")
SCATTER_OPS = tuple(s.name for s in OPERATORS if s.kind == "scatter")
INPUTS: dict[str, tuple[str, ...]] = {s.name: s.inputs for s in OPERATORS}
ATTRS: dict[str, dict[str, Any]] = {s.name: s.attrs for s in OPERATORS}
# The file each operator's cases live in.
FILE_NAMES: dict[str, str] = {s.name: s.file_name for s in OPERATORS}


def required_inputs(op: str) -> tuple[str, ...]:
    """The inputs every case of ``op`` must give (its inputs less the optional ones), in ONNX order."""
    spec = SPECS[op]
    return tuple(n for n in spec.inputs if n not in spec.optional)


def onnx_input_name(op: str, name: str) -> str:
    """The ONNX name of ``op``'s case input ``name`` (the same name unless ONNX spells it otherwise)."""
    return SPECS[op].onnx_inputs.get(name, name)


def with_defaults(op: str, attrs: dict[str, Any] | None) -> dict[str, Any]:
    """Return the operator's attributes with every default filled in (unknown names are kept for the caller)."""
    merged = dict(ATTRS[op])
    merged.update(attrs or {})
    return merged
