"""How bad a behaviour label or a result status is, as one class every table of the report shows in colour *and*
symbol: conforming, a defined alternative, a wrong value, memory-unsafe, or not expressible.

A memory-unsafe result (a read of garbage or of a neighbouring element, a crash, a hang) is kept apart from a
defined alternative (clamp, zero, wrap, fill, error, ...): the first can corrupt a model silently or take a
process down, the second is a documented choice a converter can translate. An alternative is a choice only where
the input leaves room for one: on a dimension whose input the spec defines (a negative index counts from the end),
another value (a clamp to 0) is a wrong value, and only a refusal stays an alternative.
"""

from __future__ import annotations

from typing import Literal

from gather_scatter_conformance.vocab.dimensions import is_memory_unsafe

Severity = Literal["ok", "alt", "wrong", "unsafe", "na"]

# Severity -> (symbol, words): the symbol says it without colour (the legend and every cell use these).
SEVERITY: dict[str, tuple[str, str]] = {
    "ok": ("✓", "conforms to canonical ONNX"),
    "alt": ("◇", "a defined alternative (clamp, zero, wrap, fill, error, ...)"),
    "wrong": ("✗", "a wrong value"),
    "unsafe": ("⚠", "memory-unsafe: garbage, a neighbour's element read or written, a crash or a hang"),
    "na": ("·", "not expressible in this API"),
}
ORDER = ("unsafe", "wrong", "alt", "ok", "na")  # worst first
WRONG_LABELS = ("wrong",)


def label_part(part: str) -> Severity:
    """The severity of one non-conforming label (``crash:SIGSEGV``, ``clamp``, ...)."""
    if part == "unsupported":
        return "na"
    if is_memory_unsafe(part):
        return "unsafe"
    return "wrong" if part in WRONG_LABELS else "alt"


REFUSALS = ("error", "required", "unsupported")  # labels that answer no value


def defines_value(op: str, dimension: str) -> bool:
    """Whether the canonical semantics give the value the probe's indices or updates select (a negative index
    counts from the end, duplicates with reduction add sum), so that another value is wrong; not where they refuse
    the input (an index out of range: error), leave the order open (duplicates without a reduction) or leave it to
    a policy (vocab.dimensions.OPEN), nor on an API's attribute default or its support of a type or shape."""
    from gather_scatter_conformance.harness.judge.dimensions import canonical_label, kind
    from gather_scatter_conformance.vocab.dimensions import DIMENSIONS, OPEN

    return (dimension in DIMENSIONS and kind(dimension) in ("index", "duplicates", "uncovered")
            and dimension not in OPEN and canonical_label(op, dimension) not in (None, *REFUSALS))


def of_label(label: str, conforming: bool, op: str = "", dimension: str = "") -> Severity:
    """The severity of a behaviour cell's label (``a|b`` when its probes disagree: the worst part counts).

    ``conforming`` is whether the label (every part of it) agrees with canonical semantics
    (gather_scatter_conformance.harness.judge.dimensions.conforms); a memory-unsafe part is unsafe even then. Given
    ``op`` and ``dimension``, a non-conforming value on a dimension whose input the spec defines
    (:func:`defines_value`) is wrong, not an alternative (a clamp of valid negative indices).
    """
    parts = [p for p in label.split("|") if p != "unsupported"] or ["unsupported"]
    found = {label_part(p) for p in parts}
    if not conforming and dimension and defines_value(op, dimension):
        found |= {"wrong" for p in parts if label_part(p) == "alt" and p not in REFUSALS}
    if "unsafe" in found:
        return "unsafe"
    if found == {"na"}:
        return "na"
    if conforming:
        return "ok"
    return next(s for s in ORDER if s in found)


# Result statuses (harness.report.build.status) -> severity: a refusal is a defined alternative.
STATUS: dict[str, Severity] = {
    "conforms": "ok", "error": "alt", "dtype": "alt", "deviates": "wrong", "crash": "unsafe", "timeout": "unsafe",
    "n/a": "na",
}


def symbol(severity: str) -> str:
    """The symbol a cell of that severity carries."""
    return SEVERITY[severity][0]
