"""Record fields checked before generated code, a path or a file lookup uses them.

A results file comes from another machine, so every field of a record is input that may have been crafted: a repro
script pastes none of them into its source unchecked, a site path is made only of plain names, and a case is looked
up only inside a case corpus. Each function here answers a field's checked value, or None (or a safe stand-in) where
the value is not what the field may hold; harness.run.repro, harness.report.site and the case indexes use them, and
the record reader can.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from pathlib import Path, PurePosixPath, PureWindowsPath
from typing import Any

from gather_scatter_conformance.vocab import dtypes

_SIGNAL = re.compile(r"SIG[A-Z0-9]+")
_DOTTED = re.compile(r"[A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)*")
_PLAIN = re.compile(r"[A-Za-z0-9_@~-][A-Za-z0-9._@~+-]*")


# What a name-like field may hold: every framework, variant, device, label, error type, signal and dtype the
# harness writes (letters, digits and ``_ . @ ~ / + : - |``); a label of mixed runs joins names with '|'.
NAME_CHARS = "letters, digits and _.@~/+:-|"
_NAME = re.compile(r"[A-Za-z0-9_.@~/+:|-]+")
MAX_NAME = 200


def is_safe_name(value: str) -> bool:
    """True for a name-like record field that is safe in a path, a URL, markup and a Python string literal: a few
    known characters, no ``..`` component, not starting with ``/``."""
    return (len(value) <= MAX_NAME and _NAME.fullmatch(value) is not None and not value.startswith("/")
            and ".." not in value.split("/"))


def shape(value: Any) -> list[int] | None:
    """``value`` as an array shape (a list of non-negative ints), or None where it is not one."""
    if not isinstance(value, list | tuple):
        return None
    if not all(isinstance(n, int) and not isinstance(n, bool) and n >= 0 for n in value):
        return None
    return [int(n) for n in value]


def signal_name(value: Any) -> str | None:
    """A signal's name (``SIGSEGV``: ``SIG`` then capitals and digits), or None: an unknown signal."""
    return value if isinstance(value, str) and _SIGNAL.fullmatch(value) else None


def error_type(value: Any) -> str | None:
    """An exception's dotted name (``torch.OutOfMemoryError``, ``ValueError``), or None where ``value`` is not a
    dotted Python identifier (then it is only text)."""
    return value if isinstance(value, str) and _DOTTED.fullmatch(value) else None


def dtype_name(value: Any) -> str | None:
    """One of the vocabulary's dtype names (vocab.dtypes.DTYPES), or None."""
    return value if isinstance(value, str) and value in dtypes.DTYPES else None


def plain_name(value: Any) -> str | None:
    """``value`` where it is a plain file name that cannot leave a folder (letters, digits, ``._@~+-``, not starting
    with a dot: no ``/``, no ``..``, not absolute), else None."""
    return value if isinstance(value, str) and _PLAIN.fullmatch(value) else None


def relative_file(file_id: Any) -> PurePosixPath | None:
    """A case file's id (``cases/gather.yaml``, ``my_cases/x.yaml``) as a relative path that stays inside the folder
    it is looked up from: None for an absolute path, a drive, a backslash, an empty, ``.`` or ``..`` part."""
    if not isinstance(file_id, str) or not file_id or "\\" in file_id or "\x00" in file_id:
        return None
    path = PurePosixPath(file_id)
    if path.is_absolute() or PureWindowsPath(file_id).drive:
        return None
    parts = file_id.split("/")
    if any(part in ("", ".", "..") for part in parts):
        return None
    return path


def case_file(file_id: Any, roots: Iterable[Path], shipped: Path) -> Path | None:
    """The case file a record's ``case`` id names (the part before ``::``): looked up in each of ``roots`` (the run's
    case roots), then in the shipped corpus ``shipped`` (resources.cases_dir(), for ids ``cases/...``). Only a file
    inside one of them is answered; an absolute or ``..`` id, or one whose links lead out of its root, is None."""
    rel = relative_file(file_id)
    if rel is None:
        return None
    bases = [*((Path(r), rel) for r in roots)]
    if rel.parts[0] == "cases" and len(rel.parts) > 1:
        bases.append((shipped, PurePosixPath(*rel.parts[1:])))
    for root, inner in bases:
        path = root / inner
        try:
            if path.is_file() and path.resolve().is_relative_to(root.resolve()):
                return path
        except OSError:
            continue
    return None


# --- record values in markdown (gsc issue, the advisories): one place for every record-derived string ---

_MARKUP = re.compile(r"([\\`*_\[\]#|~])")  # markup characters inside a line, escaped with a backslash
_ENTITIES = {"&": "&amp;", "<": "&lt;", ">": "&gt;"}


def md(value: Any) -> str:
    """A record's value as markdown text that reads as the value: on one line (no value starts a block), HTML's
    ``& < >`` as entities and CommonMark's other markup characters backslash-escaped. Every record-derived string
    going into an issue's or an advisory's text passes here (or through :func:`code`)."""
    text = " ".join(str(value).split())
    text = "".join(_ENTITIES.get(ch, ch) for ch in text)
    return _MARKUP.sub(r"\\\1", text)


def code(value: Any) -> str:
    """A record's value as an inline code span: on one line, fenced by more backticks than any run in it (so no
    backtick in the value ends it); a code span shows HTML as text."""
    text = " ".join(str(value).split())
    fence = "`" * (max((len(m) for m in re.findall(r"`+", text)), default=0) + 1)
    pad = " " if text.startswith("`") or text.endswith("`") or not text.strip() else ""
    return f"{fence}{pad}{text}{pad}{fence}"


def fenced(text: str, lang: str = "") -> list[str]:
    """``text`` as a fenced code block whose fence is longer than any backtick run in it."""
    fence = "`" * max(3, max((len(m) for m in re.findall(r"`+", text)), default=0) + 1)
    return [f"{fence}{lang}", text.rstrip("\n"), fence]
