"""pytest integration: YAML case files are collected directly (no generated code), crossed with the adapters.

Registered as a ``pytest11`` entry point, so ``pytest my_cases/ --framework numpy`` works in any directory once the
package is installed. A file is a case file by its content (a YAML mapping with top-level ``op:`` and ``cases:``)
among those matching ``--gsc-case-glob`` (ini ``conformance_case_glob``), wherever it lies. Case ids name the file:
a file of the shipped corpus as ``cases/<its path in the corpus>`` from any directory
(``cases/gather.yaml::ov-gather8-example-6``), any other file by its path relative to pytest's rootdir; a test id
adds the framework, ``[numpy]``, or a non-default API variant, ``[tensorflow:gather/xla]``.

The plugin is loaded into every pytest run of the environment it is installed in, so it keeps to itself: every
option is named ``--gsc-...`` (the unprefixed aliases are kept only where no common plugin has the name:
``tests/test_plugin_manners.py``), and this module imports only pytest and the standard library. The harness
itself (the adapter registry, case loading, NumPy, pydantic) is imported when the first case file is collected,
or at configure when an option of ours is set. Collection imports no framework: adapter modules import theirs
lazily.
"""

from __future__ import annotations

import fnmatch
import gc
import os
import re
import threading
from collections import Counter
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

if TYPE_CHECKING:
    from gather_scatter_conformance.harness.cases.load import Case
    from gather_scatter_conformance.harness.run.isolation import HangWitness
    from gather_scatter_conformance.vocab.record import Record

DEFAULT_GLOB = "*.yaml *.yml"
# A case file's top level holds `op:` and `cases:` at the start of a line (comments and other keys may come first).
_CASE_FILE = (re.compile(rb"^op:[ \t]", re.M), re.compile(rb"^cases:[ \t]*(#.*)?$", re.M))
# dest -> default of every option below. A run that sets any of them is a conformance run, whose state (and its
# usage errors) is made at configure; any other run makes it only if it collects a case file.
_DEFAULTS: dict[str, Any] = {}


def _option(group: pytest.OptionGroup, *names: str, **kwargs: Any) -> None:
    """Add an option whose first name is ``--gsc-...`` (its dest, ``gsc_...``, cannot meet another plugin's)."""
    dest = names[0].removeprefix("--").replace("-", "_")
    # A flag's default is False, not None: a None here made every run look like one that set the flag (a run of
    # unrelated tests then imported the harness).
    if kwargs.get("action") == "store_true":
        kwargs.setdefault("default", False)
    _DEFAULTS[dest] = kwargs.get("default")
    group.addoption(*names, dest=dest, **kwargs)


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("conformance", "gather-scatter conformance run")
    _option(group, "--gsc-framework", "--framework", default="", metavar="NAME[,NAME...]",
            help="adapters to run; 'frameworks' for every framework's own, 'paths' for every converter path "
                 "(default: every one installed)")
    _option(group, "--gsc-results", "--results", default="", metavar="FILE",
            help="append one JSON record per test to this JSON Lines file")
    _option(group, "--gsc-variants", "--variants", default="all", choices=("all", "default"),
            help="run every API variant or the first")
    _option(group, "--gsc-resume", "--resume", action="store_true", default=False,
            help="skip the tests already recorded in --gsc-results")
    _option(group, "--gsc-shard", "--shard", default="", metavar="K/N",
            help="run the K-th of N shards of equal recorded time (--shard-times; harness/run/shards.py)")
    _option(group, "--gsc-shard-times", "--shard-times", action="append", default=[], metavar="FILE",
            help="an earlier run's results, whose records' durations balance the shards (repeatable; without one "
                 "every cell counts the same)")
    # Not --device: pytest-playwright has it.
    _option(group, "--gsc-device", default="cpu", metavar="cpu|gpu|cpu,gpu",
            help="where to run (default cpu). GPU tests of a framework that sees no GPU here are skipped with the "
                 "reason; ids of GPU tests end in @gpu")
    _option(group, "--gsc-no-ahead", "--no-ahead", action="store_true", default=False,
            help="prepare nothing ahead: each case compiles alone (IREE otherwise compiles a run's cases many to a "
                 "module); to check that grouping changes no record")
    _option(group, "--gsc-slow-variants", "--slow-variants", default="focus", choices=("all", "focus"),
            help="variants that compile per shape (torch.compile): on every case, or only on probe, seed and "
                 "regression cases (default)")
    _option(group, "--gsc-isolation", "--isolation", default="process", choices=("process", "none"),
            help="process: frameworks run in execnet workers, so crashes and hangs become results (default); "
                 "none: in the pytest process")
    _option(group, "--gsc-case-timeout", "--case-timeout", type=float, default=120.0, metavar="SECONDS",
            help="seconds before a case counts as a hang")
    _option(group, "--gsc-first-timeout", "--first-timeout", default="auto", metavar="SECONDS|auto",
            help="seconds a case's first try may run before it is tried again in a fresh process with the full "
                 "--case-timeout; auto (default): 10 times the slowest case its system and variant has finished "
                 "in this worker, at least 10 s, once 3 have (harness/run/timeouts.py)")
    _option(group, "--gsc-update-baseline", "--update-baseline", action="store_true", default=False,
            help="probe cases: record observed labels as the new baseline instead of checking them")
    _option(group, "--gsc-repeats", "--repeats", type=int, default=5, metavar="N",
            help="runs of a memory-unsafe or flipping cell, each in a fresh process; its record holds the "
                 "distribution of labels (default 5; 1 runs every cell once)")
    _option(group, "--gsc-unsafe-only", "--unsafe-only", action="store_true", default=False,
            help="run only the cells whose baseline label is memory-unsafe or flipped (a|b), with their repeats")
    _option(group, "--gsc-baseline-dir", "--baseline-dir", default="", metavar="DIR",
            help="where baseline files live (default: <rootdir>/baselines if it exists or --gsc-update-baseline "
                 "is given, else the baselines shipped with the harness)")
    _option(group, "--gsc-case-tags", "--case-tags", default="", metavar="TAG[,TAG...]",
            help="run only cases carrying one of these tags (derived tags count: probe cases carry `probe`)")
    _option(group, "--gsc-case-glob", "--case-glob", default=None, metavar="PATTERNS",
            help=f"file name patterns of case files, space-separated (default: ini conformance_case_glob, else "
                 f"{DEFAULT_GLOB!r}); a file is a case file by its content")
    parser.addini("conformance_case_glob", f"file name patterns of case files (default {DEFAULT_GLOB!r})",
                  default=DEFAULT_GLOB)
    _option(group, "--gsc-framework-python", "--framework-python", action="append", default=[],
            metavar="NAME=PYTHON", help="run framework NAME in another interpreter (e.g. mxnet=.venv-mxnet/bin/python)")
    _option(group, "--gsc-onnx-backend", "--onnx-backend", action="append", default=[], metavar="MODULE[:ATTR]",
            help="also run the cases through this ONNX backend (onnx.backend.base.Backend's API, e.g. "
                 "onnxruntime.backend), as the adapter onnx-backend-MODULE; repeatable. Without --gsc-framework, "
                 "only the backends run")
    _option(group, "--gsc-ort-providers", default="", metavar="PROVIDER[,PROVIDER...]",
            help="onnxruntime's execution providers, in priority order (default: $GSC_ORT_PROVIDERS, else "
                 "CPUExecutionProvider); one that is not installed is a usage error")
    _option(group, "--gsc-no-cache", "--no-cache", action="store_true", default=False,
            help="measure every record: reuse nothing from the result cache, and store nothing in it")
    _option(group, "--gsc-path-units", action="store_true",
            help="with pytest-xdist, each converter path (per device) runs on one worker, as one unit of work "
                 "(gsc run gives it to a run of paths only)")
    _option(group, "--gsc-cache-dir", default="", metavar="DIR",
            help="the result cache's directory (default: $GSC_RESULT_CACHE, else "
                 "$XDG_CACHE_HOME/gather-scatter-conformance/results; GSC_RESULT_CACHE=off disables it)")


