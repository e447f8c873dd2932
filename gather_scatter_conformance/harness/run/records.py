"""Result records: one JSON object per line, appended as each test ends (so a killed run loses nothing) and fsynced
within a second."""

from __future__ import annotations

import hashlib
import json
import os
import time
from collections.abc import Callable, Iterable, Iterator
from contextvars import ContextVar
from datetime import datetime, timezone
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from pydantic import BaseModel, ConfigDict, Field

if TYPE_CHECKING:
    from gather_scatter_conformance.vocab.record import Record

OUTCOMES = ("ok", "error", "unsupported", "crash", "timeout", "harness-error")  # = vocab.record.OUTCOMES (a test)
VERDICTS = ("conforms", "deviates", "n/a")
EXPECTED = "the JSON lines of result records a run writes (gsc run --results FILE, pytest --results FILE)"


class NotResultsFile(ValueError):
    """A file given as results that is not a results file; the message is one line: the file, what was expected,
    and what the file seems to be."""


def system_name(framework: str, device: str) -> str:
    """A system as the summary, the manifest and the page name it (Record.system, for a plan's items that are not
    records yet): the framework, with ``@device`` off the CPU."""
    return framework if device == "cpu" else f"{framework}@{device}"


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

    def write(self, record: Record) -> None:
        """Append one record (in the file when this returns; on disk within ``sync_interval`` seconds)."""
        line = (json.dumps(record.dump(), default=str, allow_nan=True) + "\n").encode("utf-8")
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


class DamagedResults(NotResultsFile):
    """A results file whose lines are damaged (not JSON, not a record, nested or long past any record, fewer records
    than its manifest says): the message is one line naming the file and the line."""


# Bounds on what one line may hold: the longest line of the runs of 2026-11-24 is 5 KB and the deepest nesting 9
# (an observed rank-8 value in a record); a line past them is not one the harness wrote, and json's parser would
# otherwise take memory by the line's size and recurse by its nesting (200,000 levels killed `gsc report`).
MAX_LINE_BYTES = 16 * 1024 * 1024
MAX_DEPTH = 48
MANIFEST_KEY = "gsc_manifest"


def _depth(obj: Any, limit: int) -> int:
    """The nesting depth of a parsed JSON value, counted no further than ``limit + 1``."""
    depth, level = 0, [obj]
    while level and depth <= limit:
        depth += 1
        level = [v for o in level for v in (o.values() if isinstance(o, dict) else o if isinstance(o, list) else ())
                 if isinstance(v, dict | list)]
    return depth


def _stderr(message: str) -> None:
    import sys

    print(message, file=sys.stderr)


# --lenient of the commands that read results: set once by the command line for every reader below it.
LENIENT: ContextVar[bool] = ContextVar("gsc_lenient", default=False)


def read(paths: Iterable[str | os.PathLike[str]], *, lenient: bool | None = None,
         warn: Callable[[str], None] = _stderr) -> Iterator[Record]:
    """Yield the records of results files, each a validated
    :class:`~gather_scatter_conformance.vocab.record.Record` (its fields as the file holds them, with those that
    become paths, URLs, markup or code checked: vocab.record). This and the writer are the only places a record is
    a JSON object; everything downstream reads its typed fields.

    A file's first line may be its run's manifest (:class:`Manifest`), which is not yielded. A torn last line (a
    killed writer, a full disk) is skipped with a warning naming its line. Any other damage raises
    :class:`DamagedResults` naming the file and line: a line that is not JSON, not a record, nested deeper than
    ``MAX_DEPTH`` or longer than ``MAX_LINE_BYTES``, or a file holding fewer or more records than its finished
    manifest counts. ``lenient`` (default: :data:`LENIENT`) skips damaged lines instead, and warns once per file
    with their count. Raises :class:`NotResultsFile` for a file that is not results at all (absent, empty, YAML, a
    release sweep...).
    """
    lenient = LENIENT.get() if lenient is None else lenient
    for path in paths:
        yield from _read_one(path, lenient, warn)


