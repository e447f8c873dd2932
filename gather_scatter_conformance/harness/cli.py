"""Command line: run the conformance suite, validate case files, merge and summarise results, print the schema."""

from __future__ import annotations

import argparse
import contextlib
import importlib.util
import json
import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from collections.abc import Iterable, Iterator

    import pytest

    from gather_scatter_conformance.harness.cases.load import Case
    from gather_scatter_conformance.harness.judge.gate import Verdict
    from gather_scatter_conformance.vocab.record import Record


def _workers(given: str, extra: list[str], results: str, framework: str = "") -> list[str]:
    """pytest-xdist's ``-n`` and distribution for ``gsc run --workers``: a number as given, or for ``auto`` what fits
    the cores and the memory available now at the memory a worker took in the last run of ``results`` (its
    manifest); [] for one worker, where pytest-xdist is missing, or where the pytest arguments already say ``-n``.
    Work stealing, but for a run of converter paths only (``framework``: the --framework value): one path to one
    worker (:func:`_distribution`). Says its choice on stderr. ``given`` is checked by :func:`_workers_value`."""
    from gather_scatter_conformance.harness.run import machine
    from gather_scatter_conformance.harness.run.records import manifest

    if any(a == "-n" or (a.startswith("-n") and not a.startswith("--")) or a.startswith("--numprocesses")
           or a in ("no:xdist", "-pno:xdist") for a in extra):
        return []
    if given != "auto":
        n = int(given)
    else:
        try:
            last = manifest(results) if results else None
        except Exception:  # a damaged or foreign file sizes nothing; the run itself says what is wrong with it
            last = None
        per = last.memory_peak_gib / (last.workers or 1) if last and last.memory_peak_gib else None
        choice = machine.choose_workers(machine.cores(), machine.available_gib(), per, measured=per is not None)
        n = choice.workers
        print(f"gsc: {n} worker(s): {choice.reason}", file=sys.stderr)
    if n > 1 and importlib.util.find_spec("xdist") is None:
        print("gsc: one worker: pytest-xdist is not installed (pip install pytest-xdist)", file=sys.stderr)
        return []
    return ["-n", str(n), *_distribution(framework)] if n > 1 else []


def _distribution(framework: str) -> list[str]:
    """How pytest-xdist deals a run of ``framework`` (the --framework value) to its workers.

    Work stealing: each worker starts on a contiguous share of the run, which comes framework worker by framework
    worker (pytest_plugin.by_worker), and an idle one takes half of the busiest one's rest. A steal splits the
    framework in hand, and both workers then start its process. A converter path's start imports a source, a
    converter and a target (5-7 s for TensorFlow or torch with OpenVINO), and a second run paid it twice for most
    paths. So a run of paths only gives each path to one worker whole (pytest_plugin.pytest_xdist_make_scheduler;
    issue #38)."""
    from gather_scatter_conformance import adapters

    names = [f.strip() for f in framework.split(",") if f.strip()]
    paths = bool(names) and all(n == "paths" or (n in adapters.table() and adapters.is_path(n)) for n in names)
    return ["--gsc-path-units"] if paths else ["--dist", "worksteal"]


def _workers_value(text: str) -> str:
    """``--workers``: auto, or a positive whole number (argparse's usage error otherwise)."""
    if text != "auto" and not (text.isdigit() and int(text) >= 1):
        raise argparse.ArgumentTypeError(f"{text!r} is neither a positive number of workers nor auto")
    return text


