"""Baselines: the behaviour labels each framework version is known to have, so the nightly run catches changes.

In the spirit of array-api-tests' xfails files, but exact: a probe test passes when its observed label equals the
baseline's, and fails when the label changed (or has no baseline yet). ``--update-baseline`` rewrites the file
from a run. Files live in ``baselines/<framework>.yaml``: ``labels`` as measured on ``version`` (the pinned release),
and, once release sweeps have been folded in (``gsc history FRAMEWORK --update-baseline``),
``releases`` (every release whose labels the file knows) and ``ranges`` (the keys whose label differs between them,
as ``[{label, until}, {label, since, until}, ..., {label, since}]``). A run on any release is checked against the
label valid for that release; a change in a release the file does not know fails, naming both releases.
A memory-unsafe cell is checked by its class, not its label (:func:`check`); ``memory_unsafe`` lists the cells a
memory checker's evidence puts in that class whatever their value (``gsc memcheck``, :func:`mark_unsafe`).

A converter path's file (``baselines/<source>~<converter>~<target>.yaml``) holds its preservation verdicts
(:func:`record_label`): its test fails when one differs from the file, and xfails on a change the file records.
"""

from __future__ import annotations

import fcntl
import os
import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import yaml
from packaging.version import InvalidVersion, Version

from gather_scatter_conformance.adapters import is_path
from gather_scatter_conformance.adapters.base import NOT_MAPPED
from gather_scatter_conformance.vocab.dimensions import DIMENSIONS, is_memory_unsafe, same_unordered

if TYPE_CHECKING:
    from gather_scatter_conformance.vocab.record import Record

_RELEASE = re.compile(r"\d+(?:\.\d+)*")


def release_of(version: str | None) -> Version | None:
    """The release number at the head of a framework's version string (``2026.4.1-22982-e213...`` -> 2026.4.1,
    ``2.13.0+cpu`` -> 2.13.0), or None when it has none."""
    m = _RELEASE.match(version or "")
    try:
        return Version(m.group(0)) if m else None
    except InvalidVersion:
        return None


def item_key(case_nodeid: str, variant: str, device: str = "cpu") -> str:
    """The key of one probe result in a baseline file: ``file::id[variant]`` (plus ``@device`` off the CPU)."""
    return f"{case_nodeid}[{variant}]" + (f"@{device}" if device != "cpu" else "")


def path_for(root: Path, framework: str) -> Path:
    """Where a framework's baseline file lives."""
    return root / f"{framework}.yaml"


# libyaml's safe loader where PyYAML was built with it: the same documents, eleven times faster here (a report
# and each run's workers load every system's baseline: 1.43 s against 0.13 s for the 37 shipped ones).
_LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


class BaselineFileError(ValueError):
    """A baseline file that is not one (not YAML, not a mapping, a section that is not a mapping): one line naming
    the file, and the line where YAML says."""


def load(root: Path, framework: str) -> dict[str, Any]:
    """The baseline of a framework: ``{"framework", "version", "labels": {key: label}}`` (empty if none).
    BaselineFileError for a file that is not a baseline."""
    path = path_for(root, framework)
    if not path.exists():
        return {"framework": framework, "version": None, "labels": {}}
    try:
        data = yaml.load(path.read_text(), Loader=_LOADER) or {}
    except (yaml.YAMLError, UnicodeDecodeError) as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f":{mark.line + 1}" if mark is not None else ""
        raise BaselineFileError(f"{path}{where}: not a baseline file ({str(exc).splitlines()[0]})") from None
    bad = [k for k in ("labels", "verdicts", "ranges", "memory_unsafe") if not isinstance(data, dict)
           or not isinstance(data.get(k) or {}, dict)]
    if bad:
        what = "not a mapping" if not isinstance(data, dict) else f"its {bad[0]} is not a mapping"
        raise BaselineFileError(f"{path}: not a baseline file ({what})")
    # A label is read as text by every judge of it (a|b alternatives, a hang's `timeout`): one that is not fails here,
    # named, not later in a worker's hands.
    odd = next((k for k, v in (data.get("labels") or {}).items() if not isinstance(v, str)), None)
    if odd is not None:
        raise BaselineFileError(f"{path}: not a baseline file (the label of {str(odd)[:200]!r} is not text)")
    data.setdefault("labels", {})
    return data


