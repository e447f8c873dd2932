"""The upstream issue of one finding: a markdown issue body that a framework's maintainers can act on without the
harness. It names the versions, what the call did, what ONNX's semantics and the framework's own documentation say
(quoted, with their sources), since which release the history shows the behaviour, the memory checker's evidence
for a memory-unsafe one, and the standalone repro script. ``gsc issue`` prints it.

A finding is a record :func:`harness.judge.verdict.is_finding` accepts, or a converter path's record whose
preservation verdict is ``changed``. Its kind (:data:`KINDS`, in order of precedence) sets the title's wording.

A record may come from another machine: every string taken from it reaches the markdown through :func:`md` (text,
its markup escaped) or :func:`code` (a code span that no backtick in the value can end), and the repro script
through :func:`fenced`; :func:`title` is plain text, escaped where the body makes it a heading.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from gather_scatter_conformance import adapters
from gather_scatter_conformance.harness.cases.load import Case
from gather_scatter_conformance.harness.judge.repeats import distribution_text
from gather_scatter_conformance.harness.report.claims import DOC_ONLY_LABELS, Claim, agrees, api_name, lookup
from gather_scatter_conformance.vocab.dimensions import DIMENSIONS, is_memory_unsafe, words
from gather_scatter_conformance.vocab.safe import code, fenced, md

if TYPE_CHECKING:
    from gather_scatter_conformance.vocab.record import Record

KINDS = ("memory-unsafe", "converter change", "documentation contradiction", "deviation", "alternative")
SPEC = "onnx"  # the claim file that quotes the canonical semantics
_MESSAGE_CHARS = 400  # an error message is cut here: converters' messages run to pages of trace
@dataclass
class Sources:
    """What a finding's issue is written from besides its record and case."""

    claims: list[Claim] = field(default_factory=list)
    history: list[dict[str, Any]] | None = None  # the framework's release sweep (harness.history.store.read)
    evidence: dict[str, Any] | None = None  # the cell's gsc memcheck line


def is_path(record: Record) -> bool:
    """True for a converter path's record (the registry's rule: adapters.is_path)."""
    return adapters.is_path(record.framework)


def documented(record: Record, claims: Iterable[Claim]) -> Claim | None:
    """The framework's own documented claim for the record's API, operator and dimension, or None."""
    if is_path(record) or not record.dimension:
        return None
    return lookup(claims, record.framework, record.op, record.dimension, record.api or None,
                  device=record.device or None)


def spec_claim(record: Record, claims: Iterable[Claim]) -> Claim | None:
    """ONNX's statement (newest opset first, as the claim file lists it) for the record's operator and dimension."""
    if not record.dimension:
        return None
    return lookup(claims, SPEC, record.op, record.dimension)


def measured(record: Record) -> list[str]:
    """Every label the record saw: its label's alternatives (``nondeterministic|last-wins``) and its distribution's."""
    return list(dict.fromkeys([*filter(None, (record.label or "").split("|")), *(record.distribution or {})]))


def _contradicts(doc: Claim | None, record: Record) -> bool:
    """The documentation states a definite label that none of the record's labels is (as the report judges it)."""
    return agrees(doc, measured(record)) is False


def _name(record: Record) -> str:
    """The API as a title names it: the callable (``tf.gather``), or the variant where the call is a statement
    (MXNet's ``npx.set_np(); out[...] = updates`` is ``np.setitem``)."""
    api = record.api
    if not api or ";" in api or " = " in api:
        return record.variant or record.framework
    return api_name(api) or record.variant


def kind(record: Record, doc: Claim | None = None) -> str:
    """The finding's kind, one of :data:`KINDS`: memory-unsafe (its label or any label it was seen with), a converter
    path that changed the behaviour, a contradiction of the framework's documentation, a deviation from ONNX's
    semantics, else a labelled alternative to them."""
    seen = [record.label or "", *(record.distribution or {})]
    if record.outcome in ("crash", "timeout") or any(is_memory_unsafe(label) for label in seen if label):
        return "memory-unsafe"
    if is_path(record) and (record.conversion or {}).get("preservation") == "changed":
        return "converter change"
    if _contradicts(doc, record):
        return "documentation contradiction"
    return "deviation" if record.verdict == "deviates" else "alternative"


def _question(record: Record) -> str:
    dim = record.dimension
    if dim in DIMENSIONS:
        text = DIMENSIONS[dim][0]
        return text[0].lower() + text[1:].rstrip("?")
    return record.case.rpartition("::")[2]