def _read_one(path: str | os.PathLike[str], lenient: bool, warn: Callable[[str], None]) -> Iterator[Record]:
    from pydantic import ValidationError

    from gather_scatter_conformance.vocab.record import Record

    try:
        fh = open(path, "rb")
    except OSError as exc:
        raise NotResultsFile(f"{path}: cannot be read ({exc.strerror or exc}); expected {EXPECTED}") from None
    with fh:
        lines = _lines(fh)
        first, manifest, count, skipped = True, None, 0, []
        for number, raw, whole in lines:
            text = raw.strip()
            if not text:
                continue
            problem, rec = _parse(text)
            if problem and not whole and first is False:
                warn(f"{path}:{number}: the last line is cut short (a killed run or a full disk): skipped; "
                     "gsc run --resume runs its case again")
                continue
            if first:
                if problem:
                    if text.startswith(b"["):
                        raise NotResultsFile(f"{path}: not a results file (line {number}: {problem}); expected "
                                             f"{EXPECTED}")
                    if not text.startswith(b"{"):
                        raise NotResultsFile(f"{path}: not a results file ({_kind_of_text(text)}); expected "
                                             f"{EXPECTED}")
                    if not whole:
                        warn(f"{path}:{number}: the only line is cut short (a killed run): no records")
                        return
                if isinstance(rec, dict) and MANIFEST_KEY in rec:
                    manifest = _manifest_of(path, number, rec)
                    first = False
                    continue
                if not problem:
                    _check_first(path, rec)
                first = False
            if not problem:
                try:
                    record = Record.read(rec)
                except ValidationError as exc:
                    problem = _validation_text(exc)
            if problem:
                if not lenient:
                    raise DamagedResults(f"{path}:{number}: {problem} (--lenient skips damaged lines)")
                skipped.append(number)
                continue
            count += 1
            yield record
        if first and manifest is None:
            raise NotResultsFile(f"{path}: empty: no records and no manifest; expected {EXPECTED}")
        if skipped:
            warn(f"{path}: {len(skipped)} damaged line(s) skipped (--lenient), the first at line {skipped[0]}")
        if manifest is not None and manifest.records is not None and manifest.records != count + len(skipped):
            message = (f"{path}: holds {count + len(skipped)} record(s), its manifest {manifest.records}: the file "
                       "was cut short or edited after its run")
            if not lenient:
                raise DamagedResults(message + " (--lenient reads what is there)")
            warn(message)


def _lines(fh: Any) -> Iterator[tuple[int, bytes, bool]]:
    """(line number, line, whether it ended with a newline) for each line of a binary file, a line no longer than
    MAX_LINE_BYTES (a longer one is yielded cut, as not whole, and the rest of it dropped)."""
    number = 0
    while True:
        raw = fh.readline(MAX_LINE_BYTES + 1)
        if not raw:
            return
        number += 1
        if len(raw) > MAX_LINE_BYTES and not raw.endswith(b"\n"):
            while True:  # drop the rest of the overlong line
                more = fh.readline(MAX_LINE_BYTES)
                if not more or more.endswith(b"\n"):
                    break
            yield number, b"\x00overlong", True
            continue
        yield number, raw, raw.endswith(b"\n")


def _parse(text: bytes) -> tuple[str | None, Any]:
    """(None, the JSON value) or (what is wrong with the line, None)."""
    if text == b"\x00overlong":
        return f"a line longer than {MAX_LINE_BYTES} bytes: not a record", None
    try:
        value = json.loads(text)
    except RecursionError:
        return "a line nested too deep to be a record", None
    except (json.JSONDecodeError, UnicodeDecodeError):
        return "not JSON", None
    if _depth(value, MAX_DEPTH) > MAX_DEPTH:
        return f"a line nested deeper than {MAX_DEPTH} levels: not a record", None
    if not isinstance(value, dict):
        return f"a JSON {type(value).__name__}, not a record", None
    return None, value


def _validation_text(exc: Any) -> str:
    """A pydantic ValidationError as one line: the fields and what is wrong with the first."""
    errors = exc.errors()
    fields = sorted({".".join(str(p) for p in e["loc"]) for e in errors if e["loc"]})
    first = errors[0]["msg"] if errors else "invalid"
    return f"not a result record: {', '.join(fields) or 'its fields'} ({first.removeprefix('Value error, ')})"


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


def _kind_of_text(raw: bytes) -> str:
    """What a first line that is not JSON suggests the file is."""
    try:
        line = raw.decode("utf-8")
    except UnicodeDecodeError:
        return "not UTF-8 text"
    if line.startswith(("op:", "cases:", "---", "#")) or (":" in line and not line.startswith(("{", "["))):
        return "it looks like YAML: a case, baseline or known file?"
    return "its first line is not JSON"


