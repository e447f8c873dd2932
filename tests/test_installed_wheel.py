"""The wheel as a user installs it: built from this checkout, installed (not editable) into a fresh venv beside
PyPI's ``adapters`` (AdapterHub) and ``harness`` 0.1.0, with the onnxruntime extra, and used from a folder that
holds its own ``adapters/`` and ``harness/`` packages. From there an unrelated test passes, ``gsc run`` runs the
shipped corpus, pytest runs a copied case folder on numpy and onnxruntime, and the toy runtime
(examples/toy-runtime, registered only by its entry point) is found to clamp negative indices.

Slow (a venv and its packages from the package index or uv's cache, and a run of the whole corpus): about two
minutes here. The venv is deleted at the end.
"""

from __future__ import annotations

import importlib.util
import json
import os
import re
import shutil
import subprocess
import sys
import textwrap
import zipfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from _cases import records_of

pytestmark = [pytest.mark.slow, pytest.mark.installed_plugins]  # a user's pytest loads every plugin installed

ROOT = Path(__file__).resolve().parents[1]
PINS = ROOT / "constraints" / "pins.txt"
# What a fresh clone holds beside the sources; never copied into the tree the wheel is built from.
NOT_SOURCES = shutil.ignore_patterns(".git", ".venv*", ".tox", "build", "*.egg-info", "results", "reports",
                                     "__pycache__", ".hypothesis", ".ruff_cache", ".pytest_cache")
SHIPPED = ("gather_scatter_conformance/data/cases/gather.yaml", "gather_scatter_conformance/data/cases/schema.json",
           "gather_scatter_conformance/data/cases/probes/gather.yaml",
           "gather_scatter_conformance/data/cases/regression/gather.yaml",
           "gather_scatter_conformance/data/baselines/numpy.yaml", "gather_scatter_conformance/data/known/jax.yaml",
           "gather_scatter_conformance/data/claims/onnx.yaml",
           "gather_scatter_conformance/harness/report/templates/report.html.j2",
           "gather_scatter_conformance/harness/report/templates/site/cell.html.j2",
           "gather_scatter_conformance/schemas/site.schema.json",
           "gather_scatter_conformance/harness/evidence/memcheck.supp")

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
# In-range indices, positive and negative: canonically a negative index counts from the end.
TOY_CASES = """\
    op: Gather
    cases:
      - id: positive-rows
        source: "ONNX Gather-13 semantics"
        inputs: {data: [[1, 2], [3, 4], [5, 6]], indices: [2, 0]}
        attrs: {axis: 0}
        expected: [[5, 6], [1, 2]]
      - id: positive-columns
        source: "ONNX Gather-13 semantics"
        inputs: {data: [[1, 2, 3], [4, 5, 6]], indices: [1]}
        attrs: {axis: 1}
        expected: [[2], [5]]
      - id: negative-last-row
        source: "ONNX Gather-13 semantics"
        inputs: {data: [[1, 2], [3, 4], [5, 6]], indices: [-1]}
        attrs: {axis: 0}
        expected: [[5, 6]]
      - id: negative-and-positive
        source: "ONNX Gather-13 semantics"
        inputs: {data: [10, 20, 30, 40], indices: [-2, 1]}
        expected: [30, 20]
    """


@dataclass
class Installed:
    wheel: Path  # the wheel built from this checkout
    python: Path  # the venv's interpreter
    bin: Path  # its scripts (gsc)
    user: Path  # a user's project: its own adapters/ and harness/ packages, an unrelated test
    installer: list[str]  # `uv pip install --python ...` or `pip install`, for more installs into the venv

    def run(self, args: list[str], cwd: Path | None = None, timeout: float = 900) -> subprocess.CompletedProcess[str]:
        """Run a command of the venv (``python`` or ``gsc`` first) in the user's project, as the user would."""
        exe = str(self.python) if args[0] == "python" else str(self.bin / args[0])
        return subprocess.run([exe, *args[1:]], cwd=cwd or self.user, env=_clean_env(), capture_output=True,
                              text=True, timeout=timeout)

    def install(self, *args: str) -> None:
        _check([*self.installer, *args], timeout=900)