def _run(args: argparse.Namespace, extra: list[str]) -> int:
    import pytest

    from gather_scatter_conformance import resources

    # Case files or directories among the extra arguments narrow the run (gsc run cases/found): pytest finds its
    # rootdir and ini file from them as usual, and a case is named relative to that rootdir (the plugin's rule).
    # Without any, the shipped corpus runs, under no ini file (none of ours, none found near site-packages), with
    # the current directory as rootdir: where a project's own baselines/, known/ and .venv-<framework> are looked
    # for. Its ids are the corpus's own (cases/...) from any directory.
    paths = [a for a in extra if not a.startswith("-") and Path(a).exists()]
    argv = ["-q", "-p", "no:cacheprovider"]
    if not paths:
        argv = [str(resources.cases_dir().resolve()), *argv, "--rootdir", os.getcwd(), "-c", os.devnull]
    # This command imported the package before pytest could mark it for assertion rewriting (it has no asserts).
    argv += ["-W", f"ignore:Module already imported so cannot be rewritten; {__package__.partition('.')[0]}"
                   ":pytest.PytestAssertRewriteWarning"]
    if args.framework:
        argv += ["--gsc-framework", args.framework]
    if args.results:
        argv += ["--gsc-results", args.results]
    if args.resume:
        argv.append("--gsc-resume")
    if args.no_cache:
        argv.append("--gsc-no-cache")
    argv += _workers(args.workers, extra, args.results, args.framework or "")
    if args.shard:
        argv += ["--gsc-shard", args.shard] + [a for t in args.shard_times for a in ("--gsc-shard-times", t)]
    # The console (harness.console): a progress bar instead of dots, failing reports (each deviation's repro script)
    # to <results>.log instead of the terminal, no warnings summary; pytest's own output is untouched elsewhere.
    from gather_scatter_conformance.harness.console import Console, summary_text
    from gather_scatter_conformance.harness.run.records import RunFiles, manifest

    files = RunFiles(args.results) if args.results else None
    console = Console(args.phase or args.framework or "cases", files.partial_log if files else None,
                      log_name=files.log if files else None)
    argv += ["--tb=short", "-rN", "--disable-warnings", "-o", "console_output_style=classic"] + extra
    malformed = _MalformedCases()
    try:
        with _own_plugins_only(argv):
            code = pytest.main(argv, plugins=[malformed, console])
    except KeyboardInterrupt:
        # A second Ctrl-C (or `timeout -s INT`, which signals the whole process group) landed while pytest handled
        # the first: it escapes pytest as a traceback (the H200 run of 2026-11-28). The results were not replaced.
        kept = files is not None and files.partial.exists()
        where = f"; its records so far are in {files.partial} (gsc run --resume continues it)" if kept else ""
        print(f"gsc: interrupted{where}", file=sys.stderr)
        return 130
    # Deviations fail their tests (exit 1) but are the run's findings, not a failed run; a malformed case is.
    if code in (0, 1):
        if files and files.target.exists():
            # The results this run replaced, kept beside it, are what it changed from (unless --previous says).
            done = manifest(files.target)
            previous = args.previous or ([files.previous] if done and done.previous else [])
            print(summary_text([files.target], previous))
        if malformed.count:
            print(f"{malformed.count} malformed case(s) or case file(s): see the errors above")
            return 1
        return 0
    return int(code)


# The pytest plugins a run loads: the harness's and pytest-xdist's (its workers). The environment's other pytest11
# entry points are not a run's business: here (playwright, anyio, hypothesis, jaxtyping, hydra, kgb: dependencies of
# the frameworks) they took 3 of a run's first 3.3 s, in each worker too, and any could change how a case item runs.
# `-p NAME` among a run's pytest arguments loads one more (docs/running.md).
RUN_PLUGINS = ("gather_scatter_conformance.harness.run.pytest_plugin", "xdist.plugin")
AUTOLOAD_OFF = "PYTEST_DISABLE_PLUGIN_AUTOLOAD"


@contextlib.contextmanager
def _own_plugins_only(argv: list[str]) -> Iterator[None]:
    """While it lasts, pytest (and the pytest-xdist workers it starts, which inherit the environment) loads no
    plugin by its entry point; ``argv`` gains a ``-p`` for each of :data:`RUN_PLUGINS` installed, and leaves out
    pytest's logging plugin where no ``--log-*`` option is given. The environment
    is as it was afterwards: a test or a program that calls this command in-process keeps its plugins."""
    argv += [a for name in RUN_PLUGINS if importlib.util.find_spec(name.partition(".")[0]) for a in ("-p", name)]
    # pytest's own log capture, unless a --log-* option asks for it: a run's pytest processes log nothing (the
    # frameworks run in worker processes, whose output the records keep), and capturing per item took a sixth of
    # the CPU of a run whose records were all reused (issue #38).
    if not any(a.startswith("--log") for a in argv):
        argv += ["-p", "no:logging"]
    before = os.environ.get(AUTOLOAD_OFF)
    os.environ[AUTOLOAD_OFF] = "1"
    try:
        yield
    finally:
        if before is None:
            del os.environ[AUTOLOAD_OFF]
        else:
            os.environ[AUTOLOAD_OFF] = before


class _MalformedCases:
    """Counts the case-file errors a run reported (each is a failing test naming file, line and field). From the
    reports, not the collection: pytest-xdist's controller collects nothing, and its workers' reports reach it."""

    def __init__(self) -> None:
        self.count = 0

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        from gather_scatter_conformance.harness.run.pytest_plugin import CASE_FILE_ERROR

        if report.when == "call" and report.failed and str(report.location[2]).startswith(CASE_FILE_ERROR):
            self.count += 1


def _against_earlier(records: Iterable[Record], earlier: list[str], ignore: list[str]) -> Verdict | None:
    """The gate's verdict on ``records`` judged against the baselines the ``earlier`` results would give (gsc summary
    --previous; files that do not exist are left out, an empty one holds no records); None without
    earlier results."""
    from gather_scatter_conformance.harness.judge.baseline import in_memory
    from gather_scatter_conformance.harness.judge.gate import judge
    from gather_scatter_conformance.harness.run.records import read

    earlier = [p for p in earlier if Path(p).exists()]
    if not earlier:
        return None
    return judge(records, in_memory(read([p for p in earlier if Path(p).stat().st_size])), ignore)


