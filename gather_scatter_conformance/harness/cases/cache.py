"""A parse cache for case files: what loading a file produced, keyed by its bytes and the code that loaded it.

Loading a case file parses YAML, validates every case with pydantic, materialises generated inputs and checks
declared expected values against the reference engine. The result depends only on the file's bytes, the name it
is shown under, the harness's own code and the libraries it calls; the key hashes all of them, so a hit is the
same answer a fresh load would give. What is stored is builtins only (each case's mapping as parsed, its
attributes and line numbers, or the error that stopped it), so reading an entry back needs neither YAML nor
pydantic: collecting the suite then imports neither.

The cache lives in ``$GSC_CASE_CACHE`` (a directory; ``off`` disables it), else in
``$XDG_CACHE_HOME/gather-scatter-conformance/cases`` (``~/.cache/...``). A missing, unreadable or corrupt entry
is a miss; a directory that cannot be written is ignored.
"""

from __future__ import annotations

import hashlib
import importlib.util
import os
import pickle
import sys
import tempfile
from functools import cache
from pathlib import Path
from typing import Any

FORMAT = 1  # bump when the stored layout changes
ENV = "GSC_CASE_CACHE"
HARNESS = Path(__file__).resolve().parents[1]  # every harness source file
# Libraries whose behaviour decides what a load produces (validation, generated values, reference results).
_LIBRARIES = ("numpy", "ml_dtypes", "yaml", "pydantic", "pydantic_core")


def directory() -> Path | None:
    """Where entries live, or None when caching is off (``GSC_CASE_CACHE=off``)."""
    from gather_scatter_conformance.resources import cache_dir

    return cache_dir(ENV, "cases")


@cache
def code_fingerprint() -> str:
    """A digest of everything besides the file that a load depends on: every harness source file, the Python
    version, and the installed files of the libraries loading uses (found without importing them)."""
    h = hashlib.sha256(f"format {FORMAT}\n{sys.version}\n".encode())
    for path in sorted(HARNESS.rglob("*.py")):
        h.update(path.relative_to(HARNESS).as_posix().encode() + b"\0" + path.read_bytes() + b"\0")
    for name in _LIBRARIES:
        try:
            spec = importlib.util.find_spec(name)
        except (ImportError, ValueError):
            spec = None
        origin = spec.origin if spec and spec.origin else ""
        stat = os.stat(origin) if origin and os.path.exists(origin) else None
        # A reinstall or upgrade rewrites the package's __init__: its size and mtime change with it.
        h.update(f"{name}={origin}:{stat.st_size if stat else 0}:{stat.st_mtime_ns if stat else 0}\n".encode())
    return h.hexdigest()


def key(content: bytes, display: str) -> str:
    """The cache key of a file with ``content`` shown as ``display``, under the current code."""
    h = hashlib.sha256(code_fingerprint().encode() + b"\0" + display.encode() + b"\0")
    h.update(content)
    return h.hexdigest()


def get(entry_key: str) -> Any | None:
    """The stored value for ``entry_key``, or None on a miss (including an unreadable or corrupt entry)."""
    where = directory()
    if where is None:
        return None
    try:
        with open(where / f"{entry_key}.pickle", "rb") as fh:
            value = pickle.load(fh)
    except Exception:  # missing, truncated, or written by an incompatible version: all just a miss
        return None
    if not isinstance(value, dict) or value.get("format") != FORMAT or value.get("key") != entry_key:
        return None
    return value


def put(entry_key: str, value: dict[str, Any]) -> None:
    """Store ``value`` (builtins only) under ``entry_key``; atomic, so concurrent loaders never read half a file."""
    where = directory()
    if where is None:
        return
    try:
        where.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=where, prefix=".tmp-", suffix=".pickle")
        try:
            with os.fdopen(fd, "wb") as fh:
                pickle.dump({**value, "format": FORMAT, "key": entry_key}, fh, protocol=pickle.HIGHEST_PROTOCOL)
            os.replace(tmp, where / f"{entry_key}.pickle")
        except BaseException:
            os.unlink(tmp)
            raise
    except OSError:
        pass  # a read-only or full disk costs speed, not correctness
