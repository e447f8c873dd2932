"""Judging one worker result against the reference engine: the verdict, its kind, and whether it is a finding.

The rules are those of the canonical semantics, type constraints included (harness.reference.constraints): outside
them a refusal conforms and the reference's value is an extension; inside them only the reference's values conform.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from gather_scatter_conformance.harness.cases.load import Case, ExpectedError
from gather_scatter_conformance.harness.reference import (
    AllowedOutputs,
    all_policies,
    alternatives,
    compute,
    constraints,
    undecided,
)
from gather_scatter_conformance.harness.reference.compare import compare, reduction_atol
from gather_scatter_conformance.harness.reference.constraints import Outside
from gather_scatter_conformance.vocab import dtypes
from gather_scatter_conformance.vocab.record import HARNESS_ERROR, INTERRUPTED, TOO_LARGE, Record, Result

SMALL = 64  # arrays with at most this many elements are stored whole in records (for the report's drill-down)


def _contributions(case: Case) -> np.ndarray | int:
    """How many updates were accumulated into each output element (for the reduction tolerance)."""
    inputs = case.inputs()
    ones = {
        "data": np.zeros(inputs["data"].shape, np.float64),
        "indices": inputs["indices"],
        "updates": np.ones(inputs["updates"].shape, np.float64),
    }
    try:
        return np.asarray(compute(case.op, ones, {**case.attrs, "reduction": "add"}))
    except ValueError:
        return int(inputs["updates"].size)


def tolerance(case: Case, expected: Any) -> tuple[np.ndarray | float, float]:
    """(atol, rtol) for a case: the case's own, else derived for float add/mul reductions, else exact."""
    if case.spec.tolerance is not None:
        return case.spec.tolerance.atol, case.spec.tolerance.rtol
    if case.attrs.get("reduction") in ("add", "mul") and isinstance(expected, np.ndarray):
        name = dtypes.name_of(expected.dtype)
        if dtypes.eps(name):
            if "reduction_atol" not in case.memo:  # a second reference computation: once per case
                case.memo["reduction_atol"] = reduction_atol(name, expected, _contributions(case))
            return case.memo["reduction_atol"], 0.0
    return 0.0, 0.0


def _identical(observed: np.ndarray, expected: np.ndarray) -> bool:
    """True when ``observed`` has ``expected``'s dtype and shape and every element equals (NaN equals NaN).

    Then compare() would find nothing under any tolerance; this is one pass instead of its several. Dtypes
    without a native NumPy equality (strings, ml_dtypes) answer False and take the full comparison.
    """
    if observed.dtype != expected.dtype or observed.shape != expected.shape:
        return False
    if expected.dtype.kind in "fc":
        return bool(np.array_equal(observed, expected, equal_nan=True))
    if expected.dtype.kind in "biu":
        return bool(np.array_equal(observed, expected))
    return False


def stored(arr: np.ndarray | AllowedOutputs) -> Any:
    """``arr`` as a record stores it: the whole array (JSON-able) when it has at most SMALL elements, else None."""
    from gather_scatter_conformance.harness.cases.values import to_jsonable

    if isinstance(arr, AllowedOutputs):
        arr = arr.example()
    return to_jsonable(arr) if arr.size <= SMALL else None


def _dtype_name(dtype: np.dtype) -> str:
    try:
        return dtypes.name_of(dtype)
    except ValueError:
        return str(dtype)


def outside_spec(case: Case) -> Outside | None:
    """Where ``case``'s element types break its operator's type constraints (once per case), or None if inside."""
    if "outside_spec" not in case.memo:
        case.memo["outside_spec"] = constraints.outside_spec(case.op, case.inputs(), case.attrs)
    return case.memo["outside_spec"]


def _exercises_types(case: Case) -> bool:
    """True when the case's data or index type is not the harness's default (float32 data, int64 indices): a
    refusal of such a case, inside the spec, is a dtype deviation rather than a refusal of the operation."""
    inputs = case.inputs()
    indices = inputs.get("indices")  # an optional input a case may leave out (TensorScatter's write_indices)
    return (_dtype_name(inputs["data"].dtype) != dtypes.DEFAULT_DATA_DTYPE
            or (indices is not None and _dtype_name(indices.dtype) != dtypes.DEFAULT_INDEX_DTYPE))


