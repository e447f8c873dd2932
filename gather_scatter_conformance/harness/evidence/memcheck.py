"""``gsc memcheck RESULTS... --out FILE.jsonl``: each memory-unsafe finding's repro script run under memory checkers,
one evidence line per cell appended as it finishes (an interrupted run loses nothing; a second run skips the cells
already in the file). docs/memcheck.md describes the checkers and the evidence format."""

from __future__ import annotations

import argparse
import json
import os
import re
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path
from typing import TYPE_CHECKING, Any

from gather_scatter_conformance.harness.evidence import cells, checkers, parse, verdict

if TYPE_CHECKING:
    from gather_scatter_conformance.vocab.record import Record

_MAX_ERRORS = 20  # distinct errors kept per checker (error_count has them all)
_QUICK_FLOOR = 20.0  # seconds Electric Fence and glibc's checks get at least


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """The command's options on ``parser``."""
    parser.add_argument("files", nargs="+", help="results files (JSON Lines)")
    parser.add_argument("--out", required=True, help="the evidence file (JSON Lines), appended to; cells in it are "
                        "skipped")
    parser.add_argument("--checkers", default="memcheck,efence,malloc",
                        help=f"comma-separated, of {', '.join(checkers.NAMES)} (default: all)")
    parser.add_argument("--timeout", type=float, default=600, help="seconds per checker run (default 600)")
    parser.add_argument("--batch", type=int, default=8,
                        help="cells per memcheck process, each forked from one warm interpreter so that the "
                        "framework is imported once under memcheck (default 8; 1: a process per cell)")
    parser.add_argument("--all-checkers", action="store_true",
                        help="run efence and malloc even where memcheck proved the access (default: only where it "
                        "did not)")
    parser.add_argument("--only", default="", help="one framework, or FRAMEWORK:VARIANT")
    parser.add_argument("--limit", type=int, default=0, help="check at most N cells this run")
    parser.add_argument("--case", action="append", default=[], help="only this case (file::id or id; repeatable): "
                        "its deviating records are checked too, memory-unsafe label or not")
    parser.add_argument("--paths", action="store_true", help="include converter paths (a~b~c)")
    parser.add_argument("--python", action="append", default=[], metavar="FRAMEWORK=PATH",
                        help="the interpreter for a framework's scripts (default: .venv-<framework> where this "
                        "interpreter lacks it, else this interpreter)")
    parser.add_argument("--keep-scripts", default="", help="keep the scripts and memcheck's XML "
                        "(<script>.memcheck.xml) here (default: a temporary directory)")


