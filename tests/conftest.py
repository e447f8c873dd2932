"""The suite's two lanes (docs/development.md) and its recorded times.

`make test` runs every test, the files that took longest in the recorded run first (tests/times.json), so that the
two workers finish together; ``--record-times PATH`` writes this run's seconds per file there. `make check`
(``--no-frameworks``) runs the tests not marked ``framework`` with every framework's modules refused, so a test that
needs one fails or skips there with its name instead of making the lane slow.
"""

from __future__ import annotations

import importlib.abc
import importlib.util
import json
import os
import shutil
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
from _installed import NO_FRAMEWORKS_ENV

from gather_scatter_conformance.harness.cli import AUTOLOAD_OFF, RUN_PLUGINS

# The suite checks what runs measure: a record reused from the result cache (harness.run.cache) of an earlier
# session, or of another test's fake adapter, would hide that. The result cache's own tests name their directory.
os.environ.setdefault("GSC_RESULT_CACHE", "off")

pytest_plugins = ["pytester"]

# Where the refusal is installed in subprocesses too (their interpreters read sitecustomize at start): a test that
# runs `gsc run` or a worker process is held to the lane as the test itself is.
_REFUSING_SITE = Path(__file__).parent / "lanes"
# Seconds per test file in a full `make test` (benchmarks/test_times.py reads it against the 25-minute budget).
TIMES = Path(__file__).parent / "times.json"
# A pytest-xdist worker's memory with its framework processes (`-n auto`, below), on the large side: make test's two
# workers held 3.6 and 5.2 GiB resident beside their framework workers (2026-11-29); make check's load no
# framework at all.
TEST_WORKER_GIB = 6.0
CHECK_WORKER_GIB = 1.0


# A pytest that a test starts (pytester, `python -m pytest`, a `gsc run`: each test's environment) loads the
# harness's plugin and pytest-xdist's only, as `gsc run` does (docs/running.md): the frameworks' dependencies
# install six more (playwright, anyio, hypothesis, jaxtyping, hydra, kgb), 3 s of each start here. A test of what a
# user's pytest loads by entry point is marked `installed_plugins`; a test that builds an environment without
# PYTEST_* variables (test_installed_wheel, test_plugin_manners) gets that anyway.
STARTED_PYTEST_ENV = {AUTOLOAD_OFF: "1", "PYTEST_PLUGINS": ",".join(RUN_PLUGINS)}


@pytest.fixture(autouse=True)
def _started_pytests_load_the_harness_plugins(request: pytest.FixtureRequest,
                                              monkeypatch: pytest.MonkeyPatch) -> None:
    if request.node.get_closest_marker("installed_plugins") is None:
        for key, value in STARTED_PYTEST_ENV.items():
            monkeypatch.setenv(key, value)


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption("--no-frameworks", action="store_true",
                     help="the developer lane (make check): deselect tests marked framework and refuse every "
                          "framework's modules, so that a test importing one fails with its name")
    parser.addoption("--record-times", metavar="PATH",
                     help="write this run's seconds per test file (setup, call and teardown) to PATH as JSON")


# The suite's own temporary folder, one per pytest process (each xdist worker's inside its controller's), removed when
# the process ends: tests run frameworks in their own processes, where TensorFlow's autograph writes a
# ``__autograph_generated_file*.py`` per converted function and removes it in an exit handler that a forked child
# (``os._exit``) never runs, and tests kill runs on purpose, whose workers' ``gsc-workers-*`` folders stay. Both were
# left in /tmp (22 autograph files and 6 folders a `make test`); the processes a test starts inherit the folder.
_TMP = pytest.StashKey[str]()


def _own_temporary_folder(config: pytest.Config) -> None:
    folder = tempfile.mkdtemp(prefix="gsc-tests-")
    config.stash[_TMP] = folder
    os.environ["TMPDIR"] = tempfile.tempdir = folder


def pytest_unconfigure(config: pytest.Config) -> None:
    folder = config.stash.get(_TMP, None)
    if folder is not None:
        shutil.rmtree(folder, ignore_errors=True)


def pytest_configure(config: pytest.Config) -> None:
    _own_temporary_folder(config)
    if config.getoption("--record-times") and not hasattr(config, "workerinput"):  # xdist's controller records
        config.pluginmanager.register(_TimeRecorder(Path(config.getoption("--record-times"))), "gsc-test-times")
    if not config.getoption("--no-frameworks"):
        sys.meta_path.insert(0, _PaddleBeforeTensorFlow())
        return
    sys.path.insert(0, str(_REFUSING_SITE))
    from refuse_frameworks import install, refused_modules

    modules = refused_modules()
    os.environ[NO_FRAMEWORKS_ENV] = ",".join(modules)
    os.environ["PYTHONPATH"] = os.pathsep.join(filter(None, (str(_REFUSING_SITE), os.environ.get("PYTHONPATH"))))
    install(modules)