class _State:
    """What a conformance run resolved from its options: the adapters, where records go, baselines, known files."""

    def __init__(self, config: pytest.Config) -> None:
        from gather_scatter_conformance import adapters, resources
        from gather_scatter_conformance.harness.run.records import (
            NotResultsFile,
            ResultsWriter,
            RunBusy,
            RunFiles,
            new_manifest,
            read,
        )

        requested = [f.strip() for f in config.getoption("gsc_framework").split(",") if f.strip()]
        requested += _onnx_backends(config)
        self.pythons = _pythons(config)
        # Two groups: 'paths', every converter path installed here (docs/conversion.md); 'frameworks', every
        # framework's own adapter installed here or reachable in its own interpreter.
        for group, member in (("paths", True), ("frameworks", False)):
            if group in requested:
                at = requested.index(group)
                requested[at:at + 1] = [n for n in adapters.names() if adapters.is_path(n) == member
                                        and (adapters.is_available(n) or n in self.pythons)]
        unknown = [f for f in requested if f not in adapters.table()]
        if unknown:
            import difflib

            guesses = [difflib.get_close_matches(f, adapters.names(), n=2, cutoff=0.6) for f in unknown]
            said = "; ".join(f"{f!r}" + (f" (did you mean {' or '.join(g)}?)" if g else "")
                             for f, g in zip(unknown, guesses, strict=True))
            frameworks = [n for n in adapters.names() if not adapters.is_path(n)]
            raise pytest.UsageError(f"--framework: unknown {said}; the frameworks: {', '.join(frameworks)}, the "
                                    "groups 'frameworks' and 'paths', and the converter paths (gsc run --help)")
        absent = [why for why in (_not_installed(f) for f in requested if f not in self.pythons) if why]
        if absent:  # a run of it would record the harness's failure to import it, not the framework's behaviour
            raise pytest.UsageError(f"--framework: {'; '.join(absent)}")
        self.frameworks = requested or [n for n in adapters.names() if adapters.is_available(n) or n in self.pythons]
        _check_ort_providers(config, self.frameworks, self.pythons)
        self.isolation = config.getoption("gsc_isolation")
        self.timeout = config.getoption("gsc_case_timeout")
        self.first_timeout = _first_timeout(config.getoption("gsc_first_timeout"))
        if self.isolation != "none":
            from gather_scatter_conformance.harness.run.isolation import memory_limit

            try:
                memory_limit()  # a bad $GSC_WORKER_MEMORY is a usage error now, not a fault of every case
            except ValueError as exc:
                raise pytest.UsageError(str(exc)) from None
        self.all_variants = config.getoption("gsc_variants") == "all"
        self.devices = _devices(config.getoption("gsc_device"))
        self.all_slow = config.getoption("gsc_slow_variants") == "all"
        # The results given are replaced only when the run ends (harness.run.records.RunFiles): until then records
        # go to <results>.partial, under a lock the first process (pytest-xdist's controller) holds, so that a bad
        # argument, a second run on the same file or a kill loses nothing.
        path = config.getoption("gsc_results")
        resume = config.getoption("gsc_resume")
        self.files = RunFiles(path) if path else None
        self.is_controller = not hasattr(config, "workerinput")
        self.exitstatus: int | None = None
        self.memory: Any = None
        from gather_scatter_conformance.harness.run import shards

        try:
            self.shard = shards.parse(config.getoption("gsc_shard")) if config.getoption("gsc_shard") else None
        except ValueError as exc:
            raise pytest.UsageError(str(exc)) from None
        self.workers = int(getattr(config.option, "numprocesses", None) or 1)  # pytest-xdist's -n, once resolved
        self.done: set[tuple[str, ...]] = set()
        if self.is_controller:
            # pytest says so itself when it collects, but pytest-xdist's controller collects nothing: its workers
            # would find no test (exit 5) after the results were opened.
            where = config.invocation_params.dir
            missing = [a for a in config.args if not (where / a.partition("::")[0]).exists()]
            if missing:
                raise pytest.UsageError(f"file or directory not found: {missing[0]}")
        if self.files and self.is_controller:
            import sys

            try:
                shard = f"{self.shard[0]}/{self.shard[1]}" if self.shard else None
                self.done = self.files.begin(new_manifest(list(sys.argv), self.frameworks, shard), resume)
            except (RunBusy, NotResultsFile) as exc:
                self.files = None  # nothing of it is ours to finish
                raise pytest.UsageError(str(exc)) from None
            _stop_on_sigterm()
            from gather_scatter_conformance.harness.run.machine import PeakSampler

            self.memory = PeakSampler().start()  # the run's memory, for the manifest (harness.run.machine)
        elif self.files and resume:
            try:
                self.done = {r.key for r in read([self.files.partial])}
            except NotResultsFile as exc:
                raise pytest.UsageError(f"--resume: {exc}") from None
        self.writer = ResultsWriter(self.files.partial) if self.files else None
        self.planned: Counter[str] = Counter()  # tests collected per system, for the manifest
        self.corpus: dict[str, str] = {}  # case-file id -> sha256 of its bytes, for the manifest
        self.case_texts: dict[str, str] = {}  # case-file id -> its text: the manifest's snapshot for the report
        self.counts: Counter[tuple[str, str]] = Counter()
        self.executor: Any = None
        self.update_baseline = config.getoption("gsc_update_baseline")
        # A project's own baselines/ (beside its ini file; where --update-baseline writes), else the shipped ones.
        local = config.rootpath / "baselines"
        given = config.getoption("gsc_baseline_dir")
        use_local = local.is_dir() or self.update_baseline
        self.baseline_dir = Path(given) if given else local if use_local else resources.baselines_dir()
        from gather_scatter_conformance.harness.judge import known

        # Likewise a project's own known/ deviations (the xfail reasons), else the shipped ones.
        known.use_directory(config.rootpath / "known" if (config.rootpath / "known").is_dir() else None)
        self.case_tags = {t.strip() for t in config.getoption("gsc_case_tags").split(",") if t.strip()}
        self.rootdir = config.rootpath
        self.baselines: dict[str, dict[str, Any]] = {}
        self.new_labels: dict[str, dict[str, str]] = {}
        self.new_dimensions: dict[str, dict[str, str]] = {}  # key -> probe dimension, for baseline.merged
        self.versions: dict[str, str] = {}
        self.repeats = max(1, int(config.getoption("gsc_repeats")))
        self.unsafe_only = bool(config.getoption("gsc_unsafe_only"))
        self.notes: list[str] = []  # labels a memory-unsafe cell showed that its baseline had not seen
        from gather_scatter_conformance.harness.run import cache

        # The result cache (harness.run.cache): None when off.
        self.cache_dir = None if config.getoption("gsc_no_cache") else cache.directory(
            config.getoption("gsc_cache_dir"))
        # Read once: the session's environment does not change between its items, and reading it per item took a
        # twentieth of a reused record's time.
        self.environment = cache.environment_fingerprint()

    def baseline_label(self, case_nodeid: str, framework: str, variant: str, device: str) -> str | None:
        """The newest label the framework's baseline gives a cell (None where it has none)."""
        from gather_scatter_conformance.harness.judge import baseline

        return baseline.label_at(self.baseline(framework), baseline.item_key(case_nodeid, variant, device), None)

    def suspect(self, case_nodeid: str, framework: str, variant: str, device: str) -> bool:
        """Whether the cell's baseline says it flipped or is memory-unsafe (harness.judge.repeats.suspect)."""
        from gather_scatter_conformance.harness.judge.repeats import suspect

        return suspect(self.baseline_label(case_nodeid, framework, variant, device))

    def baseline(self, framework: str) -> dict[str, Any]:
        if framework not in self.baselines:
            from gather_scatter_conformance.harness.judge import baseline

            self.baselines[framework] = baseline.load(self.baseline_dir, framework)
        return self.baselines[framework]

    def executor_for(self, config: pytest.Config) -> Any:
        if self.executor is None:
            if self.isolation == "none":
                from gather_scatter_conformance.harness.run.runner import InProcess

                self.executor = InProcess()
            else:
                from gather_scatter_conformance.harness.run.isolation import Isolated

                self.executor = Isolated(self.pythons, self.timeout, first_timeout=self.first_timeout)
        return self.executor


