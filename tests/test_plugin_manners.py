"""The plugin in someone else's pytest: it is loaded into every run of the environment it is installed in.

- Its options are ``--gsc-...``; the unprefixed aliases are kept only where no common plugin (pytest-playwright,
  pytest-xdist, pytest-benchmark) has the name. ``--device`` is pytest-playwright's, so ours is ``--gsc-device``.
- An unrelated run imports none of the harness: no NumPy, pydantic or PyYAML, none of our heavier modules.
- Case ids do not depend on the current directory: the shipped corpus is ``cases/...`` from anywhere; a user's
  files are named relative to pytest's rootdir.
"""

from __future__ import annotations

import importlib.metadata
import json
import os
import re
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from _cases import records_of

from gather_scatter_conformance import resources
from gather_scatter_conformance.harness.run import pytest_plugin

ROOT = Path(__file__).resolve().parents[1]
PLUGIN = "gather_scatter_conformance.harness.run.pytest_plugin"
# The modules an unrelated run may hold of ours: the plugin module and the packages above it (stdlib-only).
LIGHT = {"gather_scatter_conformance", "gather_scatter_conformance.harness", "gather_scatter_conformance.harness.run",
         PLUGIN}
CASE = """\
op: Gather
cases:
  - id: second-row
    source: "ONNX Gather-13 semantics"
    inputs: {data: [[1, 2], [3, 4]], indices: [1]}
    expected: [[3, 4]]
"""


def _env(**extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PYTEST_", "GSC_"))}
    env["PYTHONPATH"] = os.pathsep.join([str(ROOT), *filter(None, [os.environ.get("PYTHONPATH")])])
    return {**env, **extra}


def _pytest(args: list[str], cwd: Path, **env: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "pytest", "-p", "no:cacheprovider", *args], cwd=cwd,
                          env=_env(**env), capture_output=True, text=True, timeout=300)


def _our_section(help_text: str) -> str:
    """The lines of ``pytest --help`` under our option group's heading."""
    part = help_text.split("gather-scatter conformance run:", 1)[1]
    return re.split(r"\n\S", part, maxsplit=1)[0]  # up to the next heading (a line that starts in column 0)


def test_options_live_beside_playwright_xdist_and_benchmark(tmp_path: Path) -> None:
    for module in ("pytest_playwright", "xdist", "pytest_benchmark"):
        pytest.importorskip(module, reason=f"needs {module} (the dev extra installs it)")
    # Every plugin of the environment loaded, as in a user's run: ours by its entry point (-p where the checkout is
    # not installed).
    installed = any(e.value == PLUGIN for e in importlib.metadata.entry_points(group="pytest11"))
    proc = _pytest(["--help", *([] if installed else ["-p", PLUGIN])], tmp_path)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    text = proc.stdout
    # The three plugins were really loaded: argparse refuses a second definition of any of their option strings.
    for theirs in ("--browser", "--device", "--numprocesses", "--benchmark-disable"):
        assert re.search(rf"^\s+(-\w \S+, )?{theirs}\b", text, re.M), f"{theirs} missing: is its plugin loaded?"
    ours = _our_section(text)
    names = re.findall(r"(?<![\w-])(--[a-z][\w-]*)", ours)
    assert "--device" not in names, "pytest-playwright's --device must not be ours"
    prefixed = {n for n in names if n.startswith("--gsc-")}
    aliases = {n for n in names if not n.startswith("--gsc-")}
    assert {"--gsc-framework", "--gsc-device", "--gsc-results", "--gsc-case-glob"} <= prefixed, prefixed
    # Each alias is the second name of one of our --gsc- options, never an option of its own.
    for alias in aliases:
        assert re.search(rf"--gsc-{re.escape(alias[2:])}\b[^\n]*, {re.escape(alias)}\b", ours), alias


def test_every_option_has_a_gsc_name_and_dest() -> None:
    assert pytest_plugin._DEFAULTS, "no option recorded"
    assert all(dest.startswith("gsc_") for dest in pytest_plugin._DEFAULTS), pytest_plugin._DEFAULTS


def _modules_after(args: list[str], folder: Path) -> list[str]:
    """Run pytest in ``folder`` with only our plugin loaded; the modules of ours, NumPy, pydantic and PyYAML that
    its process held at the end."""
    (folder / "conftest.py").write_text(textwrap.dedent("""\
        import json, sys

        def pytest_unconfigure(config):
            names = [m for m in sys.modules
                     if m.split(".")[0] in ("numpy", "pydantic", "yaml", "gather_scatter_conformance")]
            with open("modules.json", "w") as fh:
                json.dump(sorted(names), fh)
        """))
    # Only our plugin: the environment's others (hypothesis, jaxtyping) import NumPy themselves.
    proc = _pytest(["-p", PLUGIN, *args], folder, PYTEST_DISABLE_PLUGIN_AUTOLOAD="1")
    assert proc.returncode in (0, 1), proc.stdout[-3000:] + proc.stderr[-3000:]
    return json.loads((folder / "modules.json").read_text())