def _check_shards(manifests: dict[str, Manifest | None]) -> None:
    """Shards of one sharded run (their manifests' ``shard``, K/N) must all be there, each once and of one N;
    DamagedResults naming what is missing or doubled otherwise. Files of unsharded runs are not concerned."""
    sharded = {p: m.shard for p, m in manifests.items() if m is not None and m.shard}
    if not sharded:
        return
    # Split here, not by shards.parse: shards reads results through this module, and the layers allow no cycle.
    # Manifest.shard's pattern has made it K/N (a file that says otherwise was refused when read).
    parts = {p: tuple(int(x) for x in s.split("/")) for p, s in sharded.items()}
    totals = {n for _, n in parts.values()}
    if len(totals) > 1:
        raise DamagedResults("shards of runs split differently: " + ", ".join(f"{p} ({s})" for p, s in
                                                                              sharded.items()))
    (n,) = totals
    seen: dict[int, str] = {}
    for path, (k, _) in parts.items():
        if k in seen:
            raise DamagedResults(f"{seen[k]} and {path} are both shard {k}/{n}")
        seen[k] = path
    missing = [f"{k}/{n}" for k in range(1, n + 1) if k not in seen]
    if missing:
        raise DamagedResults(f"shard(s) {', '.join(missing)} missing: merge every shard of the run")


def merge(paths: Iterable[str | os.PathLike[str]], out: str | os.PathLike[str], *, later_wins: bool = False,
          lenient: bool | None = None) -> int:
    """Merge results files (the shards of one run: per framework, per CI job) into ``out``; returns the record count.

    Each shard is checked against the others' manifests first, and nothing is written when one fails: a shard whose
    run did not finish (its manifest says ``running``), shards of different case corpora (their ``corpus_digest``),
    and a cell recorded by two shards (unless ``later_wins``: the later file's record is kept) each raise
    :class:`DamagedResults` naming the files. Files without a manifest (an older harness's) are merged unchecked.
    The merged file's manifest says ``merged`` and names the runs it holds."""
    paths = list(dict.fromkeys(str(Path(p).resolve()) for p in paths))
    manifests = {p: manifest(p) for p in paths}
    unfinished = [p for p, m in manifests.items() if m is not None and m.status == "running"]
    if unfinished:
        raise DamagedResults(f"{', '.join(unfinished)}: the run did not finish (its manifest says running): "
                             "resume it (gsc run --resume) or leave it out")
    digests = {m.corpus_digest: p for p, m in manifests.items() if m is not None and m.corpus_digest}
    if len(digests) > 1:
        raise DamagedResults("shards of different case corpora: " + ", ".join(
            f"{p} ({d[:12]})" for d, p in digests.items()) + ": merge the shards of one run")
    _check_shards(manifests)
    merged: dict[tuple[str, str, str, str], Record] = {}
    source: dict[tuple[str, str, str, str], str] = {}
    for path in paths:
        for rec in read([path], lenient=lenient):
            key = rec.key
            if key in source and source[key] != str(path) and not later_wins:
                raise DamagedResults(f"{key[0]} [{key[1]}:{key[2]}@{key[3]}] is in {source[key]} and {path}: "
                                     "shards of one run hold each cell once (--later-wins keeps the later file's)")
            merged[key] = rec
            source[key] = str(path)
    known = [m for m in manifests.values() if m is not None]
    systems: dict[str, SystemCount] = {}
    for m in known:
        for name, count in m.systems.items():
            if m.shard and name in systems:  # the shards of a run share its systems: their counts add up
                had = systems[name]
                count = SystemCount(version=count.version or had.version, recorded=had.recorded + count.recorded,
                                    planned=None if had.planned is None or count.planned is None
                                    else had.planned + count.planned)
            systems[name] = count
    head = Manifest(run_id="+".join(m.run_id for m in known) or "merged", status="merged",
                    harness_version=known[0].harness_version if known else "", started=min(
                        (m.started for m in known), default=""), ended=_now(), records=len(merged),
                    systems=systems, parts=[m.run_id for m in known],
                    corpus_digest=next(iter(digests), None),
                    frameworks=sorted({f for m in known for f in m.frameworks}),
                    cases={k: v for m in known for k, v in m.cases.items()})
    body = "".join(json.dumps(rec.dump(), default=str) + "\n" for rec in merged.values()).encode("utf-8")
    _write_new(Path(out), head.line(), body)
    return len(merged)


# --- A run's files: the results it replaces only when it ends, the lock, the manifest (issue #37) ---


