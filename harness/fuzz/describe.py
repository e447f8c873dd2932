"""The description of a found case: what each framework API did, in words that are the same on every run.

Values are shown when small; a value that no index policy reproduces on an out-of-range or negative index
(``garbage``: memory outside the buffer) is not, since it changes from run to run and the case file must not.
Error messages lose what varies between runs: TensorFlow's ``{{function_node ...}}`` prefixes (they number the
traced functions) and the order of its kernel attributes, and addresses.
"""

from __future__ import annotations

import json
import re
from typing import Any

import numpy as np

from harness.cases import ExpectedError
from harness.classify import label
from harness.fuzz import triage
from harness.fuzz.differ import ApiRun, CaseRun
from harness.fuzz.shrink import Signature
from harness.reference import AllowedOutputs
from harness.values import to_jsonable


def show(value: np.ndarray) -> str:
    """A small array as JSON-like text (nan, inf spelled out); a large one by its shape."""
    if value.size > 12:
        return f"an array of shape {list(value.shape)}"
    return json.dumps(to_jsonable(value)).replace("NaN", "nan").replace("Infinity", "inf")


def _message(rec: dict[str, Any]) -> str:
    lines = [ln.strip() for ln in (rec.get("error_message") or "").splitlines() if ln.strip()]
    # C++ frameworks prepend a traceback: the line naming the error is the one that explains it.
    telling = [ln for ln in lines if "rror" in ln or "failed" in ln] or lines or [""]
    text = telling[0].split("Status Message: ", 1)[-1]  # onnxruntime: the rest is boilerplate
    text = re.sub(r"\{\{[^}]*\}\}\s*", "", text)
    text = re.sub(r"0x[0-9a-fA-F]+", "0x...", text)
    # TensorFlow lists a kernel's attributes in hash order: sorted, they read the same on every run.
    text = re.sub(r"with these attrs: \[([^\]]*)\]",
                  lambda m: "with these attrs: [" + ", ".join(sorted(m.group(1).split(", "))) + "]", text)
    short = (rec.get("error_type") or "").rsplit(".", 1)[-1]
    return text.removeprefix(f"{short}: ").strip()[:200]


def what(run: ApiRun, cr: CaseRun) -> str:
    """What one API did: ``returned [..] (clamp)``, ``raised IndexError: ...``, ``crashed (SIGSEGV)``..."""
    outcome, rec = run.outcome(), run.record or {}
    if outcome == "ok" and run.observed is not None:
        dims = [d for d in triage.touched(cr.gen) if d in triage.INDEX_DIMS]
        if not dims:
            return f"returned {show(run.observed)}"
        got = label(dims[0], cr.gen.op, cr.gen.inputs, cr.gen.attrs, rec, run.observed)
        if got == "garbage":
            return "returned values no index policy reproduces (garbage: not shown, they vary from run to run)"
        return f"returned {show(run.observed)} ({got})"
    if outcome == "error":
        short = (rec.get("error_type") or "").rsplit(".", 1)[-1]
        return f"raised {short}: {_message(rec)}".rstrip(": ")
    if outcome == "crash":
        return f"crashed ({rec.get('signal') or 'exit'})"
    return outcome


def describe(cr: CaseRun, targets: list[Signature]) -> str:
    """What each API did on a found case: the disagreeing APIs first, then the reference and the rest."""
    by_api = {r.api: r for r in cr.runs}
    said: dict[str, list[str]] = {}  # APIs that did the same thing for the same reason share one sentence
    for api, kind in targets:
        run = by_api[api]
        said.setdefault(f"{what(run, cr)} [{kind}; {run.verdict.note}]", []).append(api)
    lines = [f"{', '.join(apis)} {text}." for text, apis in said.items()]
    ref = cr.case.reference()
    ref_text = f"error ({ref.reason})" if isinstance(ref, ExpectedError) else show(triage.allowed_example(ref))
    either = " (any of the duplicate updates may win)" if isinstance(ref, AllowedOutputs) else ""
    lines.append(f"Reference: {ref_text}{either}.")
    agree = [r.api for r in cr.runs if r.verdict.status == "agree"]
    if agree:
        lines.append(f"Agreeing with the reference: {', '.join(agree)}.")
    other = [f"{r.api} {what(r, cr)}" for r in cr.runs
             if r.verdict.status in ("labelled", "finding") and (r.api, r.verdict.kind) not in targets]
    if other:
        lines.append(f"Other deviations: {'; '.join(other)}.")
    return " ".join(lines)
