"""The suite's lanes (tests/conftest.py, docs/development.md): `make check` refuses every framework, in the test
process and in the processes it starts, and runs none of the tests marked `framework`; `make test` runs the files
longest first and records each file's seconds."""

from __future__ import annotations

import json
import os
import re
import shlex
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from types import SimpleNamespace

import pytest
from conftest import NO_FRAMEWORKS_ENV, longest_first, pytest_xdist_auto_num_workers, recorded_times

from gather_scatter_conformance import adapters

ROOT = Path(__file__).resolve().parents[1]
LANES = ROOT / "tests" / "lanes"


def test_the_refused_modules_are_the_frameworks_not_the_harnesses_own() -> None:
    sys.path.insert(0, str(LANES))
    try:
        from refuse_frameworks import refused_modules
    finally:
        sys.path.remove(str(LANES))
    refused = refused_modules()
    assert {"torch", "tensorflow", "jax", "openvino", "onnxruntime", "tvm", "iree", "executorch"} <= set(refused)
    assert "numpy" not in refused and "onnx" not in refused
    assert set(refused) <= set(adapters.framework_modules())


def test_a_process_the_lane_starts_cannot_import_a_framework_and_is_told_why() -> None:
    env = {**os.environ, NO_FRAMEWORKS_ENV: "torch,tensorflow", "PYTHONPATH": str(LANES)}
    code = ("import importlib.util, numpy\n"
            "try:\n    import torch.nn\nexcept ModuleNotFoundError as exc:\n    print('refused:', exc)\n"
            "import json; print('json fine')")
    done = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert "refused: `make check` runs no framework, and this imports torch" in done.stdout
    assert "@pytest.mark.framework" in done.stdout and "json fine" in done.stdout


@pytest.mark.slow
def test_the_lane_collects_no_framework_test_and_make_test_collects_them() -> None:
    files = ["tests/test_outcome.py", "tests/test_adapter_torch.py"]
    lane = subprocess.run([sys.executable, "-m", "pytest", *files, "--no-frameworks", "--co", "-q",
                           "-p", "no:cacheprovider"], cwd=ROOT, capture_output=True, text=True, timeout=300)
    full = subprocess.run([sys.executable, "-m", "pytest", *files, "--co", "-q", "-p", "no:cacheprovider"],
                          cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert lane.returncode == 0 and full.returncode == 0, lane.stdout + full.stdout
    assert "tests/test_outcome.py::" in lane.stdout and "tests/test_adapter_torch.py::" not in lane.stdout
    assert "tests/test_adapter_torch.py::" in full.stdout or "torch" not in adapters.table()


# A plugin that writes, once the suite is collected, which modules the collecting process has imported.
_SEEN = """
import json, os, sys

def pytest_collection_finish(session):
    with open(os.environ["GSC_TEST_SEEN"], "w") as out:
        json.dump(sorted(sys.modules), out)
"""


@pytest.mark.framework
@pytest.mark.slow
def test_collecting_the_suite_imports_no_framework_but_torch(tmp_path: Path) -> None:
    """Every xdist worker collects every module (tests/_installed.py): a framework imported at collection is paid
    by each. Allowed: torch (test_adapter_torch builds its parameters from torch's dtypes), onnx (the case builders'
    language, which the lane allows too) and iree, an empty namespace package that looking up iree.compiler
    imports."""
    (tmp_path / "seen_modules.py").write_text(_SEEN)
    env = {**os.environ, "GSC_TEST_SEEN": str(tmp_path / "seen.json"),
           "PYTHONPATH": os.pathsep.join(filter(None, (str(tmp_path), os.environ.get("PYTHONPATH"))))}
    proc = subprocess.run([sys.executable, "-m", "pytest", "tests", "--co", "-q", "-p", "seen_modules", "-p",
                           "no:cacheprovider"], cwd=ROOT, env=env, capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-2000:]
    imported = set(json.loads((tmp_path / "seen.json").read_text()))
    assert imported & set(adapters.framework_modules()) <= {"torch", "onnx", "iree"}


@pytest.mark.framework
def test_paddle_comes_before_tensorflow_on_an_import_not_on_a_lookup() -> None:
    if not all(adapters.is_available(n) for n in ("paddle", "tensorflow")):
        pytest.skip("needs paddle and tensorflow")
    code = ("import importlib.util, sys\n"
            "import conftest\n"
            "sys.meta_path.insert(0, conftest._PaddleBeforeTensorFlow())\n"
            "found = importlib.util.find_spec('tensorflow') is not None\n"
            "looked = 'paddle' in sys.modules\n"
            "import tensorflow\n"
            "print(found, looked, 'paddle' in sys.modules, tensorflow.constant([2]).numpy().tolist())\n")
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, (str(ROOT / "tests"),
                                                                     os.environ.get("PYTHONPATH"))))}
    proc = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=300)
    assert proc.stdout.split()[-4:] == ["True", "False", "True", "[2]"], proc.stdout + proc.stderr[-2000:]