class SystemCount(BaseModel):
    """What a run planned and recorded of one system (a framework, ``framework@device``, or a converter path)."""

    version: str = ""
    planned: int | None = None
    """Tests collected for it (a test skipped for want of a device, or already recorded, writes no record)."""
    recorded: int = 0


class Manifest(BaseModel):
    """A results file's first line (``{"gsc_manifest": {...}}``): what the file is and whether its run finished.

    A run writes it first with status ``running``; when the run ends its file is rewritten once, with the manifest
    finished (``complete``, the counts, the end time), and only then replaces the results it was given. A file whose
    manifest still says ``running`` is a run that was killed or is still going; ``merged`` is ``gsc merge``'s.
    """

    model_config = ConfigDict(extra="allow")

    format: Literal["gsc-results"] = "gsc-results"
    run_id: str
    harness_version: str
    command: list[str] = []
    host: str = ""
    pid: int = 0
    started: str = ""
    ended: str | None = None
    status: Literal["running", "complete", "merged"] = "running"
    resumed: int = 0
    """How many times ``--resume`` continued the run."""
    frameworks: list[str] = []
    """The systems asked for."""
    corpus_digest: str | None = None
    """sha256 over the case files collected (their ids and contents): two shards of one run share it."""
    case_files: int | None = None
    systems: dict[str, SystemCount] = {}
    records: int | None = None
    """The records the file holds after this line (set when the run ends): a reader checks it."""
    previous: str | None = None
    """The file name the results this run replaced were moved to, beside it."""
    parts: list[str] = []
    """For a merged file: the run ids merged."""
    shard: str | None = Field(default=None, pattern=r"^[1-9][0-9]{0,5}/[1-9][0-9]{0,5}$")
    """``K/N`` for the K-th of N shards of a run (harness.run.shards): `gsc merge` names a missing one."""
    workers: int | None = None
    """The pytest-xdist workers the run had (1: it ran in one process)."""
    memory_peak_gib: float | None = None
    """The peak proportional memory of the run's processes together (the controller, its workers and their framework
    workers), sampled every 2 s (harness.run.machine): what the next run of these results sizes its workers by."""
    cases: dict[str, str] = {}
    """The case files the run collected, by the id its records name them with (``cases/gather.yaml``), as text:
    what the report builds repro scripts and drill-downs from, so that the same results give the same pages in any
    directory (harness.evidence.cells.Cases)."""

    def line(self) -> bytes:
        """The manifest as its JSON line."""
        return (json.dumps({MANIFEST_KEY: self.model_dump(exclude_none=True)}) + "\n").encode("utf-8")


def _manifest_of(path: str | os.PathLike[str], number: int, obj: dict[str, Any]) -> Manifest:
    from pydantic import ValidationError

    try:
        return Manifest.model_validate(obj[MANIFEST_KEY])
    except ValidationError as exc:
        raise DamagedResults(f"{path}:{number}: not a run manifest: {_validation_text(exc).partition(': ')[2]}") \
            from None


def manifest(path: str | os.PathLike[str]) -> Manifest | None:
    """The manifest on a results file's first line; None for a file without one (written before manifests) or one
    that cannot be read."""
    try:
        with open(path, "rb") as fh:
            first = fh.readline(MAX_LINE_BYTES)
    except OSError:
        return None
    problem, obj = _parse(first.strip()) if first.strip() else ("empty", None)
    if problem or MANIFEST_KEY not in obj:
        return None
    return _manifest_of(path, 1, obj)


def completeness(paths: Iterable[str | os.PathLike[str]]) -> str:
    """One line saying whether the runs behind results files finished: what ``gsc summary`` and the landing page
    print."""
    said = []
    for path in paths:
        m = manifest(path)
        if m is None:
            said.append(f"{Path(path).name}: no manifest (an older harness's file): whether its run finished is "
                        "unknown")
        elif m.status == "running":
            said.append(f"{Path(path).name}: INCOMPLETE, its run ({m.run_id}, started {m.started}) was interrupted "
                        "or is still going")
        else:
            planned = sum(s.planned or 0 for s in m.systems.values())
            said.append(f"{Path(path).name}: {m.status}, {m.records} record(s) of {planned} test(s) planned, "
                        f"run {m.run_id} ended {m.ended}")
    return "; ".join(said)


