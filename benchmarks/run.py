"""The harness's cost, measured side by side with calling the frameworks directly; prints ratios (issue #9).

    .venv/bin/python benchmarks/run.py              # overhead, collection, reference, onnx-runner, plugin (minutes)
    .venv/bin/python benchmarks/run.py --quick      # fewer cases and repetitions (a smoke run)
    .venv/bin/python benchmarks/run.py --matrix     # also the full CPU matrix, serial and -n 2 (about an hour)
    .venv/bin/python benchmarks/run.py --only collection,reference

Parts (benchmarks/README.md has the method and the latest results):
  overhead    per adapter: a case through the harness vs the same native call in a plain loop
  matrix      every case x every CPU framework end to end vs the sum of (import + native calls) per framework
  collection  pytest --collect-only of the whole suite: seconds, and no framework imported
  reference   the reference engine on 10^7-element inputs vs NumPy's own primitive: time and peak memory
  onnx-runner onnx.backend.test's runner on the gather/scatter node tests vs this harness on the same cases
  history     a release sweep vs (its environment from a warm cache + the same cases), and the full onnxruntime sweep
  report      the report page of a full run: size, elements and load time in headless Chromium, now vs --report-ref
  site        the report site: every page's weight (< 2 MB) and the load time (< 0.5 s) of the landing page, each
              operator's page, the indexes and the heaviest page of each kind (--site-results FILES)
  plugin      an unrelated one-test pytest run with the plugin loaded vs without it: seconds added
  cache       gsc run over Gather and ScatterElements probes a second time (result cache filled) vs the first
              (empty): time, and the reused records against a --no-cache run
  suite       the project's tests: make test's recorded time against 25 minutes, make check timed against 3
  records     the strict results reader (every line a checked record) vs json.loads per line, on a committed run;
              a worker under the memory limit vs one without
  ahead       gsc run --framework iree with its cases compiled ahead, many to a module, vs each compiled alone
              (--no-ahead), side by side, caches empty: wall ratio, and records that differ
  lowering    ExecuTorch's lowering of the seed cases with adapters/torch_export.py's changes vs as torch ships it,
              side by side: ratio, and programs whose bytes differ
  phases      make report's phases, from the results files it wrote (--phase-results): wall time, workers, memory,
              the frameworks' own call time; summed against 60 minutes
  cpu         gsc run of the Gather cases on every framework, its CPU split by process: the harness's own (the
              controller, the pytest-xdist workers) against the frameworks' workers (benchmarks/cpu_share.py, which
              also samples any command: -- make report)

Exit status 0 whatever the ratios are: a benchmark reports; it does not gate.
"""

from __future__ import annotations

import argparse
import json
import platform
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchmarks.common import Row, print_rows, summary_lines

PARTS = ("overhead", "collection", "reference", "onnx-runner", "history", "report", "site", "plugin", "cache",
         "records", "suite", "phases", "cpu", "ahead", "lowering", "matrix")
DEFAULT_PARTS = ("overhead", "collection", "reference", "onnx-runner", "plugin", "cache", "records")