def _clean_env() -> dict[str, str]:
    # Nothing of this checkout's session: the venv must run the installed wheel, not these sources.
    drop = ("PYTHONPATH", "VIRTUAL_ENV", "PYTEST_", "GSC_", "UV_PYTHON")
    return {k: v for k, v in os.environ.items() if not k.startswith(drop)}


def _check(cmd: list[str], cwd: Path | None = None, timeout: float = 900) -> subprocess.CompletedProcess[str]:
    proc = subprocess.run(cmd, cwd=cwd, env=_clean_env(), capture_output=True, text=True, timeout=timeout)
    assert proc.returncode == 0, f"{' '.join(cmd)}\n{proc.stdout[-3000:]}\n{proc.stderr[-3000:]}"
    return proc


def _out(proc: subprocess.CompletedProcess[str]) -> str:
    return proc.stdout[-4000:] + proc.stderr[-4000:]


def _records(path: Path) -> list[dict]:
    return records_of(path)


def _venv(env_dir: Path) -> list[str]:
    """A fresh venv (uv's where this environment has it: seconds, from its cache; else venv), and the command that
    installs into it."""
    if importlib.util.find_spec("uv") is not None:
        _check([sys.executable, "-m", "uv", "venv", "-q", "--python", sys.executable, str(env_dir)])
        return [sys.executable, "-m", "uv", "pip", "install", "--python", str(env_dir / "bin" / "python")]
    _check([sys.executable, "-m", "venv", str(env_dir)])
    return [str(env_dir / "bin" / "python"), "-m", "pip", "install", "-q"]