def main(args: argparse.Namespace) -> int:
    """Run the command; the exit code (2 for a usage problem)."""
    from gather_scatter_conformance.harness.run.records import read

    names = [n.strip() for n in args.checkers.split(",") if n.strip()]
    bad = [n for n in names if n not in checkers.NAMES]
    if bad or not names:
        print(f"gsc memcheck: unknown checker(s) {', '.join(bad) or '(none)'}; known: {', '.join(checkers.NAMES)}",
              file=sys.stderr)
        return 2
    try:
        table = cells.pythons(args.python)
    except ValueError as exc:
        print(f"gsc memcheck: {exc}", file=sys.stderr)
        return 2
    chosen = cells.select(read(args.files), args.only, args.case, args.paths)
    done = done_cells(Path(args.out))
    todo = [c for c in chosen if c not in done]
    if args.limit:
        todo = todo[: args.limit]
    print(f"{len(chosen)} memory-unsafe cell(s), {len(chosen) - len([c for c in chosen if c not in done])} already "
          f"in {args.out}, checking {len(todo)} with {', '.join(names)}", flush=True)
    index = cells.Cases()
    with tempfile.TemporaryDirectory(prefix="gsc-memcheck-") as tmp:
        scripts = Path(args.keep_scripts or tmp)
        scripts.mkdir(parents=True, exist_ok=True)
        ready: list[tuple[cells.Cell, Path, str]] = []
        for cell in todo:
            rec = chosen[cell]
            case = index.get(rec.case)
            if case is None:
                print(f"{_name(cell)}: case not found (run from the directory the run was made in): not checked",
                      flush=True)
                continue
            try:
                text = cells.repro_script(case, rec)
            except ValueError as exc:
                print(f"{_name(cell)}: {exc}: not checked", flush=True)
                continue
            script = scripts / script_name(rec, qualified=True)
            script.write_text(text)
            ready.append((cell, script, cells.python_for(rec.framework, table)))
        n = 0
        follow = {cell[1]: cells.call_process(cell[1]) for cell, _, _ in ready}
        size = max(1, args.batch) if "memcheck" in names else 1
        for batch in batches(ready, size, {fw for fw, program in follow.items() if program}):
            python = batch[0][2]
            forked: dict[Path, checkers.Run] = {}
            if len(batch) > 1:
                forked, outer = checkers.memcheck_batch([s for _, s, _ in batch], python, args.timeout, scripts)
                if not forked:
                    print(f"a batch of {len(batch)} {batch[0][0][1]} cell(s) ran none: {outer.note or outer.exit} "
                          f"{outer.stderr[-300:].strip()}; rerun to resume", flush=True)
            for cell, script, _ in batch:
                n += 1
                if len(batch) > 1 and script not in forked:
                    print(f"[{n}/{len(ready)}] {_name(cell)}: not reached by its batch; rerun to resume", flush=True)
                    continue
                line = check(chosen[cell], script, python, names, args.timeout, forked.get(script), args.all_checkers,
                             follow[cell[1]])
                _append(Path(args.out), line)
                took = ", ".join(f"{c['name']} {c['seconds']:g} s" for c in line["checkers"] if c["ran"])
                print(f"[{n}/{len(ready)}] {_name(cell)}: {line['verdict']} ({took}): {line['reason']}", flush=True)
    print(verdict.tally_text(verdict.tally(_lines(Path(args.out)), set(chosen))), flush=True)
    return 0


def _lines(path: Path) -> list[dict[str, Any]]:
    """The evidence file's lines (a torn line, or one that names no cell, skipped)."""
    out = []
    for text in path.read_text(encoding="utf-8").splitlines() if path.exists() else []:
        try:
            line = json.loads(text)
            cells.line_key(line)
        except (json.JSONDecodeError, KeyError, TypeError):
            continue
        out.append(line)
    return out


def batches(ready: list[tuple[cells.Cell, Path, str]], size: int,
            alone: set[str] = frozenset()) -> list[list[tuple[cells.Cell, Path, str]]]:
    """``ready`` (cell, script, interpreter) in batches of at most ``size`` cells that share an interpreter and a
    framework (one warm import serves them all), in the order given; a framework in ``alone`` (its calls run in a
    program memcheck must follow, which a forked batch does not) a cell at a time."""
    groups: dict[tuple[str, str], list[tuple[cells.Cell, Path, str]]] = {}
    for item in ready:
        groups.setdefault((item[2], item[0][1]), []).append(item)
    out = []
    for (_, fw), group in groups.items():
        step = 1 if fw in alone else size
        out += [group[i:i + step] for i in range(0, len(group), step)]
    return out


def _name(cell: cells.Cell) -> str:
    return f"{cell[1]}:{cell[2]} {cell[0]}"


def script_name(rec: Record, qualified: bool = False) -> str:
    """A file name for the record's script: ``<case-id>-<variant>.py`` (``qualified``: its case file's stem first,
    ``gather-<case-id>-<variant>.py``, as case ids are unique within a file only), unsafe characters replaced."""
    file, _, cid = rec.case.rpartition("::")
    stem = f"{Path(file).stem}-" if qualified else ""
    return re.sub(r"[^A-Za-z0-9._-]+", "_", f"{stem}{cid}-{rec.variant}") + ".py"


