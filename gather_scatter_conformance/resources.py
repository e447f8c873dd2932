"""Where the harness's own data lives: the case corpus, baselines, documented claims, known deviations, the
case-file JSON Schema and the result records' one.

In a checkout they are the top-level ``cases/`` (the corpus, with ``schema.json``), ``baselines/``, ``claims/`` and
``known/``; ``gather_scatter_conformance/data/`` links to them, and a wheel carries them there as package data, so
a non-editable install finds the same files. An environment variable points elsewhere (``GSC_BASELINES``,
``GSC_CLAIMS``, ``GSC_KNOWN``); the pytest plugin and the commands also take options.
"""

from __future__ import annotations

import os
from pathlib import Path

PACKAGE = Path(__file__).resolve().parent  # this gather_scatter_conformance package, wherever it is installed
DATA = PACKAGE / "data"


def cache_dir(env: str, name: str) -> Path | None:
    """Where one of the harness's caches lives: ``$<env>`` (``off``, ``0``, ``no``, ``false`` or empty: None, no
    cache), else ``$XDG_CACHE_HOME/gather-scatter-conformance/<name>`` (``~/.cache/...``). docs/cache.md lists them."""
    configured = os.environ.get(env)
    if configured is not None:
        return None if configured.strip().lower() in ("", "0", "off", "no", "false") else Path(configured)
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "gather-scatter-conformance" / name


def baselines_dir() -> Path:
    """The directory of ``<framework>.yaml`` baselines: ``$GSC_BASELINES``, else the shipped ones."""
    return Path(os.environ.get("GSC_BASELINES") or DATA / "baselines")


def claims_dir() -> Path:
    """The directory of ``<framework>.yaml`` documented claims: ``$GSC_CLAIMS``, else the shipped ones."""
    return Path(os.environ.get("GSC_CLAIMS") or DATA / "claims")


def known_dir() -> Path:
    """The directory of ``<framework>.yaml`` known deviations: ``$GSC_KNOWN``, else the shipped ones."""
    return Path(os.environ.get("GSC_KNOWN") or DATA / "known")


def toy_runtime() -> Path:
    """The complete example adapter package (``examples/toy-runtime`` in a checkout), which the wheel carries for
    ``gsc new-adapter --example``."""
    return DATA / "toy-runtime"


def schema_path() -> Path:
    """The case-file JSON Schema (``cases/schema.json`` in a checkout)."""
    return DATA / "cases" / "schema.json"


def record_schema_path() -> Path:
    """The JSON Schema of result records (``gsc schema --records`` writes it; vocab.record.Record is its source)."""
    return Path(__file__).resolve().parent / "schemas" / "record.schema.json"


def memcheck_suppressions() -> Path:
    """valgrind's suppression file shipped with the package (harness.evidence: the dynamic loader's, CPython's and
    Intel OpenMP's false alarms)."""
    return PACKAGE / "harness" / "evidence" / "memcheck.supp"


def forked_driver() -> Path:
    """The stdlib-only script that imports a batch of repro scripts' modules once and forks a child per script, for
    one valgrind process over many cells (harness.evidence.checkers.memcheck_batch)."""
    return PACKAGE / "harness" / "evidence" / "forked.py"


def cases_dir() -> Path:
    """The shipped case corpus (``cases/`` in a checkout): what a run with no case paths runs."""
    return DATA / "cases"


def corpus_id(path: Path) -> str | None:
    """``cases/<path within the corpus>`` for a file of the shipped corpus, whether it is read from a checkout's
    ``cases/`` or an installed package's data: the ids its baselines and known files use, the same from any
    directory. None for any other file."""
    try:
        inside = Path(path).resolve().relative_to(cases_dir().resolve())
    except ValueError:
        return None
    return (Path("cases") / inside).as_posix()


def corpus_file(file_id: str) -> Path | None:
    """The shipped file a case-file id of :func:`corpus_id` names (``cases/gather.yaml``), or None when the id names
    no shipped file."""
    head, _, rest = file_id.partition("/")
    path = cases_dir() / rest
    return path if head == "cases" and rest and path.is_file() else None
