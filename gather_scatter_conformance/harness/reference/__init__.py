"""The NumPy reference engine: canonical (newest-ONNX) semantics of the vocabulary's operators, under index policies.

``compute(op, inputs, attrs, policy)`` returns the one correct output as an ndarray, or an
:class:`AllowedOutputs` when duplicate scatter targets make several outputs correct. It raises
:class:`InvalidInput` for invalid shapes/attributes/dtypes, :class:`IndexOutOfRange` when an index value is an
error, and :class:`PolicyNotApplicable` when the policy has no meaning for the operator (all are ValueErrors).
``undecided`` names what an operator's text leaves open on an input and ``unchecked`` what a kernel without bounds
checks would compute, where the operator's module says. ``compare`` says how an output differs from the reference's
(exact, or a derived tolerance for reductions): what the judge's verdicts and the case loader's check of a declared
``expected:`` both use.
"""

from __future__ import annotations

import importlib
from collections.abc import Mapping
from types import ModuleType
from typing import Any

import numpy as np

from gather_scatter_conformance.harness.reference.allowed import AllowedOutputs, equal_nan
from gather_scatter_conformance.harness.reference.indices import as_array, check_index_dtype
from gather_scatter_conformance.harness.reference.policy import (
    CANONICAL,
    POLICY_VALUES,
    IndexOutOfRange,
    InvalidInput,
    Policy,
    PolicyNotApplicable,
    all_policies,
)
from gather_scatter_conformance.vocab.ops import ATTRS, INPUTS, OPS, SPECS, required_inputs, with_defaults

__all__ = [
    "CANONICAL",
    "POLICY_VALUES",
    "AllowedOutputs",
    "IndexOutOfRange",
    "InvalidInput",
    "Policy",
    "PolicyNotApplicable",
    "all_policies",
    "alternatives",
    "compute",
    "equal_nan",
    "unchecked",
    "undecided",
]


def _module(op: str) -> ModuleType:
    """The operator's reference module (its vocabulary entry names it): it defines ``reference(arrays, attrs,
    policy)`` and, where the operator's text leaves inputs open, ``undecided(arrays, attrs)``."""
    return importlib.import_module(f"{__name__}.{SPECS[op].module}")


def _text(value: Any) -> Any:
    return value.decode() if isinstance(value, bytes) else value  # ONNX stores string attributes as bytes


def compute(
    op: str, inputs: Mapping[str, Any], attrs: Mapping[str, Any] | None = None, policy: Policy = CANONICAL
) -> np.ndarray | AllowedOutputs:
    """Return the reference output of ``op`` on ``inputs`` (keys per vocab.ops.INPUTS) and ``attrs``.

    Missing attributes take vocab.ops defaults; unknown attribute or input names raise InvalidInput. Index
    values are handled per ``policy`` (ignored by Take, whose ``mode`` decides). Inputs are never modified.
    The result is a new ndarray, or an AllowedOutputs when the correct output is not unique.
    """
    if op not in OPS:
        raise InvalidInput(f"unknown operator {op!r}; expected one of {', '.join(OPS)}")
    if not isinstance(policy, Policy):
        raise TypeError(f"policy must be a Policy, got {type(policy).__name__}")
    names = INPUTS[op]
    missing = [n for n in required_inputs(op) if n not in inputs]
    unknown = [n for n in inputs if n not in names]
    if missing or unknown:
        problems = [f"missing {', '.join(missing)}"] * bool(missing) + [f"unknown {', '.join(unknown)}"] * bool(unknown)
        raise InvalidInput(f"{op} takes inputs {', '.join(names)}: {'; '.join(problems)}")
    a = with_defaults(op, {k: _text(v) for k, v in (attrs or {}).items()})
    bad_attrs = sorted(set(a) - set(ATTRS[op]))
    if bad_attrs:
        raise InvalidInput(f"{op} has no attribute(s) {', '.join(bad_attrs)}; known: {', '.join(ATTRS[op])}")
    arr = {n: as_array(inputs[n], n) for n in names if n in inputs}
    if "indices" in arr:
        check_index_dtype(arr["indices"])
    if op != "Take" and not policy.applies_to(op):
        kind = SPECS[op].kind
        raise PolicyNotApplicable(f"policy out_of_bounds={policy.out_of_bounds!r} is not meaningful for {kind} {op}")
    return _module(op).reference(arr, a, policy)


def undecided(op: str, inputs: Mapping[str, Any], attrs: Mapping[str, Any] | None = None) -> str | None:
    """What ``op``'s specification leaves open on this input, in one phrase, or None where it decides the outcome
    (the canonical policy then fills the gap, and the judge never makes a verdict of it). ScatterElements and
    ScatterND leave open a reduction their text does not define for the data's type (bool add, harness.reference.
    constraints), TensorScatter negative and overflowing write indices; the other four decide every input."""
    check = getattr(_module(op), "undecided", None)
    if check is None:
        return None
    a = with_defaults(op, {k: _text(v) for k, v in (attrs or {}).items()})
    return check({n: np.asarray(v) for n, v in inputs.items()}, a)


def alternatives(op: str, inputs: Mapping[str, Any], attrs: Mapping[str, Any] | None = None
                 ) -> list[tuple[str, np.ndarray]]:
    """(label, output) of behaviours no :class:`Policy` models, where the operator's module names them
    (``ALTERNATIVES``: label -> a function of (arrays, attrs) giving the outputs of its readings); the classifier
    tries them after the policies. TensorScatter's ``shift`` (a block moved whole to fit, XLA's
    dynamic_update_slice) is one."""
    models = getattr(_module(op), "ALTERNATIVES", {})
    if not models:
        return []
    a = with_defaults(op, {k: _text(v) for k, v in (attrs or {}).items()})
    arrays = {n: np.asarray(v) for n, v in inputs.items()}
    return [(label, out) for label, model in models.items() for out in model(arrays, a)]


def unchecked(op: str, inputs: Mapping[str, Any], attrs: Mapping[str, Any] | None = None) -> np.ndarray | None:
    """What a kernel of ``op`` that never checks its positions writes or reads here (the classifier's ``alias``),
    where the operator's module models it (``unchecked(arrays, attrs)``); None where it does not, or where such a
    kernel would leave the buffer."""
    model = getattr(_module(op), "unchecked", None)
    if model is None:
        return None
    a = with_defaults(op, {k: _text(v) for k, v in (attrs or {}).items()})
    return model({n: np.asarray(v) for n, v in inputs.items()}, a)
