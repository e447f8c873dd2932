"""A third-party runtime plugs in by its entry point alone: examples/toy-runtime, installed next to the harness's
wheel in a fresh venv, runs with process isolation and its planted bug (a negative index clamped to 0) is found.

Slow (a wheel, a venv and the harness's dependencies from the registry, about a minute): it is what a runtime team
outside this repository does (docs/adapter-api.md).
"""

from __future__ import annotations

import shutil
import subprocess
import sys
import textwrap
import venv
from pathlib import Path

import pytest
from _cases import records_of

ROOT = Path(__file__).resolve().parents[1]
TOY = ROOT / "examples" / "toy-runtime"

CASES = {
    "gather.yaml": """\
        op: Gather
        cases:
          - id: plain
            source: ONNX Gather-13 semantics
            inputs: {data: [[1, 2], [3, 4], [5, 6]], indices: [2, 0]}
            expected: [[5, 6], [1, 2]]
          - id: negative
            source: ONNX Gather-13 semantics (a negative index counts from the end)
            inputs: {data: [10, 20, 30], indices: [-1, 0]}
            expected: [30, 10]
        """,
    "scatter_nd.yaml": """\
        op: ScatterND
        cases:
          - id: unmapped
            source: ONNX ScatterND-18 semantics
            inputs: {data: [1, 2, 3], indices: [[0]], updates: [9]}
            expected: [9, 2, 3]
        """,
}


def _run(*args: str | Path, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run([str(a) for a in args], cwd=cwd, capture_output=True, text=True, timeout=900)


def _copy(source: Path, names: tuple[str, ...], to: Path) -> Path:
    """``names`` of ``source`` copied to ``to`` (links kept: the package's data/ links to the corpus): a build
    writes build/ and *.egg-info beside its pyproject.toml, and must not write them into this checkout."""
    to.mkdir(parents=True, exist_ok=True)
    for name in names:
        if (source / name).is_dir():
            shutil.copytree(source / name, to / name, symlinks=True, ignore=shutil.ignore_patterns("__pycache__"))
        else:
            shutil.copy2(source / name, to / name)
    return to


@pytest.mark.slow
def test_the_toy_runtime_is_found_by_its_entry_point_and_its_bug_is_a_deviation(tmp_path: Path) -> None:
    dist = tmp_path / "dist"
    harness = _copy(ROOT, ("pyproject.toml", "README.md", "gather_scatter_conformance", "cases", "baselines", "claims",
                           "known"), tmp_path / "harness")
    built = _run(sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", "-w", dist, harness)
    assert built.returncode == 0, built.stderr
    wheel = next(dist.glob("gather_scatter_conformance-*.whl"))
    env = tmp_path / "venv"
    venv.create(env, with_pip=True, clear=True)
    python = env / "bin" / "python"
    toy = _copy(TOY.parent, (TOY.name,), tmp_path) / TOY.name
    for args in ([wheel], ["--no-deps", toy]):  # the harness with its dependencies; the plug-in on its own
        installed = _run(python, "-m", "pip", "install", "-q", "--disable-pip-version-check", *args)
        assert installed.returncode == 0, installed.stderr
    project = tmp_path / "project"
    (project / "cases").mkdir(parents=True)
    for name, text in CASES.items():
        (project / "cases" / name).write_text(textwrap.dedent(text))

    run = _run(python, "-m", "pytest", "cases", "--framework", "toy", "--isolation", "process", "--results",
               "r.jsonl", "-v", "-rs", "-p", "no:cacheprovider", cwd=project)
    out = run.stdout + run.stderr
    assert run.returncode == 1, out  # the deviation fails its test; nothing else does
    assert "cases/gather.yaml::plain[toy] PASSED" in out, out
    assert "cases/gather.yaml::negative[toy] FAILED" in out, out
    assert "not mapped: toy declares no variant for ScatterND" in out, out
    records = {r["case_id"]: r for r in records_of(project / "r.jsonl")}
    assert set(records) == {"plain", "negative", "unmapped"}
    assert all(r["framework"] == "toy" and r["framework_version"] == "0.1.0" for r in records.values())
    assert (records["plain"]["outcome"], records["plain"]["verdict"]) == ("ok", "conforms")
    negative = records["negative"]
    assert (negative["outcome"], negative["verdict"]) == ("ok", "deviates"), negative
    assert negative["observed"] == [10, 10]  # -1 clamped to 0: the planted bug, measured
    assert negative["api"] == "toy_runtime.gather(data, indices, axis=0)"
    unmapped = records["unmapped"]
    assert (unmapped["outcome"], unmapped["verdict"], unmapped["variant"]) == ("unsupported", "n/a", ""), unmapped