class _PaddleBeforeTensorFlow(importlib.abc.MetaPathFinder):
    """Imports paddle (as its adapter does) just before the first import of tensorflow in a test process. Importing
    paddle 3.3.1 into a process that has imported tensorflow 2.21 is a segfault in libpaddle's load (measured:
    ``python -c "import tensorflow, paddle"``; the other order works), and one xdist worker runs the tests of many
    frameworks: four workers were lost in one run. A harness run keeps paddle in a worker of its own.

    Only an import does it, not a lookup (``importlib.util.find_spec("tensorflow")``, as ``adapters.is_available``
    asks while the suite is collected): the spec found is tensorflow's own, with a loader that imports paddle when
    tensorflow's module is created."""

    def find_spec(self, name: str, path: Any = None, target: Any = None) -> Any:
        if name != "tensorflow":
            return None
        spec = importlib.machinery.PathFinder.find_spec(name, path)
        if spec is not None and spec.loader is not None:
            spec.loader = _PaddleFirst(spec.loader, self)
        return spec


class _PaddleFirst(importlib.abc.Loader):
    """tensorflow's own loader, which imports paddle first (see _PaddleBeforeTensorFlow)."""

    def __init__(self, loader: Any, finder: _PaddleBeforeTensorFlow) -> None:
        self.loader, self.finder = loader, finder

    def create_module(self, spec: Any) -> Any:
        if self.finder in sys.meta_path:
            sys.meta_path.remove(self.finder)
        if "paddle" not in sys.modules and importlib.util.find_spec("paddle") is not None:
            from gather_scatter_conformance.adapters import paddle as paddle_adapter

            threads = {k: os.environ.get(k) for k in ("OMP_NUM_THREADS", "MKL_NUM_THREADS")}
            paddle_adapter._paddle()
            for key, value in threads.items():  # the adapter's thread settings are for paddle's process, not ours
                if value is None:
                    os.environ.pop(key, None)
                else:
                    os.environ[key] = value
        return self.loader.create_module(spec)

    def exec_module(self, module: Any) -> None:
        self.loader.exec_module(module)

    def __getattr__(self, name: str) -> Any:  # the rest of the loader's interface (resources, source) is its own
        return getattr(self.loader, name)


def pytest_xdist_auto_num_workers(config: pytest.Config) -> int | None:
    """``-n auto`` (make test, make check): a worker a core, as many as the available memory holds at
    TEST_WORKER_GIB a worker (CHECK_WORKER_GIB in the developer lane), as `gsc run --workers auto` chooses;
    PYTEST_XDIST_AUTO_NUM_WORKERS, where set, decides (xdist's own rule)."""
    if os.environ.get("PYTEST_XDIST_AUTO_NUM_WORKERS"):
        return None
    from gather_scatter_conformance.harness.run.machine import available_gib, choose_workers, cores

    per = CHECK_WORKER_GIB if config.getoption("--no-frameworks") else TEST_WORKER_GIB
    return choose_workers(cores(), available_gib(), per).workers


def recorded_times(path: Path = TIMES) -> dict[str, float]:
    """Seconds per test file (its path from the repository root) as last recorded; empty when none is."""
    try:
        return {str(k): float(v) for k, v in json.loads(path.read_text())["files"].items()}
    except (OSError, ValueError, KeyError, TypeError, AttributeError):
        return {}


def longest_first(items: list[pytest.Item], times: dict[str, float]) -> None:
    """Sort ``items`` in place by their file's recorded seconds, longest first; a file not recorded counts as the
    longest (it is unknown), and the sort is stable, so each file's tests keep their order."""
    if times:
        unknown = max(times.values()) + 1
        items.sort(key=lambda item: -times.get(item.nodeid.partition("::")[0], unknown))


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    # Longest file first, each file's tests kept together and in order (module fixtures are made once): xdist hands
    # tests out in this order, so the long ones start at once and the short ones fill in at the end. Every worker
    # sorts the same collection the same way, as xdist requires.
    longest_first(items, recorded_times())
    if not config.getoption("--no-frameworks"):
        return
    kept = [item for item in items if item.get_closest_marker("framework") is None]
    deselected = [item for item in items if item.get_closest_marker("framework") is not None]
    if deselected:
        config.hook.pytest_deselected(items=deselected)
        items[:] = kept


class _TimeRecorder:
    """Adds up each test file's phases as their reports reach the controller; writes them when the session ends."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.files: Counter[str] = Counter()
        self.start = time.monotonic()

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        self.files[report.nodeid.partition("::")[0]] += report.duration

    def pytest_sessionfinish(self, session: pytest.Session) -> None:
        workers = getattr(session.config.option, "numprocesses", None) or 1
        data = {"measured": time.strftime("%Y-%m-%dT%H:%M:%S%z"),
                "args": " ".join(session.config.invocation_params.args),
                "wall_s": round(time.monotonic() - self.start, 1), "workers": workers,
                "tests": session.testscollected, "exit": int(session.exitstatus),
                "files": {f: round(s, 2) for f, s in sorted(self.files.items(), key=lambda kv: -kv[1])}}
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self.path.write_text(json.dumps(data, indent=1) + "\n")