@pytest.fixture(scope="module")
def installed(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Installed]:
    tmp = tmp_path_factory.mktemp("installed")
    # The wheel, built from a copy of the tree (a build in place reuses build/ and can ship stale files).
    src = tmp / "src"
    shutil.copytree(ROOT, src, symlinks=True, ignore=NOT_SOURCES)
    _check([sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", "-w", str(tmp / "dist"), str(src)])
    wheel = next((tmp / "dist").glob("gather_scatter_conformance-*.whl"))
    names = zipfile.ZipFile(wheel).namelist()
    missing = [n for n in SHIPPED if n not in names]
    assert not missing, f"not in the wheel: {missing}"
    tops = {n.split("/")[0] for n in names if not n.split("/")[0].endswith(".dist-info")}
    assert tops == {"gather_scatter_conformance"}, f"more than one top-level name: {tops}"
    shutil.rmtree(src)
    env_dir = tmp / "venv"
    installer = _venv(env_dir)
    env = Installed(wheel, env_dir / "bin" / "python", env_dir / "bin", tmp / "user", installer)
    # The wheel with its onnxruntime extra at the releases measured, beside PyPI's `harness` 0.1.0 (it ships
    # harness/cli/) and AdapterHub's `adapters` (its own adapters/__init__.py; --no-deps: the name is what collides,
    # and its transformers dependency is not needed for that).
    env.install(f"gather-scatter-conformance[onnxruntime] @ {wheel.as_uri()}", "harness==0.1.0", "-c", str(PINS))
    env.install("--no-deps", "adapters")
    # A user's project with packages of the same two names, and a test of its own.
    for package in ("adapters", "harness"):
        (env.user / package).mkdir(parents=True)
        (env.user / package / "__init__.py").write_text(f'WHOSE = "the user\'s {package}"\n')
    (env.user / "test_unrelated.py").write_text(textwrap.dedent("""\
        import adapters
        import harness


        def test_my_own_packages():
            assert adapters.WHOSE == "the user's adapters" and harness.WHOSE == "the user's harness"
        """))
    yield env
    shutil.rmtree(env_dir, ignore_errors=True)


def test_an_unrelated_test_passes_beside_the_plugin(installed: Installed) -> None:
    proc = installed.run(["python", "-m", "pytest", "test_unrelated.py", "-p", "no:cacheprovider"])
    assert proc.returncode == 0, _out(proc)
    assert re.search(r"^plugins:.*gather-scatter-conformance", proc.stdout, re.M), _out(proc)  # it was loaded
    assert "1 passed" in proc.stdout, _out(proc)
    proc = installed.run(["gsc", "--help"])
    assert proc.returncode == 0 and "validate" in proc.stdout, _out(proc)
    proc = installed.run(["gsc", "completion", "bash"])  # shtab, a dependency, installed with the wheel
    assert proc.returncode == 0 and "_shtab_gsc" in proc.stdout, _out(proc)


def test_gsc_run_runs_the_shipped_corpus(installed: Installed) -> None:
    proc = installed.run(["gsc", "run", "--framework", "numpy"])
    assert proc.returncode == 0, _out(proc)
    records = _records(installed.user / "results" / "results.jsonl")  # written where the user is
    assert {r["framework"] for r in records} == {"numpy"}
    assert all(r["case"].startswith("cases/") for r in records)
    assert {"cases/gather.yaml", "cases/probes/gather.yaml", "cases/regression/gather.yaml"} <= {
        r["case_file"] for r in records}
    # Every shipped case, once: NumPy has one API per operator, and its unsupported cases are recorded too.
    proc = installed.run(["gsc", "validate"])
    valid = re.search(r"^(\d+) valid case\(s\), 0 error\(s\)$", proc.stdout, re.M)
    assert proc.returncode == 0 and valid, _out(proc)
    assert len(records) == len({r["case"] for r in records}) == int(valid[1]) > 500, (len(records), valid[1])
    # A finding's upstream issue, with none of the report extra's packages (pandas, jinja2) installed.
    finding = next(r for r in records if r["verdict"] == "deviates")
    proc = installed.run(["gsc", "issue", "results/results.jsonl", "--case", finding["case"], "--framework", "numpy"])
    assert proc.returncode == 0, _out(proc)
    assert proc.stdout.startswith("# ") and f"\\[numpy {finding['framework_version']}\\]" in proc.stdout.splitlines()[0]
    assert "## Repro" in proc.stdout


def test_pytest_runs_a_copied_case_folder_on_numpy_and_onnxruntime(installed: Installed) -> None:
    folder = installed.user / "conformance"
    folder.mkdir(exist_ok=True)
    site = Path(installed.run(["python", "-c", "import gather_scatter_conformance as g; print(g.__file__)"])
                .stdout.strip()).parent
    # ONNX's own node tests, as the corpus imported them: both frameworks conform on every one (a copied file is
    # the user's, named relative to the rootdir, so the shipped known deviations would not apply to it).
    for name in ("onnx_node_gather.yaml", "onnx_node_gather_elements.yaml"):
        shutil.copy(site / "data" / "cases" / "imported" / name, folder / name)
    results = installed.user / "copied.jsonl"
    proc = installed.run(["python", "-m", "pytest", "conformance", "--framework", "numpy,onnxruntime",
                          "--results", str(results), "-p", "no:cacheprovider", "-q"])
    assert proc.returncode == 0, _out(proc)
    records = _records(results)
    assert {r["framework"] for r in records} == {"numpy", "onnxruntime"}
    assert {r["case_file"] for r in records} == {"conformance/onnx_node_gather.yaml",
                                                 "conformance/onnx_node_gather_elements.yaml"}
    assert {r["verdict"] for r in records} == {"conforms"}, _out(proc)


def test_a_user_case_folder_outside_any_project(installed: Installed, tmp_path: Path) -> None:
    folder = tmp_path / "project" / "conformance"
    folder.mkdir(parents=True)
    for name, text in (("good.yaml", GOOD), ("bad_field.yaml", BAD_FIELD), ("ci.yaml", NOT_A_CASE_FILE)):
        (folder / name).write_text(textwrap.dedent(text))
    (folder / "bad_yaml.yml").write_text(BAD_YAML)
    (tmp_path / "elsewhere").mkdir()
    results = tmp_path / "results.jsonl"
    proc = installed.run(["python", "-m", "pytest", str(folder), "--framework", "numpy,onnx-reference", "-rA",
                          "-p", "no:cacheprovider", "--results", str(results)], cwd=tmp_path / "elsewhere")
    out = proc.stdout + proc.stderr
    assert proc.returncode == 1, out  # the malformed files fail their tests
    ids = "project/conformance/good.yaml"  # relative to pytest's rootdir (no ini file: the common ancestor)
    for fw in ("numpy", "onnx-reference"):
        assert re.search(rf"^PASSED \S*good\.yaml::row-of-a-matrix\[{fw}\]", out, re.M), out
    assert "bad_field.yaml:6: cases[0].attrs.axis: 'first' is not an integer" in out, out
    assert re.search(r"bad_yaml\.yml:\d+: YAML syntax error", out), out
    assert "ci.yaml" not in out
    by = {(r["case_id"], r["framework"]): r for r in _records(results)}
    assert by[("row-of-a-matrix", "numpy")]["verdict"] == "conforms"
    assert by[("my-negative-probe", "numpy")]["label"] == "wrap"
    assert by[("my-negative-probe", "numpy")]["case"] == f"{ids}::my-negative-probe"


def test_the_extras_resolve_beside_another_onnxruntime(installed: Installed) -> None:
    # The extra states a range: a user's own onnxruntime release is kept (the issue: ResolutionImpossible).
    installed.install("--dry-run", f"gather-scatter-conformance[onnxruntime] @ {installed.wheel.as_uri()}",
                      "onnxruntime==1.22.1")


def test_the_toy_runtimes_planted_deviation_is_found(installed: Installed, tmp_path: Path) -> None:
    # The README's path from a pip install: the wheel writes the example package, which installs beside it.
    proc = installed.run(["gsc", "new-adapter", "--example", "--out", str(tmp_path)])
    assert proc.returncode == 0, _out(proc)
    installed.install(str(tmp_path / "toy-runtime"))
    # Its name, as its entry point registers it (the only adapter not of this distribution).
    listing = installed.run(["python", "-c", textwrap.dedent("""\
        from importlib.metadata import entry_points
        for e in entry_points(group="gather_scatter_conformance.adapters"):
            if e.dist.name != "gather-scatter-conformance":
                print(e.name)
        """)])
    (name,) = listing.stdout.split()
    folder = installed.user / "toy"
    folder.mkdir()
    (folder / "gather.yaml").write_text(textwrap.dedent(TOY_CASES))
    results = installed.user / "toy.jsonl"
    proc = installed.run(["python", "-m", "pytest", "toy", "--framework", name, "--results", str(results),
                          "-p", "no:cacheprovider", "-q"])  # process isolation: the default
    assert proc.returncode == 1, _out(proc)  # the deviations fail their tests
    verdicts = {r["case_id"]: r["verdict"] for r in _records(results)}
    assert verdicts == {"positive-rows": "conforms", "positive-columns": "conforms",
                        "negative-last-row": "deviates", "negative-and-positive": "deviates"}, verdicts


def test_the_report_and_its_site_from_the_wheel(installed: Installed, tmp_path: Path) -> None:
    """With the report extra, in a venv of its own (the others run without it): gsc run on a few probes, then gsc
    report, whose site's cell pages and JSON come from the wheel's templates and schema."""
    env_dir = tmp_path / "venv-report"
    installer = _venv(env_dir)
    _check([*installer, f"gather-scatter-conformance[report] @ {installed.wheel.as_uri()}", "-c", str(PINS)])
    user = tmp_path / "user"
    user.mkdir()
    gsc = str(env_dir / "bin" / "gsc")
    proc = subprocess.run([gsc, "run", "--framework", "numpy", "-k", "probe-oob-positive or probe-negative-indices"],
                          cwd=user, env=_clean_env(), capture_output=True, text=True, timeout=900)
    assert proc.returncode == 0 and "numpy:" in proc.stderr + proc.stdout, _out(proc)
    proc = subprocess.run([gsc, "report", "results/results.jsonl", "--out", "site"], cwd=user, env=_clean_env(),
                          capture_output=True, text=True, timeout=900)
    assert proc.returncode == 0 and "wrote the site" in proc.stdout, _out(proc)
    cell = json.loads((user / "site" / "Gather" / "numpy" / "take" / "oob-positive.json").read_text())
    assert cell["label"] == "error" and cell["url"] == "Gather/numpy/take/oob-positive.html"
    assert (user / "site" / "Gather" / "numpy" / "take" / "oob-positive.html").is_file()
    schema = json.loads((user / "site" / "api" / "schema.json").read_text())
    assert set(schema["$defs"]) >= {"Cell", "Index", "Port", "System", "History"}
    assert sorted(p.name for p in user.iterdir()) == ["results", "site"]  # nothing written elsewhere
