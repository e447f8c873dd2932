"""Part 1: per adapter, what a case costs through the harness against the same native call in a plain loop.

Harness side, in this process: ``harness.run.runner.execute`` through the real executor (the framework's warm
execnet worker, its interpreter: MXNet's own venv) and ``ResultsWriter.write`` of the record, i.e. payload ->
worker run_case -> judge -> record, everything a test does bar pytest's own bookkeeping. Floor side, in one
process of the framework's interpreter (benchmarks/floor.py): every case's native call prepared beforehand
(onnxruntime sessions and OpenVINO compiled models built), then ``to_numpy(call.run())`` in a loop. Both sides
are warm (a first pass fills the harness's session caches too) and alternate, repetition by repetition.

What a case needs whatever the framework (its inputs, reference result, validated spec, encoded payload) is
made once per case and shared by every framework and variant of a ``harness run`` session (about 19 items per
case in the full matrix). The claim is measured that way (``shared``: made in the warm-up pass); ``strict``
makes it again for every case, as a session running a single framework pays it.

Cases: generated in-range cases (benchmarks/cases.py) in two sizes, suite-sized (data <= 64 elements, what the
shipped cases are) and 10^4-10^5 elements; each adapter keeps those its default variant runs without error.
The claim is on all of them together (total time per case); the two sizes are shown for what they explain.
"""

from __future__ import annotations

import os
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from benchmarks import cases as case_gen
from benchmarks.common import ROOT, Row, interleaved, median

LIMIT = 1.5


def _pythons() -> dict[str, str]:
    """Framework -> interpreter, as the pytest plugin picks them (.venv-<name> for a framework not installed here)."""
    from gather_scatter_conformance import adapters

    return adapters.venv_pythons(ROOT)


def frameworks(requested: str = "") -> list[str]:
    """The adapters to measure: ``requested`` (comma-separated) or every one that can run here."""
    from gather_scatter_conformance import adapters

    if requested:
        return [f.strip() for f in requested.split(",") if f.strip()]
    pythons = _pythons()
    return [n for n in adapters.names() if adapters.is_available(n) or n in pythons]


class _Floor:
    """The floor loop in a process of the framework's interpreter (an execnet gateway running benchmarks/floor)."""

    def __init__(self, python: str) -> None:
        import execnet

        self.gateway = execnet.makegateway(f"popen//python={python}")
        source = (ROOT / "benchmarks" / "floor.py").read_text().replace("__ROOT__", repr(str(ROOT)))
        self.channel = self.gateway.remote_exec(source)

    def call(self, *msg: Any, timeout: float = 3600) -> Any:
        self.channel.send(msg)
        reply = self.channel.receive(timeout=timeout)
        if isinstance(reply, dict) and "error" in reply:
            raise RuntimeError(reply["error"])
        return reply

    def kill(self) -> None:
        """Stop the process however it is (dead, hung)."""
        try:
            self.gateway._io.kill()
        except Exception:
            pass

    def close(self) -> None:
        try:
            self.channel.send(None)
            self.gateway.exit()
        except Exception:
            pass


