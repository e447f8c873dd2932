"""`gsc run` runs the shipped corpus by default, from any directory and with no config file of ours, and only the
given case paths when there are some; `gsc validate` checks the shipped corpus by default."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from _cases import records_of

from gather_scatter_conformance import resources
from gather_scatter_conformance.harness.cases.errors import CaseFileError
from gather_scatter_conformance.harness.cases.load import load_file

ROOT = Path(__file__).resolve().parent.parent


def _gsc(cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PYTEST_", "GSC_"))}
    env["PYTHONPATH"] = os.pathsep.join([str(ROOT), *filter(None, [os.environ.get("PYTHONPATH")])])
    return subprocess.run([sys.executable, "-m", "gather_scatter_conformance", *args], cwd=cwd, env=env,
                          capture_output=True, text=True, timeout=600)


def _run(tmp_path: Path, cwd: Path, *extra: str) -> list[dict]:
    out = tmp_path / "r.jsonl"
    done = _gsc(cwd, "run", "--framework", "numpy", "--results", str(out), *extra)
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    return records_of(out)


@pytest.mark.slow  # over 5 s here (make check: tests under 5 s each)
def test_run_narrows_to_given_case_files(tmp_path: Path) -> None:
    records = _run(tmp_path, ROOT, "cases/found/gather_nd.yaml", "cases/gather_nd.yaml")
    files = {r["case_file"] for r in records}
    assert files == {"cases/found/gather_nd.yaml", "cases/gather_nd.yaml"}, files


def test_run_without_paths_runs_the_shipped_corpus_from_an_empty_directory(tmp_path: Path) -> None:
    empty = tmp_path / "empty"
    empty.mkdir()
    records = _run(tmp_path, empty, "-k", "fuzz-gathernd or onnx_node_gather_nd or tensorflow-")
    dirs = {r["case_file"].rsplit("/", 1)[0] for r in records}
    assert {"cases/found", "cases/imported", "cases/regression"} <= dirs, dirs
    # Nothing of ours written but the results asked for: no cache, no config, no baselines. (pytest-benchmark,
    # where installed, makes its storage folder in the current directory of every pytest run.)
    assert [p.name for p in empty.iterdir() if p.name != ".benchmarks"] == []


def test_validate_without_files_checks_the_shipped_corpus(tmp_path: Path) -> None:
    files = sorted(resources.cases_dir().rglob("*.yaml"))
    expected = sum(not isinstance(e, CaseFileError) for f in files for e in load_file(f, f.name))
    done = _gsc(tmp_path, "validate")
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    assert expected > 500 and f"{expected} valid case(s), 0 error(s)" in done.stdout, done.stdout[-500:]


@pytest.mark.slow
def test_baseline_writes_into_the_current_directory(tmp_path: Path) -> None:
    work = tmp_path / "work"
    work.mkdir()
    records = _run(tmp_path, work, str(resources.cases_dir() / "probes" / "take.yaml"))
    assert any(r.get("label") for r in records)
    done = _gsc(work, "baseline", str(tmp_path / "r.jsonl"))
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    assert (work / "baselines" / "numpy.yaml").is_file(), done.stdout


def test_a_mistyped_framework_gets_a_suggestion_in_one_line(tmp_path: Path) -> None:
    done = _gsc(tmp_path, "run", "--framework", "onnxrutime,numpy", "--results", str(tmp_path / "r.jsonl"))
    said = [line for line in done.stderr.splitlines() if "--framework" in line]
    assert done.returncode != 0 and len(said) == 1, done.stderr[-2000:]
    assert "unknown 'onnxrutime' (did you mean onnxruntime?)" in said[0] and "~" not in said[0]


def test_version() -> None:
    from gather_scatter_conformance.vocab.record import harness_version

    done = _gsc(ROOT, "--version")
    assert done.returncode == 0 and done.stdout.strip() == f"gsc {harness_version()}"


def test_help_writes_the_gate_path_in_the_order_of_docs_gate() -> None:
    said = _gsc(ROOT, "--help").stdout.partition("your own runtime in your CI")[2]
    steps = ["gsc new-adapter NAME", "pip install -e ./gsc-NAME", "gsc run --framework NAME", "gsc report",
             "gsc baseline", "gsc gate"]
    at = [said.find(step) for step in steps]
    assert -1 not in at and at == sorted(at), said
    guide = (ROOT / "docs" / "gate.md").read_text()
    assert all(step.split()[1] in guide for step in steps if step.startswith("gsc"))


def test_bash_completion_offers_commands_options_files_and_framework_names(tmp_path: Path) -> None:
    # gsc completion's script, sourced into a real bash: what a user's tab key gets. Framework names come from
    # `gsc completion --names` at tab time, so a shim puts this checkout's gsc on PATH.
    script = _gsc(tmp_path, "completion", "bash")
    assert script.returncode == 0, script.stderr[-2000:]
    (tmp_path / "gsc.bash").write_text(script.stdout)
    shim = tmp_path / "bin" / "gsc"
    shim.parent.mkdir()
    shim.write_text(f"#!/bin/sh\nPYTHONPATH={ROOT} exec {sys.executable} -m gather_scatter_conformance \"$@\"\n")
    shim.chmod(0o755)
    (tmp_path / "results.jsonl").touch()
    (tmp_path / "site").mkdir()
    lines = ["source gsc.bash",
             'comp() { COMP_WORDS=("$@"); COMP_CWORD=$((${#COMP_WORDS[@]}-1)); _shtab_gsc; '
             "printf '%s ' \"${COMPREPLY[@]}\"; echo; }",
             "comp gsc ga", "comp gsc gate --jun", "comp gsc gate res", "comp gsc run --framework onnxr",
             "comp gsc report results.jsonl --out si", "comp gsc completion z"]
    env = {**os.environ, "PATH": f"{shim.parent}{os.pathsep}{os.environ['PATH']}"}
    done = subprocess.run(["bash", "-c", "\n".join(lines)], cwd=tmp_path, env=env, capture_output=True, text=True,
                          timeout=120)
    assert done.returncode == 0, done.stderr[-2000:]
    assert [line.split() for line in done.stdout.splitlines()] == [
        ["gate"], ["--junit"], ["results.jsonl"], ["onnxruntime"], ["site"], ["zsh"]]


def test_completion_without_a_shell_is_one_line() -> None:
    done = _gsc(ROOT, "completion")
    assert done.returncode == 2 and done.stderr.strip().count("\n") == 0 and "bash" in done.stderr


SEEN_PLUGINS = """\
import json
import os


