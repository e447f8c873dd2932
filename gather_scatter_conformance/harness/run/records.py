"""Result records: one JSON object per line, appended as each test ends (so a killed run loses nothing) and fsynced
within a second."""

from __future__ import annotations

import json
import os
import time
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

OUTCOMES = ("ok", "error", "unsupported", "crash", "timeout", "harness-error")  # = vocab.record.OUTCOMES (a test)
VERDICTS = ("conforms", "deviates", "n/a")
EXPECTED = "the JSON lines of result records a run writes (gsc run --results FILE, pytest --results FILE)"


class NotResultsFile(ValueError):
    """A file given as results that is not a results file; the message is one line: the file, what was expected,
    and what the file seems to be."""


def record_key(rec: dict[str, Any]) -> tuple[str, str, str, str]:
    """What makes a record unique within a results set: case, framework, variant and device."""
    return (rec["case"], rec["framework"], rec.get("variant", ""), rec.get("device", "cpu"))


class ResultsWriter:
    """Append-only JSON Lines writer. Every record is written before ``write`` returns, so a killed run loses
    nothing; it is fsynced at most ``sync_interval`` seconds later (and at close), so a machine that loses power
    loses at most that much. An fsync per record cost about 2 ms here, more than most cases take to run."""

    def __init__(self, path: str | os.PathLike[str], sync_interval: float = 1.0) -> None:
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        # O_APPEND makes each whole-line write land intact even with several pytest-xdist workers on one file.
        self._fd = os.open(self.path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
        self.sync_interval = sync_interval
        self._synced = time.monotonic()
        self._dirty = False

    def write(self, record: dict[str, Any]) -> None:
        """Append one record (in the file when this returns; on disk within ``sync_interval`` seconds)."""
        line = (json.dumps(record, default=str, allow_nan=True) + "\n").encode("utf-8")
        os.write(self._fd, line)
        self._dirty = True
        if time.monotonic() - self._synced >= self.sync_interval:
            self.sync()

    def sync(self) -> None:
        """Flush everything written so far to disk."""
        if self._dirty:
            os.fsync(self._fd)
            self._dirty = False
        self._synced = time.monotonic()

    def close(self) -> None:
        self.sync()
        os.close(self._fd)


def read(paths: Iterable[str | os.PathLike[str]]) -> Iterator[dict[str, Any]]:
    """Yield records from JSON Lines files of result records; a torn last line (from a killed writer) is skipped.

    Raises :class:`NotResultsFile` for a file that is not one (absent, unreadable, not JSON lines, or JSON lines of
    another kind, such as a release sweep's): its first line must be a result record (vocab.record.Record.read).
    """
    for path in paths:
        try:
            fh = open(path, encoding="utf-8")
        except OSError as exc:
            raise NotResultsFile(f"{path}: cannot be read ({exc.strerror or exc}); expected {EXPECTED}") from None
        with fh:
            first = True
            try:
                for line in fh:
                    line = line.strip()
                    if not line:
                        continue
                    try:
                        rec = json.loads(line)
                    except json.JSONDecodeError:
                        if first and not line.startswith("{"):  # not a record torn by a killed writer
                            raise NotResultsFile(f"{path}: not a results file ({_kind_of_text(line)}); expected "
                                                 f"{EXPECTED}") from None
                        continue
                    if first:
                        _check_first(path, rec)
                        first = False
                    yield rec
            except UnicodeDecodeError:
                raise NotResultsFile(f"{path}: not a results file (not UTF-8 text); expected {EXPECTED}") from None


def _check_first(path: str | os.PathLike[str], rec: Any) -> None:
    """Raise NotResultsFile unless ``rec``, a file's first line, is a result record (of this version or older)."""
    from pydantic import ValidationError

    from gather_scatter_conformance.vocab.record import Record

    if isinstance(rec, dict) and "release" in rec and "labels" in rec:
        what = "a release sweep's labels, as in history/<framework>.jsonl: give it to gsc report --history"
    elif not isinstance(rec, dict):
        what = f"its first line is a JSON {type(rec).__name__}, not a record"
    else:
        try:
            Record.read(rec)
            return
        except ValidationError as exc:
            fields = sorted({str(e["loc"][0]) for e in exc.errors() if e["loc"]})
            what = f"its first line is not a result record: {', '.join(fields) or 'its fields'} missing or invalid"
    raise NotResultsFile(f"{path}: not a results file ({what}); expected {EXPECTED}")


def _kind_of_text(line: str) -> str:
    """What a first line that is not JSON suggests the file is."""
    if line.startswith(("op:", "cases:", "---", "#")) or (":" in line and not line.startswith(("{", "["))):
        return "it looks like YAML: a case, baseline or known file?"
    return "its first line is not JSON"


def merge(paths: Iterable[str | os.PathLike[str]], out: str | os.PathLike[str]) -> int:
    """Merge results files into one; for a repeated key the later record wins. Returns the record count."""
    merged: dict[tuple[str, str, str, str], dict[str, Any]] = {}
    for rec in read(paths):
        merged[record_key(rec)] = rec
    tmp = Path(str(out) + ".tmp")
    with open(tmp, "w", encoding="utf-8") as fh:
        for rec in merged.values():
            fh.write(json.dumps(rec, default=str) + "\n")
    os.replace(tmp, out)
    return len(merged)