def _first_timeout(value: str) -> float | None:
    """``--gsc-first-timeout``: None for auto (learned, harness.run.timeouts), else positive seconds."""
    if value == "auto":
        return None
    try:
        seconds = float(value)
    except ValueError:
        seconds = 0.0
    if not seconds > 0:
        raise pytest.UsageError(f"--first-timeout: {value!r} is neither 'auto' nor a positive number of seconds")
    return seconds


def _not_installed(name: str) -> str | None:
    """Why the framework ``name`` cannot run in this interpreter, with how to install it; None when it can."""
    from gather_scatter_conformance import adapters

    try:
        if adapters.get(name).unavailable():
            return None  # no GPU or OS for it here (TensorRT, DirectML): each case skips with that reason instead
        lacking = adapters.missing(name)
    except Exception as exc:  # a registration that does not load: its module is broken or missing
        return f"{name}'s adapter ({adapters.table()[name]}) cannot be loaded: {type(exc).__name__}: {exc}"
    if not lacking:
        return None
    return (f"{name} is not installed here (no {', '.join(lacking)}): {adapters.install_hint(name)}, or run it in "
            f"another interpreter with --gsc-framework-python {name}=PYTHON")


def _devices(option: str) -> list[str]:
    from gather_scatter_conformance.adapters.base import DEVICES

    wanted = [d.strip() for d in option.replace("all", ",".join(DEVICES)).split(",") if d.strip()]
    bad = [d for d in wanted if d not in DEVICES]
    if bad or not wanted:
        raise pytest.UsageError(f"--gsc-device: unknown {', '.join(bad) or '(none)'}; known: {', '.join(DEVICES)}")
    return list(dict.fromkeys(wanted))


def _pythons(config: pytest.Config) -> dict[str, str]:
    """Interpreters per framework: --gsc-framework-python, else a project venv .venv-<framework> if present."""
    from gather_scatter_conformance import adapters

    out = adapters.venv_pythons(config.rootpath)
    for item in config.getoption("gsc_framework_python"):
        name, sep, python = item.partition("=")
        if not sep or name not in adapters.table():
            raise pytest.UsageError(f"--gsc-framework-python wants NAME=PYTHON with a known NAME, got {item!r}")
        out[name] = python
    return out


