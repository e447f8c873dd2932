"""Running one case on one framework variant: the payload a worker gets, the call, and the record it makes
(judged by gather_scatter_conformance.harness.judge.verdict)."""

from __future__ import annotations

import contextlib
import datetime as _dt
import os
import platform
import tempfile
from dataclasses import dataclass
from typing import Any, Protocol

from gather_scatter_conformance import adapters
from gather_scatter_conformance.adapters.base import CaseData
from gather_scatter_conformance.harness.cases.load import Case
from gather_scatter_conformance.harness.judge import known
from gather_scatter_conformance.harness.judge.verdict import expected_field, is_finding, judge
from gather_scatter_conformance.harness.run.isolation import HUNG_BEFORE, HangWitness, is_risky
from gather_scatter_conformance.vocab import wire
from gather_scatter_conformance.vocab.record import (
    HARNESS_ERROR,
    SCHEMA_VERSION,
    Fault,
    Record,
    Result,
    harness_version,
)


class Executor(Protocol):
    """Something that runs a case payload on a framework and returns the worker's result dict."""

    def run(self, framework: str, variant: str, payload: dict[str, Any]) -> dict[str, Any]: ...


class InProcess:
    """Runs adapters in this interpreter: fastest, but a crashing framework takes the run down with it."""

    def run(self, framework: str, variant: str, payload: dict[str, Any]) -> dict[str, Any]:
        from gather_scatter_conformance.harness.run.worker import run_case

        # No timeouts here, so no second try to spare (HUNG_BEFORE).
        return run_case(framework, variant, {k: v for k, v in payload.items() if k != HUNG_BEFORE})


def case_data(case: Case, device: str = "cpu") -> CaseData:
    """What an adapter sees of ``case`` run on ``device`` (adapters.base.CaseData), in this process."""
    return CaseData(op=case.op, inputs=case.inputs(), attrs=case.attrs, opset=case.spec.opset,
                    omit=tuple(case.spec.omit), device=device)


def payload(case: Case, device: str = "cpu") -> dict[str, Any]:
    """The builtins-only description of a case that travels to a worker, to run on ``device``.

    The encoded inputs are kept on the case: every framework, variant and device of a run sends the same bytes.
    """
    if "wire_inputs" not in case.memo:
        case.memo["wire_inputs"] = {k: wire.encode(v) for k, v in case.inputs().items()}
        case.memo["fresh"] = is_risky(case.op, case.dimension, case.tags, case.inputs())
    return {
        "device": device,
        "op": case.op,
        "inputs": case.memo["wire_inputs"],
        "attrs": case.attrs,
        "opset": case.spec.opset,
        "omit": list(case.spec.omit),
        "repeat": case.spec.repeat,
        "fresh": case.memo["fresh"],
    }


def _run_path(executor: Executor, framework: str, variant: str, job: dict[str, Any]) -> dict[str, Any]:
    """Run a converter path's case with a progress file: where the run dies (a converter or target that crashes
    or hangs), what the path noted there (its stage, the source's native result) joins the result."""
    from gather_scatter_conformance.adapters.convert.path import read_progress

    # In the workers' own temporary folder where they have one (Isolated.scratch), which goes with them: a run
    # killed before this removes the file leaves nothing in the system's.
    scratch = getattr(executor, "scratch", None)
    fd, progress = tempfile.mkstemp(prefix="gsc-progress-", dir=scratch() if callable(scratch) else None)
    os.close(fd)
    try:
        res = executor.run(framework, variant, {**job, "progress": progress})
        if res["outcome"] in ("crash", "timeout") and "conversion" not in res:
            res = {**read_progress(progress), **res}
    finally:
        for leftover in (progress, f"{progress}.tmp"):
            with contextlib.suppress(OSError):
                os.remove(leftover)
    return res



def _answer(case: Case, framework: str, variant: str, executor: Executor, device: str, fresh: bool = False,
            hung_before: HangWitness | None = None) -> dict[str, Any]:
    """One worker answer for ``case`` (in a forked child of its own when ``fresh``). ``hung_before``: an earlier
    witness of the cell's hang (harness.run.isolation.HUNG_BEFORE): a hang on this first try is recorded as one
    without a second try (the executor reads it from the job, and sends it to no worker)."""
    job = payload(case, device)
    if fresh:
        job = {**job, "fresh": True}
    if hung_before:
        job = {**job, HUNG_BEFORE: hung_before}
    if adapters.is_path(framework):
        return _run_path(executor, framework, variant, job)
    res = executor.run(framework, variant, job)
    if not res.get("device"):  # no call answered (a crash, a hang): filed where the call's results are
        res = {**res, "device": _record_device(framework, device)}
    return res


def _record_device(framework: str, device: str) -> str:
    """Adapter.record_device of ``framework``, or ``device`` where its adapter cannot load in this process (one
    that runs in another interpreter: its worker said why, and that answer is the record)."""
    try:
        return adapters.get(framework).record_device(device)
    except Exception:
        return device


@dataclass(frozen=True)
class Skipped:
    """What :func:`execute` returns where the device is absent here: not a result, so no record."""

    reason: str
    device: str


