"""A cell's verdict from its checkers' runs: ``write``, ``read``, ``uninitialised`` or ``unprovable``, with a reason
made of what was measured (never of what was assumed)."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from typing import Any

VERDICTS = ("write", "read", "uninitialised", "unprovable")
_VERDICT_OF = {"invalid-write": "write", "invalid-free": "write", "invalid-read": "read",
               "uninitialised": "uninitialised"}


def decide(checkers: list[dict[str, Any]]) -> tuple[str, str]:
    """(verdict, reason) from the evidence file's ``checkers`` entries. The worst access any checker proved wins
    (write, then read, then uninitialised); an Electric Fence fault proves an access past a block but not its
    direction, and counts as a read. ``unprovable`` when no checker reported anything: its reason says what ran, for
    how long, and what each saw (or why it did not run)."""
    best: tuple[int, str, str] | None = None
    for chk in checkers:
        for err in chk.get("errors") or []:
            verdict = _VERDICT_OF.get(err["kind"]) or ("read" if chk["name"] == "efence" else None)
            if verdict is None:
                continue
            # within a class the access itself comes first (an invalid write before an invalid free), and
            # memcheck's report (size, offset, block, stacks) before another checker's
            rank = VERDICTS.index(verdict) * 4 + 2 * (err["kind"] == "invalid-free") + (chk["name"] != "memcheck")
            if best is None or rank < best[0]:
                reason = f"{chk['name']}: {describe(err)}"
                if err["kind"] == "other":  # an Electric Fence fault
                    reason += " (Electric Fence does not tell a read from a write: the lesser is claimed)"
                best = (rank, verdict, reason)
    if best is not None:
        return best[1], best[2]
    return "unprovable", "; ".join(_summary(c) for c in checkers if c["name"] != "plain") or "no checker ran"


def describe(err: dict[str, Any]) -> str:
    """One finding in a line: what the checker said, where, and the block's allocation."""
    text = err.get("what") or err["kind"]
    if err.get("frame") and err["frame"] != "???":
        text += f" at {err['frame']}"
        if err.get("first_frame") and err["first_frame"] != err["frame"]:
            text += f" (first frame {err['first_frame']})"
    elif err.get("first_frame"):
        jit = err["first_frame"].startswith("??? (0x")  # code in no mapped file: what a JIT wrote
        text += f" at {err['first_frame']} (no frame has a symbol{': JIT code' if jit else ''})"
    if err.get("alloc_frame"):
        text += f"; block alloc'd by {err['alloc_frame']}"
    return text


def _summary(chk: dict[str, Any]) -> str:
    """What one checker measured, in a few words."""
    name = chk["name"]
    if not chk["ran"]:
        return f"{name}: not run ({chk.get('note') or 'unavailable'})"
    if chk.get("timed_out"):
        return f"{name}: did not finish within {chk['seconds']:g} s, 0 errors reported before"
    if name == "memcheck":
        supp = chk.get("suppressed") or 0
        return (f"memcheck ran {chk['seconds']:g} s, reported 0 errors outside the suppressions"
                + (f" ({supp} suppressed)" if supp else "") + f", exit {chk['exit']}{_note(chk)}")
    if name == "efence":
        what = "gave up" if "gave up" in (chk.get("note") or "") else "no fault"
        return f"efence: {what} ({chk['seconds']:g} s, exit {chk['exit']}{_note(chk)})"
    return f"{name}: no heap message ({chk['seconds']:g} s, exit {chk['exit']}{_note(chk)})"


def _note(chk: dict[str, Any]) -> str:
    return f"; {chk['note']}" if chk.get("note") else ""


def tally(lines: Iterable[dict[str, Any]], cells: set[tuple[str, str, str]] | None = None) -> dict[str, Counter[str]]:
    """Framework -> how many of its cells each verdict holds, from evidence lines (the last line of a cell wins;
    ``cells``: only those (case, framework, variant))."""
    last: dict[tuple[str, str, str], dict[str, Any]] = {}
    for line in lines:
        key = (line["case"], line["framework"], line.get("variant", ""))
        if cells is None or key in cells:
            last[key] = line
    out: dict[str, Counter[str]] = {}
    for (_, framework, _), line in last.items():
        out.setdefault(framework, Counter())[line.get("verdict", "unprovable")] += 1
    return dict(sorted(out.items()))


def tally_text(counts: dict[str, Counter[str]]) -> str:
    """The tally as a table: a line per framework, a column per verdict, and the totals."""
    head = f"{'framework':<22}" + "".join(f"{v:>15}" for v in VERDICTS)
    rows = [f"{fw:<22}" + "".join(f"{c[v]:>15}" for v in VERDICTS) for fw, c in counts.items()]
    total = sum(counts.values(), Counter())
    return "\n".join([head, *rows, f"{'all':<22}" + "".join(f"{total[v]:>15}" for v in VERDICTS)])
