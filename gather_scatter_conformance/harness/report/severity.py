"""How bad a behaviour label or a result status is, as one class every table of the report shows in colour *and*
symbol: conforming, a defined alternative, a wrong value, memory-unsafe, or not expressible.

A memory-unsafe result (a read of garbage or of a neighbouring element, a crash, a hang) is kept apart from a
defined alternative (clamp, zero, wrap, fill, error, ...): the first can corrupt a model silently or take a
process down, the second is a documented choice a converter can translate.
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


def of_label(label: str, conforming: bool) -> Severity:
    """The severity of a behaviour cell's label (``a|b`` when its probes disagree: the worst part counts).

    ``conforming`` is whether the label (every part of it) agrees with canonical semantics
    (gather_scatter_conformance.harness.judge.dimensions.conforms); a memory-unsafe part is unsafe even then.
    """
    parts = [p for p in label.split("|") if p != "unsupported"] or ["unsupported"]
    found = {label_part(p) for p in parts}
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
