"""``gsc fuzz``: generate, run, triage, shrink, write, summarise — one operator at a time."""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from gather_scatter_conformance.harness.fuzz import summary, triage
from gather_scatter_conformance.harness.fuzz.describe import describe, finding, why
from gather_scatter_conformance.harness.fuzz.differ import ApiRun, CaseRun, Differ, apis_for, available
from gather_scatter_conformance.harness.fuzz.shrink import Signature, shrink
from gather_scatter_conformance.harness.fuzz.strategies import STRATEGIES, GenCase, examples_for, generate
from gather_scatter_conformance.harness.fuzz.writer import SOURCE, Found, case_id, to_case, to_spec, write_found
from gather_scatter_conformance.vocab.ops import OPS


@dataclass
class OpResult:
    """What fuzzing one operator produced: the runs, the shrunk findings, the found cases to write, and timings."""

    op: str
    runs: list[CaseRun]
    findings: dict[Signature, GenCase | None] = field(default_factory=dict)
    specs: list[Found] = field(default_factory=list)
    timings: dict[str, float] = field(default_factory=dict)
    unreproduced: list[Signature] = field(default_factory=list)


def fuzz_op(op: str, n: int, seed_value: int, differ: Differ, apis: list[tuple[str, str]],
            shrink_budget: int = 150, log: Callable[[str], None] | None = None) -> OpResult:
    """Generate ``n`` cases of ``op``, run them on ``apis``, and shrink one case per (api, kind) finding.

    Findings are taken in order of first appearance; one whose disagreement an earlier finding's minimal case
    already shows (re-run on every API) joins that case instead of being shrunk again.
    """
    say = log or (lambda *_: None)
    source = f"harness fuzz --op {op} --seed {seed_value}"
    start = time.perf_counter()
    cases = generate(op, n, seed_value)
    res = OpResult(op, [])
    res.timings["generate_s"] = time.perf_counter() - start
    for i, gc in enumerate(cases):
        res.runs.append(differ.run(gc, apis, source))
        if (i + 1) % 50 == 0:
            say(f"  {op}: {i + 1}/{len(cases)} cases run ({time.perf_counter() - start:.0f} s)")
    res.timings["run_s"] = time.perf_counter() - start - res.timings["generate_s"]
    t_shrink = time.perf_counter()
    groups = _shrink_all(res, differ, apis, source, examples_for(n), seed_value, shrink_budget, say)
    res.timings["shrink_s"] = time.perf_counter() - t_shrink
    res.specs = []
    by = f"gsc fuzz --op {op} --n {n} --seed {seed_value}"
    for full, targets in groups:
        spec = to_spec(full.gen, SOURCE, describe(full, targets), triage.allowed_example(full.case.reference()),
                       finding(full, targets, by))
        if any(kind.startswith(("crash", "timeout")) for _, kind in targets):
            spec["tags"].append("crash")  # harness.run.isolation.is_risky: a worker of its own in every run
        res.specs.append(Found(spec, why(full, targets)))
    res.timings["total_s"] = time.perf_counter() - start
    return res


# A crash can depend on the heap's layout (OpenVINO's Gather-8 segfault on single-batch batch_dims cases comes
# and goes): before shrinking and on the minimal case, a crash gets this many tries. Shrink candidates get one
# (three would triple the cost of every candidate that does not crash); a flaky one just shrinks less far.
CRASH_TRIES = 3


def _shows(differ: Differ, gc: GenCase, source: str, target: Signature, fw: str, variant: str,
           tries: int = 1) -> ApiRun | None:
    """The target API's run on ``gc`` if it shows ``target`` (a crash gets ``tries`` tries), else None."""
    for _ in range(tries if target[1].startswith("crash") else 1):
        run = differ.run_one(gc, to_case(gc, source), fw, variant)
        if (run.api, run.verdict.kind) == target and run.verdict.status == "finding":
            return run
    return None


