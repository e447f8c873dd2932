"""Comparing an observed output with the reference: exact for data movement, a derived tolerance for reductions.

NaN equals NaN. For float reductions (add, mul) the tolerance grows with the number of contributions that were
accumulated into an element, since frameworks may sum in any order: |obs - exp| <= (k + 1) * eps * max(1, |exp|).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

from gather_scatter_conformance.harness.reference.allowed import AllowedOutputs
from gather_scatter_conformance.vocab import dtypes


@dataclass
class Comparison:
    """The outcome of one comparison: equal or not, and how far apart."""

    equal: bool
    max_abs_err: float | None = None
    mismatches: int = 0
    reason: str = ""
    first_mismatches: list[dict[str, Any]] = field(default_factory=list)


def _as_float(a: np.ndarray) -> np.ndarray:
    if a.dtype.kind == "c":
        return a.astype(np.complex128)
    return a.astype(np.float64)


def _element_equal(obs: np.ndarray, exp: np.ndarray, atol: np.ndarray | float, rtol: float) -> np.ndarray:
    if exp.dtype == object or obs.dtype == object or exp.dtype.kind in "US" or obs.dtype.kind in "US":
        return np.asarray(obs == exp, dtype=bool).reshape(exp.shape)
    if exp.dtype.kind == "b" or obs.dtype.kind == "b":
        return obs.astype(bool) == exp.astype(bool)
    o, e = _as_float(obs), _as_float(exp)
    both_nan = np.isnan(o) & np.isnan(e)
    # A tolerance is for finite values: against an infinity, rtol * inf let any value pass (-inf, 5.0 for inf).
    # Infinities are equal or not (inf == inf holds though inf - inf is nan); no warning reaches the console.
    with np.errstate(invalid="ignore"):
        close = np.isfinite(o) & np.isfinite(e) & (np.abs(o - e) <= atol + rtol * np.abs(e))
    return both_nan | close | (o == e)


def _abs_err(obs: np.ndarray, exp: np.ndarray) -> float | None:
    if exp.dtype == object or exp.dtype.kind in "USb" or exp.size == 0:
        return None
    with np.errstate(invalid="ignore"):  # inf - inf: nan, dropped next
        diff = np.abs(_as_float(obs) - _as_float(exp))
    diff = diff[~np.isnan(diff)]
    return float(diff.max()) if diff.size else 0.0


def reduction_atol(dtype_name: str, expected: np.ndarray, contributions: np.ndarray | int) -> np.ndarray | float:
    """Absolute tolerance per element for a float reduction with ``contributions`` accumulated terms."""
    eps = dtypes.eps(dtype_name)
    if eps == 0.0:
        return 0.0
    mag = np.maximum(1.0, np.abs(_as_float(expected)))
    return (np.asarray(contributions) + 1) * eps * mag


def compare(
    observed: Any, expected: np.ndarray | AllowedOutputs, *, atol: np.ndarray | float = 0.0, rtol: float = 0.0
) -> Comparison:
    """Compare ``observed`` with ``expected`` (an array, or the set of allowed outputs) and say how they differ."""
    obs = np.asarray(observed)
    exp_shape = expected.shape
    if tuple(obs.shape) != tuple(exp_shape):
        return Comparison(
            False,
            None,
            int(np.prod(exp_shape, dtype=np.int64)),
            f"shape {list(obs.shape)} != expected {list(exp_shape)}",
        )
    if isinstance(expected, AllowedOutputs):
        ok = expected.contains(obs)
        reference = expected.example()
    else:
        ok = _element_equal(obs, expected, atol, rtol)
        reference = expected
    bad = np.argwhere(~ok)
    first = [
        {
            "index": [int(i) for i in idx],
            "expected": _scalar(reference[tuple(idx)]),
            "observed": _scalar(obs[tuple(idx)]),
        }
        for idx in bad[:5]
    ]
    return Comparison(
        equal=not len(bad),
        max_abs_err=_abs_err(obs, reference) if not isinstance(expected, AllowedOutputs) else None,
        mismatches=len(bad),
        reason="" if not len(bad) else f"{len(bad)} of {obs.size} element(s) differ",
        first_mismatches=first,
    )


def _scalar(x: Any) -> Any:
    if isinstance(x, np.generic):
        if np.iscomplexobj(x):
            return [float(np.real(x)), float(np.imag(x))]
        if x.dtype.kind in "iu":
            return int(x)
        if x.dtype.kind == "b":
            return bool(x)
        return float(x) if x.dtype.kind == "f" or dtypes.name_of(x.dtype) == "bfloat16" else str(x)
    return x if isinstance(x, str | int | float | bool) else str(x)