# --- ONNX backends and ONNX Runtime's execution providers (adapters/onnx_backend.py, adapters/onnxruntime.py) ---


def _onnx_backends(config: pytest.Config) -> list[str]:
    """Register the adapter of each --onnx-backend (a usage error where one names no backend); their names."""
    if not config.getoption("gsc_onnx_backend"):
        return []
    from gather_scatter_conformance.adapters import onnx_backend

    names = []
    for spec in config.getoption("gsc_onnx_backend"):
        problem = onnx_backend.problem(spec)
        if problem:
            raise pytest.UsageError(problem)
        names.append(onnx_backend.register(spec))
    return names


def _check_ort_providers(config: pytest.Config, frameworks: list[str], pythons: dict[str, str]) -> None:
    """Where onnxruntime runs: --gsc-ort-providers becomes $GSC_ORT_PROVIDERS (the workers inherit it), and a
    requested provider the interpreter that runs onnxruntime lacks is a usage error naming the ones it has."""
    import sys

    if "onnxruntime" not in frameworks:
        return  # nothing of onnxruntime's is imported
    from gather_scatter_conformance.adapters import onnxruntime as ort_adapter

    if config.getoption("gsc_ort_providers"):
        os.environ[ort_adapter.PROVIDERS_ENV] = config.getoption("gsc_ort_providers")
    requested = ort_adapter.requested_providers()
    if not requested:
        return
    try:
        available = ort_adapter.available_providers(pythons.get("onnxruntime", sys.executable))
    except RuntimeError as exc:
        raise pytest.UsageError(str(exc)) from None
    problem = ort_adapter.provider_problem(requested, available)
    if problem:
        raise pytest.UsageError(f"{ort_adapter.PROVIDERS_ENV}={','.join(requested)}: {problem}")


_KEY = pytest.StashKey[_State]()
_GLOBS = pytest.StashKey[list[str]]()


def _state(config: pytest.Config) -> _State:
    """The run's state, made on first use: the first case file collected, or configure in a conformance run."""
    state = config.stash.get(_KEY, None)
    if state is None:
        state = config.stash[_KEY] = _State(config)
    return state


def pytest_configure(config: pytest.Config) -> None:
    config.stash[_GLOBS] = (config.getoption("gsc_case_glob") or config.getini("conformance_case_glob")).split()
    # A run that set an option of ours is a conformance run: resolve it now, so that a bad option is a usage error
    # before collection, and the results file is made fresh before pytest-xdist's workers write to it. Any other
    # run stays free of the harness's imports unless it collects a case file.
    if any(config.getoption(dest) != default for dest, default in _DEFAULTS.items()):
        _state(config)


@pytest.hookimpl(tryfirst=True)
def pytest_keyboard_interrupt(excinfo: Any) -> None:
    """Ctrl-C or a SIGTERM: the run is interrupted, whatever exit status pytest ends up with (see _INTERRUPTED)."""
    _INTERRUPTED.set()


@pytest.hookimpl(tryfirst=True)
def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    # Here and not in unconfigure: a pytest-xdist worker may be torn down right after its session ends.
    _STOPPING.clear()  # tryfirst: before pytest-xdist tears its workers down, a SIGTERM no longer interrupts
    state = session.config.stash.get(_KEY, None)
    if state is not None:
        state.exitstatus = int(exitstatus)
        workeroutput = getattr(session.config, "workeroutput", None)
        if workeroutput is not None:  # a pytest-xdist worker: its plan goes to the controller (pytest_testnodedown)
            workeroutput["gsc_plan"] = {"planned": dict(state.planned), "corpus": state.corpus,
                                        "cases": state.case_texts}
    if state and state.update_baseline and state.new_labels:
        from gather_scatter_conformance.harness.judge import baseline

        for framework, labels in state.new_labels.items():
            baseline.update(state.baseline_dir, framework, state.versions.get(framework), labels,
                            state.new_dimensions.get(framework))


@pytest.hookimpl(optionalhook=True)
def pytest_testnodedown(node: Any, error: Any) -> None:
    """pytest-xdist's controller: a worker's plan (each collects the whole run; the first to end says it)."""
    state = node.config.stash.get(_KEY, None)
    plan = getattr(node, "workeroutput", {}).get("gsc_plan")
    if state is not None and plan and not state.planned:
        state.planned.update(plan["planned"])
        state.corpus.update(plan["corpus"])
        state.case_texts.update(plan["cases"])


def pytest_unconfigure(config: pytest.Config) -> None:
    state = config.stash.get(_KEY, None)
    if state and state.writer:
        state.writer.close()
    if state and state.files and state.is_controller:
        _end_run(state)
    if state and state.executor is not None and hasattr(state.executor, "close"):
        state.executor.close()



@pytest.hookimpl(wrapper=True)
def pytest_collection(session: pytest.Session) -> Any:
    # Collection allocates tens of thousands of long-lived objects (one item per case x framework x variant):
    # the cyclic collector's passes over them while they are being made find nothing to free.
    enabled = gc.isenabled()
    gc.disable()
    try:
        return (yield)
    finally:
        if enabled:
            gc.enable()


# Set while a SIGTERM interrupts the session (_stop_on_sigterm); cleared once the session is ending.
_STOPPING = threading.Event()
# Set once the session was interrupted (a SIGTERM, or Ctrl-C). pytest's own exit status cannot say so for sure: a
# second signal that lands while pytest handles the first (`timeout` forwarding a TERM that `kill` also sent) leaves
# its session's exit status at 0, and the interrupted run was then finished as complete (2026-11-28).
_INTERRUPTED = threading.Event()