def _shrink_all(res: OpResult, differ: Differ, apis: list[tuple[str, str]], source: str, examples: int,
                seed_value: int, budget: int, say: Callable[[str], None]) -> list[tuple[CaseRun, list[Signature]]]:
    known = {cr.gen.key: frozenset(cr.findings()) for cr in res.runs}
    sizes = {cr.gen.key: cr.gen.size() for cr in res.runs}
    targets = list(dict.fromkeys(sig for cr in res.runs for sig in cr.findings()))
    by_api = dict(apis_by_name(apis))
    groups: list[tuple[CaseRun, list[Signature]]] = []
    for target in targets:
        home = next((g for g in groups if target in g[0].findings()), None)
        if home is not None:
            if target not in home[1]:
                home[1].append(target)
            res.findings[target] = home[0].gen
            continue
        fw, variant = by_api[target[0]]

        def evaluate(gc: GenCase, fw: str = fw, variant: str = variant, target: Signature = target
                     ) -> frozenset[Signature]:
            return frozenset({target} if _shows(differ, gc, source, target, fw, variant) else ())

        start = min((cr for cr in res.runs if target in known[cr.gen.key]), key=lambda cr: cr.gen.size())
        if not _shows(differ, start.gen, source, target, fw, variant, CRASH_TRIES):
            # A crash or hang charged to the call after the one that did the damage, or a read of memory that
            # happened to hold the right value this time: shrinking it would chase noise.
            res.unreproduced.append(target)
            say(f"  {res.op}: {target[0]} {target[1]} did not reproduce on its smallest case; not shrunk")
            continue
        minimal, calls = shrink(res.op, examples, seed_value, target, known, sizes, evaluate, budget)
        full = differ.run(minimal, apis, source) if minimal is not None else None
        if full is not None and target not in full.findings():
            again = _shows(differ, full.gen, source, target, fw, variant, CRASH_TRIES)
            full.runs = [again if again and r.api == target[0] else r for r in full.runs]
        if full is None or target not in full.findings():
            res.unreproduced.append(target)
            say(f"  {res.op}: {target[0]} {target[1]} did not reproduce after {calls} shrink call(s)")
            continue
        # Other APIs that disagree on the minimal case in a way the baselines do not explain are findings too,
        # even where no generated case showed them.
        shown = [target] + [sig for sig in full.findings() if sig != target and sig not in res.findings]
        for sig in shown:
            res.findings[sig] = minimal
        same = next((g for g in groups if g[0].gen.key == minimal.key), None)
        if same is not None:  # shrunk to a case already written (its first run did not show this): one entry
            same[1].extend(sig for sig in shown if sig not in same[1])
            fresh = {r.api: r for r in full.runs}
            apis_shown = {api for api, _ in shown}
            same[0].runs = [fresh[r.api] if r.api in apis_shown else r for r in same[0].runs]
        else:
            groups.append((full, shown))
        say(f"  {res.op}: shrunk {target[0]} {target[1]} in {calls} call(s) to {minimal.size()} element(s)")
    for target in list(res.unreproduced):  # a later finding's minimal case may show it after all
        home = next((g for g in groups if target in g[0].findings()), None)
        if home is not None:
            if target not in home[1]:
                home[1].append(target)
            res.findings[target] = home[0].gen
            res.unreproduced.remove(target)
    return groups


def apis_by_name(apis: list[tuple[str, str]]) -> list[tuple[str, tuple[str, str]]]:
    """(``framework:variant``, (framework, variant)) pairs."""
    return [(f"{fw}:{v}", (fw, v)) for fw, v in apis]


def report(res: OpResult) -> dict[str, Any]:
    """The JSON summary of one operator's run."""
    agree = summary.agreement(res.runs)
    return {
        "op": res.op,
        "cases": len(res.runs),
        "timings_s": {k: round(v, 2) for k, v in res.timings.items()},
        "per_api": summary.per_api(res.runs),
        "agreement": agree,
        "findings": [{"api": api, "kind": kind, "case": spec_id(res, (api, kind))}
                     for (api, kind) in res.findings],
        "unreproduced": [{"api": api, "kind": kind} for api, kind in res.unreproduced],
    }


def spec_id(res: OpResult, target: Signature) -> str | None:
    """The id of the written case a finding shrank to (None if it did not reproduce)."""
    minimal = res.findings.get(target)
    return case_id(minimal) if minimal else None


def _quiet() -> None:
    # Framework start-up chatter would bury the tables; errors still get through.
    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
    try:
        import onnxruntime

        onnxruntime.set_default_logger_severity(4)
    except ImportError:
        pass


def main(args: argparse.Namespace) -> int:
    """The ``fuzz`` subcommand: returns 0 when the run completed (findings are results, not failures)."""
    _quiet()
    if args.op == "all":
        ops = [o for o in OPS if o in STRATEGIES]
        unfuzzed = [o for o in OPS if o not in STRATEGIES]
        if unfuzzed:
            print(f"not fuzzed (no strategy in harness/fuzz/strategies.py): {', '.join(unfuzzed)}", flush=True)
    else:
        ops = [o.strip() for o in args.op.split(",")]
    unknown = [o for o in ops if o not in STRATEGIES]
    differ = Differ(timeout=args.case_timeout, isolation=args.isolation, run_unchecked=args.run_unchecked,
                    jobs=args.jobs)
    frameworks = [f.strip() for f in args.frameworks.split(",") if f.strip()] or available(differ.pythons)
    missing = [f for f in frameworks if f not in available(differ.pythons)]
    if unknown or missing:
        print(f"unknown operator(s) {unknown} / unavailable framework(s) {missing}", file=sys.stderr)
        return 2
    out: dict[str, Any] = {"seed": args.seed, "n": args.n, "frameworks": frameworks, "ops": {}}
    try:
        for op in ops:
            apis = apis_for(op, frameworks, args.slow_variants)
            print(f"{op}: {args.n} cases × {len(apis)} APIs (seed {args.seed})", flush=True)
            with np.errstate(all="ignore"):  # NaN and inf outputs are compared on purpose
                res = fuzz_op(op, args.n, args.seed, differ, apis, args.shrink_budget,
                              log=lambda msg: print(msg, flush=True))
                rep = report(res)
            out["ops"][op] = rep
            print(summary.status_table(rep["per_api"]))
            print(summary.table(op, rep["agreement"], summary.default_apis(res.runs)))
            written = ""
            if res.specs and not args.no_write:
                path, added = write_found(Path(args.out), op, res.specs)
                written = f"; {len(res.specs)} found case(s) -> {path} ({added} new)"
            t = rep["timings_s"]
            lost = f", {len(res.unreproduced)} not reproduced" if res.unreproduced else ""
            print(f"{op}: {rep['cases']} cases, {len(res.findings)} finding(s) by (api, kind){lost}{written}; wall "
                  f"{t['total_s']} s (generate {t['generate_s']}, run {t['run_s']}, shrink {t['shrink_s']})\n",
                  flush=True)
    finally:
        differ.close()
    if args.json:
        Path(args.json).write_text(json.dumps(out, indent=1) + "\n")
    return 0