def done_cells(path: Path) -> set[cells.Cell]:
    """The cells an evidence file already holds (a torn last line is ignored)."""
    return {cells.line_key(line) for line in _lines(path)}


def _append(path: Path, line: dict[str, Any]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "a", encoding="utf-8") as fh:
        fh.write(json.dumps(line) + "\n")
        fh.flush()
        os.fsync(fh.fileno())


def check(rec: Record, script: Path, python: str, names: list[str], timeout: float,
          forked: checkers.Run | None = None, every: bool = False, follow: str = "") -> dict[str, Any]:
    """One cell's evidence line: ``script`` (the record's repro) run under each checker in ``names`` with
    ``python``, memcheck first; without a checker too where efence or malloc runs (what their runs are compared
    with). ``forked``: memcheck's run of the script already made in a batch (:func:`checkers.memcheck_batch`).
    Where memcheck proved a read or a write, efence and malloc are not run (they can prove no more; their entries say
    so) unless ``every``. memcheck gets ``timeout`` seconds; efence and malloc, which run at native speed, ten times
    the plain run's (at least 20 s, at most ``timeout``): glibc's abort path can deadlock a multi-threaded process
    (paddle's did). ``follow``: the program the framework's calls run in (:func:`cells.call_process`), which memcheck
    follows, every process's errors counted."""
    runs: list[dict[str, Any]] = []
    if "memcheck" in names:
        xml = script.with_suffix(".memcheck.xml")
        run = forked or checkers.memcheck(script, python, timeout, xml, follow)
        errors, suppressed = [], Counter[str]()
        for path in run.followed or (xml,):
            found, hidden = parse.memcheck_xml_file(Path(path))
            errors += found
            suppressed.update(hidden)
        if run.ran and not run.followed and not xml.exists():
            run.note = (run.note + "; " if run.note else "") + "no XML written: " + run.stderr[-300:].strip()
        runs.append(_entry(run, errors, sum(suppressed.values())))
    native = [n for n in names if n != "memcheck"]
    if native and not every and runs and verdict.decide(runs)[0] in ("write", "read"):
        runs += [_entry(checkers.Run(n, False, note="not run: memcheck proved the access"), []) for n in native]
        native = []
    if native:
        plain = checkers.plain(script, python, timeout)
        runs.insert(0, _entry(plain, parse.glibc_messages(plain.stderr)))
        # Electric Fence and glibc run at native speed: a run 10x slower than the plain one hangs
        quick = min(timeout, max(_QUICK_FLOOR, 10 * plain.seconds))
        for name in native:
            if name == "efence":
                run = checkers.efence(script, python, quick)
                gave_up = checkers.gave_up_line(run.stderr)
                runs.append(_entry(run, [] if gave_up else parse.guard_page_fault(run.exit, plain.exit)))
            else:
                run = checkers.malloc_check(script, python, quick)
                runs.append(_entry(run, parse.glibc_messages(run.stderr)))
    outcome, reason = verdict.decide(runs)
    return {"case": rec.case, "framework": rec.framework, "variant": rec.variant,
            "framework_version": rec.framework_version, "api": rec.api,
            "label": rec.label, "outcome": rec.outcome, "python": python, "script": script.name,
            "checkers": runs, "verdict": outcome, "reason": reason,
            "measured": time.strftime("%Y-%m-%dT%H:%M:%S")}


def _entry(run: checkers.Run, errors: list[dict[str, Any]], suppressed: int | None = None) -> dict[str, Any]:
    distinct: dict[tuple[Any, ...], dict[str, Any]] = {}
    for err in errors:
        distinct.setdefault((err["kind"], err["what"], err["frame"], err["first_frame"]), err)
    entry = {"name": run.name, "ran": run.ran, "seconds": run.seconds, "exit": run.exit, "timed_out": run.timed_out,
             "error_count": len(errors), "errors": list(distinct.values())[:_MAX_ERRORS], "note": run.note}
    if suppressed is not None:
        entry["suppressed"] = suppressed
    return entry