def _summary(args: argparse.Namespace) -> int:
    from gather_scatter_conformance.harness.console import summary_counts, summary_text
    from gather_scatter_conformance.harness.run.records import read

    verdict = _against_earlier(read(args.files), args.previous, args.ignore)
    if args.json:
        print(json.dumps({"systems": summary_counts(args.files, args.previous),
                          "gate": verdict.as_json() if verdict else None}, indent=1))
    else:
        print(summary_text(args.files, args.previous))
    return verdict.exit_status() if verdict else 0


def _validate(args: argparse.Namespace) -> int:
    from gather_scatter_conformance import resources
    from gather_scatter_conformance.harness.cases.errors import CaseFileError
    from gather_scatter_conformance.harness.cases.load import load_file
    from gather_scatter_conformance.harness.cases.walk import case_files

    # No files: the shipped corpus, named as a run names it (cases/...). A folder: its case files, each once.
    files = [p for f in args.files for p in (case_files(Path(f)) if Path(f).is_dir() else [Path(f)])] or (
        [] if args.files else case_files(resources.cases_dir(), ("*.yaml",)))
    bad = good = 0
    for f in files:
        for entry in load_file(f, str(f) if args.files else resources.corpus_id(f) or str(f)):
            if isinstance(entry, CaseFileError):
                print(entry)
                bad += 1
            else:
                good += 1
    print(f"{good} valid case(s), {bad} error(s)")
    return 1 if bad else 0


def _schema(args: argparse.Namespace) -> int:
    if args.site:
        from gather_scatter_conformance.harness.report.site_model import schema as json_schema
    elif args.records:
        from gather_scatter_conformance.vocab.record import json_schema
    else:
        from gather_scatter_conformance.harness.cases.schema import json_schema

    text = json.dumps(json_schema(), indent=2) + "\n"
    if args.out:
        Path(args.out).write_text(text)
    else:
        sys.stdout.write(text)
    return 0


def _merge(args: argparse.Namespace) -> int:
    from gather_scatter_conformance.harness.run.records import merge

    n = merge(args.files, args.out, later_wins=args.later_wins)
    print(f"merged {n} record(s) into {args.out}")
    return 0


def _behaviour(args: argparse.Namespace) -> int:
    from gather_scatter_conformance.harness.report.behaviour import render_text, table
    from gather_scatter_conformance.harness.run.records import read

    rows = table(read(args.files), Path(args.claims) if args.claims else None, with_documented=True)
    if args.json:
        Path(args.json).write_text(json.dumps(rows, indent=1) + "\n")
    print(render_text(rows))
    return 0


def _conversion(args: argparse.Namespace) -> int:
    from gather_scatter_conformance.harness.report.build import dedupe
    from gather_scatter_conformance.harness.report.conversion import render_text
    from gather_scatter_conformance.harness.run.records import read

    print(render_text(dedupe(read(args.files))))
    return 0


def _report(args: argparse.Namespace) -> int:
    from gather_scatter_conformance.harness.report.page import main as report_main

    return report_main(args)


def _port(args: argparse.Namespace) -> int:
    from gather_scatter_conformance.harness.report import site

    try:
        port = site.port_between(args.files, args.source, args.target)
    except ValueError as exc:
        print(f"gsc port: {exc}", file=sys.stderr)
        return 2
    sys.stdout.write(port.model_dump_json(indent=1) + "\n" if args.json else site.port_text(port))
    return 0


def _baseline(args: argparse.Namespace) -> int:
    from gather_scatter_conformance.harness.judge.baseline import check_records, from_records, item_key, mark_unsafe
    from gather_scatter_conformance.harness.report.unsafe import evidence_text, load_evidence
    from gather_scatter_conformance.harness.run.records import read

    if args.check:
        from gather_scatter_conformance import resources

        root = Path(args.dir) if Path(args.dir).is_dir() else resources.baselines_dir()
        records = list(read(args.files))
        failures, notes = check_records(root, records)
        for line in failures:
            print(f"FAIL {line}")
        for line in notes:
            print(f"note {line}")
        mixed = [r for r in records if len(r.distribution or {}) > 1]
        for r in mixed:
            dist = r.distribution or {}
            runs = sum(dist.values())
            seen = ", ".join(f"{label} {n}/{runs}" for label, n in dist.items())
            print(f"mixed {r.framework}:{r.variant} {r.case}: {seen}")
        print(f"{len(records)} record(s) checked against {root}: {len(failures)} baseline failure(s), "
              f"{len(notes)} note(s); {sum(1 for r in records if r.distribution)} repeated, "
              f"{len(mixed)} with a mixed distribution")
        return 1 if failures else 0
    counts = from_records(Path(args.dir), list(read(args.files))) if args.files else {}
    for fw, n in sorted(counts.items()):
        print(f"{fw}: {n} label(s) and verdict(s) -> {Path(args.dir) / (fw + '.yaml')}")
    proved: dict[str, dict[str, str]] = {}
    for (case, fw, variant), ev in load_evidence(args.evidence).items():
        if ev.get("verdict") in ("write", "read", "uninitialised"):  # a checker saw the access
            proved.setdefault(fw, {})[item_key(case, variant)] = f"{ev['verdict']}: {evidence_text(ev)}"
    for fw, marks in sorted(proved.items()):
        mark_unsafe(Path(args.dir), fw, marks)
        print(f"{fw}: {len(marks)} cell(s) memory-unsafe by a checker's evidence -> {Path(args.dir) / (fw + '.yaml')}")
    return 0