def _stop_on_sigterm() -> None:
    """A SIGTERM (a CI job's time limit, `kill`, a container stopping) stops the run as Ctrl-C does: pytest ends the
    session as interrupted, and _end_run keeps the partial file and says how to resume, where the default action
    would end the process with no word. Only where nobody else handles SIGTERM, and only in the main thread."""
    import signal

    def stop(signum: int, frame: Any) -> None:
        # Once the session is ending (its tests ran), the run finishes as it is: an exception raised in
        # pytest-xdist's teardown would only print a traceback. Raised once: a second signal would land in
        # pytest's handling of the first.
        if _STOPPING.is_set() and not _INTERRUPTED.is_set():
            _INTERRUPTED.set()
            raise KeyboardInterrupt(f"stopped by {signal.Signals(signum).name}")

    if threading.current_thread() is threading.main_thread() and signal.getsignal(signal.SIGTERM) == signal.SIG_DFL:
        signal.signal(signal.SIGTERM, stop)
        _STOPPING.set()


def _end_run(state: _State) -> None:
    """The run's results replace those given when it ended (tests passed or failed: pytest's exit 0 or 1);
    otherwise what it recorded stays in the partial file for --resume, and an empty one is removed."""
    import sys

    from gather_scatter_conformance.harness.run.machine import gib
    from gather_scatter_conformance.harness.run.records import SystemCount

    files = state.files
    peak = state.memory.stop() if state.memory is not None else None
    if state.exitstatus in (0, 1) and not _INTERRUPTED.is_set():
        systems = {name: SystemCount(planned=n) for name, n in state.planned.items()}
        files.finish(systems, state.corpus, state.case_texts, workers=state.workers,
                     memory_peak_gib=gib(peak) if peak else None)
        return
    kept = files.abandon()
    if kept:
        print(f"gsc: the run stopped before its end; its {kept} record(s) are in {files.partial} (gsc run --resume "
              f"continues it), and {files.target} is as it was", file=sys.stderr)


def pytest_collection_modifyitems(session: pytest.Session, config: pytest.Config, items: list[pytest.Item]) -> None:
    state = config.stash.get(_KEY, None)
    if state is None:
        return
    if state.shard is not None:
        _keep_shard(config, state, items)
    by_worker(items)


@pytest.hookimpl(optionalhook=True)  # pytest-xdist's hook: no error where it is not installed
def pytest_xdist_make_scheduler(config: pytest.Config, log: Any) -> Any:
    """With --gsc-path-units (gsc run on converter paths only: cli._distribution), pytest-xdist's scope scheduling
    with each path (on each device) as one unit of work (:func:`path_unit`); else None, pytest-xdist's own ``--dist``.

    A path's worker process imports a source, a converter and a target (5-7 s for TensorFlow or torch with
    OpenVINO). Under work stealing a steal splits the path in hand and both workers start it, which a second run,
    whose cells are reused but the memory-unsafe ones, paid for most paths. Scope scheduling gives a worker the next
    unit when it is nearly done with its own, the units with the most items first. (``--dist loadgroup`` with an
    ``xdist_group`` mark would do the same, but pytest-xdist 3.8 groups nothing under pytest 9.2:
    https://github.com/pytest-dev/pytest-xdist/issues/1386.)"""
    if not config.getoption("gsc_path_units", False):
        return None
    from xdist.scheduler import LoadScopeScheduling

    class PathUnits(LoadScopeScheduling):  # type: ignore[misc]
        def _split_scope(self, nodeid: str) -> str:
            return path_unit(nodeid)

    return PathUnits(config, log)


def path_unit(nodeid: str) -> str:
    """The unit of work of a test with ``nodeid`` under --gsc-path-units: for a converter path's case item
    (``file::id[path]``, ``[path:variant]``, ``[path@device]``: CaseItem's name) the path and device, every one of
    its items together; for any other test its own node id."""
    if not nodeid.endswith("]") or "[" not in nodeid:
        return nodeid
    label = nodeid[nodeid.rindex("[") + 1:-1]
    framework = label.split(":", 1)[0].split("@", 1)[0]
    device = label.rpartition("@")[2] if "@" in label else "cpu"
    from gather_scatter_conformance import adapters

    return f"{framework}@{device}" if adapters.is_path(framework) else nodeid


def by_worker(items: list[pytest.Item]) -> None:
    """Order ``items`` (in place) worker by worker: every case item that runs in one framework worker process
    (isolation.Isolated.worker_key: the framework, the environment its variant asks for, the device) together, the
    workers in the order their first item was collected and each one's items in collection order; other items
    first. A session then needs one framework's process at a time, and pytest-xdist's work stealing (gsc run
    --workers) gives each of its workers a contiguous share: the executor keeps a few processes warm, not one per
    framework of the run (Isolated.warm_limit), so a run holds a few frameworks in memory instead of all of them
    (issue #38: the frameworks phase held 17.5 GiB of 24 with every framework warm in both workers)."""
    from gather_scatter_conformance.harness.run.isolation import Isolated

    rank: dict[Any, int] = {}

    def key(pair: tuple[int, pytest.Item]) -> tuple[int, int]:
        index, item = pair
        if not isinstance(item, CaseItem):
            return -1, index
        worker = Isolated.worker_key(item.framework, item.variant, item.device)
        return rank.setdefault(worker, len(rank)), index

    items[:] = [item for _, item in sorted(enumerate(items), key=key)]


def _keep_shard(config: pytest.Config, state: _State, items: list[pytest.Item]) -> None:
    """Keep (in place) the items of this run's shard (``--shard K/N``)."""
    from gather_scatter_conformance.harness.run import shards

    k, n = state.shard
    cells = {i: i.cell for i in items if isinstance(i, CaseItem)}
    where = shards.assign(list(cells.values()), shards.durations(config.getoption("gsc_shard_times")), n)
    # A malformed case file is reported by the first shard only, so that the shards together report it once.
    keep = [i for i in items if (where[cells[i]] == k - 1 if i in cells else k == 1)]
    if len(keep) != len(items):
        config.hook.pytest_deselected(items=[i for i in items if i not in set(keep)])
        items[:] = keep