def judge(case: Case, res: Result | Mapping[str, Any], expected: Any) -> dict[str, Any]:
    """Verdict fields for a worker result (a :class:`Result`, or the worker's dict, decoded here): conforms |
    deviates | n/a, with the observed value, error size and a short reason.

    Besides ``verdict`` and ``reason`` the fields always hold ``spec`` (``inside``, or ``outside (<why>)`` when the
    case's element types break the canonical type constraints, harness.reference.constraints). Outside the spec a
    refusal conforms, the reference's value conforms as an ``extension`` (e.g. ``int32-indices``), and only another
    value, a crash or a hang deviates. A deviation also says its kind in ``deviation``: value, output-dtype, dtype (a
    type the spec allows was refused), error (raised where a value is due), no-error (a value where the spec
    raises), crash or timeout. Every value returned is kept (``observed``, its dtype and shape), a value where
    the spec raises included. A harness fault (outcome ``harness-error``) is no answer of the framework: n/a.
    """
    outside = outside_spec(case)
    scope = {"spec": "inside" if outside is None else f"outside ({outside.reason})"}
    fields = _judge(case, Result.of(res), expected, outside)
    if fields["verdict"] == "deviates" and "deviation" not in fields:
        fields["deviation"] = "value"
    return {**scope, **fields}


def open_question(case: Case) -> str | None:
    """What the operator's spec leaves open on ``case``'s input (harness.reference.undecided), once per case."""
    if "open_question" not in case.memo:
        case.memo["open_question"] = undecided(case.op, case.inputs(), case.attrs)
    return case.memo["open_question"]


def _policy_outputs(case: Case) -> list[tuple[str, np.ndarray]]:
    """(behaviour, output) for every policy the reference engine can apply to ``case``, then the operator's own
    behaviours no policy models (harness.reference.alternatives: TensorScatter's ``shift``): what an open input
    allows (the first behaviour of each distinct output), once per case."""
    if "policy_outputs" not in case.memo:
        found: list[tuple[str, np.ndarray]] = []
        for policy in all_policies():
            if not policy.applies_to(case.op):
                continue
            try:
                out = compute(case.op, case.inputs(), case.attrs, policy)
            except ValueError:
                continue
            out = out.example() if isinstance(out, AllowedOutputs) else out
            if not any(compare(out, seen).equal for _, seen in found):
                found.append(("the policy " + ", ".join(f"{k}={v}" for k, v in policy.to_dict().items()), out))
        for label, out in alternatives(case.op, case.inputs(), case.attrs):
            if not any(compare(out, seen).equal for _, seen in found):
                found.append((f"the behaviour '{label}'", out))
        case.memo["policy_outputs"] = found
    return case.memo["policy_outputs"]


def _judge_open(case: Case, res: Result, question: str) -> dict[str, Any] | None:
    """The verdict on an input the spec leaves open: a refusal, or a value some policy gives, conforms (the policy
    is a label, never a verdict); another value deviates. None for outcomes judged as usual (crash, hang)."""
    if res.outcome == "error":
        return {"verdict": "conforms", "reason": f"raised on an input the spec leaves open ({question})"}
    if res.outcome != "ok" or res.observed is None:
        return None
    observed = res.observed
    fields = {"observed": stored(observed), "observed_dtype": _dtype_name(observed.dtype),
              "observed_shape": list(observed.shape)}
    outputs = _policy_outputs(case)
    for policy, output in outputs:
        if observed.dtype == output.dtype and compare(observed, output).equal:
            return {**fields, "verdict": "conforms",
                    "reason": f"the spec leaves this open ({question}); the value is {policy}'s"}
    for policy, output in outputs:  # a policy's values in another type: the type is what deviates
        if compare(observed, output).equal:
            return {**fields, "verdict": "deviates", "deviation": "output-dtype",
                    "reason": f"the spec leaves this open ({question}); the values are {policy}'s, but dtype "
                              f"{fields['observed_dtype']} != expected {_dtype_name(output.dtype)}"}
    return {**fields, "verdict": "deviates", "deviation": "value",
            "reason": f"the spec leaves this open ({question}), but no policy gives this value"}