def _gate(args: argparse.Namespace) -> int:
    from gather_scatter_conformance.harness.judge.gate import judge
    from gather_scatter_conformance.harness.report.gate import junit_xml, markdown
    from gather_scatter_conformance.harness.run.records import read

    root = Path(args.baselines)
    if not root.is_dir():
        print(f"gsc gate: no baselines directory {root} (write one with gsc baseline RESULTS --dir {root})",
              file=sys.stderr)
        return 2
    records = list(read(args.files))
    if not records:
        print(f"gsc gate: no records in {', '.join(args.files)}: nothing to judge", file=sys.stderr)
        return 2
    verdict = judge(records, root, args.ignore)
    summary = markdown(verdict)
    for path, text in ((args.junit, junit_xml(verdict)), (args.json, json.dumps(verdict.as_json(), indent=1) + "\n"),
                       (args.markdown, summary)):
        if path:
            Path(path).parent.mkdir(parents=True, exist_ok=True)
            Path(path).write_text(text)
    print(summary, end="")
    return verdict.exit_status()


def _as_path(folder: Path) -> str:
    """``folder`` as pip reads a path, not a project name: ``./gsc-x`` for ``gsc-x``."""
    return str(folder) if folder.is_absolute() or folder.parts[:1] == ("..",) else f"./{folder}"


def _new_adapter(args: argparse.Namespace) -> int:
    from gather_scatter_conformance.harness.scaffold import new_adapter, write_example
    from gather_scatter_conformance.vocab.record import harness_version

    if not args.name and not args.example:
        print("gsc new-adapter: name the system (gsc new-adapter NAME), or --example", file=sys.stderr)
        return 2
    try:
        root = write_example(Path(args.out)) if args.example else new_adapter(args.name, Path(args.out),
                                                                              harness_version())
    except ValueError as exc:
        print(f"gsc new-adapter: {exc}", file=sys.stderr)
        return 2
    if args.example:
        print(f"{root}: the toy runtime, a complete adapter package whose planted bug clamps negative indices. "
              f"Next: pip install {_as_path(root)}, then gsc run --framework toy")
    else:
        print(f"{root}: the adapter package of {args.name}, every operator not mapped yet. Next: map them in "
              f"{root / f'gsc_{args.name}' / 'adapter.py'}, pip install -e {_as_path(root)}, then docs/gate.md (run, "
              "review, baseline, commit, gate)")
    return 0


def _diff(args: argparse.Namespace) -> int:
    from gather_scatter_conformance.harness.judge.baseline import in_memory
    from gather_scatter_conformance.harness.judge.gate import judge
    from gather_scatter_conformance.harness.report.rundiff import diff, render
    from gather_scatter_conformance.harness.run.records import read

    old, new = list(read([args.old])), list(read([args.new]))  # each read once: the diff and the gate use both
    changes = diff(old, new, examples=args.examples)
    verdict = judge(new, in_memory(old), args.ignore)
    if args.json:
        print(json.dumps({"changes": changes.as_json(), "gate": verdict.as_json()}, indent=1))
    else:
        print(render(changes))
        counts = ", ".join(f"{n} {kind}" for kind, n in verdict.counts().items() if n)
        print(f"gate: exit status {verdict.exit_status()}" + (f" ({counts})" if counts else ""))
    return verdict.exit_status()


def _finding(args: argparse.Namespace, changed_paths: bool = False) -> tuple[Record, Case] | None:
    """The first finding of ``args.case`` on ``args.framework`` (NAME or NAME:VARIANT) on ``args.device`` in
    ``args.files``, and its case; None after printing why there is none. ``changed_paths``: a converter path's record
    whose preservation is ``changed`` counts as a finding too."""
    from gather_scatter_conformance.harness.evidence.cells import Cases  # no report extra needed
    from gather_scatter_conformance.harness.judge.verdict import is_finding
    from gather_scatter_conformance.harness.run.records import read

    framework, _, variant = args.framework.partition(":")
    matches = [r for r in read(args.files) if r.framework == framework
               and (r.case == args.case or r.case.endswith(f"::{args.case}"))
               and (not variant or r.variant == variant) and r.device == args.device]
    if not matches:
        print(f"no record of {args.case} on {args.framework} ({args.device}) in {', '.join(args.files)}",
              file=sys.stderr)
        return None
    findings = [r for r in matches if is_finding(r) or (
        changed_paths and (r.conversion or {}).get("preservation") == "changed")]
    if not findings:
        print(f"{args.case} on {args.framework}: {matches[0].verdict} ({matches[0].outcome}); not a finding: "
              "repro scripts and issues are written for findings only", file=sys.stderr)
        return None
    record = findings[0]
    from gather_scatter_conformance.harness.run.records import case_snapshot

    case = Cases(snapshot=case_snapshot(args.files)).get(record.case)  # as the run saw it, where it kept it
    if case is None:
        print(f"case {record.case} not found (run from the directory the run was made in)", file=sys.stderr)
        return None
    return record, case