def pytest_collection_finish(session: pytest.Session) -> None:
    state = session.config.stash.get(_KEY, None)
    if state is not None:
        from gather_scatter_conformance.harness.run.records import system_name

        state.planned.update(system_name(i.framework, i.device) for i in session.items if isinstance(i, CaseItem))
        # A collection runs no case: preparing them (IREE's compile) would import the compiler for nothing.
        if not session.config.getoption("gsc_no_ahead") and not session.config.option.collectonly:
            _ahead(session.items, state)
    if not session.items or not all(isinstance(i, CaseItem | CaseErrorItem) for i in session.items):
        return
    # Hypothesis's pytest plugin imports all of hypothesis in its terminal summary whether or not a test used it
    # (half a second, a third of collecting the suite); a session of case items has no hypothesis test.
    plugin = session.config.pluginmanager.get_plugin("hypothesispytest")
    if plugin is not None:
        session.config.pluginmanager.unregister(plugin)
    # The items live until the session ends: keep later collections (pytest runs two full ones at exit) from
    # walking them again.
    gc.freeze()


def _ahead(items: list[pytest.Item], state: _State) -> None:
    """Let each adapter prepare what this session's cases of it need together (Adapter.ahead: IREE compiles many
    cases in one module), where the adapter runs in this interpreter (a release's own interpreter has its own
    compiler) and on the CPU. Both pytest-xdist workers do it; the adapter shares the work between them. An
    optimisation: a failure here leaves each case to prepare itself, as without it."""
    by_framework: dict[str, list[CaseItem]] = {}
    for item in items:
        if isinstance(item, CaseItem) and item.device == "cpu" and item.cell not in state.done:
            by_framework.setdefault(item.framework, []).append(item)
    if not by_framework:  # a session of other tests imports nothing here (tests/test_plugin_manners.py)
        return
    import sys
    import warnings

    from gather_scatter_conformance import adapters
    from gather_scatter_conformance.adapters.base import Adapter
    from gather_scatter_conformance.harness.run.runner import case_data

    for name, its in by_framework.items():
        adapter = adapters.get(name)
        if type(adapter).ahead is Adapter.ahead or state.pythons.get(name, sys.executable) != sys.executable \
                or adapter.unavailable() or not adapters.is_available(name):
            continue
        try:
            adapter.ahead([(case_data(i.case), i.variant) for i in its])
        except Exception as exc:  # ahead is an optimisation; the cases still run one by one
            warnings.warn(f"{name}: preparing cases ahead failed, each case prepares itself: "
                          f"{type(exc).__name__}: {exc}", stacklevel=1)


def is_case_file(path: Path) -> bool:
    """True when ``path``'s text has a case file's top-level keys (``op:`` and ``cases:``): cheap, no YAML parse.
    Only the first 4 MiB are read (the size a case file may have unless raised: a larger one is read as far)."""
    try:
        with path.open("rb") as fh:
            head = fh.read(_HEAD)
    except OSError:
        return False
    return all(p.search(head) for p in _CASE_FILE)


_HEAD = 4 * 2**20
# Real path -> the path a case file was first collected under: a file reached by two paths is collected once.
_COLLECTED = pytest.StashKey[dict[str, Path]]()


def is_symlink_loop(path: Path) -> bool:
    """True when ``path`` is a symlink to a directory above it (or to one that leads back), as ``find -L`` sees
    loops: its real path is the real path of one of its own parents."""
    if not path.is_symlink():
        return False
    real = os.path.realpath(path)
    return any(os.path.realpath(parent) == real for parent in path.absolute().parents)


def pytest_ignore_collect(collection_path: Path, config: pytest.Config) -> bool | None:
    # A symlink loop is not followed: pytest followed one to the kernel's limit (a case file collected 41 times),
    # and two loops made the walk exponential (`gsc run` hung with no output).
    return True if is_symlink_loop(collection_path) else None


def _first_collection(config: pytest.Config, path: Path) -> bool:
    """False when the file at ``path`` was already collected under another path (a symlink, a linked folder)."""
    first = config.stash.setdefault(_COLLECTED, {}).setdefault(os.path.realpath(path), path)
    return first == path


def case_file_id(path: Path, rootdir: Path) -> str:
    """The file part of case ids, with ``/``: ``cases/...`` for a file of the shipped corpus (the ids its baselines
    and known files use, from any directory), else ``path`` relative to ``rootdir`` (pytest's rootdir), so that one
    project's runs name its cases alike from wherever they are started."""
    from gather_scatter_conformance import resources

    return resources.corpus_id(path) or Path(os.path.relpath(path, rootdir)).as_posix()


def pytest_collect_file(file_path: Path, parent: pytest.Collector) -> pytest.Collector | None:
    # A YAML file met while walking a directory is a case file only with a case file's keys (a CI config is not);
    # one named on the command line is read as a case file whatever it holds, so that a missing `op:` is an error
    # naming the file, line and field, not pytest's bare "not found".
    globs = parent.config.stash[_GLOBS]
    if any(fnmatch.fnmatch(file_path.name, g) for g in globs) and (
            is_case_file(file_path) or parent.session.isinitpath(file_path)) and _first_collection(
            parent.config, file_path):
        _state(parent.config)
        return CaseFile.from_parent(parent, path=file_path)
    return None


_FOCUS_TAGS = {"seed", "probe", "regression"}


