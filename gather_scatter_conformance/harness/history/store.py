"""History files: ``history/<framework>.jsonl``, one record per release × operator × API variant × device ×
dimension, and what can be read from them (the label per release, the changes between releases).

A record with ``status: ok`` holds ``label`` (every alternative its probes' labels show, once each, sorted: ``a|b``
when they disagree; :func:`group_label`), ``labels`` (per probe case), ``outcomes`` and ``verdicts`` (counts), the
release's ``packages``, ``python`` and the ``measured`` date.
The seed cases of a variant make one record with ``dimension: seed-cases`` whose label is ``conforms`` or
``deviates:N`` (``deviating`` lists them). A release that could not be installed, imported or run is one record with
``status`` install-failed / import-failed / run-failed and its ``reason``. Files are rewritten whole, sorted, so a
re-swept release replaces its old records and the committed files diff cleanly.
"""

from __future__ import annotations

import itertools
import json
import os
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from packaging.version import Version

from gather_scatter_conformance.harness.judge.baseline import item_key, release_of

SEED_DIMENSION = "seed-cases"
Key = tuple[str, str, str, str]  # (op, variant, device, dimension)


def path_for(directory: Path, framework: str) -> Path:
    """Where a framework's history lives."""
    return directory / f"{framework}.jsonl"


def group_label(case_labels: Iterable[str]) -> str:
    """The label of a group of probes (one operator, API, device and dimension): every alternative their labels show,
    once each, sorted, or ``unlabelled``. ``last-wins|nondeterministic`` and ``last-wins`` give
    ``last-wins|nondeterministic``: the group's label once read ``last-wins|nondeterministic|last-wins``, and the order
    of one probe's alternatives (most frequent first) is no behaviour that changes between releases."""
    names = sorted({alt for label in case_labels for alt in label.split("|") if alt})
    return "|".join(names) if names else "unlabelled"


def read(directory: Path, framework: str | None = None) -> list[dict[str, Any]]:
    """Every history record of ``framework`` (or of every framework with a file in ``directory``); a probe group's
    label as :func:`group_label` writes it (files swept before it may repeat or order alternatives otherwise)."""
    paths = [path_for(directory, framework)] if framework else sorted(directory.glob("*.jsonl"))
    out: list[dict[str, Any]] = []
    for path in paths:
        if path.exists():
            with open(path, encoding="utf-8") as fh:
                out += [json.loads(line) for line in fh if line.strip()]
    for rec in out:
        if rec.get("status") == "ok" and rec.get("dimension") != SEED_DIMENSION and isinstance(rec.get("label"), str):
            rec["label"] = group_label([rec["label"]])
    return out


def _order(rec: dict[str, Any]) -> tuple[Any, ...]:
    return (Version(rec["release"]), rec.get("op", ""), rec.get("variant", ""), rec.get("device", ""),
            rec.get("dimension", ""))


def write_release(directory: Path, framework: str, release: str, records: Iterable[dict[str, Any]]) -> Path:
    """Replace ``release``'s records of the operators in ``records`` with ``records`` (atomically): a sweep of one
    operator's cases (``--cases cases/probes/tensor_scatter.yaml``) keeps the release's other operators. A record
    of the whole release (install or import failed: no ``op``) replaces all of it, and is replaced by any records
    of that release (a release that failed once and has been measured since)."""
    directory.mkdir(parents=True, exist_ok=True)
    path = path_for(directory, framework)
    records = list(records)
    swept = {r.get("op") for r in records}
    kept = [r for r in read(directory, framework)
            if r["release"] != release or (None not in swept and r.get("op") not in swept | {None})]
    merged = sorted([*kept, *records], key=_order)
    tmp = path.with_suffix(".tmp")
    tmp.write_text("".join(json.dumps(r, sort_keys=True) + "\n" for r in merged), encoding="utf-8")
    os.replace(tmp, path)
    return path