def _happened(record: Record) -> str:
    """What the call did, in a few words: the label's words, else the outcome."""
    if record.outcome == "crash":
        return f"crashes ({record.signal or 'exit'})"
    if record.outcome == "timeout":
        return "hangs"
    if record.label:
        return words(record.label, record.dimension)
    if record.outcome == "error":
        return f"raises {record.error_type or 'an error'}"
    return "returns a wrong result"


# A memory checker's verdict (harness.evidence.verdict) as a title says it.
_ACCESS = {"write": "writes out of bounds", "read": "reads out of bounds",
           "uninitialised": "reads uninitialised memory"}


def title(record: Record, doc: Claim | None = None, evidence: dict[str, Any] | None = None) -> str:
    """One line naming the API, the question, what happened (the access a memory checker proved, where one did)
    and the release."""
    version = record.framework_version
    if is_path(record):
        conv = record.conversion or {}
        versions = conv.get("versions") or {}
        dim = record.dimension
        source, target = words(conv.get("source_label"), dim), words(conv.get("target_label"), dim)
        # A path that kept the source's behaviour (which deviates from ONNX, or is unsafe) did not change it.
        what = (f"changes from {source} to {target}" if conv.get("source_label") != conv.get("target_label")
                else f"keeps the source's {target}")
        return (f"{conv.get('converter', record.framework)} {versions.get('converter', '')}: {record.op} "
                f"({_question(record)}) {what} ({conv.get('source')} -> {conv.get('target')})").replace("  ", " ")
    happened = _ACCESS.get((evidence or {}).get("verdict", ""), _happened(record))
    what = f"{_name(record)} ({record.op}): {_question(record)}: {happened}"
    if _contradicts(doc, record):
        what += f", documented as {words(doc.label, doc.dimension)}"
    return f"{what} [{record.framework} {version.split('-')[0]}]"


def _quote(claim: Claim, who: str) -> list[str]:
    where = ", ".join(x for x in (claim.api, claim.locator, claim.version and f"version {claim.version}") if x)
    lines = [f"{who} ({where}):" if where else f"{who}:", "", f"> {claim.text}", ">", f"> {claim.source}"]
    if claim.note:
        lines += ["", f"(Our reading: {claim.note})"]
    return [*lines, ""]


def _value(value: Any, dtype: str | None = None) -> str:
    if value is None:
        return "(an array too large to show here: the repro prints it)"
    return code(value) + (f" ({md(dtype)})" if dtype else "")


def _observed(record: Record) -> str:
    outcome = record.outcome
    if outcome == "crash":
        died = f"the process dies ({md(record.signal or 'exit')})"
        return f"{died}: {md(record.error_message)}" if record.error_message else died
    if outcome == "timeout":
        return "the call does not return (killed after the harness's case timeout)"
    if outcome == "error":
        message = " ".join(str(record.error_message or "").split())[:_MESSAGE_CHARS]
        return f"raises {code(record.error_type or 'an error')}: {md(message)}"
    return f"returns {_value(record.observed, record.observed_dtype)}"


def _expected(record: Record) -> str:
    expected = record.expected
    if expected == "error":
        return "an error (the input is outside what the operator accepts)"
    return _value(expected)


def since(record: Record, history: list[dict[str, Any]] | None) -> str:
    """Since which release the history shows the record's label: the releases swept, where the label began, and what
    earlier releases did."""
    if is_path(record):
        return "Converter paths have no release history here: only the versions above were measured."
    if history is None:
        return f"No release history of {record.framework} was available: only the version above was measured."
    from gather_scatter_conformance.harness.history import store
    from gather_scatter_conformance.harness.judge.baseline import item_key

    by_release = store.case_labels(history).get(
        item_key(record.case, record.variant, record.device))
    label = record.label
    if not by_release or not label:
        return "This case was not swept across releases (the release history covers probe cases' labels)."
    order = store.in_order(by_release)  # not store.releases(history): a scan of the whole history per finding
    dim = record.dimension
    swept = ", ".join(f"{r}: {words(by_release[r], dim)}" for r in order)
    same = [r for r in order if _shows(record, by_release[r])]
    if not same:
        return f"No swept release showed it. Per release: {swept}."
    if order[-1] not in same:
        return f"Seen in {', '.join(same)}, not in the newest swept release. Per release: {swept}."
    start = next(r for r in order if all(x in same for x in order[order.index(r):]))
    before = order[:order.index(start)]
    lead = (f"In every swept release ({order[0]} to {order[-1]})." if not before else
            f"Since {start}; {before[-1]} gave {words(by_release[before[-1]], dim)}.")
    if before and kind(record) == "memory-unsafe":  # a sweep measures each release once
        lead += (" A sweep calls each release once, and an unchecked access can look harmless in one call: the "
                 "earlier releases may be affected too.")
    return f"{lead} Per release: {swept}."


