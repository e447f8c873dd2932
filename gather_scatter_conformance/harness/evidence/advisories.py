"""``gsc advisories RESULTS... --out DIR``: one markdown advisory per framework release (``<framework>-<version>.md``)
listing its memory-unsafe behaviours for the framework's security contact, each with its API, case, minimal input,
the memory checkers' evidence (``gsc memcheck``), the distribution of what was seen, the releases the history shows
it in, and its repro script written beside it. Nothing is sent anywhere."""

from __future__ import annotations

import argparse
import json
import re
import sys
import time
from collections import defaultdict
from pathlib import Path
from typing import TYPE_CHECKING, Any

from gather_scatter_conformance.harness.evidence import cells
from gather_scatter_conformance.harness.evidence.memcheck import script_name
from gather_scatter_conformance.harness.evidence.verdict import describe
from gather_scatter_conformance.vocab.safe import md

if TYPE_CHECKING:
    from gather_scatter_conformance.vocab.record import Record


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """The command's options on ``parser``."""
    parser.add_argument("files", nargs="+", help="results files (JSON Lines)")
    parser.add_argument("--evidence", default="", help="gsc memcheck's evidence file (JSON Lines)")
    parser.add_argument("--history", default="", help="release sweeps (history/<framework>.jsonl; default: ./history "
                        "if present)")
    parser.add_argument("--out", required=True, help="output directory")
    parser.add_argument("--only", default="", help="one framework, or FRAMEWORK:VARIANT")
    parser.add_argument("--paths", action="store_true", help="include converter paths (a~b~c)")


def main(args: argparse.Namespace) -> int:
    """Write the advisories; the exit code."""
    from gather_scatter_conformance.harness.run.records import read

    evidence = read_evidence(Path(args.evidence)) if args.evidence else {}
    history = Path(args.history) if args.history else (Path("history") if Path("history").is_dir() else None)
    records = list(read(args.files))
    chosen = cells.select(records, args.only, (), args.paths)
    # a cell checked on request (gsc memcheck --case) is listed too: its evidence is why
    framework, _, variant = args.only.partition(":")
    for rec in records:
        if cells.key(rec) in evidence and rec.device == "cpu" and rec.verdict == "deviates" \
                and (not framework or rec.framework == framework) and (not variant or rec.variant == variant):
            chosen[cells.key(rec)] = rec
    written = write(chosen, evidence, history, Path(args.out))
    for path, n in written:
        print(f"{path}: {n} memory-unsafe behaviour(s)")
    if not written:
        print("no memory-unsafe records in the results: nothing written")
    return 0


def read_evidence(path: Path) -> dict[cells.Cell, dict[str, Any]]:
    """Cell -> its evidence line (the last one for a cell wins). Raises SystemExit with one line for a file that is
    not an evidence file."""
    out: dict[cells.Cell, dict[str, Any]] = {}
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except (OSError, UnicodeDecodeError) as exc:
        sys.exit(f"gsc advisories: {path}: cannot be read as an evidence file ({exc})")
    for n, line in enumerate(lines, 1):
        if not line.strip():
            continue
        try:
            entry = json.loads(line)
            if "verdict" not in entry:
                raise KeyError("verdict")
            out[cells.line_key(entry)] = entry
        except (json.JSONDecodeError, KeyError, TypeError):
            if n == len(lines):  # a torn last line from an interrupted gsc memcheck
                continue
            sys.exit(f"gsc advisories: {path}:{n}: not an evidence line (expected gsc memcheck's JSON lines)")
    return out


def _slug(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9._+-]+", "_", text).strip("_") or "unknown"


def release_of(version: str) -> str:
    """A framework's version string as a release number for file names (``2.13.0+cpu`` -> ``2.13.0``)."""
    from gather_scatter_conformance.harness.history.store import normalised

    return _slug(normalised(version)) if version else "unknown"