def case_snapshot(paths: Iterable[str | os.PathLike[str]]) -> dict[str, str] | None:
    """The case files the runs behind results files saw (Manifest.cases, merged), or None where a file has no
    snapshot (an older harness's, or a hand-made one): then cases are looked up on disk."""
    out: dict[str, str] = {}
    for path in paths:
        m = manifest(path)
        if m is None or not m.cases:
            return None
        out.update(m.cases)
    return out


class RunBusy(RuntimeError):
    """Another run is writing the same results: one line naming it."""


class RunFiles:
    """The files of a run that writes results to ``target``: it appends to ``<target>.partial`` while it runs (so
    the results it replaces are whole until it ends), holds ``<target>.lock``, and when it ends moves the results it
    replaces to ``previous-<name>`` beside it, and its log likewise."""

    def __init__(self, target: str | os.PathLike[str]) -> None:
        self.target = Path(target)
        self.partial = self.target.with_name(self.target.name + ".partial")
        self.lock_path = self.target.with_name(self.target.name + ".lock")
        self.previous = self.target.with_name("previous-" + self.target.name)
        self.log = self.target.with_suffix(".log")
        self.partial_log = self.log.with_name(self.log.name + ".partial")
        self.previous_log = self.previous.with_suffix(".log")
        self._lock: Any = None

    def begin(self, new: Manifest, resume: bool, warn: Callable[[str], None] = _stderr) -> set[tuple[str, ...]]:
        """Take the lock and start (or, with ``resume``, continue) the partial file; the keys already recorded.

        Raises RunBusy when another run holds the lock, or when an interrupted run's partial file is there and
        ``resume`` is not given (nothing is deleted). The results at ``target`` are not touched."""
        from filelock import FileLock, Timeout

        self.target.parent.mkdir(parents=True, exist_ok=True)
        lock = FileLock(self.lock_path, timeout=0)
        try:
            lock.acquire()
        except Timeout:
            other = manifest(self.partial)
            who = f" (run {other.run_id}, pid {other.pid} on {other.host}, started {other.started})" if other else ""
            raise RunBusy(f"{self.target} is being written by another run{who}: wait for it to end, or give "
                          "another --results") from None
        self._lock = lock
        try:
            return self._start(new, resume, warn)
        except BaseException:
            self.release()
            raise

    def _start(self, new: Manifest, resume: bool, warn: Callable[[str], None]) -> set[tuple[str, ...]]:
        if self.partial.exists() and not resume:
            n = _count_lines(self.partial)
            if n:
                raise RunBusy(f"{self.partial} holds an interrupted run's {n} record(s): --resume continues it; "
                              "delete it to start afresh")
        if not resume or not (self.partial.exists() or self.target.exists()):
            _write_new(self.partial, new.line(), b"")
            return set()
        if not self.partial.exists():  # continue a finished run: its records are copied, the target stays whole
            try:
                sum(1 for _ in read([self.target]))
            except NotResultsFile as exc:
                raise RunBusy(f"--resume: {exc}") from None
            old = manifest(self.target)
            body = b"".join(_record_lines(self.target))
            new = new.model_copy(update={"resumed": (old.resumed if old else 0) + 1})
            _write_new(self.partial, new.line(), body)
        else:
            torn = repair(self.partial)
            if torn:
                warn(f"{self.partial}:{torn}: the last line was cut short (a killed run): removed; its case runs "
                     "again")
            old = manifest(self.partial)
            if old is None:  # a partial of an older harness: give it a manifest
                _rewrite_manifest(self.partial, new)
            else:
                _rewrite_manifest(self.partial, old.model_copy(update={"resumed": old.resumed + 1}))
        try:
            return {r.key for r in read([self.partial])}
        except NotResultsFile as exc:
            raise RunBusy(f"--resume: {exc}") from None

    def finish(self, systems: dict[str, SystemCount], corpus: dict[str, str],
               cases: dict[str, str] | None = None, workers: int | None = None,
               memory_peak_gib: float | None = None) -> Manifest:
        """The run ended: its manifest is finished, its file replaces ``target`` (whose results move to
        ``previous-<name>``), and the lock is released. ``corpus``: case-file id -> sha256 of its content;
        ``cases``: case-file id -> its text (kept in the manifest); ``workers`` and ``memory_peak_gib``: what the run
        had and took (Manifest). Returns the finished manifest."""
        old = manifest(self.partial)
        if old is None:
            raise DamagedResults(f"{self.partial}: no manifest on its first line: not this run's file")
        lines = _record_lines(self.partial)
        counts: dict[str, SystemCount] = {k: v.model_copy() for k, v in systems.items()}
        for line in lines:
            rec = json.loads(line)
            entry = counts.setdefault(system_name(rec["framework"], rec.get("device") or "cpu"), SystemCount())
            entry.recorded += 1
            entry.version = str(rec.get("framework_version") or entry.version)
        done = old.model_copy(update={
            "status": "complete", "ended": _now(), "records": len(lines), "systems": counts,
            "corpus_digest": corpus_digest(corpus) if corpus else old.corpus_digest,
            "case_files": len(corpus) if corpus else old.case_files,
            "previous": self.previous.name if self.target.exists() else None,
            "workers": workers, "memory_peak_gib": memory_peak_gib,
            "cases": {**old.cases, **(cases or {})}})
        tmp = self.target.with_name(self.target.name + ".tmp")
        _write_new(tmp, done.line(), b"".join(lines))
        if self.target.exists():
            os.replace(self.target, self.previous)
        os.replace(tmp, self.target)
        self.partial.unlink()
        if self.log.exists():  # the replaced results' log goes with them, whether or not this run wrote one
            os.replace(self.log, self.previous_log)
        if self.partial_log.exists():
            os.replace(self.partial_log, self.log)
        self.release()
        return done

    def abandon(self) -> int:
        """The run stopped before its end: a partial file holding no record is removed (a usage error, nothing
        run); one holding records is kept for ``--resume``. Returns the records kept."""
        n = _count_lines(self.partial) if self.partial.exists() else 0
        if not n:
            self.partial.unlink(missing_ok=True)
            self.partial_log.unlink(missing_ok=True)
        self.release()
        return n

    def release(self) -> None:
        """Release the lock (the lock file stays: removing it would race with another run taking it)."""
        if self._lock is not None:
            self._lock.release()
            self._lock = None


