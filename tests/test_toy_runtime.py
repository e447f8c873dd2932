"""A third-party runtime plugs in by its entry point alone: examples/toy-runtime, installed next to the harness's
wheel in a fresh venv, runs with process isolation and its planted bug (a negative index clamped to 0) is found.

Slow (a wheel, a venv and the harness's dependencies from the registry, about a minute): it is what a runtime team
outside this repository does (docs/adapter-api.md).
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import textwrap
import venv
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
import yaml
from _cases import records_of

ROOT = Path(__file__).resolve().parents[1]
# What a user does: their pytest loads every plugin installed (tests/conftest.py).
pytestmark = pytest.mark.installed_plugins
TOY = ROOT / "examples" / "toy-runtime"
# One pytest-xdist worker runs this file (make test's --dist loadfile): its venv is built once, not once a worker.

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


@pytest.fixture(scope="module")
def python(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A fresh venv's interpreter with the harness's wheel (built from this checkout) and its dependencies."""
    tmp = tmp_path_factory.mktemp("venv")
    dist = tmp / "dist"
    harness = _copy(ROOT, ("pyproject.toml", "README.md", "gather_scatter_conformance", "cases", "baselines", "claims",
                           "known", "examples"), tmp / "harness")
    built = _run(sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", "-w", dist, harness)
    assert built.returncode == 0, built.stderr
    wheel = next(dist.glob("gather_scatter_conformance-*.whl"))
    env = tmp / "venv"
    venv.create(env, with_pip=True, clear=True)
    installed = _run(env / "bin" / "python", "-m", "pip", "install", "-q", "--disable-pip-version-check", wheel)
    assert installed.returncode == 0, installed.stderr
    return env / "bin" / "python"


def _pip_install(python: Path, *args: str | Path) -> None:
    """A plug-in on its own (--no-deps): its dependency, the harness, is there."""
    installed = _run(python, "-m", "pip", "install", "-q", "--disable-pip-version-check", "--no-deps", *args)
    assert installed.returncode == 0, installed.stderr


@pytest.mark.slow
def test_the_toy_runtime_is_found_by_its_entry_point_and_its_bug_is_a_deviation(python: Path, tmp_path: Path
                                                                                 ) -> None:
    _pip_install(python, _copy(TOY.parent, (TOY.name,), tmp_path) / TOY.name)
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


# What a team writes into the scaffold of `gsc new-adapter clampy`: Gather through NumPy, an index checked against
# the axis and then clamped to 0 where negative (ONNX counts it from the end): the bug the gate is to hold.
CLAMPY_VARIANTS = 'VARIANTS: ClassVar[dict[str, tuple[str, ...]]] = {"Gather": ("take",)}'
CLAMPY_CALL = """\
        import numpy as np

        if case.attrs.get("batch_dims"):
            raise Unsupported("clampy.take has no batch_dims")
        data, indices, axis = case.inputs["data"], case.inputs["indices"], int(case.attrs["axis"])
        size = data.shape[axis]

        def run() -> np.ndarray:
            if indices.size and (indices.min() < -size or indices.max() >= size):
                raise IndexError(f"index out of range for an axis of size {size}")
            return np.take(data, np.maximum(indices, 0), axis=axis)

        return Call(f"clampy.take(data, indices, axis={axis})", run)
"""
WRAP = "np.where(indices < 0, indices + size, indices)"


@pytest.mark.slow
def test_the_gate_path_from_a_scaffold_holds_a_clamp_and_fails_when_it_becomes_a_wrap(python: Path, tmp_path: Path
                                                                                       ) -> None:
    # docs/gate.md as a new team walks it, from the wheel alone: scaffold, fill in, install, run, baseline, gate;
    # then the runtime changes its behaviour and the gate fails naming the cell.
    gsc = (python, "-m", "gather_scatter_conformance")
    assert _run(*gsc, "new-adapter", "clampy", "--out", tmp_path).returncode == 0
    module = tmp_path / "gsc-clampy" / "gsc_clampy" / "adapter.py"
    text = module.read_text()
    text = text.replace('VARIANTS: ClassVar[dict[str, tuple[str, ...]]] = {}', CLAMPY_VARIANTS)
    text = text.replace('        raise Unsupported(f"clampy: {case.op} through {variant!r} is not built yet")\n',
                        CLAMPY_CALL)
    module.write_text(text)
    _pip_install(python, "-e", tmp_path / "gsc-clampy")
    project = tmp_path / "project"
    for name in ("cases/probes/gather.yaml", "cases/gather.yaml"):
        (project / name).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(ROOT / name, project / name)

    def run(results: str) -> None:
        done = _run(*gsc, "run", "cases", "--framework", "clampy", "--results", results, cwd=project)
        assert done.returncode in (0, 1), done.stdout[-3000:] + done.stderr[-3000:]

    done = _run(*gsc, "run", "cases", "--framework", "clampy", "--results", "r.jsonl", cwd=project)
    # Nothing is accepted before a baseline or known file exists: the summary says so (a conformance case's
    # missing label once equalled its missing baseline label, and every deviation read as accepted).
    assert done.returncode == 0 and ", 0 of them accepted" in done.stdout, done.stdout[-2000:]
    clamp = "cases/probes/gather.yaml::probe-negative-indices[take]"
    labels = {r["case"] + "[take]": r.get("label") for r in records_of(project / "r.jsonl")}
    assert labels[clamp] == "clamp"
    # The review: the report (its extra installed now) shows the clamp of valid negative indices as a wrong value,
    # red, not as a defined alternative.
    wheel = next((python.parents[2] / "dist").glob("gather_scatter_conformance-*.whl"))
    extra = _run(python, "-m", "pip", "install", "-q", "--disable-pip-version-check", f"{wheel}[report]")
    assert extra.returncode == 0, extra.stderr
    assert _run(*gsc, "report", "r.jsonl", "--out", "site", cwd=project).returncode == 0
    cells = [c for c in _dicts(json.loads((project / "site" / "api" / "index.json").read_text()))
             if str(c.get("system", "")).startswith("clampy") and c.get("label") == "clamp"]
    assert cells and {c["severity"] for c in cells} == {"wrong"}, cells
    assert 'class="sev-wrong"' in (project / "site" / "index.html").read_text()
    assert _run(*gsc, "baseline", "r.jsonl", "--dir", "baselines", cwd=project).returncode == 0
    passed = _run(*gsc, "gate", "r.jsonl", "--baselines", "baselines", cwd=project)
    assert passed.returncode == 0 and passed.stdout.startswith("## gsc gate: passed"), passed.stdout + passed.stderr

    module.write_text(module.read_text().replace("np.maximum(indices, 0)", WRAP))  # the runtime now wraps
    run("r2.jsonl")
    failed = _run(*gsc, "gate", "r2.jsonl", "--baselines", "baselines", "--junit", "gate.xml", cwd=project)
    assert failed.returncode == 8, failed.stdout + failed.stderr  # label-change (docs/gate.md)
    junit = ET.parse(project / "gate.xml").getroot()
    failures = {case.get("name"): f.get("type") for case in junit.iter("testcase") for f in case.iter("failure")}
    assert failures.get(clamp) == "label-change", failures
    assert set(failures.values()) == {"label-change"}


def _dicts(value: object) -> list[dict]:
    """Every mapping inside a JSON value, depth first."""
    if isinstance(value, dict):
        return [value, *(d for v in value.values() for d in _dicts(v))]
    if isinstance(value, list):
        return [d for v in value for d in _dicts(v)]
    return []


WORKFLOW = ROOT / ".github" / "workflows" / "gate.yml"
_EXPRESSION = re.compile(r"\$\{\{\s*(inputs|steps)\.([\w-]+)(?:\.outputs\.([\w-]+))?\s*\}\}")


def _steps_of_workflow(python: Path, cwd: Path, inputs: dict[str, str]) -> dict[str, subprocess.CompletedProcess[str]]:
    """Run the gate workflow's job as GitHub would, but here: its scripts in order with bash as GitHub's runner
    calls it, the job's and steps' env with ``${{ inputs.* }}`` and ``${{ steps.*.outputs.* }}`` filled in, the
    venv of ``python`` first on PATH, a step that failed skipping the rest but ``if: always()`` ones. The ``uses:``
    steps (checkout, setup-python, upload-artifact) are GitHub's own: here ``cwd`` is the checkout."""
    job = yaml.safe_load(WORKFLOW.read_text())["jobs"]["gate"]
    outputs: dict[str, dict[str, str]] = {}

    def fill(value: object) -> str:
        def one(m: re.Match[str]) -> str:
            return inputs[m[2]] if m[1] == "inputs" else outputs.get(m[2], {}).get(m[3] or "", "")

        text = _EXPRESSION.sub(one, str(value))
        assert "${{" not in text, f"an expression this runner does not know: {value}"
        return text

    base = {k: v for k, v in os.environ.items() if not k.startswith(("PYTEST", "PYTHON", "GSC_", "VIRTUAL_ENV"))}
    base["PATH"] = f"{python.parent}{os.pathsep}{os.environ['PATH']}"
    base.update({k: fill(v) for k, v in job["env"].items()})
    done: dict[str, subprocess.CompletedProcess[str]] = {}
    failed = False
    for step in job["steps"]:
        if "run" not in step or (failed and step.get("if") != "always()"):
            continue
        written = cwd / "github_output"
        written.write_text("")
        env = {**base, **{k: fill(v) for k, v in step.get("env", {}).items()}, "GITHUB_OUTPUT": str(written),
               "GITHUB_STEP_SUMMARY": str(cwd / "step_summary.md")}
        result = subprocess.run(["bash", "--noprofile", "--norc", "-eo", "pipefail", "-c", step["run"]], cwd=cwd,
                                env=env, capture_output=True, text=True, timeout=900)
        done[step["name"]] = result
        if "id" in step:
            outputs[step["id"]] = dict(line.split("=", 1) for line in written.read_text().splitlines() if "=" in line)
        failed = failed or result.returncode != 0
    return done


@pytest.mark.slow
def test_the_reusable_workflows_steps_gate_the_toy_runtime(python: Path, tmp_path: Path) -> None:
    # .github/workflows/gate.yml as a caller's repository meets it: its committed case files and baselines, the
    # harness's wheel (with the report extra) and the toy runtime as the inputs name them.
    toy = _copy(TOY.parent, (TOY.name,), tmp_path) / TOY.name
    _pip_install(python, toy)
    repo = tmp_path / "caller"
    (repo / "cases").mkdir(parents=True)
    for name, text in CASES.items():
        (repo / "cases" / name).write_text(textwrap.dedent(text))
    for args in (("run", "cases", "--framework", "toy", "--results", "first.jsonl"),
                 ("baseline", "first.jsonl", "--dir", "conformance/baselines")):
        made = _run(python, "-m", "gather_scatter_conformance", *args, cwd=repo)
        assert made.returncode in (0, 1), made.stdout[-2000:] + made.stderr[-2000:]
    wheel = next((python.parents[2] / "dist").glob("gather_scatter_conformance-*.whl"))
    inputs = {"system": "toy", "adapter": str(toy), "baselines": "conformance/baselines", "harness": f"{wheel}[report]",
              "run-args": "cases", "ignore": "", "python-version": "3.11"}

    steps = _steps_of_workflow(python, repo, inputs)
    said = {name: r.stdout[-1500:] + r.stderr[-1500:] for name, r in steps.items()}
    assert list(steps) == ["install", "run", "gate", "report", "verdict"], said
    assert all(r.returncode == 0 for r in steps.values()), said
    out = repo / "gsc-out"
    assert ET.parse(out / "gate.xml").getroot().find("testsuite").get("failures") == "0"
    assert json.loads((out / "gate.json").read_text())["passed"] and (out / "site" / "index.html").exists()
    assert (repo / "step_summary.md").read_text().startswith("## gsc gate: passed")

    # The baselines now hold a cell the run does not have: the gate fails by its policy (32, lost coverage), after
    # the report was built for the artifact.
    path = repo / "conformance" / "baselines" / "toy.yaml"
    data = yaml.safe_load(path.read_text())
    data["verdicts"]["cases/gather.yaml::gone[gather]"] = "conforms"
    path.write_text(yaml.safe_dump(data))
    (repo / "step_summary.md").unlink()
    steps = _steps_of_workflow(python, repo, {**inputs, "harness": str(wheel)})
    assert steps["verdict"].returncode == 32 and steps["report"].returncode == 0, steps["verdict"].stdout
    assert "failed (exit status 32)" in (repo / "step_summary.md").read_text()