def _measure(fw: str, cases: list[Any], python: str, reps: int, results: Path) -> tuple[list[Row], dict[str, Any]]:
    from gather_scatter_conformance import adapters
    from gather_scatter_conformance.harness.run.isolation import Isolated
    from gather_scatter_conformance.harness.run.records import ResultsWriter
    from gather_scatter_conformance.harness.run.runner import execute, payload

    adapter = adapters.get(fw)
    cases = [c for c in cases if adapter.variants(c.op)]  # an operator the adapter does not map has no native call
    variants = [adapter.variants(c.op)[0] for c in cases]
    floor = _Floor(python)
    executor = Isolated({fw: python} if python != sys.executable else {}, timeout=600)
    writer = ResultsWriter(results)
    try:
        ok = floor.call("prepare", fw, [(v, payload(c)) for v, c in zip(variants, cases, strict=True)])
        keep = [i for i, good in enumerate(ok) if good]
        floor.call("keep", keep)
        cases = [cases[i] for i in keep]
        variants = [variants[i] for i in keep]

        def harness_round(strict: bool) -> float:
            start = time.perf_counter()
            for case, variant in zip(cases, variants, strict=True):
                if strict:
                    case_gen.reset(case)
                writer.write(execute(case, fw, variant, executor))
            return time.perf_counter() - start

        harness_round(True)  # warm: the worker imports its framework, session caches fill
        sizes = {label: [i for i, c in enumerate(cases) if case_gen.size_class(c) == label]
                 for label in ("small", "medium")}
        times = interleaved({"shared": lambda: harness_round(False), "floor": lambda: floor.call("loop"),
                             "strict": lambda: harness_round(True)}, reps)
        # Per-size ratios from one more pass, case by case on both sides.
        per_case = {"harness": _per_case(cases, variants, fw, executor, writer), "floor": floor.call("per_case")}
    finally:
        writer.close()
        executor.close()
        floor.close()
    n = len(cases)
    h, f, hs = (median(times[k]) / n for k in ("shared", "floor", "strict"))
    rows = [Row("overhead", f"{fw} ({n} cases)", h / f, f"<= {LIMIT:g}", h / f <= LIMIT, "x",
                f"harness {h * 1e3:.3f} ms/case, floor {f * 1e3:.3f} ms/case (medians of {reps})"),
            Row("overhead", f"  {fw} strict", hs / f, "", None, "x",
                f"harness {hs * 1e3:.3f} ms/case: inputs, reference, spec and payload made again per case")]
    for label in ("small", "medium"):
        idx = sizes[label]
        if idx:
            h_size = sum(per_case["harness"][i] for i in idx) / len(idx)
            f_size = sum(per_case["floor"][i] for i in idx) / len(idx)
            rows.append(Row("overhead", f"  {fw} {label} ({len(idx)})", h_size / f_size, "", None, "x",
                            f"harness {h_size * 1e3:.3f} ms/case, floor {f_size * 1e3:.3f} ms/case (one pass)"))
    return rows, {"cases": n}


def _per_case(cases: list[Any], variants: list[str], fw: str, executor: Any, writer: Any) -> list[float]:
    from gather_scatter_conformance.harness.run.runner import execute

    out = []
    for case, variant in zip(cases, variants, strict=True):
        start = time.perf_counter()
        writer.write(execute(case, fw, variant, executor))
        out.append(time.perf_counter() - start)
    return out


def cache_rates(fw: str, python: str) -> Row:
    """How often the compiled-model cache answers over the shipped suite: every case x variant, prepared and run
    once in one process, as a harness worker sees them (bar risky and crash-tagged cases, which run elsewhere)."""
    from gather_scatter_conformance import adapters
    from gather_scatter_conformance.harness.cases.load import Case, load_file
    from gather_scatter_conformance.harness.run.isolation import is_risky
    from gather_scatter_conformance.harness.run.runner import payload

    adapter = adapters.get(fw)
    items = []
    for path in sorted((ROOT / "cases").rglob("*.yaml")):
        for case in load_file(path, path.relative_to(ROOT).as_posix()):
            if isinstance(case, Case) and not is_risky(case.op, case.dimension, case.tags) and (
                "crash" not in case.spec.tags
            ):
                items += [(variant, payload(case)) for variant in adapter.variants(case.op)]
    floor = _Floor(python)
    try:
        floor.call("prepare", fw, items)
        hits, misses = floor.call("stats")
    finally:
        floor.close()
    rate = hits / (hits + misses) if hits + misses else 0.0
    return Row("overhead", f"  {fw} cache over the suite", rate * 100, "", None, "%",
               f"{hits} hits, {misses} misses (compiled models or sessions) over {len(items)} case x variant items"
               " (risky ones aside)")


def run(cases: int = 240, reps: int = 3, frameworks: str = "") -> list[Row]:
    """One row per adapter (all cases) plus context rows per size class and, for the adapters that cache compiled
    models, the cache's hit rate over the shipped suite."""
    pythons = _pythons()
    generated = case_gen.generate(cases)
    rows: list[Row] = []
    with tempfile.TemporaryDirectory(prefix="gsc-bench-") as tmp:
        results = Path(tmp) / "results.jsonl"
        for fw in globals()["frameworks"](frameworks):
            python = pythons.get(fw, sys.executable)
            try:
                got, _ = _measure(fw, list(generated), python, reps, results)
            except Exception as exc:  # one framework failing to start must not hide the others' numbers
                got = [Row("overhead", fw, None, f"<= {LIMIT:g}", False, "x", f"failed: {exc!r}"[:200])]
            rows += got
            if fw in ("onnxruntime", "openvino"):
                try:
                    rows.append(cache_rates(fw, python))
                except Exception as exc:
                    rows.append(Row("overhead", f"  {fw} cache over the suite", None, "", None, "%", repr(exc)))
            if results.exists():
                os.unlink(results)
    return rows
