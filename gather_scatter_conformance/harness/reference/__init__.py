"""The NumPy reference engine: canonical (newest-ONNX) semantics of the six operators, under index policies.

``compute(op, inputs, attrs, policy)`` returns the one correct output as an ndarray, or an
:class:`AllowedOutputs` when duplicate scatter targets make several outputs correct. It raises
:class:`InvalidInput` for invalid shapes/attributes/dtypes, :class:`IndexOutOfRange` when an index value is an
error, and :class:`PolicyNotApplicable` when the policy has no meaning for the operator (all are ValueErrors).
``compare`` says how an output differs from the reference's (exact, or a derived tolerance for reductions): what
the judge's verdicts and the case loader's check of a declared ``expected:`` both use.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from gather_scatter_conformance.harness.reference.allowed import AllowedOutputs, equal_nan
from gather_scatter_conformance.harness.reference.gather import gather
from gather_scatter_conformance.harness.reference.gather_elements import gather_elements
from gather_scatter_conformance.harness.reference.gather_nd import gather_nd
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
from gather_scatter_conformance.harness.reference.scatter_elements import scatter_elements
from gather_scatter_conformance.harness.reference.scatter_nd import scatter_nd
from gather_scatter_conformance.harness.reference.take import take
from gather_scatter_conformance.vocab.ops import ATTRS, INPUTS, OPS, with_defaults

__all__ = [
    "CANONICAL",
    "POLICY_VALUES",
    "AllowedOutputs",
    "IndexOutOfRange",
    "InvalidInput",
    "Policy",
    "PolicyNotApplicable",
    "all_policies",
    "compute",
    "equal_nan",
]


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
    missing = [n for n in names if n not in inputs]
    unknown = [n for n in inputs if n not in names]
    if missing or unknown:
        problems = [f"missing {', '.join(missing)}"] * bool(missing) + [f"unknown {', '.join(unknown)}"] * bool(unknown)
        raise InvalidInput(f"{op} takes inputs {', '.join(names)}: {'; '.join(problems)}")
    a = with_defaults(op, {k: _text(v) for k, v in (attrs or {}).items()})
    bad_attrs = sorted(set(a) - set(ATTRS[op]))
    if bad_attrs:
        raise InvalidInput(f"{op} has no attribute(s) {', '.join(bad_attrs)}; known: {', '.join(ATTRS[op])}")
    arr = {n: as_array(inputs[n], n) for n in names}
    data, indices = arr["data"], arr["indices"]
    check_index_dtype(indices)
    if op != "Take" and not policy.applies_to(op):
        kind = "scatter" if op.startswith("Scatter") else "gather"
        raise PolicyNotApplicable(f"policy out_of_bounds={policy.out_of_bounds!r} is not meaningful for {kind} {op}")

    if op == "Gather":
        return gather(data, indices, a["axis"], a["batch_dims"], policy)
    if op == "GatherElements":
        return gather_elements(data, indices, a["axis"], policy)
    if op == "GatherND":
        return gather_nd(data, indices, a["batch_dims"], policy)
    if op == "Take":
        return take(data, indices, a["axis"], a["mode"])
    if op == "ScatterElements":
        return scatter_elements(data, indices, arr["updates"], a["axis"], a["reduction"], policy)
    return scatter_nd(data, indices, arr["updates"], a["reduction"], policy)
