"""Result records: one JSON object per line, appended as each test ends (so a killed run loses nothing) and fsynced
within a second."""

from __future__ import annotations

import json
import os
import time
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

OUTCOMES = ("ok", "error", "unsupported", "crash", "timeout")
VERDICTS = ("conforms", "deviates", "n/a")


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
    """Yield records from JSON Lines files; a torn last line (from a killed writer) is skipped, not fatal."""
    for path in paths:
        with open(path, encoding="utf-8") as fh:
            for line in fh:
                line = line.strip()
                if not line:
                    continue
                try:
                    yield json.loads(line)
                except json.JSONDecodeError:
                    continue


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
