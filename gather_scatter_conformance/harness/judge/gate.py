"""The conformance gate: a run judged against a team's committed baselines, with an exit status a CI step can act on.

A runtime team runs the corpus on its system, reviews the result, writes its baselines (``gsc baseline RESULTS
--dir DIR``: each probe's behaviour label, each converter path's preservation, each conformance case's verdict) and
commits them. From then on ``gsc gate RESULTS --baselines DIR`` fails the build on what changed, by kind
(``vocab.gate``: new deviation, label change, new crash or memory-unsafe cell, lost coverage, no baseline). The
exit status is the sum of the bits of the kinds found, minus the kinds the policy ignores (``--ignore KIND``); 0
passes. Each finding names its system and cell key (``file::id[variant]``, ``@device`` off the CPU), so the JUnit
report (``harness.report.gate``) has one failing test case per finding. docs/gate.md is the team's guide.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from gather_scatter_conformance.adapters.base import NOT_MAPPED
from gather_scatter_conformance.harness.judge.baseline import (
    cell_verdict,
    check,
    in_class,
    item_key,
    label_at,
    load,
    record_label,
)
from gather_scatter_conformance.vocab.dimensions import is_memory_unsafe
from gather_scatter_conformance.vocab.gate import BITS, KINDS

if TYPE_CHECKING:
    from gather_scatter_conformance.vocab.record import Record


@dataclass(frozen=True)
class Finding:
    """One thing the gate fails on: its kind (a key of BITS), the system, the cell key ("" for a whole system) and a
    one-line account naming what the baseline says and what the run did."""

    kind: str
    system: str
    key: str
    message: str


@dataclass
class Verdict:
    """The gate's answer: its findings, the cells it checked per system (a JUnit test case each), and the kinds the
    policy ignores."""

    findings: list[Finding] = field(default_factory=list)
    checked: dict[str, list[str]] = field(default_factory=dict)
    ignored: frozenset[str] = frozenset()

    def failing(self) -> list[Finding]:
        """The findings the policy fails on."""
        return [f for f in self.findings if f.kind not in self.ignored]

    def exit_status(self) -> int:
        """The sum of the bits of the failing kinds (BITS); 0 when the gate passes."""
        return sum(BITS[kind] for kind in {f.kind for f in self.failing()})

    def counts(self) -> dict[str, int]:
        """Findings per kind, every kind listed."""
        return {kind: sum(1 for f in self.findings if f.kind == kind) for kind in KINDS}

    def as_json(self) -> dict[str, Any]:
        """The verdict as builtins (``gsc gate --json``): exit status, counts, findings, cells checked."""
        return {
            "exit_status": self.exit_status(),
            "passed": self.exit_status() == 0,
            "ignored": sorted(self.ignored),
            "counts": self.counts(),
            "checked": {system: len(keys) for system, keys in sorted(self.checked.items())},
            "findings": [{"kind": f.kind, "system": f.system, "key": f.key, "message": f.message,
                          "fails": f.kind not in self.ignored} for f in self.findings],
        }


def _device(key: str) -> str:
    """The device a baseline key names (``...]@gpu`` -> gpu)."""
    head, sep, tail = key.rpartition("]@")
    return tail if sep and head else "cpu"


def _baselined(base: dict[str, Any]) -> bool:
    return bool(base.get("labels") or base.get("verdicts"))


def _judge(base: dict[str, Any], rec: Record, key: str) -> Finding | None:
    """The finding one record makes against its system's baseline, if any."""
    label = record_label(rec)
    if rec.outcome == "harness-error":  # a fault of the harness: the cell did not run
        before = label_at(base, key, rec.framework_version) or (base.get("verdicts") or {}).get(key)
        fault = (rec.error_message or rec.outcome).splitlines()[0][:200]
        return Finding("lost-coverage", rec.framework, key, f"baseline says {before}; the run had a harness fault: "
                       f"{fault}") if before else None
    return _judge_label(base, rec, key, label) if label else _judge_verdict(base, rec, key)


