"""Running one case on one framework variant and judging it against the reference engine."""

from __future__ import annotations

import datetime as _dt
import platform
from typing import Any, Protocol

import numpy as np

from harness import dtypes, known, wire
from harness.cases import Case, ExpectedError
from harness.compare import compare, reduction_atol
from harness.isolation import is_risky
from harness.reference import AllowedOutputs, compute, constraints
from harness.reference.constraints import Outside

SMALL = 64  # arrays with at most this many elements are stored whole in records (for the report's drill-down)


class Executor(Protocol):
    """Something that runs a case payload on a framework and returns the worker's result dict."""

    def run(self, framework: str, variant: str, payload: dict[str, Any]) -> dict[str, Any]: ...


class InProcess:
    """Runs adapters in this interpreter: fastest, but a crashing framework takes the run down with it."""

    def run(self, framework: str, variant: str, payload: dict[str, Any]) -> dict[str, Any]:
        from harness.worker import run_case

        return run_case(framework, variant, payload)


def payload(case: Case, device: str = "cpu") -> dict[str, Any]:
    """The builtins-only description of a case that travels to a worker, to run on ``device``.

    The encoded inputs are kept on the case: every framework, variant and device of a run sends the same bytes.
    """
    if "wire_inputs" not in case.memo:
        case.memo["wire_inputs"] = {k: wire.encode(v) for k, v in case.inputs().items()}
        case.memo["fresh"] = is_risky(case.op, case.dimension, case.tags)
    return {
        "device": device,
        "op": case.op,
        "inputs": case.memo["wire_inputs"],
        "attrs": case.attrs,
        "opset": case.spec.opset,
        "omit": list(case.spec.omit),
        "repeat": case.spec.repeat,
        "fresh": case.memo["fresh"],
    }


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


def _small(arr: np.ndarray | AllowedOutputs) -> Any:
    from harness.values import to_jsonable

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
    return (_dtype_name(inputs["data"].dtype) != dtypes.DEFAULT_DATA_DTYPE
            or _dtype_name(inputs["indices"].dtype) != dtypes.DEFAULT_INDEX_DTYPE)


def judge(case: Case, res: dict[str, Any], expected: Any) -> dict[str, Any]:
    """Verdict fields for a worker result: conforms | deviates | n/a, with error size and a short reason.

    Besides ``verdict`` and ``reason`` the fields always hold ``spec`` (``inside``, or ``outside (<why>)`` when the
    case's element types break the canonical type constraints, harness.reference.constraints). Outside the spec a
    refusal conforms, the reference's value conforms as an ``extension`` (e.g. ``int32-indices``), and only another
    value, a crash or a hang deviates. A deviation also says its kind in ``deviation``: value, output-dtype, dtype (a
    type the spec allows was refused), error (raised where a value is due), no-error (a value where the spec
    raises), crash or timeout.
    """
    outside = outside_spec(case)
    scope = {"spec": "inside" if outside is None else f"outside ({outside.reason})"}
    fields = _judge(case, res, expected, outside)
    if fields["verdict"] == "deviates" and "deviation" not in fields:
        fields["deviation"] = "value"
    return {**scope, **fields}


def _judge(case: Case, res: dict[str, Any], expected: Any, outside: Outside | None) -> dict[str, Any]:
    outcome = res["outcome"]
    if outcome == "unsupported":
        return {"verdict": "n/a", "reason": res.get("reason", "")}
    if outcome in ("crash", "timeout"):
        return {"verdict": "deviates", "deviation": outcome,
                "reason": f"{outcome}: {res.get('error_message', '')}".strip()}
    if isinstance(expected, ExpectedError):
        if outcome == "error":
            return {"verdict": "conforms", "reason": "raised, as canonical semantics require"}
        return {
            "verdict": "deviates", "deviation": "no-error",
            "reason": f"returned a value where canonical semantics raise ({expected.reason})",
        }
    if outcome == "error":
        if outside is not None:
            return {"verdict": "conforms", "reason": f"refused an input outside the spec: {outside.reason}"}
        kind = "dtype" if _exercises_types(case) else "error"
        what = "a type the spec allows" if kind == "dtype" else "an input"
        return {"verdict": "deviates", "deviation": kind,
                "reason": f"refused {what}, where canonical semantics give a value: {res['error_type']}"}
    observed = wire.decode(res["value"])
    fields: dict[str, Any] = {
        "observed": _small(observed),
        "observed_dtype": _dtype_name(observed.dtype),
        "observed_shape": list(observed.shape),
    }
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


def _expected_field(case: Case, expected: Any) -> Any:
    if "expected_field" not in case.memo:
        case.memo["expected_field"] = "error" if isinstance(expected, ExpectedError) else _small(expected)
    return case.memo["expected_field"]


def is_finding(record: dict[str, Any]) -> bool:
    """True for a record that is not a plain conformance: it deviates (crashes and hangs included), or its
    behaviour label differs from the canonical one. Such a record carries its repro. An API that cannot express
    the case (unsupported, an axis it requires) made no call: nothing to reproduce."""
    if record["outcome"] == "unsupported":
        return False
    if record["verdict"] == "deviates":
        return True
    if record.get("label") and record.get("dimension"):
        from harness.behaviour import conforms

        return record["label"] != "unsupported" and not conforms(record["op"], record["dimension"], record["label"])
    return False


def execute(case: Case, framework: str, variant: str, executor: Executor, device: str = "cpu") -> dict[str, Any]:
    """Run ``case`` on ``framework``/``variant`` on ``device`` through ``executor``; return the full result record.

    Where the device is absent here the record is only ``{"outcome": "skipped", "reason": ...}``: not a result.
    """
    expected = case.reference()
    res = executor.run(framework, variant, payload(case, device))
    if res["outcome"] == "skipped":
        return {"outcome": "skipped", "reason": res.get("reason", ""), "device": device}
    record: dict[str, Any] = {
        "case": case.nodeid,
        "case_file": case.file,
        "case_id": case.id,
        "op": case.op,
        "tags": case.tags,
        "framework": framework,
        "framework_version": res.get("framework_version", ""),
        "variant": variant,
        "api": res.get("api", ""),
        "device": res.get("device", "cpu"),
        "device_name": res.get("device_name") or None,
        "outcome": res["outcome"],
        "error_type": res.get("error_type"),
        "error_message": res.get("error_message"),
        "signal": res.get("signal"),
        "duration_s": round(float(res.get("duration_s", 0.0)), 6),
        "distinct_outputs": res.get("distinct_outputs"),
        "expected": _expected_field(case, expected),
        "python": res.get("python") or platform.python_version(),
        "host": platform.node(),
        "time": _dt.datetime.now(_dt.UTC).isoformat(timespec="seconds"),
    }
    record.update(judge(case, res, expected))
    if case.spec.dimension:
        from harness.classify import label

        observed = wire.decode(res["value"]) if res["outcome"] == "ok" else None
        record["dimension"] = case.spec.dimension
        record["label"] = label(case.spec.dimension, case.op, case.inputs(), case.attrs, record, observed)
    if is_finding(record):  # its repro script is made from the native call's source (harness.repro)
        record["native"] = res.get("source") or ""
    if record["verdict"] == "deviates":  # an annotation only: the verdict stays what judge() said
        reason = known.lookup(framework, case.nodeid, variant)
        if reason:
            record["known_deviation"] = reason
    return record