class _Dumper(yaml.SafeDumper):
    """Writes the release list and each range entry on one line, the rest in block style."""


class _FlowList(list):  # type: ignore[type-arg]
    pass


class _FlowDict(dict):  # type: ignore[type-arg]
    pass


_Dumper.add_representer(_FlowList, lambda d, v: d.represent_sequence("tag:yaml.org,2002:seq", v, flow_style=True))
_Dumper.add_representer(_FlowDict, lambda d, v: d.represent_mapping("tag:yaml.org,2002:map", v.items(),
                                                                    flow_style=True))


def _flow(data: dict[str, Any]) -> dict[str, Any]:
    out = dict(data)
    if "releases" in out:
        out["releases"] = _FlowList(out["releases"])
    if "ranges" in out:
        out["ranges"] = {k: [_FlowDict(e) for e in v] for k, v in out["ranges"].items()}
    return out


def _edit(root: Path, framework: str, change: Any) -> None:
    """Apply ``change(data)`` to the framework's baseline file under a lock (several pytest-xdist workers may
    write) and write it back atomically, keys in a fixed order."""
    root.mkdir(parents=True, exist_ok=True)
    path = path_for(root, framework)
    with open(root / f".{framework}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        data = load(root, framework)
        data["framework"] = framework
        change(data)
        data.pop("_files", None)
        ordered = {k: data[k] for k in ("framework", "version", "releases", "labels", "ranges", "memory_unsafe",
                                        "verdicts") if data.get(k)}
        ordered.setdefault("labels", {})
        tmp = path.with_suffix(".tmp")
        if is_path(framework):
            header = (f"# Preservation verdicts measured on {framework} ({data.get('version')}); a path's test fails "
                      "when one changes,\n# and xfails on a change recorded here. Regenerate with: python -m pytest "
                      f"cases --framework {framework} --update-baseline\n")
        else:
            header = (
                f"# Behaviour labels measured on {framework} {data.get('version')}; a probe test fails when its label "
                "changes.\n# Regenerate with: python -m pytest cases/probes --framework NAME --update-baseline"
                + ("; releases and ranges: gsc history NAME --update-baseline" if data.get("ranges")
                   or data.get("releases") else "") + "\n"
            )
        tmp.write_text(header + yaml.dump(_flow(ordered), Dumper=_Dumper, sort_keys=False, width=200))
        os.replace(tmp, path)


def update(root: Path, framework: str, version: str | None, labels: dict[str, str],
           dimensions: dict[str, str] | None = None, verdicts: dict[str, str] | None = None) -> None:
    """Merge ``labels``, measured on ``version``, into the framework's baseline file as its pinned labels
    (:func:`merged`); with ``version`` None the pinned version stays (labels of another device, measured on that
    device's build). A key with ``ranges`` gets the label in the range that holds the pinned release too, which is
    the one a run on that release is checked against. ``dimensions`` (key -> the probe's dimension) tells
    :func:`merged` which keys read through their indices. ``verdicts`` (key -> :func:`cell_verdict`) replace those of
    the same keys in the file's ``verdicts`` section: what each conformance case did, which ``gsc gate`` checks."""
    dims = dimensions or {}

    def change(data: dict[str, Any]) -> None:
        if version is not None or not data.get("version"):
            data["version"] = version
        if verdicts:
            data["verdicts"] = dict(sorted({**(data.get("verdicts") or {}), **verdicts}.items()))
        old = data["labels"]
        new = {k: merged(old.get(k), v, dims.get(k)) for k, v in labels.items()}
        data["labels"] = dict(sorted({**old, **new}.items()))
        pinned = release_of(data.get("version"))
        for key in new:
            for entry in (data.get("ranges") or {}).get(key, []):
                since, until = release_of(entry.get("since")), release_of(entry.get("until"))
                if pinned and (since is None or pinned >= since) and (until is None or pinned < until):
                    entry["label"] = merged(entry["label"], labels[key], dims.get(key))

    _edit(root, framework, change)


def mark_unsafe(root: Path, framework: str, evidence: dict[str, str]) -> None:
    """Record in the framework's baseline that the cells ``evidence`` names (key -> the checker's one-line account)
    are memory-unsafe by a memory checker's evidence; a key mapped to ``""`` is dropped from the section."""

    def change(data: dict[str, Any]) -> None:
        section = {**(data.get("memory_unsafe") or {}), **evidence}
        data["memory_unsafe"] = {k: v for k, v in sorted(section.items()) if v}

    _edit(root, framework, change)


def ranges(by_release: dict[str, str]) -> str | list[dict[str, str]]:
    """A baseline entry from {release: label}: the label alone when it never changed, else ranges
    ``[{label, until}, {label, since, until}, ..., {label, since}]`` where ``since`` is the first release measured
    with that label and ``until`` the first release measured without it."""
    ordered = sorted(by_release, key=Version)
    runs: list[tuple[str, str]] = []  # (label, first release)
    for rel in ordered:
        if not runs or runs[-1][0] != by_release[rel]:
            runs.append((by_release[rel], rel))
    if len(runs) == 1:
        return runs[0][0]
    out = []
    for i, (label, since) in enumerate(runs):
        entry = {"label": label}
        if i:
            entry["since"] = since
        if i + 1 < len(runs):
            entry["until"] = runs[i + 1][1]
        out.append(entry)
    return out


def update_ranges(root: Path, framework: str, by_key: dict[str, dict[str, str]]) -> int:
    """Fold labels measured across releases (key -> {release: label}, from history sweeps) into the baseline: the
    pinned labels count as measured on the pinned release; ``releases`` lists them all, and ``ranges`` holds every
    key whose label changes. Releases the judge cannot tell apart (:func:`release_of`: ``0.27.0`` and
    ``0.27.0.post1``) are one release, their labels joined (:func:`merged`); on the pinned release the pinned label
    joins a sweep's, never yields to it (a sweep runs once; the pinned label holds every label repeated runs saw).
    Returns the number of keys with ranges."""
    def change(data: dict[str, Any]) -> None:
        pinned = release_of(data.get("version"))
        seen = {str(pinned)} if pinned else set()
        out: dict[str, Any] = {}
        for key in sorted(set(by_key) | set(data["labels"])):
            measured: dict[str, str] = {}
            for rel, label in sorted(by_key.get(key, {}).items(), key=lambda item: Version(item[0])):
                name = str(release_of(rel) or rel)
                measured[name] = merged(measured.get(name), label)
            if pinned and key in data["labels"]:
                measured[str(pinned)] = merged(measured.get(str(pinned)), data["labels"][key])
            seen |= set(measured)
            entry = ranges(measured) if measured else None
            if isinstance(entry, list):
                out[key] = entry
        data["releases"] = sorted(seen, key=Version)
        data["ranges"] = out

    _edit(root, framework, change)
    return len(load(root, framework).get("ranges", {}))


def covers(baseline: dict[str, Any], case_file: str) -> bool:
    """True when the baseline holds labels of some probe in ``case_file`` (a probe of a file it has never seen, a
    user's own case file, has nothing to be checked against)."""
    files = baseline.get("_files")
    if files is None:
        files = baseline["_files"] = {k.split("::", 1)[0] for k in baseline["labels"]}
    return case_file in files


def label_at(baseline: dict[str, Any], key: str, version: str | None) -> str | None:
    """The label the baseline gives ``key`` on ``version``: from its ``ranges`` where it has some, else ``labels``
    (measured on the pinned release, and the same on every release the file knows)."""
    entries = baseline.get("ranges", {}).get(key)
    if not entries:
        return baseline["labels"].get(key)
    rel = release_of(version)
    if rel is None:
        return entries[-1]["label"]
    for entry in entries:
        since, until = release_of(entry.get("since")), release_of(entry.get("until"))
        if (since is None or rel >= since) and (until is None or rel < until):
            return entry["label"]
    return entries[-1]["label"]  # ranges written by fold() are contiguous: unreachable but for hand edits


def known_releases(baseline: dict[str, Any]) -> list[Version]:
    """Every release whose labels the baseline knows: its sweeps' releases and the pinned one, oldest first."""
    found = {release_of(str(r)) for r in baseline.get("releases", [])} | {release_of(baseline.get("version"))}
    return sorted(v for v in found if v is not None)


def cell_verdict(record: Record) -> str | None:
    """What a baseline's ``verdicts`` section keeps of a conformance case's record (one with no
    :func:`record_label`): ``conforms``, ``deviates``, ``n/a`` (the spec leaves it open), ``unsupported``,
    ``crash:SIGNAL`` or ``timeout``; None for a harness fault, which says nothing of the system."""
    if record.outcome == "harness-error":
        return None
    if record.outcome == "crash":
        return f"crash:{record.signal or 'exit'}"
    if record.outcome in ("timeout", "unsupported"):
        return record.outcome
    return record.verdict


def record_label(record: Record) -> str | None:
    """What a baseline keeps of a record: for a converter path, its preservation (``preserved``, ``changed: error
    -> wrap``, ``conversion-failed``, ``conversion-failed (timeout)`` where the converter hung, ``unknown``), which is
    what a path's test checks; else the probe's behaviour label (None for a conformance case, which known/ files
    cover instead)."""
    conversion = record.conversion
    if conversion:
        kind = conversion["preservation"]
        if kind == "changed":
            return conversion["summary"]
        # A converter's hang is kept as one: the next run's first try that hangs then needs no second (a whole case
        # timeout: repeats.hung_in), where an error or a crash says nothing of how long the next try will take.
        return f"{kind} (timeout)" if kind == "conversion-failed" and record.outcome == "timeout" else kind
    return record.label


# Signals of a process whose heap was corrupted: which one kills it depends on the allocator's state, not on the
# behaviour. A converter path's preservation (``changed: ok -> crash:SIGSEGV``) names one inside its summary.
_CORRUPTION = re.compile(r"crash:SIG(?:SEGV|ABRT|BUS)\b")


_GARBAGE = re.compile(r"\bgarbage\b")  # also inside a path's preservation (``changed: reduce-all -> garbage``)


def _parts(label: str) -> set[str]:
    """A label's parts as the check compares them: the corruption signal left out, and ``garbage`` read as
    ``wrong``: both are a value no policy gives, and whether it also differs between fresh processes depends on
    the heap the process forked with (harness.judge.repeats)."""
    return {_GARBAGE.sub("wrong", _CORRUPTION.sub("crash:memory", p)) for p in label.split("|")}


def in_class(baseline: dict[str, Any], key: str, label: str | None) -> bool:
    """Whether a cell is memory-unsafe by its baseline: its label is (harness.judge.repeats), or the baseline's
    ``memory_unsafe`` section holds a checker's evidence for it (a deterministic read before a buffer is ``wrong``
    by its value and memory-unsafe by the evidence)."""
    return is_memory_unsafe(label) or key in (baseline.get("memory_unsafe") or {})


def check(baseline: dict[str, Any], key: str, observed: str, version: str, dimension: str | None = None) -> str | None:
    """None when ``observed`` agrees with the label the baseline gives ``key`` on ``version`` (every part of it is
    one the baseline has seen, a corruption signal and garbage/wrong aside), when both are in the memory-unsafe
    class (the class and not the label is compared: which label such a cell gets depends on what lies in memory),
    when the baseline says the duplicates were written in no fixed order and the run saw orders only
    (``same_unordered``),
    or when the baseline knows nothing of the probe's case file; otherwise the failure message, naming the
    dimension, both labels and both releases, and saying when the cell moved into or out of the class."""
    known = label_at(baseline, key, version)
    if known is None and not covers(baseline, key.split("::", 1)[0]):
        return None
    if known is None:
        return (f"no baseline label for {key} (observed {observed!r} on {version}); "
                "run with --update-baseline to record it")
    was, now = in_class(baseline, key, known), is_memory_unsafe(observed)
    if (was and now) or _parts(observed) <= _parts(known) or same_unordered(known, observed):
        return None
    what = f"{dimension}: " if dimension else ""
    if was != now:
        what += "left the memory-unsafe class: " if was else "entered the memory-unsafe class: "
    rel, releases = release_of(version), known_releases(baseline)
    if rel is None and version == baseline.get("version"):  # a path's version names three parts, no one release
        return f"behaviour changed: {what}baseline says {known!r}, observed {observed!r} on {version} ({key})"
    if rel is not None and rel in releases:
        return (f"behaviour changed: {what}baseline says {known!r} on {baseline.get('framework')} {rel}, a release it "
                f"knows (pinned: {baseline.get('version')}), observed {observed!r} on {version} ({key})")
    before = [r for r in releases if rel is not None and r < rel]
    near = before[-1] if before else (releases[0] if releases else baseline.get("version"))
    return (f"behaviour changed in a release the baseline does not know: {what}{known!r} on "
            f"{baseline.get('framework')} {near} -> {observed!r} on {version} ({key})")


def note(baseline: dict[str, Any], key: str, observed: str, version: str) -> str | None:
    """For a cell that passed :func:`check`: the labels it showed that its baseline has not seen (a note, not a
    failure: a memory-unsafe cell's new label inside the class, garbage where the baseline says wrong), else
    None."""
    known = label_at(baseline, key, version)
    if not known:
        return None
    new = [p for p in observed.split("|") if p not in known.split("|")]
    return f"{key}: baseline says {known!r}; new label(s) {', '.join(new)} (same class)" if new else None


# A known label that an observed one supersedes: a scatter's alias, read before the labels told a write from a
# read (alias-write); and, where the indices stay in range (duplicate targets, uncovered places), garbage the
# repeats showed deterministic (wrong). An index past the buffer keeps its garbage: its read is deterministic within
# one session (the repeats fork from one heap) and varies across sessions (TVM's gather_nd: wrong, then garbage).
_SUPERSEDED = {"alias": "alias-write"}
_SUPERSEDED_IN_RANGE = {**_SUPERSEDED, "garbage": "wrong"}


def merged(known: str | None, observed: str, dimension: str | None = None) -> str:
    """The label a baseline keeps when a run observed ``observed`` where it held ``known``.

    Where the observation passes :func:`check` against ``known`` by its labels or its class, the labels are
    joined, those ``known`` had first and in their order, then the new ones: a cell that reads memory keeps every
    label it has been seen with (``wrong|zero``), so the next run's draw still passes. A label the observation
    supersedes is dropped (a scatter's ``alias`` where ``alias-write`` is observed; on a ``dimension`` whose indices
    stay in range, ``garbage`` where the repeats showed ``wrong``). Otherwise (a real change: a bounds check now
    raises) the observation replaces ``known``.
    """
    if not known:
        return observed
    same = (_parts(observed) <= _parts(known) or (is_memory_unsafe(known) and is_memory_unsafe(observed))
            or same_unordered(known, observed))
    if not same:
        return observed
    seen = observed.split("|")
    reads = dimension is not None and dimension in DIMENSIONS and DIMENSIONS[dimension][1] == "index"
    superseded = _SUPERSEDED if reads or dimension is None else _SUPERSEDED_IN_RANGE
    kept = [p for p in known.split("|") if superseded.get(p) not in seen]
    # the labels it had keep their places and new ones follow: an update that saw nothing new changes no line
    return "|".join(dict.fromkeys(kept + seen))


def pinned_version(record: Record) -> str | None:
    """The version a record's label pins its framework's baseline to: a CPU record's framework version; None for a
    device's record (ONNX Runtime's OpenVINO EP is another wheel, 1.24.1 beside the pinned 1.32.0), whose labels
    join the file without moving its pin."""
    return record.framework_version if record.device == "cpu" else None


def check_records(root: Path, records: Iterable[Record]) -> tuple[list[str], list[str]]:
    """(failures, notes) of result records judged offline against the baselines in ``root``, as the run's own
    tests judge them (:func:`check`, then :func:`note` where it passed), a line each that names the record's
    framework and key: for a results file measured elsewhere (a nightly's machine), or against baselines updated
    since. Records a run does not check (conformance cases, unmapped operators) are passed over."""
    failures: list[str] = []
    notes: list[str] = []
    loaded: dict[str, dict[str, Any]] = {}
    for rec in records:
        label = record_label(rec)
        if not label or rec.variant == NOT_MAPPED:
            continue
        framework = rec.framework
        base = loaded.get(framework)
        if base is None:
            base = loaded[framework] = load(root, framework)
        key = item_key(rec.case, rec.variant, rec.device)
        version = rec.framework_version
        problem = check(base, key, label, version, rec.dimension)
        if problem:
            failures.append(f"{framework}: {problem}")
        else:
            said = note(base, key, label, version)
            if said:
                notes.append(f"{framework}: {said}")
    return failures, notes


@dataclass
class _Collected:
    """What baselines keep of a set of records, per framework (see :func:`collect`)."""

    labels: dict[str, dict[str, str]] = field(default_factory=dict)
    dims: dict[str, dict[str, str]] = field(default_factory=dict)
    versions: dict[str, str] = field(default_factory=dict)
    verdicts: dict[str, dict[str, str]] = field(default_factory=dict)


def collect(records: Iterable[Record]) -> _Collected:
    """Per framework: every probe record's label and converter path record's preservation (:func:`record_label`; a
    cell recorded by several runs gets every label they saw), every conformance case's :func:`cell_verdict`, the
    probes' dimensions, and the pinned version: the CPU records' (a device's labels, keys ``...@device``, may come
    from another build, e.g. ONNX Runtime's OpenVINO EP wheel, and join without moving the pin)."""
    out = _Collected()
    for rec in records:
        if rec.variant == NOT_MAPPED:  # recorded, never checked: no key
            continue
        key = item_key(rec.case, rec.variant, rec.device)
        label = record_label(rec)
        verdict = None if label else cell_verdict(rec)
        if verdict:
            out.verdicts.setdefault(rec.framework, {})[key] = verdict
        if label:
            labels = out.labels.setdefault(rec.framework, {})
            # The same cell in several runs (results files of repeated runs): every label seen, in the order seen.
            labels[key] = "|".join(p for p in dict.fromkeys([*labels.get(key, "").split("|"), *label.split("|")])
                                   if p)
            if rec.dimension:
                out.dims.setdefault(rec.framework, {})[key] = rec.dimension
        pin = pinned_version(rec)
        if (label or verdict) and pin:
            out.versions[rec.framework] = pin
    return out


def from_records(root: Path, records: Iterable[Record]) -> dict[str, int]:
    """Write baseline files from result records (:func:`collect`); returns the labels and verdicts written per
    framework."""
    got = collect(records)
    frameworks = got.labels.keys() | got.verdicts.keys()
    for framework in sorted(frameworks):
        update(root, framework, got.versions.get(framework), got.labels.get(framework, {}), got.dims.get(framework),
               got.verdicts.get(framework))
    return {fw: len(got.labels.get(fw, {})) + len(got.verdicts.get(fw, {})) for fw in frameworks}


def in_memory(records: Iterable[Record]) -> dict[str, dict[str, Any]]:
    """The baselines :func:`from_records` would write into an empty directory, as loaded dicts per framework
    (``gsc diff`` judges a run against an earlier one with them)."""
    got = collect(records)
    return {fw: {"framework": fw, "version": got.versions.get(fw), "labels": got.labels.get(fw, {}),
                 "verdicts": got.verdicts.get(fw, {})} for fw in got.labels.keys() | got.verdicts.keys()}
