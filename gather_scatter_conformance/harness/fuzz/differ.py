"""Running one generated case on every framework API and judging each result (harness.run.runner +
harness.run.isolation).

By default every framework runs in its own warm harness.run.isolation worker (the interpreter configured for it,
e.g. MXNet's ``.venv-mxnet``), so a crash is a result and not the fuzzer's death: OpenVINO's Gather-8 dies of
SIGSEGV on some valid batch_dims cases. Measured on this project's 2-core machine, warm workers cost no more than
running in-process. ``isolation="none"`` runs this interpreter's frameworks in-process.

Unlike ``harness run``, risky cases (out-of-range or negative scatter indices) stay in the warm worker when the
API's baseline says it checks those indices (error, clamp, wrap, zero, skip...). An API whose baseline says it
does not (alias, garbage, crash, or no label) is skipped, since any result it could give is already labelled;
with ``run_unchecked`` it runs in a worker that is retired after the call, so heap damage is charged to it.
"""

from __future__ import annotations

import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from gather_scatter_conformance import adapters
from gather_scatter_conformance.harness.cases.load import Case
from gather_scatter_conformance.harness.fuzz import triage
from gather_scatter_conformance.harness.fuzz.strategies import GenCase
from gather_scatter_conformance.harness.fuzz.writer import to_case
from gather_scatter_conformance.harness.run.isolation import Isolated
from gather_scatter_conformance.harness.run.runner import InProcess, execute
from gather_scatter_conformance.vocab import wire
from gather_scatter_conformance.vocab.record import Record


def available(pythons: dict[str, str]) -> list[str]:
    """Every framework that can run: installed here, or with an interpreter configured."""
    return [n for n in adapters.names() if adapters.is_available(n) or n in pythons]


def apis_for(op: str, frameworks: list[str], slow: bool = False) -> list[tuple[str, str]]:
    """(framework, variant) pairs to run for ``op``; variants that compile per shape only when ``slow``."""
    out = []
    for fw in frameworks:
        adapter = adapters.get(fw)
        out += [(fw, v) for v in adapter.variants(op) if slow or not adapter.is_slow(v)]
    return out


class Router:
    """An executor (harness.run.runner.Executor) that sends each call in-process or to an isolated worker.

    ``route(framework, unsafe)`` is called before a framework's call: an unsafe call goes to a worker that is
    retired afterwards. ``last[framework]`` keeps the worker's raw result (the record carries the value only
    when it is small). State is per framework, so different frameworks may run from different threads.
    """

    def __init__(self, pythons: dict[str, str], timeout: float, isolation: str = "process") -> None:
        self.inprocess = InProcess()
        # No fork template: in full fuzz runs forked risky calls stalled on 30 s timeouts (GatherElements: 100
        # cases in 730 s instead of 47; not diagnosed). Only skipped-by-default unchecked calls need a fresh
        # process here, and a retired worker gives them one.
        self.isolated = Isolated(pythons, timeout, fork=False)
        self.always = isolation == "process"
        self.unsafe: dict[str, bool] = {}
        self.last: dict[str, dict[str, Any]] = {}

    def route(self, framework: str, unsafe: bool) -> None:
        """Say how the next call of ``framework`` must run."""
        self.unsafe[framework] = unsafe

    def run(self, framework: str, variant: str, payload: dict[str, Any]) -> dict[str, Any]:
        """Run one call where route() said; a fresh worker only where the index values may go unchecked."""
        unsafe = self.unsafe.get(framework, False)
        if self.always or unsafe or framework in self.isolated.pythons:
            result = self.isolated.run(framework, variant, {**payload, "fresh": unsafe})
        else:
            result = self.inprocess.run(framework, variant, payload)
        self.last[framework] = result
        return result

    def close(self) -> None:
        """Stop the isolated workers."""
        self.isolated.close()


