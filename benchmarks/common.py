"""What every benchmark part shares: interleaved repeated timing, result rows, and printing them.

The machine these run on is small and shared, so absolute times wander by tens of percent between minutes. A
ratio is only meaningful when both sides were timed close together: every part times its two sides alternately
(A B, B A, A B, ...), takes the median of each side's repetitions, and reports their ratio.
"""

from __future__ import annotations

import statistics
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))



@dataclass
class Row:
    """One measured claim: ``value`` (a ratio, or seconds where ``unit`` says so) against ``target``.

    ``holds`` is None when there is no target (context rows); ``detail`` carries the raw medians.
    """

    part: str
    name: str
    value: float | None
    target: str = ""
    holds: bool | None = None
    unit: str = "x"
    detail: str = ""
    extra: dict[str, Any] = field(default_factory=dict)


def records_of(path: Path) -> dict[tuple[str, str, str, str], dict[str, Any]]:
    """A results file's records as JSON objects by (case, framework, variant, device), read by the harness's own
    reader (its manifest line aside, every record checked)."""
    from gather_scatter_conformance.harness.run.records import read

    return {rec.key: rec.model_dump(mode="json", exclude_none=True) for rec in read([path])}


def interleaved(sides: dict[str, Callable[[], float]], reps: int) -> dict[str, list[float]]:
    """Run each side ``reps`` times, alternating the order every round; each call returns its own duration."""
    names = list(sides)
    out: dict[str, list[float]] = {n: [] for n in names}
    for r in range(reps):
        for n in names if r % 2 == 0 else reversed(names):
            out[n].append(sides[n]())
    return out


def timed(fn: Callable[[], Any]) -> float:
    """Seconds one call of ``fn`` takes."""
    start = time.perf_counter()
    fn()
    return time.perf_counter() - start


def median(xs: list[float]) -> float:
    """The median (the statistic every ratio here is built from)."""
    return statistics.median(xs)


def ratio_row(part: str, name: str, num: list[float], den: list[float], limit: float | None, strict: bool = False,
              what: tuple[str, str] = ("harness", "floor"), unit_scale: float = 1.0, unit: str = "s") -> Row:
    """A Row for median(num) / median(den) against ``limit`` (``<=``, or ``<`` when ``strict``)."""
    a, b = median(num), median(den)
    value = a / b if b > 0 else float("inf")
    holds = None if limit is None else (value < limit if strict else value <= limit)
    target = "" if limit is None else f"{'<' if strict else '<='} {limit:g}"
    detail = f"{what[0]} {a * unit_scale:.4g} {unit}, {what[1]} {b * unit_scale:.4g} {unit} (medians of {len(num)})"
    return Row(part, name, value, target, holds, "x", detail)


def print_rows(rows: list[Row], out: Any = None) -> None:
    """A plain table: part, name, value, target, verdict, detail."""
    out = out or sys.stdout
    width = max((len(r.name) for r in rows), default=10)
    for r in rows:
        value = _value(r, ".2f" if r.unit == "x" else ".3g")
        verdict = {True: "holds", False: "MISSES", None: ""}[r.holds]
        print(f"  {r.part:<11} {r.name:<{width}}  {value:>10}  {r.target:<7} {verdict:<7} {r.detail}", file=out)
    out.flush()


def summary_lines(rows: list[Row]) -> list[str]:
    """The run's closing summary: how many claims hold, then one line per claim that misses. A claim with no value
    (its part failed or was skipped: ``value`` None) reads ``n/a``; a row without a target is no claim."""
    judged = [r for r in rows if r.holds is not None]
    lines = [f"summary: {sum(bool(r.holds) for r in judged)} of {len(judged)} claims hold"]
    for r in judged:
        if not r.holds:
            lines.append(f"  misses: {r.part} {r.name}: {_value(r, '.2f')} (target {r.target})")
    return lines


def _value(r: Row, spec: str) -> str:
    """A row's value with its unit (``1.50x``, ``0.06 s``), or ``n/a`` for none."""
    if r.value is None:
        return "n/a"
    return f"{r.value:{spec}}" + (r.unit if r.unit == "x" else f" {r.unit}")