def corpus_digest(corpus: dict[str, str]) -> str:
    """sha256 over case-file ids and their contents' sha256, in id order."""
    h = hashlib.sha256()
    for file_id in sorted(corpus):
        h.update(f"{file_id}\0{corpus[file_id]}\n".encode())
    return h.hexdigest()


def new_manifest(command: list[str], frameworks: list[str], shard: str | None = None) -> Manifest:
    """A manifest for a run starting now (``shard``: ``K/N`` when it runs one shard of a run)."""
    import socket
    import uuid

    from gather_scatter_conformance.vocab.record import harness_version

    return Manifest(run_id=uuid.uuid4().hex[:12], harness_version=harness_version(), command=command,
                    host=socket.gethostname(), pid=os.getpid(), started=_now(), frameworks=frameworks,
                    shard=shard)


def _now() -> str:
    return datetime.now(timezone.utc).isoformat(timespec="seconds")


def repair(path: Path) -> int | None:
    """Cut a torn last line (one that does not end in a newline) off ``path``; its line number, or None when the
    file ends whole."""
    size = path.stat().st_size
    if not size:
        return None
    with open(path, "rb+") as fh:
        fh.seek(max(0, size - MAX_LINE_BYTES))
        tail = fh.read()
        if tail.endswith(b"\n"):
            return None
        keep = size - len(tail) + tail.rfind(b"\n") + 1
        fh.seek(0)
        number = fh.read(keep).count(b"\n") + 1
        fh.truncate(keep)
        fh.flush()
        os.fsync(fh.fileno())
    return number


def _record_lines(path: Path) -> list[bytes]:
    """The whole record lines of a results file (no manifest, no torn last line), each ending in a newline."""
    with open(path, "rb") as fh:
        lines = fh.readlines()
    if lines and not lines[-1].endswith(b"\n"):
        lines.pop()
    return [line for line in lines if line.strip() and not line.startswith(b'{"' + MANIFEST_KEY.encode())]


def _count_lines(path: Path) -> int:
    return len(_record_lines(path))


def _write_new(path: Path, head: bytes, body: bytes) -> None:
    """Write ``path`` whole and to disk (a temporary file renamed over it)."""
    tmp = path.with_name(path.name + ".new")
    with open(tmp, "wb") as fh:
        fh.write(head)
        fh.write(body)
        fh.flush()
        os.fsync(fh.fileno())
    os.replace(tmp, path)


def _rewrite_manifest(path: Path, new: Manifest) -> None:
    _write_new(path, new.line(), b"".join(_record_lines(path)))
