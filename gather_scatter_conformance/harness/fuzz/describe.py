"""What a found case records (its ``finding:`` block, one-line description and why-comment): what each framework
API did, in words that are the same on every run.

Values are shown when small; a value that no index policy reproduces on an out-of-range or negative index
(``garbage``: memory outside the buffer) is not, since it changes from run to run and the case file must not.
Error messages lose what varies between runs: TensorFlow's ``{{function_node ...}}`` prefixes (they number the
traced functions) and the order of its kernel attributes, and addresses.
"""

from __future__ import annotations

import json
import re
from typing import TYPE_CHECKING, Any

import numpy as np

from gather_scatter_conformance.harness.cases.values import to_jsonable
from gather_scatter_conformance.harness.fuzz import triage
from gather_scatter_conformance.harness.fuzz.differ import ApiRun, CaseRun
from gather_scatter_conformance.harness.fuzz.shrink import Signature
from gather_scatter_conformance.harness.judge.classify import label

if TYPE_CHECKING:
    from gather_scatter_conformance.vocab.record import Record


def show(value: np.ndarray) -> str:
    """A small array as JSON-like text (nan, inf spelled out); a large one by its shape."""
    if value.size > 12:
        return f"an array of shape {list(value.shape)}"
    return json.dumps(to_jsonable(value)).replace("NaN", "nan").replace("Infinity", "inf")


def _message(rec: Record) -> str:
    lines = [ln.strip() for ln in (rec.error_message or "").splitlines() if ln.strip()]
    # C++ frameworks prepend a traceback: the line naming the error is the one that explains it.
    telling = [ln for ln in lines if "rror" in ln or "failed" in ln] or lines or [""]
    text = telling[0].split("Status Message: ", 1)[-1]  # onnxruntime: the rest is boilerplate
    text = re.sub(r"\{\{[^}]*\}\}\s*", "", text)
    text = re.sub(r"0x[0-9a-fA-F]+", "0x...", text)
    # TensorFlow lists a kernel's attributes in hash order: sorted, they read the same on every run.
    text = re.sub(r"with these attrs: \[([^\]]*)\]",
                  lambda m: "with these attrs: [" + ", ".join(sorted(m.group(1).split(", "))) + "]", text)
    short = (rec.error_type or "").rsplit(".", 1)[-1]
    return text.removeprefix(f"{short}: ").strip()[:200]


def what(run: ApiRun, cr: CaseRun) -> str:
    """What one API did: ``returned [..] (clamp)``, ``raised IndexError: ...``, ``crashed (SIGSEGV)``..."""
    outcome, rec = run.outcome(), run.record
    if rec is None:  # skipped: its baseline says the API may not check these index values
        return outcome
    if outcome == "ok" and run.observed is not None:
        dims = [d for d in triage.touched(cr.gen) if d in triage.INDEX_DIMS]
        if not dims:
            return f"returned {show(run.observed)}"
        got = label(dims[0], cr.gen.op, cr.gen.inputs, cr.gen.attrs, rec, run.observed)
        if got == "garbage":
            return "returned values no index policy reproduces (garbage: not shown, they vary from run to run)"
        return f"returned {show(run.observed)} ({got})"
    if outcome == "error":
        short = (rec.error_type or "").rsplit(".", 1)[-1]
        return f"raised {short}: {_message(rec)}".rstrip(": ")
    if outcome == "crash":
        return f"crashed ({rec.signal or 'exit'})"
    return outcome


def _groups(cr: CaseRun, targets: list[Signature]) -> dict[str, list[str]]:
    """The target APIs by what they did: APIs that did the same thing share one entry, in target order."""
    by_api = {r.api: r for r in cr.runs}
    said: dict[str, list[str]] = {}
    for api, _ in targets:
        said.setdefault(what(by_api[api], cr), []).append(api)
    return said


def finding(cr: CaseRun, targets: list[Signature], by: str) -> dict[str, Any]:
    """The case's ``finding:`` block (harness.cases.schema.FindingSpec): the command ``by``, each target API's finding
    kind, what every API that did not agree answered (targets first, then labelled deviations), the agreeing APIs."""
    by_api = {r.api: r for r in cr.runs}
    apis = {api: what(by_api[api], cr) for api, _ in targets}
    apis.update({r.api: what(r, cr) for r in cr.runs
                 if r.verdict.status in ("labelled", "finding") and r.api not in apis})
    return {"by": by, "kinds": dict(targets), "apis": apis,
            "agree": [r.api for r in cr.runs if r.verdict.status == "agree"]}


def describe(cr: CaseRun, targets: list[Signature]) -> str:
    """The case's one-line description: what the target APIs did (``openvino:Gather-8 crashed (SIGSEGV)``), errors
    by their type only (the finding block has the messages)."""
    return short(_groups(cr, targets))


def short(groups: dict[str, list[str]]) -> str:
    """``apis what; apis what`` for answers grouped by what, an error by its type (``raised RuntimeError``)."""
    said: dict[str, list[str]] = {}
    for text, apis in groups.items():
        said.setdefault(text.split(": ", 1)[0] if text.startswith("raised ") else text, []).extend(apis)
    return "; ".join(f"{', '.join(apis)} {text}" for text, apis in said.items())


def why(cr: CaseRun, targets: list[Signature]) -> list[str]:
    """The comment above the case: per target API, the baseline labels that fail to predict its answer (those
    labels may change later; the comment records why the case was written)."""
    notes: dict[str, list[str]] = {}
    by_api = {r.api: r for r in cr.runs}
    for api, _ in targets:
        notes.setdefault(by_api[api].verdict.note, []).append(api)
    return [why_line(apis, note) for note, apis in notes.items()]


def why_line(apis: list[str], note: str) -> str:
    """One comment line: ``apis`` answered as no baseline label predicts; ``note`` is the triage verdict's."""
    labels = note.removeprefix("baseline ")
    if labels == note:  # "no behaviour dimension touched": nothing the baselines know applies
        return f"{', '.join(apis)}: a finding, since {note}"
    return f"{', '.join(apis)}: a finding, since the baseline labels {labels} predict no such answer"