def _repro(args: argparse.Namespace) -> int:
    from gather_scatter_conformance.harness.run.repro import baseline_label, script

    found = _finding(args)
    if found is None:
        return 2
    record, case = found
    try:
        text = script(case, record, baseline_label(record, Path(args.baseline_dir) if args.baseline_dir else None))
    except ValueError as exc:
        print(f"{exc} (results written before repro scripts existed: run the case again)", file=sys.stderr)
        return 2
    if args.out:
        Path(args.out).write_text(text)
        print(f"wrote {args.out}: {record.case} on {record.framework}:{record.variant} ({record.outcome})")
    else:
        sys.stdout.write(text)
    return 0


def _issue(args: argparse.Namespace) -> int:
    from gather_scatter_conformance import resources
    from gather_scatter_conformance.harness.evidence import cells
    from gather_scatter_conformance.harness.evidence.advisories import read_evidence
    from gather_scatter_conformance.harness.history import store
    from gather_scatter_conformance.harness.report import upstream
    from gather_scatter_conformance.harness.report.claims import load_claims
    from gather_scatter_conformance.harness.run.repro import baseline_label, script

    found = _finding(args, changed_paths=True)
    if found is None:
        return 2
    record, case = found
    history_dir = Path(args.history) if args.history else (Path("history") if Path("history").is_dir() else None)
    history = None
    if history_dir is not None and store.path_for(history_dir, record.framework).exists():
        history = store.read(history_dir, record.framework)
    evidence = read_evidence(Path(args.evidence)).get(cells.key(record)) if args.evidence else None
    try:
        text: str | None = script(case, record, baseline_label(record))
    except ValueError:
        text = None
    sources = upstream.Sources(load_claims(args.claims or resources.claims_dir()), history, evidence)
    out = upstream.body(record, case, text, sources)
    if args.out:
        Path(args.out).write_text(out)
        print(f"wrote {args.out}: {upstream.title(record, upstream.documented(record, sources.claims), evidence)}")
    else:
        sys.stdout.write(out)
    return 0


def _import(args: argparse.Namespace) -> int:
    from gather_scatter_conformance.harness.importers.onnx_node import cli_main

    return cli_main(args)


# What each argument names, for shell completion (gsc completion): results files and other files, folders, and
# framework names. Keyed by destination, or by (command, destination) where one destination means two things.
_FILE_ARGS = {"files", "old", "new", "results", "previous", "shard_times", "evidence", "junit", "json", "markdown",
              "out"}
_DIR_ARGS = {"claims", "history", "baselines", "baseline_dir", "dir", ("report", "out"), ("new-adapter", "out"),
             ("import", "out")}
_FRAMEWORK_ARGS = {("run", "framework"), ("repro", "framework"), ("issue", "framework")}


def _completion_marks(commands: dict[str, argparse.ArgumentParser]) -> None:
    """Mark each command's arguments with what shtab completes them with (files, folders, framework names, which a
    completing shell asks ``gsc completion --names`` for, so an adapter installed later is offered too)."""
    import shtab

    names = shtab.cmd("gsc completion --names 2>/dev/null")
    for command, parser in commands.items():
        for action in parser._actions:
            if action.choices is not None or action.nargs == 0:
                continue  # argparse's own choices complete already; a flag takes no value
            key = (command, action.dest)
            if key in _FRAMEWORK_ARGS:
                action.complete = names  # type: ignore[attr-defined]
            elif key in _DIR_ARGS or action.dest in _DIR_ARGS:
                action.complete = shtab.DIRECTORY  # type: ignore[attr-defined]
            elif action.dest in _FILE_ARGS:
                action.complete = shtab.FILE  # type: ignore[attr-defined]


def _completion(parser: argparse.ArgumentParser, args: argparse.Namespace) -> int:
    """Print the completion script for ``args.shell``, or with ``--names`` the names ``--framework`` takes."""
    if args.names:
        from gather_scatter_conformance import adapters

        print("\n".join(["frameworks", "paths", *adapters.names()]))
        return 0
    if not args.shell:
        print("gsc completion: name a shell: " + ", ".join(_SHELLS), file=sys.stderr)
        return 2
    import shtab

    if args.shell not in shtab.SUPPORTED_SHELLS:  # an older shtab than the one these shells were written from
        print(f"gsc completion: shtab {shtab.__version__} has no {args.shell} completion (pip install -U shtab)",
              file=sys.stderr)
        return 2
    print(shtab.complete(parser, args.shell))
    return 0