@dataclass
class ApiRun:
    """One API's result on one case: the runner's record (None when skipped), the output, and the verdict."""

    framework: str
    variant: str
    record: Record | None
    observed: np.ndarray | None
    verdict: triage.Verdict
    seconds: float = 0.0  # wall time of the whole call: preparing (compiling) and running

    @property
    def api(self) -> str:
        return f"{self.framework}:{self.variant}"

    def outcome(self) -> str:
        """ok | error | crash | timeout | unsupported | skipped."""
        return self.record.outcome if self.record else "skipped"


@dataclass
class CaseRun:
    """A generated case, its harness Case (reference cached), and every API's result."""

    gen: GenCase
    case: Case
    runs: list[ApiRun] = field(default_factory=list)

    def findings(self) -> list[tuple[str, str]]:
        """(api, kind) of every finding on this case."""
        return [(r.api, r.verdict.kind) for r in self.runs if r.verdict.status == "finding"]


class Differ:
    """Runs generated cases over a fixed list of APIs; reuse one for many cases (workers stay warm)."""

    def __init__(self, pythons: dict[str, str] | None = None, timeout: float = 120.0,
                 isolation: str = "process", run_unchecked: bool = False, jobs: int = 2) -> None:
        # Frameworks in other interpreters: the .venv-<framework> folders of the directory the command runs in.
        self.pythons = adapters.venv_pythons(Path.cwd()) if pythons is None else pythons
        self.router = Router(self.pythons, timeout, isolation)
        self.run_unchecked = run_unchecked
        # Frameworks in separate workers can run side by side (one thread per framework at a time); in-process
        # frameworks share this interpreter, so they run one after another.
        self.jobs = jobs if isolation == "process" else 1
        self.pool = ThreadPoolExecutor(self.jobs) if self.jobs > 1 else None

    def run(self, gen: GenCase, apis: list[tuple[str, str]], source: str = "harness fuzz") -> CaseRun:
        """Run ``gen`` on each (framework, variant) of ``apis`` and judge every result (in ``apis`` order)."""
        case = to_case(gen, source)
        case.reference()  # computed once, before any thread asks for it
        groups: dict[str, list[str]] = {}
        for fw, variant in apis:
            groups.setdefault(fw, []).append(variant)

        def one_framework(fw: str) -> list[ApiRun]:
            return [self.run_one(gen, case, fw, v) for v in groups[fw]]

        mapped = self.pool.map(one_framework, groups) if self.pool else map(one_framework, groups)
        by_api = {r.api: r for runs in mapped for r in runs}
        return CaseRun(gen, case, [by_api[f"{fw}:{v}"] for fw, v in apis])

    def run_one(self, gen: GenCase, case: Case, fw: str, variant: str) -> ApiRun:
        """Run ``case`` on one API and judge it against the reference and the API's baseline labels."""
        have = triage.labels(gen.op, fw, variant)
        unsafe = triage.is_unsafe(gen, have)
        if unsafe and not self.run_unchecked:
            note = "skipped: the baseline says this API may not check these index values (" + \
                   triage.describe_labels(have, triage.touched(gen)) + ")"
            return ApiRun(fw, variant, None, None, triage.Verdict("n/a", note=note))
        self.router.route(fw, unsafe)
        # NaN and inf outputs are compared on purpose; errstate is per thread, so it is set here.
        with np.errstate(all="ignore"):
            start = time.perf_counter()
            record = execute(case, fw, variant, self.router)
            # A fuzzed case runs on the CPU, which is always here: execute gives a record, never Skipped.
            assert isinstance(record, Record), record
            seconds = time.perf_counter() - start
            raw = self.router.last[fw]
            observed = wire.decode(raw["value"]) if record.outcome == "ok" and raw.get("value") else None
            verdict = triage.assess(gen, case, record, observed, have)
        return ApiRun(fw, variant, record, observed, verdict, seconds)

    def close(self) -> None:
        """Stop every worker process (and the thread pool)."""
        if self.pool:
            self.pool.shutdown()
        self.router.close()