def key(rec: dict[str, Any]) -> Key:
    """What a label belongs to within one framework: operator, API variant, device, dimension."""
    return rec["op"], rec["variant"], rec.get("device", "cpu"), rec["dimension"]


def releases(records: Iterable[dict[str, Any]]) -> list[str]:
    """The releases the records cover, oldest first (failed ones included)."""
    return in_order(r["release"] for r in records)


def in_order(releases: Iterable[str]) -> list[str]:
    """Release names, each once, oldest first (by their version numbers, not as text: 2.10 after 2.9)."""
    return sorted(set(releases), key=Version)


def labels(records: Iterable[dict[str, Any]]) -> dict[Key, dict[str, str]]:
    """Key -> {release: label} for every measured record."""
    out: dict[Key, dict[str, str]] = {}
    for rec in records:
        if rec.get("status") == "ok":
            out.setdefault(key(rec), {})[rec["release"]] = rec["label"]
    return out


@dataclass(frozen=True)
class Change:
    """One label that differs between two consecutive releases measuring it."""

    key: Key
    before: str  # release
    after: str
    old: str  # label
    new: str

    @property
    def kind(self) -> str:
        """``api`` where the API could not express the probe on one side (it arrived, or went: ``unsupported``),
        else ``behaviour``: the same call did something else."""
        return "api" if "unsupported" in (self.old, self.new) else "behaviour"


def changes(records: list[dict[str, Any]]) -> list[Change]:
    """Every label change between consecutive measured releases of each key, in key then release order."""
    out = []
    for k, by_release in sorted(labels(records).items()):
        ordered = sorted(by_release, key=Version)
        for a, b in itertools.pairwise(ordered):
            if by_release[a] != by_release[b]:
                out.append(Change(k, a, b, by_release[a], by_release[b]))
    return out


def diff(records: list[dict[str, Any]], a: str, b: str) -> list[tuple[Key, str | None, str | None]]:
    """(key, label on a, label on b) for every key whose label differs between releases ``a`` and ``b`` (None:
    not measured on that release)."""
    out = []
    for k, by_release in sorted(labels(records).items()):
        la, lb = by_release.get(a), by_release.get(b)
        if la != lb and (la is not None or lb is not None):
            out.append((k, la, lb))
    return out


def failures(records: Iterable[dict[str, Any]]) -> dict[str, str]:
    """Release -> why it has no measurements (install, import or run failure)."""
    return {r["release"]: f"{r['status']}: {r.get('reason', '')}" for r in records if r.get("status") != "ok"}


def case_labels(records: Iterable[dict[str, Any]]) -> dict[str, dict[str, str]]:
    """Baseline key (``file::id[variant]``, ``@device`` off the CPU) -> {release: label}, from the probe records.
    Computed once per list (while its length stays), since a report asks it of one framework's history for each of
    its findings; the answer is shared: do not change it."""
    if not isinstance(records, list):
        return _case_labels(records)
    held = _CASE_LABELS.get(id(records))
    if held is None or held[0] is not records or held[1] != len(records):
        if len(_CASE_LABELS) >= 64:
            _CASE_LABELS.clear()
        held = _CASE_LABELS[id(records)] = (records, len(records), _case_labels(records))
    return held[2]


_CASE_LABELS: dict[int, tuple[list[dict[str, Any]], int, dict[str, dict[str, str]]]] = {}


def _case_labels(records: Iterable[dict[str, Any]]) -> dict[str, dict[str, str]]:
    out: dict[str, dict[str, str]] = {}
    for rec in records:
        if rec.get("status") != "ok" or rec["dimension"] == SEED_DIMENSION:
            continue
        for case, label in rec.get("labels", {}).items():
            out.setdefault(item_key(case, rec["variant"], rec.get("device", "cpu")), {})[rec["release"]] = label
    return out


def normalised(release: str) -> str:
    """A framework's own version string as a release number (``2.13.0+cpu`` -> ``2.13.0``)."""
    return str(release_of(release) or release)