# The path of a runtime team, written here and in docs/gate.md (tests/test_toy_runtime.py walks it).
_GATE_PATH = """\
your own runtime in your CI (docs/gate.md):
  gsc new-adapter NAME                              1. scaffold: ./gsc-NAME, every operator not mapped yet
  pip install -e ./gsc-NAME                         2. map the operators in gsc_NAME/adapter.py, install
  gsc run --framework NAME --results r.jsonl        3. first run: the shipped corpus
  gsc report r.jsonl --out site                     4. review: departures from ONNX in red ([report] extra)
  gsc baseline r.jsonl --dir baselines              5. baseline what you accept, and commit baselines/
  gsc gate r.jsonl --baselines baselines --junit gate.xml
                                                    6. gate each change: exit 0, or the bits of what changed
"""


# shtab's shells (shtab.SUPPORTED_SHELLS in shtab 1.13), written here: importing shtab takes 80 ms, which every gsc
# command would pay to build its parser.
_SHELLS = ("bash", "zsh", "tcsh", "fish", "powershell")


def main(argv: list[str] | None = None) -> int:
    """Entry point; returns the process exit code."""
    from gather_scatter_conformance.vocab.gate import BITS
    from gather_scatter_conformance.vocab.record import harness_version

    parser = argparse.ArgumentParser(prog="gsc", description=__doc__, epilog=_GATE_PATH,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--version", action="version", version=f"gsc {harness_version()}")
    sub = parser.add_subparsers(dest="cmd", required=True)
    run = sub.add_parser("run", help="run cases × frameworks: the shipped corpus, or the case paths given (extra "
                         "arguments, case paths included, go to pytest)")
    run.add_argument("--framework", default="", help="NAME[,NAME...] (default: every installed one)")
    run.add_argument("--results", default="results/results.jsonl")
    run.add_argument("--resume", action="store_true")
    run.add_argument("--no-cache", action="store_true", help="measure every record: reuse nothing from the result "
                     "cache (docs/cache.md)")
    run.add_argument("--previous", action="append", default=[], metavar="FILE", help="an earlier run's results "
                     "(repeatable): the summary counts the results that changed since (files that do not exist are "
                     "left out)")
    run.add_argument("--phase", default="", help="the name the progress bar shows (default: --framework)")
    run.add_argument("--workers", default="auto", type=_workers_value, metavar="N|auto",
                     help="pytest-xdist workers (default auto: one a core, as many as the available memory holds at "
                     "what the last run of --results measured a worker to take; docs/running.md); a -n among the "
                     "pytest arguments wins")
    run.add_argument("--shard", default="", metavar="K/N", help="run the K-th of N shards of equal recorded time "
                     "(gsc merge puts the shards together; docs/running.md)")
    run.add_argument("--shard-times", action="append", default=[], metavar="FILE", help="an earlier run's results, "
                     "whose durations balance the shards (repeatable; files that do not exist are left out)")
    val = sub.add_parser("validate", help="check case files and folders of them (default: the shipped corpus); one "
                         "line per problem")
    val.add_argument("files", nargs="*")
    sch = sub.add_parser("schema", help="print (or write) the case-file JSON Schema, or the result records' one")
    sch.add_argument("--out", default="")
    sch.add_argument("--records", action="store_true", help="the JSON Schema of result records (shipped as "
                     "gather_scatter_conformance/schemas/record.schema.json) instead of case files'")
    sch.add_argument("--site", action="store_true", help="the JSON Schema of the report site's JSON files (shipped as "
                     "gather_scatter_conformance/schemas/site.schema.json)")
    mer = sub.add_parser("merge", help="merge the shards of a run (each checked against its manifest: finished, the "
                         "same case corpus, each cell once)")
    mer.add_argument("files", nargs="+")
    mer.add_argument("--out", required=True)
    mer.add_argument("--later-wins", action="store_true", help="a cell in two files keeps the later file's record "
                     "(default: an error naming both)")
    summ = sub.add_parser("summary", help="per system: conforms, deviates, memory-unsafe, crash, other (and changed)")
    summ.add_argument("files", nargs="+")
    summ.add_argument("--previous", nargs="+", default=[], metavar="FILE", help="an earlier run's results: count "
                      "the results that changed since")
    beh = sub.add_parser("behaviour", help="behaviour labels per op × dimension × framework (blog Tables 1 and 2)")
    beh.add_argument("files", nargs="+")
    beh.add_argument("--json", default="", help="also write the table as JSON records")
    beh.add_argument("--claims", default="", help="claims directory (default: claims/)")
    conv = sub.add_parser("conversion", help="converter paths: preserved / changed / failed per behaviour dimension")
    conv.add_argument("files", nargs="+")
    rep = sub.add_parser("report", help="the compatibility report: DIR/index.html, behaviour.json, matrix.csv")
    rep.add_argument("files", nargs="+", help="results files (JSON Lines)")
    rep.add_argument("--out", required=True, help="output directory")
    rep.add_argument("--baseline", nargs="+", default=[], help="previous results files to show changes against")
    rep.add_argument("--evidence", nargs="+", default=[], metavar="FILE",
                     help="memory-checker evidence (gsc memcheck --out FILE) shown with the memory-unsafe findings; "
                          "files that do not exist are left out")
    rep.add_argument("--claims", default="", help="claims directory (default: claims/)")
    rep.add_argument("--history", default="", help="release sweeps (history/<framework>.jsonl) for the History "
                     "section")
    dif = sub.add_parser("diff", help="what changed between two results files: outcome, verdict, label per framework")
    dif.add_argument("old")
    dif.add_argument("new")
    dif.add_argument("--examples", type=int, default=3, help="example records shown per change")
    for command in (dif, summ):
        command.add_argument("--json", action="store_true", help="print JSON: the changes (the counts) and the "
                             "gate's verdict against the earlier run")
        command.add_argument("--ignore", nargs="+", default=[], choices=list(BITS), metavar="KIND",
                             help="finding kinds that do not set the exit status, which is otherwise gsc gate's "
                                  "against the earlier run (docs/gate.md)")
    rpr = sub.add_parser("repro", help="write the standalone repro script of a finding (deviation, crash, label)")
    rpr.add_argument("files", nargs="+", help="results files (JSON Lines)")
    rpr.add_argument("--case", required=True, help="the case: file::id, or its id")
    rpr.add_argument("--framework", required=True, help="NAME or NAME:VARIANT (default: its first finding)")
    rpr.add_argument("--device", default="cpu")
    rpr.add_argument("--out", default="", help="write the script here (default: standard output)")
    rpr.add_argument("--baseline-dir", default="", help="baselines whose alternatives (zero|garbage: an unchecked "
                     "read) the script accepts (default: ./baselines if present, else the shipped ones)")
    iss = sub.add_parser("issue", help="print the upstream issue of a finding: title, versions, what the spec and the "
                         "documentation say (quoted), what was observed, since which release, the repro")
    iss.add_argument("files", nargs="+", help="results files (JSON Lines)")
    iss.add_argument("--case", required=True, help="the case: file::id, or its id")
    iss.add_argument("--framework", required=True, help="NAME, NAME:VARIANT, or a converter path a~b~c[:VARIANT]")
    iss.add_argument("--device", default="cpu")
    iss.add_argument("--history", default="", help="release sweeps (history/<framework>.jsonl; default: ./history if "
                     "present)")
    iss.add_argument("--evidence", default="", help="gsc memcheck's evidence file (JSON Lines)")
    iss.add_argument("--claims", default="", help="documented claims directory (default: the shipped claims)")
    iss.add_argument("--out", default="", help="write the markdown here (default: standard output)")
    prt = sub.add_parser("port", help="what changes if a model moves from one API to another: every behaviour "
                         "dimension where the two differ (a converter path's own verdicts where --to names one)")
    prt.add_argument("files", nargs="+", help="results files (JSON Lines)")
    prt.add_argument("--from", dest="source", required=True, help="SYSTEM[:VARIANT], e.g. tensorflow:gather/function")
    prt.add_argument("--to", dest="target", required=True, help="SYSTEM[:VARIANT] or a converter path a~b~c")
    prt.add_argument("--json", action="store_true", help="print the port as the site's JSON (api/schema.json: Port)")
    bas = sub.add_parser("baseline", help="write baselines/<framework>.yaml from results files: the probes' labels "
                         "and the conformance cases' verdicts (what gsc gate checks)")
    bas.add_argument("files", nargs="*", help="results files whose labels to write")
    bas.add_argument("--evidence", nargs="+", default=[], metavar="FILE",
                     help="gsc memcheck output: cells a checker proved memory-unsafe join the baseline's memory_unsafe "
                          "section, so a deterministic unchecked read (labelled wrong) stays in the class")
    bas.add_argument("--dir", default="baselines", help="where to write (default: ./baselines, which runs from this "
                     "directory then use)")
    bas.add_argument("--check", action="store_true", help="write nothing: judge the results files' labels against the "
                     "baselines (--dir where it exists, else the shipped ones) as a run's tests do; one line per "
                     "failure and note, exit 1 on a failure")
    gat = sub.add_parser("gate", help="judge a run against committed baselines and fail by policy: exit status the sum "
                         "of " + ", ".join(f"{bit} {kind}" for kind, bit in BITS.items()) + " (docs/gate.md)")
    gat.add_argument("files", nargs="+", help="results files of the run (JSON Lines)")
    gat.add_argument("--baselines", default="baselines", metavar="DIR",
                     help="the baselines gsc baseline wrote and the team committed (default: ./baselines)")
    gat.add_argument("--ignore", nargs="+", default=[], choices=list(BITS), metavar="KIND",
                     help="finding kinds that do not fail the gate (listed, not counted): " + ", ".join(BITS))
    gat.add_argument("--junit", default="", metavar="FILE", help="write a JUnit XML report: a test case per cell")
    gat.add_argument("--json", default="", metavar="FILE", help="write the verdict as JSON")
    gat.add_argument("--markdown", default="", metavar="FILE",
                     help="write the Markdown summary (on GitHub Actions: \"$GITHUB_STEP_SUMMARY\")")
    new = sub.add_parser("new-adapter", help="write an installable adapter package for your own runtime: gsc-NAME/ "
                         "with its entry point, every operator not mapped yet, and a test (docs/adapter-api.md)")
    new.add_argument("name", nargs="?", default="", help="the system's name (--framework NAME): lowercase letters, "
                     "digits, _")
    new.add_argument("--example", action="store_true", help="write the toy runtime instead: a complete adapter "
                     "package, whose planted bug the harness finds (docs/adapter-api.md)")
    new.add_argument("--out", default=".", help="where to write gsc-NAME/ (default: here)")
    imp = sub.add_parser("import", help="case files from another project's tests (onnx-node: ONNX's node tests)")
    imp.add_argument("source", choices=["onnx-node"])
    imp.add_argument("--out", default="", help="output directory (default: cases/imported)")
    imp.add_argument("--check", action="store_true", help="compare with the files in --out instead of writing")
    fuz = sub.add_parser("fuzz", help="differential fuzzing: random cases on every framework, findings shrunk to cases")
    from gather_scatter_conformance.harness.fuzz import command as fuzz

    fuzz.add_arguments(fuz)
    his = sub.add_parser("history", help="behaviour across releases: sweep a framework's releases, diff two of them")
    from gather_scatter_conformance.harness.history import command as history

    history.add_arguments(his)
    mem = sub.add_parser("memcheck", help="run each memory-unsafe finding's repro under memcheck, Electric Fence and "
                         "glibc's malloc checks; one evidence line per cell (docs/memcheck.md)")
    from gather_scatter_conformance.harness.evidence import memcheck

    memcheck.add_arguments(mem)
    adv = sub.add_parser("advisories", help="one markdown advisory per framework release listing its memory-unsafe "
                         "behaviours, with evidence and repro scripts (docs/memcheck.md)")
    from gather_scatter_conformance.harness.evidence import advisories

    advisories.add_arguments(adv)
    cmp = sub.add_parser("completion", help="print a shell completion script: eval \"$(gsc completion bash)\" in "
                         "~/.bashrc (zsh, tcsh, fish, powershell too; docs/running.md)")
    cmp.add_argument("shell", nargs="?", choices=_SHELLS)
    cmp.add_argument("--names", action="store_true", help="print the names --framework takes, one a line")
    for command in (mer, summ, beh, conv, rep, dif, rpr, iss, prt, bas, gat):
        command.add_argument("--lenient", action="store_true", help="skip damaged lines of results files, with a "
                             "count (default: a damaged line is an error naming its file and line)")
    args, extra = parser.parse_known_args(argv)
    if getattr(args, "lenient", False):
        from gather_scatter_conformance.harness.run.records import LENIENT

        LENIENT.set(True)
    if args.cmd != "run" and extra:
        parser.error(f"unrecognized arguments: {' '.join(extra)}")
    if args.cmd == "run":
        return _run(args, extra)
    if args.cmd == "completion":
        if not args.names:
            _completion_marks(sub.choices)
        return _completion(parser, args)
    commands = {
        "validate": _validate,
        "schema": _schema,
        "merge": _merge,
        "behaviour": _behaviour,
        "conversion": _conversion,
        "baseline": _baseline,
        "gate": _gate,
        "new-adapter": _new_adapter,
        "report": _report,
        "summary": _summary,
        "diff": _diff,
        "repro": _repro,
        "issue": _issue,
        "port": _port,
        "import": _import,
        "fuzz": fuzz.main,
        "history": history.main,
        "memcheck": memcheck.main,
        "advisories": advisories.main,
    }
    from gather_scatter_conformance.harness.judge.baseline import BaselineFileError
    from gather_scatter_conformance.harness.run.records import NotResultsFile

    try:
        return commands[args.cmd](args)
    except (NotResultsFile, BaselineFileError) as exc:  # not a results (baseline) file: what was expected, one line
        print(f"gsc {args.cmd}: {exc}", file=sys.stderr)
        return 2
    except ModuleNotFoundError as exc:
        extra = _EXTRA_OF.get((exc.name or "").partition(".")[0])
        if extra is None:
            raise
        from gather_scatter_conformance.adapters import DISTRIBUTION

        print(f"gsc {args.cmd} needs {exc.name}, which is not installed: pip install '{DISTRIBUTION}[{extra}]'",
              file=sys.stderr)
        return 2


# Optional packages the commands import, and the extra that installs each (pyproject.toml).
_EXTRA_OF = {"jinja2": "report", "pandas": "report", "markupsafe": "report"}
