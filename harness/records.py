"""Result records: one JSON object per line, appended and fsynced as each test ends, so a killed run loses nothing."""

from __future__ import annotations

import json
import os
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

OUTCOMES = ("ok", "error", "unsupported", "crash", "timeout")
VERDICTS = ("conforms", "deviates", "n/a")


def record_key(rec: dict[str, Any]) -> tuple[str, str, str, str]:
    """What makes a record unique within a results set: case, framework, variant and device."""
    return (rec["case"], rec["framework"], rec.get("variant", ""), rec.get("device", "cpu"))


class ResultsWriter:
    """Append-only JSON Lines writer; every record is flushed and fsynced before ``write`` returns."""

    def __init__(self, path: str | os.PathLike[str]) -> None:
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        # O_APPEND makes each whole-line write land intact even with several pytest-xdist workers on one file.
        self._fd = os.open(self.path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)

    def write(self, record: dict[str, Any]) -> None:
        """Append one record durably."""
        line = (json.dumps(record, default=str, allow_nan=True) + "\n").encode("utf-8")
        os.write(self._fd, line)
        os.fsync(self._fd)

    def close(self) -> None:
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