def _judge(case: Case, res: Result, expected: Any, outside: Outside | None) -> dict[str, Any]:
    outcome = res.outcome
    if outcome == HARNESS_ERROR:
        phase = (res.get("fault") or {}).get("phase", "")
        # Its process was killed from outside, twice, or stopped past the worker memory limit (the fault phases of
        # harness.run.isolation): no answer, and nothing the case says about the framework.
        if phase in (INTERRUPTED, TOO_LARGE):
            return {"verdict": "n/a", "reason": f"{phase}: {res.error_message}"}
        return {"verdict": "n/a", "reason": f"harness fault ({phase}): {res.error_type}: {res.error_message}"}
    if outcome == "unsupported":
        return {"verdict": "n/a", "reason": res.reason}
    if outcome in ("crash", "timeout"):
        return {"verdict": "deviates", "deviation": outcome,
                "reason": f"{outcome}: {res.error_message or ''}".strip()}
    question = open_question(case)
    if question is not None:
        verdict = _judge_open(case, res, question)
        if verdict is not None:
            return verdict
    if outcome == "error":
        if isinstance(expected, ExpectedError):
            return {"verdict": "conforms", "reason": "raised, as canonical semantics require"}
        if outside is not None:
            return {"verdict": "conforms", "reason": f"refused an input outside the spec: {outside.reason}"}
        kind = "dtype" if _exercises_types(case) else "error"
        what = "a type the spec allows" if kind == "dtype" else "an input"
        return {"verdict": "deviates", "deviation": kind,
                "reason": f"refused {what}, where canonical semantics give a value: {res.error_type}"}
    observed = res.observed
    assert observed is not None, "an ok result carries its value"
    fields: dict[str, Any] = {
        "observed": stored(observed),
        "observed_dtype": _dtype_name(observed.dtype),
        "observed_shape": list(observed.shape),
    }
    if isinstance(expected, ExpectedError):  # the value is the finding: kept, so the report and repro show it
        return {**fields, "verdict": "deviates", "deviation": "no-error",
                "reason": f"returned a value where canonical semantics raise ({expected.reason})"}
    conforming = {"verdict": "conforms", "reason": ""}
    if outside is not None:
        conforming = {"verdict": "conforms", "extension": outside.extension,
                      "reason": f"extends the spec: computes {outside.reason} as the reference does"}
    if isinstance(expected, np.ndarray) and _identical(observed, expected):
        # What compare() reports for identical arrays: no error (none defined for bool or empty outputs).
        exact = expected.dtype.kind == "b" or expected.size == 0
        return {**fields, "max_abs_err": None if exact else 0.0, "mismatches": 0, "first_mismatches": [],
                **conforming}
    atol, rtol = tolerance(case, expected)
    cmp = compare(observed, expected, atol=atol, rtol=rtol)
    fields.update(max_abs_err=cmp.max_abs_err, mismatches=cmp.mismatches, first_mismatches=cmp.first_mismatches)
    want = dtypes.name_of(expected.dtype)
    if not cmp.equal:
        return {**fields, "verdict": "deviates", "reason": cmp.reason}
    if fields["observed_dtype"] != want:
        return {**fields, "verdict": "deviates", "deviation": "output-dtype",
                "reason": f"dtype {fields['observed_dtype']} != expected {want}"}
    return {**fields, **conforming}


def expected_field(case: Case, expected: Any) -> Any:
    """The ``expected`` field of a record: "error", the expected array when small, else None (once per case)."""
    if "expected_field" not in case.memo:
        case.memo["expected_field"] = "error" if isinstance(expected, ExpectedError) else stored(expected)
    return case.memo["expected_field"]


def is_finding(record: Record) -> bool:
    """True for a record that is not a plain conformance: it deviates (crashes and hangs included), or its
    behaviour label differs from the canonical one. Such a record carries its repro. An API that cannot express
    the case (unsupported, an axis it requires) made no call, and a harness fault is no behaviour: nothing to
    reproduce."""
    if record.outcome in ("unsupported", HARNESS_ERROR):
        return False
    if record.verdict == "deviates":
        return True
    if record.label and record.dimension:
        from gather_scatter_conformance.harness.judge.dimensions import conforms

        return record.label != "unsupported" and not conforms(record.op, record.dimension, record.label)
    return False