class CaseFile(pytest.File):
    """One YAML case file: yields an item per case × framework × variant, or an error item per bad case."""

    def collect(self):  # type: ignore[override]
        import hashlib

        from gather_scatter_conformance import adapters
        from gather_scatter_conformance.adapters.base import NOT_MAPPED
        from gather_scatter_conformance.harness.cases.errors import CaseFileError
        from gather_scatter_conformance.harness.cases.load import load_file
        from gather_scatter_conformance.vocab.dimensions import DTYPE_COPY_TAG, thread_sensitive
        from gather_scatter_conformance.vocab.variants import threads_of

        state = _state(self.config)
        file_id = case_file_id(self.path, state.rootdir)
        with self.path.open("rb") as fh:
            content = fh.read(_HEAD + 1)  # no more than a case file may hold: a larger one is a case error below
        state.corpus[file_id] = hashlib.sha256(content).hexdigest()
        if len(content) <= _HEAD:
            state.case_texts[file_id] = content.decode("utf-8", errors="replace")
        for entry in load_file(self.path, file_id):
            if isinstance(entry, CaseFileError):
                name = f"{entry.field or 'file'}@line{entry.line or 0}"
                yield CaseErrorItem.from_parent(self, name=name, error=entry)
                continue
            if state.case_tags and not state.case_tags & set(entry.tags):
                continue
            focus = (entry.dimension is not None or bool(_FOCUS_TAGS & set(entry.tags))) \
                and DTYPE_COPY_TAG not in entry.tags
            for framework in state.frameworks:
                adapter = adapters.get(framework)
                # An operator the adapter does not map still gets one item (variant ""): the worker records it as
                # unsupported, "not mapped", so the gap shows in the report instead of silently missing.
                variants = adapter.variants(entry.op) or [NOT_MAPPED]
                # A GPU-only system (TensorRT, DirectML) runs on its device whatever --gsc-device says: where that
                # device is absent, its tests are skipped with the reason instead of silently missing.
                devices = [d for d in state.devices if d in adapter.devices] or (
                    [] if "cpu" in adapter.devices else list(adapter.devices))
                for device in devices:
                    at = "" if device == "cpu" else f"@{device}"
                    for i, variant in enumerate(variants if state.all_variants else variants[:1]):
                        if (i or adapter.focus_only) and adapter.is_slow(variant) and not (focus or state.all_slow):
                            continue
                        if state.unsafe_only and not state.suspect(entry.nodeid, framework, variant, device):
                            continue
                        if threads_of(variant) and not thread_sensitive(entry.dimension):
                            continue
                        label = (framework if i == 0 else f"{framework}:{variant}") + at  # as path_unit reads it
                        yield CaseItem.from_parent(
                            self, name=f"{entry.id}[{label}]", case=entry, framework=framework, variant=variant,
                            device=device,
                        )


class Deviation(AssertionError):
    """A framework's result differs from canonical semantics; the message is the full repro."""


class HarnessFault(pytest.fail.Exception):  # type: ignore[name-defined,misc]
    """The harness or the adapter failed on a case, not the framework: raised while the item sets up, so pytest
    counts the test as an error, not a failure. Its message (shown without pytest's own traceback) names the phase,
    the exception and the traceback that matters, the worker's."""


CASE_FILE_ERROR = "case file error: "  # how a malformed case's report begins its location (gsc run counts them)


class CaseErrorItem(pytest.Item):
    """A malformed case or file: fails with one line naming file, line and field — no traceback."""

    def __init__(self, *, error: Any, **kwargs: Any) -> None:  # a CaseFileError
        super().__init__(**kwargs)
        self.error = error

    def runtest(self) -> None:
        raise self.error

    def repr_failure(self, excinfo: pytest.ExceptionInfo[BaseException], style: Any = None) -> str:
        from gather_scatter_conformance.harness.cases.errors import CaseFileError

        return str(excinfo.value) if isinstance(excinfo.value, CaseFileError) else super().repr_failure(excinfo)

    def reportinfo(self) -> tuple[Path, int | None, str]:
        return self.path, (self.error.line or 1) - 1, f"{CASE_FILE_ERROR}{self.error.file}"


