"""Errors that carry where in a case file the problem is, so users get one clear line instead of a traceback."""

from __future__ import annotations


class CaseFileError(Exception):
    """A problem with a case file, located by file, line and field (``cases/gather.yaml:12: cases[3].attrs: ...``)."""

    def __init__(self, file: str, line: int | None, field: str, message: str) -> None:
        super().__init__(message)
        self.file = file
        self.line = line
        self.field = field
        self.message = message

    def __str__(self) -> str:
        where = f"{self.file}:{self.line}" if self.line else self.file
        return f"{where}: {self.field}: {self.message}" if self.field else f"{where}: {self.message}"


class InputValueError(ValueError):
    """A declared value that does not fit its dtype or shape; ``field`` is the sub-path inside the input spec."""

    def __init__(self, message: str, field: str = "value") -> None:
        super().__init__(message)
        self.field = field
