"""The canonical operators' type constraints: which element types the newest ONNX opsets allow.

The reference engine computes a value for more inputs than the specification allows (it takes any integer index
type, as NumPy does). A case whose inputs lie outside these constraints is *outside the spec*: a framework may
refuse it and still conform, may return the reference's value as an extension, and deviates only by returning a
different value (harness.judge.verdict.judge). This table is the one place that says what "inside" means.

Sources (onnx/onnx docs/Operators.md, the opsets the engine implements):
- Gather-13, GatherElements-13, ScatterElements-18: ``Tind`` is ``tensor(int32), tensor(int64)``.
- GatherND-13, ScatterND-18: ``indices`` is ``tensor(int64)`` only.
- TensorScatter-24: ``write_indices`` is ``tensor(int64)`` only.
- All seven: ``T`` is every tensor type, so every data type a case can declare is inside.
- ScatterElements-18 / ScatterND-18 ``reduction``: the spec's pseudo-code combines with ``+``, ``*``, ``max``,
  ``min``. ``max``/``min`` need an order: bool has one (false < true), strings and complex numbers have none, so
  these are outside. ``*`` on strings is outside. ``+``/``*`` on bool and ``+`` on strings are inside but the text
  does not say what they mean: onnx.reference computes logical or, logical and and concatenation; ONNX Runtime
  computes the same, and OpenVINO too on bool (its ScatterElementsUpdate-12 and ScatterNDUpdate-15 specifications
  say sum = OR and prod = AND on bool). The engine computes that reading, and the judge treats these inputs as open
  (:func:`open_reduction`: a refusal or that value conforms). The engine raises InvalidInput where a reduction is
  outside, so a refusal conforms and a value deviates.
- Take is not an ONNX operator: it is Gather with NumPy's index modes (``np.take``), and ONNX runtimes express it
  as Gather, so it has Gather-13's constraints. NumPy taking int8 or uint64 indices is an extension.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

from gather_scatter_conformance.vocab import dtypes


@dataclass(frozen=True)
class TypeConstraints:
    """What one canonical operator definition allows: ``source`` names it (``GatherND-13``), ``index`` lists the
    allowed index element types."""

    source: str
    index: tuple[str, ...]


_INT32_64 = ("int32", "int64")

CONSTRAINTS: dict[str, TypeConstraints] = {
    "Gather": TypeConstraints("ONNX Gather-13", _INT32_64),
    "GatherElements": TypeConstraints("ONNX GatherElements-13", _INT32_64),
    "GatherND": TypeConstraints("ONNX GatherND-13", ("int64",)),
    "ScatterElements": TypeConstraints("ONNX ScatterElements-18", _INT32_64),
    "ScatterND": TypeConstraints("ONNX ScatterND-18", ("int64",)),
    "Take": TypeConstraints("ONNX Gather-13 (Take's ONNX form)", _INT32_64),
    "TensorScatter": TypeConstraints("ONNX TensorScatter-24", ("int64",)),  # write_indices: tensor(int64)
}

# reduction -> the data types it is not defined for (every other declared type is allowed).
REDUCTION_UNDEFINED: dict[str, tuple[str, ...]] = {
    "none": (),
    "add": (),
    "mul": ("string",),
    "max": ("string", *dtypes.COMPLEX_DTYPES),
    "min": ("string", *dtypes.COMPLEX_DTYPES),
}


# reduction -> the data types the spec admits but whose combining the text does not define (see the docstring).
REDUCTION_OPEN: dict[str, dict[str, str]] = {
    "add": {"bool": "logical or", "string": "concatenation"},
    "mul": {"bool": "logical and"},
}


def open_reduction(reduction: str, dtype: np.dtype) -> str | None:
    """What ONNX's text leaves open when ``reduction`` combines data of ``dtype``, in one phrase naming the
    reading onnx.reference, ONNX Runtime and OpenVINO share (the engine's); None where the text decides it."""
    name = _name(dtype)
    reading = REDUCTION_OPEN.get(reduction, {}).get(name)
    if reading is None:
        return None
    return f"reduction={reduction} on {name} data (the text leaves it open; onnx.reference: {reading})"


def reduction_defined(reduction: str, dtype_name: str) -> bool:
    """True when ``reduction`` (a known one) is defined for data of type ``dtype_name``."""
    return dtype_name not in REDUCTION_UNDEFINED[reduction]


@dataclass(frozen=True)
class Outside:
    """Why a case lies outside the spec: ``reason`` is one phrase naming the offending type and what the canonical
    definition allows; ``extension`` names what a framework that computes the case anyway extends the spec by."""

    reason: str
    extension: str


def outside_spec(op: str, inputs: Mapping[str, np.ndarray], attrs: Mapping[str, Any]) -> Outside | None:
    """Where a case's element types break ``op``'s type constraints, or None when they are inside.

    E.g. ``Outside("int32 indices (ONNX GatherND-13 allows int64)", "int32-indices")``. Only element types are judged
    here; shapes, attributes and index values are the reference engine's business.
    """
    rule = CONSTRAINTS[op]
    index = inputs.get("indices")
    if index is not None:
        name = _name(np.asarray(index).dtype)
        if name not in rule.index:
            return Outside(f"{name} indices ({rule.source} allows {' or '.join(rule.index)})", f"{name}-indices")
    reduction = attrs.get("reduction", "none")
    data = inputs.get("data")
    if data is not None and reduction in REDUCTION_UNDEFINED:
        name = _name(np.asarray(data).dtype)
        if not reduction_defined(reduction, name):
            return Outside(f"reduction={reduction} on {name} data (not defined for {name})", f"{reduction}-{name}")
    return None


def _name(dtype: np.dtype) -> str:
    try:
        return dtypes.name_of(dtype)
    except ValueError:
        return str(dtype)