def write(chosen: dict[cells.Cell, Record], evidence: dict[cells.Cell, dict[str, Any]],
          history: Path | None, out: Path) -> list[tuple[Path, int]]:
    """Write one advisory per framework release of the ``chosen`` records, and each behaviour's repro script under
    ``<framework>-<release>/``; (advisory path, behaviours) for each file written."""
    groups: dict[tuple[str, str], list[Record]] = defaultdict(list)
    for rec in chosen.values():
        groups[(rec.framework, release_of(rec.framework_version))].append(rec)
    index = cells.Cases()
    out.mkdir(parents=True, exist_ok=True)
    written = []
    for (framework, release), recs in sorted(groups.items()):
        stem = f"{_slug(framework)}-{release}"
        (out / stem).mkdir(exist_ok=True)
        hist = _history(history, framework)
        names = [script_name(r) for r in recs]
        sections = []
        for n, rec in enumerate(sorted(recs, key=lambda r: _order(r, evidence)), 1):
            case = index.get(rec.case)
            script = None
            if case is not None:
                try:
                    text = cells.repro_script(case, rec)
                except ValueError:
                    text = None
                if text:  # case ids are unique within their file: a name two share gets the file's stem
                    script = f"{stem}/{script_name(rec, qualified=names.count(script_name(rec)) > 1)}"
                    (out / script).write_text(text)
            sections.append(_section(n, rec, case, evidence.get(cells.key(rec)), script, hist))
        path = out / f"{stem}.md"
        path.write_text(_head(framework, recs, evidence, history, hist) + "\n".join(sections))
        written.append((path, len(recs)))
    return written


def _order(rec: Record, evidence: dict[cells.Cell, dict[str, Any]]) -> tuple[Any, ...]:
    """Proved writes first, then reads, uninitialised reads, the unprovable, the unchecked; then by API and case."""
    from gather_scatter_conformance.harness.evidence.verdict import VERDICTS

    ev = evidence.get(cells.key(rec))
    rank = VERDICTS.index(ev["verdict"]) if ev and ev.get("verdict") in VERDICTS else len(VERDICTS)
    return rank, rec.variant, rec.case


def _history(directory: Path | None, framework: str) -> list[dict[str, Any]] | None:
    if directory is None:
        return None
    from gather_scatter_conformance.harness.history import store

    return store.read(directory, framework) if store.path_for(directory, framework).exists() else None


def _head(framework: str, recs: list[Record], evidence: dict[cells.Cell, dict[str, Any]],
          history: Path | None, hist: list[dict[str, Any]] | None) -> str:
    version = recs[0].framework_version
    verdicts: dict[str, int] = defaultdict(int)
    for rec in recs:
        line = evidence.get(cells.key(rec))
        verdicts[line["verdict"] if line else "not checked"] += 1
    counts = ", ".join(f"{n} {v}" for v, n in sorted(verdicts.items()))
    return "\n".join([
        f"# Memory-unsafe behaviours in {framework} {version}",
        "",
        f"Written {time.strftime('%Y-%m-%d')} by `gsc advisories` (gather-scatter-conformance) for {framework}'s "
        "security contact. Each behaviour below is an indexing call (Gather, Scatter, ...) that read or wrote memory "
        "it does not own, crashed, or hung on the input shown; each has a standalone repro script beside this file. "
        "Nothing was sent anywhere.",
        "",
        f"- Behaviours: {len(recs)}",
        f"- Memory checkers' verdicts (`gsc memcheck`; write > read > uninitialised > unprovable): {counts}",
        f"- Release history: {'from ' + str(history) if hist else 'no release history'}",
        "- Python: " + ", ".join(sorted({r.python or "?" for r in recs})),
        "",
    ]) + "\n"