def _judge_label(base: dict[str, Any], rec: Record, key: str, label: str) -> Finding | None:
    problem = check(base, key, label, rec.framework_version, rec.dimension)
    known = label_at(base, key, rec.framework_version)
    if problem is None:
        if known is None and rec.verdict == "deviates" and not rec.known_deviation:  # a probe file it never saw
            return Finding("new-deviation", rec.framework, key, f"baseline says nothing (its case file is new); "
                           f"observed {label!r}, which deviates, on {rec.framework_version}")
        return None
    unsafe_now = is_memory_unsafe(label) or rec.outcome in ("crash", "timeout")
    kind = "new-unsafe" if unsafe_now and not in_class(base, key, known) else "label-change"
    if rec.outcome == "unsupported" and known not in (None, rec.outcome):  # (a harness fault: _judge)
        kind = "lost-coverage"
    return Finding(kind, rec.framework, key, problem)


def _judge_verdict(base: dict[str, Any], rec: Record, key: str) -> Finding | None:
    now = cell_verdict(rec)
    before = (base.get("verdicts") or {}).get(key)
    said = f"baseline says {before or 'nothing'}"
    if now is None or now == before:
        return None
    if now.startswith("crash") or now == "timeout":
        if before is None or not (before.startswith("crash") or before == "timeout"):
            return Finding("new-unsafe", rec.framework, key, f"{said}; observed {now} on {rec.framework_version}")
        return None  # which signal a corrupted heap ends with is the allocator's, not the behaviour's
    if now == "deviates" and not rec.known_deviation:
        return Finding("new-deviation", rec.framework, key, f"{said}; observed deviates on {rec.framework_version}: "
                       f"{(rec.reason or '').splitlines()[0][:200] if rec.reason else 'see its record'}")
    if now == "unsupported" and before is not None:
        return Finding("lost-coverage", rec.framework, key, f"{said}; now unsupported: {rec.reason[:200]}")
    return None


def judge(records: Iterable[Record], baselines: Path | Mapping[str, dict[str, Any]], ignore: Iterable[str] = ()
          ) -> Verdict:
    """Judge result records against the baselines in ``baselines``: a directory (one ``<system>.yaml`` each, as
    ``gsc baseline`` writes them), or loaded baselines by system (``baseline.in_memory`` of an earlier run's
    records). A system without one is a ``no-baseline`` finding. Every record with a baseline key is a checked
    cell; then each baseline key of a case file and device the run covered, for a system the run ran, that no
    record answered is ``lost-coverage``. ``ignore``: kinds the exit status leaves out. ValueError for an unknown
    kind."""
    unknown = sorted(set(ignore) - set(KINDS))
    if unknown:
        raise ValueError(f"unknown finding kind(s) {', '.join(unknown)}; the kinds are {', '.join(KINDS)}")
    verdict = Verdict(ignored=frozenset(ignore))
    loaded: dict[str, dict[str, Any]] = {}
    seen: dict[str, set[str]] = {}
    covered: dict[str, set[tuple[str, str]]] = {}  # system -> (case file, device) the run covered
    for rec in records:
        if rec.variant == NOT_MAPPED:
            continue
        system = rec.framework
        base = loaded.get(system)
        if base is None:
            if isinstance(baselines, Path):
                base = loaded[system] = load(baselines, system)
                missing = (f"no baseline for {system} in {baselines}: review the run, then gsc baseline RESULTS "
                           f"--dir {baselines} and commit it")
            else:
                base = loaded[system] = dict(baselines.get(system) or {"labels": {}})
                missing = f"the earlier run has no records of {system}"
            if not _baselined(base):
                verdict.findings.append(Finding("no-baseline", system, "", missing))
        if not _baselined(base):
            continue
        key = item_key(rec.case, rec.variant, rec.device)
        seen.setdefault(system, set()).add(key)
        covered.setdefault(system, set()).add((rec.case_file, rec.device))
        verdict.checked.setdefault(system, []).append(key)
        finding = _judge(base, rec, key)
        if finding is not None:
            verdict.findings.append(finding)
    for system, base in loaded.items():
        if not _baselined(base):
            continue
        for key in sorted({*base.get("labels", {}), *(base.get("verdicts") or {})} - seen.get(system, set())):
            if (key.split("::", 1)[0], _device(key)) in covered.get(system, set()):
                verdict.findings.append(Finding("lost-coverage", system, key, "baseline has this cell; the run "
                                                "recorded nothing for it"))
                verdict.checked.setdefault(system, []).append(key)
    return verdict