def _part(name: str, args: argparse.Namespace) -> list[Row]:
    if name == "overhead":
        from benchmarks import overhead

        return overhead.run(cases=args.cases or (40 if args.quick else 240), reps=2 if args.quick else 3,
                            frameworks=args.framework)
    if name == "collection":
        from benchmarks import collection

        return collection.run(reps=3 if args.quick else 7)
    if name == "reference":
        from benchmarks import reference

        return reference.run(n=10**6 if args.quick else 10**7, reps=3 if args.quick else 5, only=args.filter)
    if name == "onnx-runner":
        from benchmarks import onnx_runner

        return onnx_runner.run(reps=1 if args.quick else 3, cases_file=args.onnx_cases)
    if name == "history":
        from benchmarks import history

        return history.run(reps=1 if args.quick else 3, full=not args.quick)
    if name == "report":
        from benchmarks import report

        return report.run(reps=3 if args.quick else 5, ref=args.report_ref)
    if name == "site":
        from benchmarks import site

        return site.run(results=args.site_results or None, reps=3 if args.quick else 5)
    if name == "plugin":
        from benchmarks import plugin_load

        return plugin_load.run(reps=7 if args.quick else 31)
    if name == "records":
        from benchmarks import records

        reps = 3 if args.quick else 7
        return records.run(reps=reps) + records.memory_watch(reps=reps)
    if name == "suite":
        from benchmarks import suite

        return suite.run(reps=1 if args.quick else 3)
    if name == "ahead":
        from benchmarks import ahead

        return ahead.run(quick=args.quick)
    if name == "lowering":
        from benchmarks import lowering

        return lowering.run(quick=args.quick)
    if name == "phases":
        from benchmarks import phases

        return phases.run(args.phase_results or None)
    if name == "cpu":
        from benchmarks import cpu_share

        return cpu_share.run(quick=args.quick)
    if name == "cache":
        from benchmarks import cache

        return cache.run(reps=1, frameworks=args.framework, cases=cache.QUICK_CASES if args.quick else cache.CASES)
    from benchmarks import matrix

    return matrix.run(workers=(1, 2), frameworks=args.framework)


def main(argv: list[str] | None = None) -> int:
    """Run the chosen parts in order, printing each part's rows as it finishes and a summary at the end."""
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--quick", action="store_true", help="fewer cases and repetitions")
    parser.add_argument("--matrix", action="store_true", help="add the full CPU matrix (long)")
    parser.add_argument("--only", default="", help=f"comma-separated parts: {', '.join(PARTS)}")
    parser.add_argument("--framework", default="", help="overhead/matrix/cache: NAME[,NAME...] (default: every one; "
                        "cache: numpy,onnxruntime,torch)")
    parser.add_argument("--cases", type=int, default=0, help="overhead: cases per adapter (default 240)")
    parser.add_argument("--filter", default="", help="reference: only configurations whose name contains this")
    parser.add_argument("--onnx-cases", default="", help="onnx-runner: imported node-test cases (file or directory)")
    parser.add_argument("--report-ref", default="19be533", help="report: the git revision to compare the page with")
    parser.add_argument("--site-results", nargs="+", default=[], help="site: results files to build the site from "
                        "(default: results/ of the last make report, else tests/data/runs)")
    parser.add_argument("--phase-results", nargs="+", default=[], help="phases: the results files of make report's "
                        "phases (default: results/results.jsonl, results/onnxruntime-openvino.jsonl, "
                        "results/conversions.jsonl)")
    parser.add_argument("--json", default="", help="also write every row to this JSON file")
    args = parser.parse_args(argv)
    parts = [p.strip() for p in args.only.split(",") if p.strip()] or list(DEFAULT_PARTS)
    if args.matrix and "matrix" not in parts:
        parts.append("matrix")
    unknown = [p for p in parts if p not in PARTS]
    if unknown:
        parser.error(f"unknown part(s) {', '.join(unknown)}; known: {', '.join(PARTS)}")
    print(f"gather-scatter-conformance benchmarks, {time.strftime('%Y-%m-%d %H:%M')}, {platform.node()}, "
          f"Python {platform.python_version()}, {_machine()}", flush=True)
    rows: list[Row] = []
    for part in parts:
        print(f"\n[{part}]", flush=True)
        start = time.perf_counter()
        got = _part(part, args)
        print_rows(got)
        print(f"  ({time.perf_counter() - start:.0f} s)", flush=True)
        rows += got
    print("\n" + "\n".join(summary_lines(rows)))
    if args.json:
        Path(args.json).write_text(json.dumps([r.__dict__ for r in rows], indent=1, default=str))
    return 0


def _machine() -> str:
    import os

    cores = os.cpu_count() or 0
    try:
        with open("/proc/meminfo") as fh:
            mem = int(fh.readline().split()[1]) / 2**20
        return f"{cores} cores, {mem:.0f} GiB"
    except OSError:
        return f"{cores} cores"


if __name__ == "__main__":
    sys.exit(main())