def _section(n: int, rec: Record, case: Any, ev: dict[str, Any] | None, script: str | None,
             hist: list[dict[str, Any]] | None) -> str:
    from gather_scatter_conformance.harness.run.repro import literal

    cid, variant = rec.case, rec.variant
    observed: str = rec.outcome
    if rec.label:
        observed += f", label {rec.dimension} = {rec.label}"
    if rec.signal:
        observed += f" (signal {rec.signal})"
    if rec.reason:
        observed += f": {rec.reason}"
    about = f": {case.op} {json.dumps(case.attrs)}" if case is not None else " (case file not found here)"
    lines = [f"## {n}. {variant}: {cid.rpartition('::')[2]} ({cid.partition('::')[0]})",
             "",
             f"- API: `{rec.api or '(not recorded)'}` (variant {variant}, {rec.device})",
             f"- Case: `{cid}`{about}",
             f"- Observed: {observed}",
             f"- Distribution: {_distribution(rec)}",
             f"- Releases: {_releases(rec, hist)}",
             ""]
    if case is not None:
        lines += ["Minimal input:", "", "```python",
                  *(f"{name} = {literal(arr)}" for name, arr in case.inputs().items()), "```", ""]
    lines += evidence_lines(ev)
    if script:
        lines += [f"Repro: [`{script}`]({script}) (`python {script.rpartition('/')[2]}`; it exits 0 when the behaviour "
                  "reproduces; `--child` makes the call in the script's own process)", ""]
    else:
        lines += ["Repro: none (no native call recorded for this adapter)", ""]
    return "\n".join(lines) + "\n"


def evidence_lines(ev: dict[str, Any] | None) -> list[str]:
    """A cell's memory-checker evidence (a ``gsc memcheck`` line, or None) as markdown lines: the verdict and its
    reason, then what each checker saw (its first three errors). The evidence file is input too: its text is
    escaped (vocab.safe.md)."""
    if ev is None:
        return ["Memory checkers: not checked (no `gsc memcheck` evidence for this cell)", ""]
    lines = [f"Memory checkers (`gsc memcheck`, {md(ev.get('measured', ''))}): **{md(ev.get('verdict'))}**: "
             f"{md(ev.get('reason'))}", ""]
    for chk in ev.get("checkers") or []:
        if not isinstance(chk, dict):
            continue
        if not chk.get("ran"):
            lines.append(f"- {md(chk.get('name'))}: not run ({md(chk.get('note') or 'unavailable')})")
            continue
        end = "timed out" if chk.get("timed_out") else f"exit {md(chk.get('exit'))}"
        extra = f", {md(chk['suppressed'])} suppressed" if chk.get("suppressed") else ""
        errors = md(chk.get("error_count", 0))
        lines.append(f"- {md(chk.get('name'))}: {_seconds(chk.get('seconds'))} s, {end}, {errors} error(s){extra}"
                     + (f"; {md(chk['note'])}" if chk.get("note") else ""))
        for err in (chk.get("errors") or [])[:3]:
            lines.append(f"  - {md(err.get('kind'))}: {md(describe(err))}")
    return [*lines, ""]


def _seconds(value: Any) -> str:
    return f"{value:g}" if isinstance(value, int | float) else md(value)


def _distribution(rec: Record) -> str:
    dist = rec.distribution
    if dist:
        total = sum(dist.values())
        return ", ".join(f"{label} {count}/{total}" for label, count in sorted(dist.items(), key=lambda kv: -kv[1]))
    return f"{rec.label or rec.outcome} (one observation; no distribution recorded)"


def _releases(rec: Record, hist: list[dict[str, Any]] | None) -> str:
    if hist is None:
        return "no release history"
    from gather_scatter_conformance.harness.history import store
    from gather_scatter_conformance.harness.judge.baseline import item_key
    from gather_scatter_conformance.vocab.dimensions import is_memory_unsafe

    by_release = store.case_labels(hist).get(item_key(rec.case, rec.variant, rec.device))
    if by_release:
        bad = [r for r, label in by_release.items() if is_memory_unsafe(label)]
        good = [f"{r} ({label})" for r, label in by_release.items() if not is_memory_unsafe(label)]
        text = f"memory-unsafe in {', '.join(bad) or 'none measured'}"
        return text + (f"; not in {', '.join(good)}" if good else "")
    seeds = {r["release"] for r in hist if r.get("status") == "ok" and r.get("dimension") == store.SEED_DIMENSION
             and r.get("variant") == rec.variant and rec.case in (r.get("deviating") or [])}
    if seeds:
        return f"deviates in {', '.join(sorted(seeds))} (release sweeps record seed cases' verdicts, not labels)"
    return "not in the release history (never swept for this case and variant)"