def test_an_unrelated_run_imports_nothing_heavy(tmp_path: Path) -> None:
    (tmp_path / "test_unrelated.py").write_text("def test_sum():\n    assert sum([1, 2]) == 3\n")
    (tmp_path / "ci.yaml").write_text("name: ci\non: [push]\n")  # YAML, not a case file: read, never parsed
    loaded = _modules_after(["-q"], tmp_path)  # collects the folder: both files
    assert set(loaded) <= LIGHT, sorted(set(loaded) - LIGHT)


def test_a_case_file_brings_the_harness_in(tmp_path: Path) -> None:
    # The other side of the test above: what it must not see is what a conformance run does import.
    (tmp_path / "gather.yaml").write_text(CASE)
    loaded = _modules_after(["gather.yaml", "-q", "--gsc-isolation", "none", "--gsc-framework", "numpy"], tmp_path)
    assert {"numpy", "pydantic", "yaml", "gather_scatter_conformance.adapters"} <= set(loaded)


def test_a_named_yaml_file_without_a_case_files_keys_is_an_error_naming_the_field(tmp_path: Path) -> None:
    # Walking a folder passes over YAML that is not a case file (test above); a file named on the command line is
    # the user's case file, and a forgotten `op:` must say so (pytest's own answer was a bare "not found").
    (tmp_path / "mine.yaml").write_text(CASE.replace("op: Gather\n", ""))
    assert "op:" in CASE and "op:" not in (tmp_path / "mine.yaml").read_text()
    proc = _pytest(["mine.yaml", "-q", "--gsc-framework", "numpy", "--gsc-isolation", "none"], tmp_path)
    out = proc.stdout + proc.stderr
    assert proc.returncode == 1, out
    assert "mine.yaml:1: op: Field required" in out and "not found" not in out, out


@pytest.mark.slow
def test_shipped_case_ids_are_the_same_from_any_directory(tmp_path: Path) -> None:
    corpus = resources.cases_dir().resolve()
    (tmp_path / "a" / "b").mkdir(parents=True)
    runs = []
    for cwd in (tmp_path, tmp_path / "a" / "b", ROOT):
        results = tmp_path / f"r{len(runs)}.jsonl"
        proc = _pytest([str(corpus / "gather_nd.yaml"), "-q", "--gsc-framework", "numpy", "--gsc-variants",
                        "default", "--gsc-isolation", "none", "--gsc-results", str(results)], cwd)
        assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-2000:]
        runs.append({r["case"] for r in records_of(results)})
    assert runs[0] and {c.partition("::")[0] for c in runs[0]} == {"cases/gather_nd.yaml"}
    assert runs[0] == runs[1] == runs[2]


@pytest.mark.slow
def test_user_case_ids_are_relative_to_the_rootdir(tmp_path: Path) -> None:
    project = tmp_path / "project"
    (project / "conformance").mkdir(parents=True)
    (project / "pytest.ini").write_text("[pytest]\n")  # the rootdir, from wherever pytest is started inside it
    (project / "conformance" / "mine.yaml").write_text(CASE)
    ids = []
    for cwd, arg in ((project, "conformance"), (project / "conformance", "."), (project / "conformance", "mine.yaml")):
        results = tmp_path / f"r{len(ids)}.jsonl"
        proc = _pytest([arg, "-q", "--gsc-framework", "numpy", "--gsc-isolation", "none", "--gsc-results",
                        str(results)], cwd)
        assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-2000:]
        ids.append({r["case"] for r in records_of(results)})
    assert ids == [{"conformance/mine.yaml::second-row"}] * 3


def test_only_resources_and_the_run_machinery_locate_files_by_the_package_path() -> None:
    # Commands write where the user points (by default the current directory), and read shipped data through
    # resources.py: a module that makes paths from its own location would read or write inside site-packages.
    # The parse and result caches hash the package's own source files (read only).
    allowed = {"resources.py", "harness/cases/cache.py", "harness/run/cache.py", "harness/report/page.py"}
    package = ROOT / "gather_scatter_conformance"
    found = {p.relative_to(package).as_posix() for p in package.rglob("*.py")
             if re.search(r"Path\(__file__\)", p.read_text(encoding="utf-8"))}
    assert found <= allowed, sorted(found - allowed)