@dataclass
class _Item:
    nodeid: str


def test_files_run_longest_first_each_files_tests_in_order_and_an_unknown_file_first() -> None:
    items = [_Item(n) for n in ("tests/a.py::x", "tests/a.py::y", "tests/b.py::x", "tests/new.py::x",
                                "tests/c.py::x", "tests/b.py::y")]
    longest_first(items, {"tests/a.py": 1.0, "tests/b.py": 30.0, "tests/c.py": 5.0})  # type: ignore[arg-type]
    assert [i.nodeid for i in items] == ["tests/new.py::x", "tests/b.py::x", "tests/b.py::y", "tests/c.py::x",
                                         "tests/a.py::x", "tests/a.py::y"]


def test_the_committed_times_name_only_files_that_exist() -> None:
    times = recorded_times()
    assert times, "tests/times.json is missing or unreadable: copy build/test-times.json of a full make test there"
    assert all((ROOT / f).is_file() for f in times), [f for f in times if not (ROOT / f).is_file()]


@pytest.mark.slow
def test_a_run_records_each_files_seconds(tmp_path: Path) -> None:
    out = tmp_path / "times.json"
    done = subprocess.run([sys.executable, "-m", "pytest", "tests/test_outcome.py", "tests/test_variants.py", "-q",
                           "-p", "no:cacheprovider", "--record-times", str(out)], cwd=ROOT, capture_output=True,
                          text=True, timeout=300)
    assert done.returncode == 0, done.stdout[-2000:]
    data = json.loads(out.read_text())
    assert set(data["files"]) == {"tests/test_outcome.py", "tests/test_variants.py"}
    assert data["exit"] == 0 and data["tests"] > 10 and data["wall_s"] >= max(data["files"].values()) > 0


def _make_test_xdist_args() -> list[str]:
    """The pytest-xdist options `make test` runs the suite with, read from the Makefile."""
    recipe = re.search(r"-m pytest tests (.*?) --record-times", (ROOT / "Makefile").read_text())
    assert recipe, "make test's pytest line is not where this test reads it"
    return shlex.split(recipe.group(1))


MODULE_WITH_A_COSTLY_FIXTURE = """
import pathlib

import pytest


@pytest.fixture(scope="module")
def venv():
    with open(pathlib.Path(__file__).with_name("made.log"), "a") as fh:
        fh.write(__name__ + "\\n")


@pytest.mark.parametrize("i", range(8))
def test_uses_it(venv, i):
    pass
"""


@pytest.mark.slow
def test_make_test_makes_a_module_fixture_once_not_once_a_worker(pytester: pytest.Pytester) -> None:
    # A venv with the wheel, a browser, a built site: made once per file only if its tests share a worker. With
    # pytest 9.2, --dist loadgroup and xdist_group marks group nothing (pytest-dev/pytest-xdist#1386).
    args = [a if a != "auto" else "2" for a in _make_test_xdist_args()]
    for name in ("test_one", "test_two"):
        pytester.makepyfile(**{name: MODULE_WITH_A_COSTLY_FIXTURE})
    result = pytester.runpytest_subprocess(*args, "-p", "no:cacheprovider", "-p", "no:randomly")
    result.assert_outcomes(passed=16)
    assert sorted((pytester.path / "made.log").read_text().split()) == ["test_one", "test_two"]


def test_auto_workers_are_the_cores_the_available_memory_holds(monkeypatch: pytest.MonkeyPatch) -> None:
    from gather_scatter_conformance.harness.run import machine

    monkeypatch.delenv("PYTEST_XDIST_AUTO_NUM_WORKERS", raising=False)
    monkeypatch.setattr(machine, "cores", lambda: 16)
    monkeypatch.setattr(machine, "available_gib", lambda: 30.0)
    full = SimpleNamespace(getoption=lambda name: False)
    lane = SimpleNamespace(getoption=lambda name: name == "--no-frameworks")
    assert pytest_xdist_auto_num_workers(full) == 4  # 30 GiB * 0.8 / 6 GiB a worker: bound by memory
    assert pytest_xdist_auto_num_workers(lane) == 16  # no framework: bound by the cores
    monkeypatch.setenv("PYTEST_XDIST_AUTO_NUM_WORKERS", "3")
    assert pytest_xdist_auto_num_workers(full) is None  # xdist's own rule reads the variable