def pytest_configure(config):
    names = [name for name, plugin in config.pluginmanager.list_name_plugin() if plugin is not None]  # not blocked
    with open(f"plugins-{os.getpid()}.json", "w") as fh:
        json.dump(names, fh)
"""


def test_a_run_loads_its_own_pytest_plugins_and_a_named_one_only(tmp_path: Path,
                                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    """#38: the environment's other pytest11 entry points (playwright, anyio, hydra...: 3 s of each run's start here,
    in each worker too) are not a run's; `-p NAME` among its pytest arguments loads one more. Called in-process, the
    command leaves the environment as it found it."""
    import importlib.metadata
    import shutil

    from gather_scatter_conformance.harness import cli

    (tmp_path / "seen_plugins.py").write_text(SEEN_PLUGINS)
    (tmp_path / "mine").mkdir()
    shutil.copy(ROOT / "cases" / "gather_nd.yaml", tmp_path / "mine")
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("PYTEST_DISABLE_PLUGIN_AUTOLOAD", raising=False)
    # One worker (pytest-xdist's workers inherit the environment and the arguments: every `gsc run -n` here).
    assert cli.main(["run", "mine", "--framework", "numpy", "--results", "r.jsonl", "--workers", "1",
                     "-p", "seen_plugins"]) == 0
    assert "PYTEST_DISABLE_PLUGIN_AUTOLOAD" not in os.environ
    processes = [set(json.loads(p.read_text())) for p in tmp_path.glob("plugins-*.json")]
    assert len(processes) == 1, processes
    others = {e.name for e in importlib.metadata.entry_points(group="pytest11")} - {"gather_scatter_conformance"}
    for loaded in processes:
        assert {"gather_scatter_conformance.harness.run.pytest_plugin", "seen_plugins"} <= loaded
        assert not others & loaded, others & loaded
        assert "logging" not in loaded  # pytest's log capture: nothing to capture, a sixth of a reused run's CPU
    # A --log-* option asks for pytest's logging plugin, which the run then keeps.
    assert cli.main(["run", "mine", "--framework", "numpy", "--results", "r2.jsonl", "--workers", "1",
                     "-p", "seen_plugins", "--log-level", "INFO"]) == 0
    newest = max(tmp_path.glob("plugins-*.json"), key=lambda p: p.stat().st_mtime_ns)
    assert "logging" in set(json.loads(newest.read_text()))
