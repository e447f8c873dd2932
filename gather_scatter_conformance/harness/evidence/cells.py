"""Which records are memory-unsafe findings, the cell each belongs to, its case and its repro script.

A cell is (case, framework, variant): the unit ``gsc memcheck`` checks once and ``gsc advisories`` lists once.
"""

from __future__ import annotations

import sys
from collections.abc import Iterable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from gather_scatter_conformance import adapters, resources
from gather_scatter_conformance.harness.cases.load import Case, load_bytes, load_file
from gather_scatter_conformance.harness.judge.repeats import unsafe_record
from gather_scatter_conformance.vocab import safe

if TYPE_CHECKING:
    from gather_scatter_conformance.vocab.record import Record

Cell = tuple[str, str, str]  # (case, framework, variant)


def key(rec: Record) -> Cell:
    """The cell of a record."""
    return rec.case, rec.framework, rec.variant


def line_key(line: dict[str, Any]) -> Cell:
    """The cell of an evidence line (``gsc memcheck``'s JSON line, its own format: not a record). KeyError or
    TypeError for a line that names no cell."""
    return line["case"], line["framework"], line.get("variant", "")


def _names(rec: Record, wanted: Iterable[str]) -> bool:
    return any(rec.case == c or rec.case.endswith(f"::{c}") for c in wanted)


def select(records: Iterable[Record], only: str = "", cases: Iterable[str] = (),
           paths: bool = False) -> dict[Cell, Record]:
    """Cell -> its record (the last one read wins, as merged results do) for the memory-unsafe records on the CPU.
    ``cases`` (file::id or id) narrows to those cases, and takes their deviating records too, memory-unsafe label or
    not (a finding to check on request). Converter paths (``a~b~c``) only with ``paths``; ``only``: one framework,
    or ``framework:variant``."""
    cases = list(cases)
    framework, _, variant = only.partition(":")
    out: dict[Cell, Record] = {}
    for rec in records:
        if rec.device != "cpu" or (framework and rec.framework != framework):
            continue
        if (variant and rec.variant != variant) or (adapters.is_path(rec.framework) and not paths):
            continue
        if cases and not _names(rec, cases):
            continue
        if unsafe_record(rec) or (cases and rec.verdict == "deviates"):
            out[key(rec)] = rec
    return out


class Cases:
    """Cases by node id (``file::id``), each file loaded once.

    With ``snapshot`` (case-file id -> its text, as the run that wrote the results saw it:
    harness.run.records.case_snapshot) the cases come from it alone, so the same results give the same cases in any
    directory. Without (results written before runs kept a snapshot), a file is looked up from ``roots`` (default:
    the current directory; a user's case files, named as the run named them), then in the shipped corpus; never
    outside them (an absolute or ``..`` id: vocab.safe.case_file)."""

    def __init__(self, *roots: Path, snapshot: dict[str, str] | None = None) -> None:
        self.roots = roots or (Path.cwd(),)
        self.snapshot = snapshot
        self._files: dict[str, dict[str, Case]] = {}

    def get(self, nodeid: str) -> Case | None:
        """The case, or None where its file or id is not found."""
        file, _, cid = nodeid.partition("::")
        if file not in self._files:
            self._files[file] = {c.id: c for c in self._load(file) if isinstance(c, Case)}
        return self._files[file].get(cid)

    def _load(self, file: str) -> list[Any]:
        if self.snapshot is not None:
            text = self.snapshot.get(file)
            return load_bytes(text.encode("utf-8"), file) if text is not None else []
        path = safe.case_file(file, list(self.roots), resources.cases_dir())  # a record's id: inside these only
        return load_file(path, file) if path else []


def repro_script(case: Case, rec: Record) -> str:
    """The record's repro script as ``gsc repro`` writes it (ValueError where the adapter recorded no native
    call)."""
    from gather_scatter_conformance.harness.run.repro import baseline_label, script

    return script(case, rec, baseline_label(rec))


def pythons(overrides: Iterable[str] = (), root: Path | None = None) -> dict[str, str]:
    """Framework -> the interpreter its scripts run with: ``NAME=PATH`` overrides, else the project venv
    ``.venv-<name>`` of a framework this interpreter lacks (MXNet's), as runs choose. Others: this interpreter.
    Raises ValueError for an override that is not NAME=PATH."""
    out = adapters.venv_pythons(root or Path.cwd())
    for item in overrides:
        name, sep, path = item.partition("=")
        if not sep or not name or not path:
            raise ValueError(f"--python wants FRAMEWORK=PATH, got {item!r}")
        out[name] = path
    return out


def python_for(framework: str, table: dict[str, str]) -> str:
    """The interpreter for ``framework``'s scripts."""
    return table.get(framework, sys.executable)


def call_process(framework: str) -> str:
    """The program ``framework``'s adapter makes its calls in when not the Python process (tfjs: ``node``; its
    ``call_process``), which a memory checker must follow; "" for every other framework, and for a name no adapter
    has."""
    try:
        return adapters.get(framework).call_process
    except (KeyError, TypeError):
        return ""