class CaseItem(pytest.Item):
    """One case on one framework variant."""

    def __init__(self, *, case: Case, framework: str, variant: str, device: str = "cpu", **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.case = case
        self.framework = framework
        self.variant = variant
        self.device = device
        self.record: Record | None = None
        self.cache_key = ""  # harness.run.cache.key, made on first use
        self.hung_before: str | None = None  # when its result-cache entry is a hang: that hang's time

    @property
    def cell(self) -> tuple[str, str, str, str]:
        """What its record's key will be (Record.key): case, framework, variant, device."""
        return (self.case.nodeid, self.framework, self.variant, self.device)

    def setup(self) -> None:
        """Run the case and record it; the test (runtest) then judges the record. Running it here makes a harness
        fault fail the setup: pytest reports an error, which a deviation (a failed test) never is."""
        from gather_scatter_conformance import adapters
        from gather_scatter_conformance.harness.run.runner import Skipped, execute

        state = self.config.stash[_KEY]
        if self.cell in state.done:
            pytest.skip("already recorded (--resume)")
        reason = adapters.get(self.framework).unavailable()
        if reason:  # no device or platform for the framework here: not a result, so nothing is recorded
            pytest.skip(reason)
        record = self._from_cache(state)
        if record is None:
            suspect = state.repeats > 1 and state.suspect(self.case.nodeid, self.framework, self.variant, self.device)
            record = execute(self.case, self.framework, self.variant, state.executor_for(self.config), self.device,
                             repeats=state.repeats, suspect=suspect, hung_before=self._hang_witness(state))
            if isinstance(record, Skipped):
                pytest.skip(f"{self.device}: {record.reason}")
            self._to_cache(state, record)
        if record.label:
            # The baseline label in force for this cell on this release travels with the record: the report (its
            # repro scripts accept a baseline's alternatives) then needs no baselines directory of its own.
            record.baseline = self._baseline_label(state, record)
        self.record = record
        if state.writer:
            state.writer.write(record)
        state.counts[(self.framework, record.outcome if record.verdict != "deviates" else "deviates")] += 1
        if record.outcome == "harness-error":
            phase, trace = (record.fault.phase, record.fault.traceback) if record.fault else ("", "")
            raise HarnessFault(f"{self.case.nodeid} [{self.framework}:{self.variant}]: harness fault, not a result "
                               f"({phase}): {record.error_type}: {record.error_message}"
                               f"\n{trace}".rstrip(), pytrace=False)

    def _cache_key(self, state: _State) -> str | None:
        """This item's result-cache key (harness.run.cache.key), or None where the cache is off."""
        import sys

        from gather_scatter_conformance.harness.run import cache

        if state.cache_dir is None:
            return None
        if not self.cache_key:
            python = state.pythons.get(self.framework, sys.executable) if state.isolation != "none" else sys.executable
            self.cache_key = cache.key(self.case, self.framework, self.variant, self.device, python,
                                       state.environment)
        return self.cache_key

    def _hang_witness(self, state: _State) -> HangWitness:
        """What says this cell hung before, so that a first try that hangs needs no second try
        (harness.run.isolation.HUNG_BEFORE): its result-cache entry, else its baseline, where the label it gives
        the cell on the release the worker runs holds a hang (TVM's and tinygrad's hangs cost a worker two case
        timeouts a run otherwise: issue #38)."""
        from gather_scatter_conformance.harness.judge import baseline
        from gather_scatter_conformance.harness.judge.repeats import hung_in

        if self.hung_before:
            return f"it hung on both tries at {self.hung_before} too (its result-cache entry)"
        base = state.baseline(self.framework)
        key = baseline.item_key(self.case.nodeid, self.variant, self.device)

        # Asked only after a first try hung, once the worker has said its release: baseline.label_at reads the
        # label in force there.
        def witness(version: str) -> str | None:
            label = baseline.label_at(base, key, version or None)
            return f"its baseline gives the cell {label} on {version or 'this release'}" if hung_in(label) else None

        return witness

    def _baseline_label(self, state: _State, record: Record) -> str | None:
        from gather_scatter_conformance.harness.judge import baseline

        key = baseline.item_key(self.case.nodeid, self.variant, record.device)
        return baseline.label_at(state.baseline(self.framework), key, record.framework_version)

    def _from_cache(self, state: _State) -> Record | None:
        """The record the result cache holds for this item, marked cached, where it may be reused; else None (and
        where the entry is a hang, ``hung_before`` says when: harness.run.cache.hung_before)."""
        from gather_scatter_conformance.harness.run import cache

        key = self._cache_key(state)
        stored, stored_timeout = cache.read(state.cache_dir, key) if key else (None, None)
        self.hung_before = cache.hung_before(stored, stored_timeout, state.timeout)
        if stored is None or not cache.reusable(stored, self._baseline_label(state, stored)):
            return None
        executor = state.executor_for(self.config)
        if hasattr(executor, "first_try"):  # what the call took then: the first-try limit of the cases still run
            executor.first_try.seen((self.framework, self.variant),
                                    {"outcome": stored.outcome, "duration_s": stored.duration_s})
        return cache.reused(stored)

    def _to_cache(self, state: _State, record: Record) -> None:
        """Keep a measured record in the result cache where it may be reused, or confirm a hang (cache.keeps)."""
        from gather_scatter_conformance.harness.run import cache

        key = self._cache_key(state)
        if key and cache.keeps(record, self._baseline_label(state, record)):
            cache.put(state.cache_dir, key, record, state.timeout)

    def runtest(self) -> None:
        """Judge the record by the project's expectations (harness.judge.outcome): a known deviation is an expected
        failure, a probe's label must be its baseline's, a converter path must keep its source's behaviour. With
        --update-baseline a label is recorded as the new baseline instead of checked."""
        from gather_scatter_conformance.harness.judge import baseline
        from gather_scatter_conformance.harness.judge.outcome import outcome
        from gather_scatter_conformance.harness.run.repro import failure_message, preservation_message

        state = self.config.stash[_KEY]
        record = self.record
        assert record is not None, "setup() ran the case"
        key = baseline.item_key(self.case.nodeid, self.variant, record.device)
        if state.update_baseline and self.variant and (record.label is not None or record.conversion):
            self._update_baseline(state, record, key)
            return
        result = outcome(record, state.baseline(self.framework), key)
        if result.note:
            state.notes.append(result.note)
            self.user_properties.append(("note", result.note))
        if result.kind == "skip":
            pytest.skip(result.reason)
        if result.kind == "xfail":
            pytest.xfail(result.reason)
        if result.kind == "fail":
            describe = preservation_message if result.message == "preservation" else failure_message
            text = describe(self.case, record)
            raise Deviation(f"{result.reason}\n{text}" if result.reason else text)

    def _update_baseline(self, state: _State, record: Record, key: str) -> None:
        """--update-baseline: the record's label (a probe's behaviour label, a converter path's preservation)
        becomes its baseline's."""
        from gather_scatter_conformance.harness.judge import baseline

        state.new_labels.setdefault(self.framework, {})[key] = baseline.record_label(record)
        if record.dimension:
            state.new_dimensions.setdefault(self.framework, {})[key] = record.dimension
        pin = baseline.pinned_version(record)  # a device's labels join without moving the pin
        if pin is not None:
            state.versions[self.framework] = pin

    def repr_failure(self, excinfo: pytest.ExceptionInfo[BaseException], style: Any = None) -> str:
        from gather_scatter_conformance.harness.cases.errors import CaseFileError

        # A known deviation's xfail is its reason, as pytest's summary shows it: pytest's own rendering walked the
        # whole traceback (about 20 frames of pytest and pluggy, the item being no Python function to cut it at)
        # and parsed each frame's source file, 0.28 s an xfail (11 s of a 290 s torch run; issue #38).
        if isinstance(excinfo.value, Deviation | CaseFileError | pytest.xfail.Exception):
            return str(excinfo.value)
        return super().repr_failure(excinfo)

    def reportinfo(self) -> tuple[Path, int | None, str]:
        at = "" if self.device == "cpu" else f"@{self.device}"
        return self.path, self.case.line - 1, f"{self.case.nodeid} [{self.framework}:{self.variant}{at}]"


# Set by gsc run's console (harness.console), which prints its own summary table from the results file.
CONSOLE = pytest.StashKey[bool]()


def pytest_terminal_summary(terminalreporter: Any, exitstatus: int, config: pytest.Config) -> None:
    state = config.stash.get(_KEY, None)
    if not state or not state.counts:
        return
    tr = terminalreporter
    if not config.stash.get(CONSOLE, False):
        tr.section("conformance summary")
        kinds = ("ok", "error", "deviates", "unsupported", "crash", "timeout", "harness-error")
        tr.write_line(f"{'framework':<16}" + "".join(f"{k:>14}" for k in kinds))
        for fw in sorted({f for f, _ in state.counts}):
            tr.write_line(f"{fw:<16}" + "".join(f"{state.counts[(fw, k)]:>14}" for k in kinds))
        tr.write_line("(ok/error: conforming results by outcome; deviates: differs from canonical ONNX semantics; "
                      "harness-error: the harness failed, not the framework: no result)")
    if state.notes:  # pytest-xdist workers keep their own notes: in a -n run each worker's show in its log only
        tr.section("memory-unsafe cells with a label their baseline had not seen (notes, not failures)")
        for note in state.notes:
            tr.write_line(note)
