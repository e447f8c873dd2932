"""The plugin travels: built as a wheel, installed (not editable) into a fresh venv with only the numpy and onnx
extras, it runs a user's case folder from an unrelated directory, with pytest and with ``python -m harness run``.

Slow (a venv and a few packages from the registry, about a minute): it is what a user outside this repository does.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import textwrap
import venv
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]

GOOD = """\
    # A user's own cases: the file is found by its content, not its folder's name.
    op: Gather
    cases:
      - id: row-of-a-matrix
        source: "ONNX Gather-13 semantics"
        inputs:
          data: [[1, 2], [3, 4]]
          indices: [1]
        attrs: {axis: 0}
        expected: [[3, 4]]
      - id: my-negative-probe
        source: "a probe of my own; no shipped baseline knows it"
        dimension: negative-indices
        inputs: {data: [1, 2, 3], indices: [-1]}
    """
BAD_FIELD = """\
    op: Gather
    cases:
      - id: axis-is-text
        source: test
        inputs: {data: [1, 2, 3], indices: [0]}
        attrs: {axis: first}
    """
BAD_YAML = "op: Gather\ncases:\n  - id: broken\n    inputs: {data: [1, 2\n"
NOT_A_CASE_FILE = "name: ci\non: [push]\n"  # YAML, but not a case file: never collected


@pytest.fixture(scope="module")
def installed(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A fresh venv with this project's wheel and its onnx extra installed; returns its python."""
    tmp = tmp_path_factory.mktemp("wheel")
    dist = tmp / "dist"
    subprocess.run([sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", "-w", str(dist), str(ROOT)],
                   check=True, capture_output=True, timeout=600)
    wheel = next(dist.glob("gather_scatter_conformance-*.whl"))
    names = zipfile.ZipFile(wheel).namelist()
    for shipped in ("harness/data/baselines/numpy.yaml", "harness/data/claims/onnx.yaml", "harness/data/known/jax.yaml",
                    "harness/data/schema.json",
                    "harness/report/templates/report.html.j2"):
        assert shipped in names, f"{shipped} is not in the wheel"
    env_dir = tmp / "venv"
    venv.create(env_dir, with_pip=True, clear=True)
    python = env_dir / "bin" / "python"
    subprocess.run([str(python), "-m", "pip", "install", "-q", f"{wheel}[onnx]"], check=True, capture_output=True,
                   timeout=900)
    return python


@pytest.fixture
def user_dir(tmp_path: Path) -> Path:
    folder = tmp_path / "project" / "conformance"
    folder.mkdir(parents=True)
    for name, text in (("good.yaml", GOOD), ("bad_field.yaml", BAD_FIELD), ("ci.yaml", NOT_A_CASE_FILE)):
        (folder / name).write_text(textwrap.dedent(text))
    (folder / "bad_yaml.yml").write_text(BAD_YAML)
    (tmp_path / "elsewhere").mkdir()
    return tmp_path


def _run(python: Path, args: list[str], cwd: Path) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PYTEST", "GSC_"))}
    return subprocess.run([str(python), *args], cwd=cwd, env=env, capture_output=True, text=True, timeout=600)


@pytest.mark.slow
def test_pytest_on_a_folder_outside_the_checkout(installed: Path, user_dir: Path) -> None:
    folder = user_dir / "project" / "conformance"
    results = user_dir / "results.jsonl"
    proc = _run(installed, ["-m", "pytest", str(folder), "--framework", "numpy,onnx-reference", "-p",
                            "no:cacheprovider", "-rA", "--results", str(results)], user_dir / "elsewhere")
    out = proc.stdout + proc.stderr
    assert proc.returncode == 1, out  # the malformed files fail their tests
    ids = "../project/conformance/good.yaml"  # relative to where pytest was invoked
    for fw in ("numpy", "onnx-reference"):
        assert f"PASSED {ids}::row-of-a-matrix[{fw}]" in out, out
        assert f"PASSED {ids}::my-negative-probe[{fw}]" in out, out
    assert "../project/conformance/bad_field.yaml:6: cases[0].attrs.axis: 'first' is not an integer" in out, out
    assert re.search(r"^\.\./project/conformance/bad_yaml\.yml:\d+: YAML syntax error", out, re.M), out
    assert "ci.yaml" not in out
    records = [json.loads(line) for line in results.read_text().splitlines()]
    by = {(r["case_id"], r["framework"]): r for r in records}
    assert by[("row-of-a-matrix", "numpy")]["verdict"] == "conforms"
    assert by[("my-negative-probe", "numpy")]["label"] == "wrap"
    assert by[("my-negative-probe", "numpy")]["case"] == f"{ids}::my-negative-probe"


@pytest.mark.slow
def test_harness_run_on_a_folder_outside_the_checkout(installed: Path, user_dir: Path) -> None:
    good_only = user_dir / "project" / "conformance"
    for bad in ("bad_field.yaml", "bad_yaml.yml"):
        (good_only / bad).unlink()
    proc = _run(installed, ["-m", "harness", "run", "conformance", "--framework", "numpy",
                            "--results", "out.jsonl"], user_dir / "project")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    records = [json.loads(line) for line in (user_dir / "project" / "out.jsonl").read_text().splitlines()]
    assert {r["case"] for r in records} == {"conformance/good.yaml::row-of-a-matrix",
                                            "conformance/good.yaml::my-negative-probe"}
    (good_only / "bad_field.yaml").write_text(textwrap.dedent(BAD_FIELD))
    proc = _run(installed, ["-m", "harness", "run", "conformance", "--framework", "numpy", "--results", "out.jsonl"],
                user_dir / "project")
    assert proc.returncode == 1, proc.stdout + proc.stderr  # a malformed case file fails the run
    assert "1 malformed case" in proc.stdout, proc.stdout