def execute(case: Case, framework: str, variant: str, executor: Executor, device: str = "cpu", repeats: int = 1,
            suspect: bool = False, hung_before: HangWitness | None = None) -> Record | Skipped:
    """Run ``case`` on ``framework``/``variant`` on ``device`` through ``executor``; return the full result
    :class:`~gather_scatter_conformance.vocab.record.Record`.

    With ``repeats`` > 1, a cell whose first run is memory-unsafe, crashed, hung or gave several outputs (or that
    is ``suspect``: its baseline says it flipped or is memory-unsafe) runs ``repeats`` times in all, each repeat in a
    fresh process, and its record holds the distribution (harness.judge.repeats); a cell whose tries have hung twice
    (a first try and its second, or two runs) stops there.

    ``hung_before``: an earlier witness of the cell's hang (its result-cache entry, or its baseline:
    harness.run.isolation.HUNG_BEFORE); each of its runs here that hangs on its first try needs no second.

    Where the device is absent here it returns :class:`Skipped`: not a result.
    The worker's value is decoded once, here, for the verdict, the label and a converter path's account.
    """
    from gather_scatter_conformance.harness.judge import repeats as rep

    expected = case.reference()
    res = _answer(case, framework, variant, executor, device, hung_before=hung_before)
    if res["outcome"] == "skipped":
        return Skipped(res.get("reason", ""), device)
    try:
        record = _record(case, framework, variant, res, expected)
        if repeats > 1 and (suspect or rep.needs_repeats(record)):
            runs = [(record, rep.value_digest(res))]
            hangs = rep.hangs_in(res)
            for _ in range(repeats - 1):
                if rep.hung_enough(hangs):  # each hang costs a case timeout
                    break
                again = _answer(case, framework, variant, executor, device, fresh=True, hung_before=hung_before)
                hangs += rep.hangs_in(again)
                runs.append((_record(case, framework, variant, again, expected), rep.value_digest(again)))
            record = rep.combine(runs)
        return record
    except Exception as exc:  # judging it failed: the harness's fault, recorded as such (no verdict on the framework)
        from gather_scatter_conformance.harness.run.faults import fault

        kept = {k: v for k, v in res.items() if k in ("framework_version", "api", "device", "python", "duration_s")}
        return _record(case, framework, variant, {**kept, **fault(exc, "judge")}, expected)


def _converted(res: dict[str, Any]) -> bool:
    """True for a path's answer that converted the model but could not run it here (adapters.convert.path.NotRun)."""
    return (res.get("conversion") or {}).get("stage") == "converted"


def _record(case: Case, framework: str, variant: str, res: dict[str, Any], expected: Any) -> Record:
    """The record of worker answer ``res`` on ``case``: made, judged, labelled, accounted (a path) and annotated."""
    result = Result.of(res)
    record = Record(
        schema_version=SCHEMA_VERSION,
        harness_version=harness_version(),
        case=case.nodeid,
        case_file=case.file,
        case_id=case.id,
        op=case.op,
        tags=case.tags,
        framework=framework,
        framework_version=res.get("framework_version", ""),
        variant=variant,
        api=res.get("api", ""),
        device=res.get("device", "cpu"),
        device_name=res.get("device_name") or None,
        outcome=result.outcome,
        error_type=result.error_type,
        error_message=result.error_message,
        signal=result.signal,
        duration_s=round(float(res.get("duration_s", 0.0)), 6),
        distinct_outputs=result.distinct_outputs,
        expected=expected_field(case, expected),
        python=res.get("python") or platform.python_version(),
        host=platform.node(),
        time=_dt.datetime.now(_dt.UTC).isoformat(timespec="seconds"),
        **judge(case, result, expected),
    )
    if res.get("ops"):  # the executed graph's operators, where the adapter compiles or converts a model
        record.ops = res["ops"]
    if res.get("providers"):  # delegation: the backend that ran each operator, and whether one fell back
        record.providers = res["providers"]
        record.fallback = bool(res.get("fallback"))
        if res.get("delegate"):
            record.delegate = res["delegate"]
    if res.get("mutates_inputs"):  # the call wrote into the caller's input arrays (adapters compare them)
        record.mutates_inputs = list(res["mutates_inputs"])
        # Said beside the verdict, which judges the output: the report shows a record's reason with it.
        record.reason = (f"{record.reason}; " if record.reason else "") + (
            f"the call wrote into the caller's {', '.join(record.mutates_inputs)} (mutates_inputs)")
    if res.get("rerun"):  # the first try's process crashed or was killed, and this answer is its rerun's
        record.reason = (f"{record.reason}; " if record.reason else "") + res["rerun"]
    if result.outcome == HARNESS_ERROR:  # no answer of the framework: nothing to label, account or reproduce
        record.fault = Fault(**res.get("fault") or {"phase": "worker"})
        return record
    if case.spec.dimension:
        from gather_scatter_conformance.harness.judge.classify import label

        record.dimension = case.spec.dimension
        record.label = label(case.spec.dimension, case.op, case.inputs(), case.attrs, record, result.observed)
    # A converter path: did the converted model do what the source did natively?
    if adapters.is_path(framework) and (record.outcome != "unsupported" or _converted(res)):
        from gather_scatter_conformance.harness.judge.preservation import account

        description = adapters.get(framework).describe_path()  # type: ignore[attr-defined]
        record.conversion = account(case, description, result, record, expected)
        if record.conversion["preservation"] == "conversion-failed":
            # The path cannot express the case (as an API that cannot): a result, not a deviation.
            record.unset("deviation")
            record.verdict, record.reason = "n/a", record.conversion["summary"]
        elif record.conversion["preservation"] == "conversion-only":  # converted, not run here: no verdict to judge
            record.verdict, record.reason = "conversion-only", record.conversion["summary"]
        elif record.conversion["preservation"] != "preserved":
            reason = known.lookup(framework, case.nodeid, variant)  # known/<path>.yaml: changes it explains
            if reason:
                record.known_change = reason
    changed = (record.conversion or {}).get("preservation") in ("changed", "unknown")
    if is_finding(record) or changed:  # its repro script is made from the native call (harness.run.repro)
        record.native = res.get("source") or ""
    if record.verdict == "deviates" and not adapters.is_path(framework):  # an annotation only
        reason = known.lookup(framework, case.nodeid, variant)
        if reason:
            record.known_deviation = reason
    return record