def _shows(record: Record, release_label: str) -> bool:
    """Whether a release's label shows the record's behaviour: for a memory-unsafe one any label of the class (which
    one a run gets depends on what lies in memory), else any of the record's labels."""
    seen = release_label.split("|")
    if kind(record) == "memory-unsafe":
        return any(is_memory_unsafe(lab) for lab in seen)
    return bool(set(seen) & {*(record.label or "").split("|"), *(record.distribution or {})})


def _versions(record: Record) -> str:
    if is_path(record):
        conv = record.conversion or {}
        versions = conv.get("versions") or {}
        parts = [f"{conv.get(side, side)} {versions.get(side, '')}".strip() for side in ("source", "converter",
                                                                                         "target")]
        systems = " -> ".join(parts)
    else:
        systems = f"{record.framework} {record.framework_version}".strip()
    device = record.device_name or record.device or "cpu"
    return (f"{systems} on {device}, Python {record.python or '?'}; measured {record.time[:10]} "
            f"by gather-scatter-conformance {record.harness_version}")


def body(record: Record, case: Case, script: str | None, sources: Sources) -> str:
    """The issue's markdown: the title as a heading, then versions, what happens, what is expected (the spec and the
    documentation quoted), since which release, the memory checker's evidence, and the repro."""
    doc = documented(record, sources.claims)
    spec = spec_claim(record, sources.claims)
    found = kind(record, doc)
    call = record.api or (record.conversion or {}).get("source_api") or record.variant
    lines = [f"# {md(title(record, doc, sources.evidence))}", "",
             f"**Versions:** {md(_versions(record))}.", "",
             f"**Kind:** {found}. Case {code(record.case)} ({md(case.spec.source)}).", "",
             "## What happens", ""]
    if is_path(record):
        conv = record.conversion or {}
        source = (_value(conv.get("source_value"), conv.get("source_dtype")) if "source_value" in conv
                  else f"an error: {md(conv.get('source_error', ''))}")
        lines += [f"Natively, {code(conv.get('source_api') or call)} gives {source} "
                  f"({md(words(conv.get('source_label'), record.dimension))}).",
                  f"Converted by {md(conv.get('converter'))} (the converted graph: "
                  f"{md(' '.join(map(str, record.ops or [])) or 'not reported')}) and run by "
                  f"{md(conv.get('target'))}, it "
                  f"{_observed(record)} ({md(words(conv.get('target_label'), record.dimension))}).", ""]
    elif record.distribution:  # a repeated cell: what each fresh process did, then one run's answer
        dist, dim = record.distribution, record.dimension
        meaning = "; ".join(f"{lab}: {words(lab, dim)}" for lab in dist)
        lines += [f"{code(call)}, called in {md(sum(dist.values()))} fresh processes: {md(distribution_text(dist))} "
                  f"({md(meaning)}).",
                  f"One of them, as the record keeps it: {_observed(record)}.", ""]
    else:
        lines += [f"{code(call)} {_observed(record)}."]
        if record.label:
            shown = words(record.label, record.dimension)
            lines.append(f"Read as a behaviour of {md(_question(record))}: {md(shown)}.")
        lines.append("")
    lines += ["## What is expected", "", f"ONNX's semantics (the reference engine) give {_expected(record)}.", ""]
    if spec is not None:
        lines += _quote(spec, f"ONNX {md(record.op)}")
    if doc is not None:
        lines += _quote(doc, f"The documentation of {md(api_name(doc.api) or record.framework)}")
        if doc.label in DOC_ONLY_LABELS:
            lines += [f"It leaves this {doc.label}.", ""]
        else:
            verb = "contradicts it" if _contradicts(doc, record) else "agrees"
            lines += [f"Documented: {words(doc.label, doc.dimension)}; measured: "
                      f"{md(words(record.label, record.dimension))}: the measurement {verb}.", ""]
    elif not is_path(record) and record.dimension:
        lines += [f"The documentation of {md(record.framework)} says nothing of this that the harness has found.",
                  ""]
    lines += ["## Since which release", "", md(since(record, sources.history)), ""]
    if found == "memory-unsafe":
        from gather_scatter_conformance.harness.evidence.advisories import evidence_lines

        lines += ["## Memory checker", "", *evidence_lines(sources.evidence)]
    lines += ["## Repro", ""]
    if script:
        lines += [*fenced(script, "python"), "",
                  "It exits 0 while the behaviour reproduces, and 1 once it no longer does.", ""]
    else:
        lines += ["No standalone script can be written for this record (no native call was recorded).", ""]
    lines += ["<sub>Written by `gsc issue` (gather-scatter-conformance). Nothing was sent anywhere.</sub>", ""]
    return "\n".join(lines)
