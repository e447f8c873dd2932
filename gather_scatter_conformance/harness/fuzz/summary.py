"""Framework × framework agreement over a fuzz run: the fraction of cases on which two APIs did the same thing.

Two results agree when both raised, both crashed with the same signal, or both returned values of the same shape
that are equal element by element (NaN equals NaN; float add/mul reductions within the case's tolerance; the
dtype is not compared, the reference verdict judges it). A pair is compared only on cases both APIs ran:
unsupported and skipped results are left out, so each fraction comes with its count. The reference engine takes
part as ``reference``: an error where canonical semantics raise, else its value (any allowed output where
duplicate scatter targets leave the choice open).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from gather_scatter_conformance.harness.cases.load import ExpectedError
from gather_scatter_conformance.harness.fuzz.differ import ApiRun, CaseRun
from gather_scatter_conformance.harness.judge.verdict import tolerance
from gather_scatter_conformance.harness.reference import AllowedOutputs
from gather_scatter_conformance.harness.reference.compare import compare

REFERENCE = "reference"


def _token(run: ApiRun) -> Any:
    outcome = run.outcome()
    if outcome in ("unsupported", "skipped"):
        return None
    if outcome == "ok":
        return run.observed
    if outcome == "crash":
        return ("crash", run.record.signal if run.record else None)
    return (outcome,)


def _same(a: Any, b: Any, cr: CaseRun) -> bool:
    if isinstance(a, tuple) or isinstance(b, tuple):
        return isinstance(a, tuple) and isinstance(b, tuple) and a == b
    if a is None or b is None:
        return False
    expected = cr.case.reference()
    if isinstance(b, AllowedOutputs):
        a, b = b, a
    if isinstance(a, AllowedOutputs):
        return a.shape == tuple(np.shape(b)) and bool(a.allows(b))
    atol, rtol = tolerance(cr.case, expected) if isinstance(expected, np.ndarray) else (0.0, 0.0)
    try:
        return np.shape(a) == np.shape(b) and compare(a, b, atol=atol, rtol=rtol).equal
    except (TypeError, ValueError):
        return False


def agreement(runs: list[CaseRun]) -> dict[str, dict[str, dict[str, int]]]:
    """``{a: {b: {"agree": k, "n": m}}}`` over every pair of APIs (and the reference) in ``runs``."""
    out: dict[str, dict[str, dict[str, int]]] = {}
    for cr in runs:
        ref = cr.case.reference()
        tokens: dict[str, Any] = {REFERENCE: ("error",) if isinstance(ref, ExpectedError) else ref}
        tokens.update({r.api: _token(r) for r in cr.runs})
        names = list(tokens)
        for i, a in enumerate(names):
            for b in names[i:]:
                ta, tb = tokens[a], tokens[b]
                if ta is None or tb is None:
                    continue
                with np.errstate(all="ignore"):
                    same = int(a == b or _same(ta, tb, cr))
                for x, y in ((a, b), (b, a)) if a != b else ((a, b),):
                    cell = out.setdefault(x, {}).setdefault(y, {"agree": 0, "n": 0})
                    cell["agree"] += same
                    cell["n"] += 1
    return out


def per_api(runs: list[CaseRun]) -> dict[str, dict[str, float]]:
    """``{api: {status: count, "seconds": wall time}}`` with statuses agree (with the reference), labelled,
    finding, n/a; the time includes compiling and any worker restart."""
    out: dict[str, dict[str, float]] = {}
    for cr in runs:
        for r in cr.runs:
            row = out.setdefault(r.api, {"agree": 0, "labelled": 0, "finding": 0, "n/a": 0, "seconds": 0.0})
            row[r.verdict.status] += 1
            row["seconds"] = round(row["seconds"] + r.seconds, 3)
    return out


def default_apis(runs: list[CaseRun]) -> list[str]:
    """Each framework's first (default) API in run order, after the reference: the rows of the printed table."""
    seen: dict[str, str] = {}
    for r in runs[0].runs if runs else []:
        seen.setdefault(r.framework, r.api)
    return [REFERENCE, *seen.values()]


def table(op: str, agree: dict[str, dict[str, dict[str, int]]], apis: list[str]) -> str:
    """A text table of agreement percentages between ``apis`` ('-' where no case was compared)."""
    short = [a.split(":")[0] if a != REFERENCE else "ref" for a in apis]
    width = max(8, *(len(s) + 1 for s in short))
    lines = [f"{op}: % of cases with identical outcome (rows/columns: reference and each framework's default API)",
             " " * 28 + "".join(f"{s[:width - 1]:>{width}}" for s in short)]
    for a in apis:
        cells = []
        for b in apis:
            c = agree.get(a, {}).get(b)
            cells.append(f"{100 * c['agree'] / c['n']:>{width}.0f}" if c and c["n"] else f"{'-':>{width}}")
        lines.append(f"{a[:27]:<28}" + "".join(cells))
    counts = [agree[a][b]["n"] for a in apis for b in apis if a != b and agree.get(a, {}).get(b)]
    if counts:
        lines.append(f"(each pair over the cases both ran: {min(counts)} to {max(counts)}; --json has every API)")
    return "\n".join(lines)


def status_table(counts: dict[str, dict[str, float]]) -> str:
    """Per API: results that agree with the reference, labelled deviations, findings, n/a, and seconds spent."""
    cols = ("agree", "labelled", "finding", "n/a")
    lines = [f"{'api':<40}" + "".join(f"{c:>10}" for c in cols) + f"{'seconds':>10}"]
    for api, row in counts.items():
        lines.append(f"{api[:39]:<40}" + "".join(f"{int(row[c]):>10}" for c in cols) + f"{row['seconds']:>10.1f}")
    return "\n".join(lines)
