"""Every per-framework list outside the adapter registry agrees with it (docs/adapter-api.md: each adapter declares
its facts once, as class attributes; the registry is the entry-point group ``gather_scatter_conformance.adapters``).

Lists that can be derived from the registry are (the collection import check, the benchmark's framework modules,
the release sweeps' rules, the GPU tests); the ones that cannot, because another tool reads them, are checked here:
the pyproject extras, the tox environments and the report's ``depends``, the workflows' matrices, the mapping docs
and the per-framework data files. Each check fails naming what is missing or extra, and where.
"""

from __future__ import annotations

import functools
import importlib.metadata
import re
import subprocess
import sys
from collections.abc import Iterable, Mapping
from pathlib import Path

import pytest
import yaml
from packaging.requirements import Requirement

from gather_scatter_conformance import adapters
from gather_scatter_conformance.adapters.base import DEVICES
from gather_scatter_conformance.vocab.ops import OPS
from scripts import ci_matrix

try:
    import tomllib
except ModuleNotFoundError:  # Python 3.10
    tomllib = pytest.importorskip("tomli")

ROOT = Path(__file__).resolve().parents[1]
DISTRIBUTION = "gather-scatter-conformance"
NAMES = adapters.names()
FRAMEWORKS = [n for n in NAMES if not adapters.is_path(n)]
PATHS = [n for n in NAMES if adapters.is_path(n)]


def differences(where: str, expected: Iterable[str], found: Iterable[str]) -> list[str]:
    """One line per name ``where`` lacks or has beyond ``expected`` (empty when they agree)."""
    expected, found = set(expected), set(found)
    return ([f"{where}: missing {', '.join(sorted(expected - found))}"] if expected - found else []) + (
        [f"{where}: not registered {', '.join(sorted(found - expected))}"] if found - expected else [])


def test_differences_name_both_sides() -> None:
    assert differences("x", {"a", "b"}, {"b", "c"}) == ["x: missing a", "x: not registered c"]
    assert differences("x", {"a"}, {"a"}) == []


# --- the adapters' own facts ------------------------------------------------------------------------------------


def test_every_adapter_declares_its_facts() -> None:
    problems = []
    for name in NAMES:
        a = adapters.get(name)
        if not a.requires:
            problems.append(f"{name}: no requires")
        if not a.devices or not set(a.devices) <= set(DEVICES):
            problems.append(f"{name}: devices {a.devices} not among {DEVICES}")
        if not a.mapping or not (ROOT / a.mapping).is_file():
            problems.append(f"{name}: mapping {a.mapping!r} is no file of this repository")
        if a.releases is not None and a.releases.registry == "pypi" and a.releases.module not in a.requires:
            problems.append(f"{name}: releases.module {a.releases.module!r} is not among requires {a.requires}")
        if not any(a.variants(op) for op in OPS):
            problems.append(f"{name}: maps no operator")
    assert problems == []


def test_looking_up_every_adapter_and_its_facts_imports_no_framework() -> None:
    """What collection and the commands ask of an adapter (variants, slowness, devices, availability) imports none
    of any adapter's modules, for every registered adapter, installed or not."""
    code = ("import sys; from gather_scatter_conformance import adapters; from gather_scatter_conformance.vocab.ops "
            "import OPS\nfor n in adapters.names():\n a = adapters.get(n); a.unavailable(); adapters.missing(n)\n"
            " for op in (*OPS, 'NoSuchOp'): [a.is_slow(v) for v in a.variants(op)]\n"
            "bad = [m for m in adapters.framework_modules() if m in sys.modules]; assert not bad, bad")
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr[-2000:]


# --- pyproject.toml: the extras ---------------------------------------------------------------------------------

PYPROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text())
EXTRAS: dict[str, list[str]] = PYPROJECT["project"]["optional-dependencies"]


def _normal(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def base_distributions() -> set[str]:
    """The harness's own dependencies, which every extra installs."""
    return {_normal(Requirement(r).name) for r in PYPROJECT["project"]["dependencies"]}


def extra_distributions(extra: str, seen: tuple[str, ...] = ()) -> set[str]:
    """The distributions ``pip install gather-scatter-conformance[extra]`` installs by name (the harness's own
    dependencies included; an extra that names this distribution's other extras expands them); KeyError for an
    extra pyproject.toml does not define."""
    out = base_distributions()
    for text in EXTRAS[extra]:
        req = Requirement(text)
        if _normal(req.name) == DISTRIBUTION:
            out |= {d for e in sorted(req.extras) if e not in seen for d in extra_distributions(e, (*seen, extra))}
        else:
            out.add(_normal(req.name))
    return out


@functools.cache
def _installed_distributions() -> Mapping[str, list[str]]:
    return importlib.metadata.packages_distributions()  # reads every installed distribution's file list: once


def _providers(module: str) -> set[str]:
    """The distributions that install ``module``: from installed metadata where it is installed here, else a
    distribution named after it (mxnet; tensorrt-cu12 for tensorrt)."""
    installed = _installed_distributions().get(module)
    if installed:
        return {_normal(d) for d in installed}
    return {_normal(module), f"{_normal(module)}-*"}


def _installs(distributions: set[str], module: str, also: str | None) -> bool:
    wanted = _providers(module) | ({_normal(also)} if also else set())
    prefixes = tuple(w[:-1] for w in wanted if w.endswith("*"))
    return bool(wanted & distributions) or any(d.startswith(prefixes) for d in distributions if prefixes)


def uninstalled(name: str, extras: Iterable[str]) -> list[str]:
    """What adapter ``name`` needs that ``pip install gather-scatter-conformance[extras]`` leaves out: its
    distribution, and each required module no installed distribution provides."""
    a = adapters.get(name)
    dists = set().union(base_distributions(), *(extra_distributions(e) for e in extras))
    out = [a.distribution] if a.distribution and _normal(a.distribution) not in dists else []
    return out + [m for m in a.requires if not _installs(dists, m, a.distribution if m == a.requires[0] else None)]


def extra_problems() -> list[str]:
    """What the extras lack: an adapter's extra that is not defined, or that leaves out what the adapter needs.
    A converter path needs its own extra and its source's and target's (a target that is no adapter, as Core ML,
    which only the OS provides, adds none)."""
    problems = []
    for name in NAMES:
        a = adapters.get(name)
        parts = [a] + ([adapters.get(n) for n in (a.source, a.target) if n in NAMES] if adapters.is_path(name) else [])
        needed = sorted({p.extra for p in parts if p.extra})
        undefined = [e for e in needed if e not in EXTRAS]
        if undefined:
            problems.append(f"{name}: extra {', '.join(undefined)} is not in [project.optional-dependencies]")
        elif uninstalled(name, needed):
            problems.append(f"{name}: extras {needed or '(none)'} install nothing that provides "
                            f"{', '.join(uninstalled(name, needed))}")
    for extra in EXTRAS:
        try:
            extra_distributions(extra)
        except KeyError as exc:
            problems.append(f"extra {extra}: names the undefined extra {exc}")
    return problems


def test_each_adapters_extra_installs_its_modules() -> None:
    assert extra_problems() == []


# --- tox.ini: environments, env_list and the report's depends ---------------------------------------------------


@pytest.fixture(scope="module")
def tox() -> dict[str, dict[str, str]]:
    """tox's own reading of tox.ini (factor expansion included): section -> key -> value."""
    pytest.importorskip("tox")
    return ci_matrix.tox_config(ROOT / "tox.ini")


def _list(value: str) -> list[str]:
    return ci_matrix.split_list(value)


def _envs(tox: dict[str, dict[str, str]]) -> dict[str, dict[str, list[str]]]:
    """Each environment's labels, depends, extras and the adapters it runs (GSC_FRAMEWORKS, groups expanded)."""
    return ci_matrix.environments(tox)


def _labelled(envs: dict[str, dict[str, list[str]]], *labels: str) -> set[str]:
    return {e for e, v in envs.items() if set(labels) & set(v["labels"])}


def tox_problems(tox: dict[str, dict[str, str]]) -> list[str]:
    """tox.ini against the registry: every adapter runs in an environment, every environment runs registered
    adapters with their extras (the pinned ``cpu`` ones), ``env_list`` is the cpu environments and report, and the
    report's ``depends`` is every cpu environment (it merges their results)."""
    envs = _envs(tox)
    problems = differences("tox environments' GSC_FRAMEWORKS", NAMES, {n for v in envs.values() for n in v["runs"]})
    cpu = _labelled(envs, "cpu")
    for env in sorted(cpu):
        for name in envs[env]["runs"]:
            if name not in NAMES:
                continue
            lacking = uninstalled(name, [e for e in envs[env]["extras"] if e in EXTRAS])
            if lacking:
                problems.append(f"tox env {env}: runs {name}, but its extras install nothing that provides "
                                f"{', '.join(lacking)}")
    problems += differences("tox env_list", cpu | {"report"}, _list(tox["tox"]["env_list"]))
    problems += differences("tox env report's depends", cpu, envs["report"]["depends"])
    return problems


def test_tox_environments_run_every_adapter_and_the_report_waits_for_them(tox: dict[str, dict[str, str]]) -> None:
    assert tox_problems(tox) == []


def test_a_framework_left_out_of_the_report_depends_is_named(tox: dict[str, dict[str, str]]) -> None:
    broken = {k: dict(v) for k, v in tox.items()}
    broken["testenv:report"]["depends"] = broken["testenv:report"]["depends"].replace("tvm", "")
    assert "tox env report's depends: missing tvm" in tox_problems(broken)


# --- the workflows ----------------------------------------------------------------------------------------------

WORKFLOWS = sorted((ROOT / ".github" / "workflows").glob("*.yml"))


def workflow_envs(texts: Iterable[str], generated: Iterable[str] = ()) -> tuple[set[str], set[str]]:
    """(every tox environment some workflow runs, those of the nightly's ``framework`` matrix). A matrix generated
    by a ``plan`` job (``${{ fromJSON(needs.plan.outputs.matrix) }}``, from scripts/ci_matrix.py nightly) holds
    ``generated``."""
    runs: set[str] = set()
    matrix: set[str] = set()
    for text in texts:
        flow = yaml.safe_load(text)
        for job_name, job in flow.get("jobs", {}).items():
            declared = job.get("strategy", {}).get("matrix", {})
            envs = list(generated) if declared == "${{ fromJSON(needs.plan.outputs.matrix) }}" and any(
                "scripts/ci_matrix.py nightly" in str(step.get("run", ""))
                for step in flow["jobs"].get("plan", {}).get("steps", [])) else (
                declared.get("env", []) if isinstance(declared, dict) else [])
            runs |= set(envs)
            if job_name == "framework":
                matrix |= set(envs)
            for step in job.get("steps", []):
                runs |= set(re.findall(r"tox -e ([\w.-]+)", str(step.get("run", ""))))
    return runs - {"${{"}, matrix


def workflow_problems(tox: dict[str, dict[str, str]], texts: Iterable[str]) -> list[str]:
    """The nightly matrix holds every cpu, latest and nightly environment; the workflows together run every
    registered adapter; and they name only environments tox.ini defines."""
    envs = _envs(tox)
    runs, matrix = workflow_envs(texts, ci_matrix.nightly(envs))
    problems = [f"nightly matrix: missing {e}" for e in sorted(_labelled(envs, "cpu", "latest", "nightly") - matrix)]
    problems += [f"workflows: tox env {e} is not in tox.ini" for e in sorted(runs - set(envs))]
    problems += differences("workflows' tox environments", NAMES,
                            {n for e in runs if e in envs for n in envs[e]["runs"]})
    return problems


def test_the_workflows_run_every_adapter(tox: dict[str, dict[str, str]]) -> None:
    assert workflow_problems(tox, [p.read_text() for p in WORKFLOWS]) == []


def test_the_nightly_matrix_is_generated_from_the_registry(tox: dict[str, dict[str, str]]) -> None:
    """#28: the nightly's matrix was a list in the workflow, checked here after the fact. It is generated now: the
    plan job's output, every registered CPU adapter's environment then the latest and nightly ones."""
    envs = _envs(tox)
    flow = yaml.safe_load((ROOT / ".github" / "workflows" / "nightly.yml").read_text())
    assert flow["jobs"]["framework"]["strategy"]["matrix"] == "${{ fromJSON(needs.plan.outputs.matrix) }}"
    generated = ci_matrix.nightly(envs)
    assert set(generated) == _labelled(envs, "cpu", "latest", "nightly") and len(generated) == len(set(generated))
    cpu_adapters = {n for n in NAMES if "cpu" in adapters.get(n).devices}
    assert cpu_adapters <= {n for e in generated for n in envs[e]["runs"]}


def test_an_adapter_without_a_cpu_environment_stops_the_nightly_plan(tox: dict[str, dict[str, str]]) -> None:
    envs = {k: v for k, v in _envs(tox).items() if k != "paddle"}
    with pytest.raises(SystemExit, match="no tox environment labelled cpu runs paddle"):
        ci_matrix.nightly(envs)


def test_the_weekly_sweep_keeps_what_was_swept_and_adds_newer_series(tmp_path: Path) -> None:
    """One job per framework × range of releases: the committed history's releases as swept, the newest patch of
    each newer minor series, and for a framework never swept its newest four series."""
    from gather_scatter_conformance.harness.history import pins, store

    for release in ("1.16.3", "1.17.0", "1.18.1"):
        store.write_release(tmp_path, "onnxruntime", release, [{"framework": "onnxruntime", "release": release,
                                                                "status": "import-failed", "reason": "test"}])
    index = {"onnxruntime": ("1.16.3", "1.17.0", "1.17.3", "1.18.1", "1.19.0", "1.19.2", "1.20.0"),
             "openvino": ("2024.0.0", "2024.1.0", "2024.2.0", "2024.3.0", "2024.4.0", "2024.4.1")}
    jobs = ci_matrix.sweep(tmp_path, 3, lambda name: index.get(name, ()))
    ort = [j["releases"] for j in jobs if j["framework"] == "onnxruntime"]
    assert ort == ["1.16.3,1.17.0,1.18.1", "1.19.2,1.20.0"]
    assert [j["releases"] for j in jobs if j["framework"] == "openvino"] == ["2024.1.0,2024.2.0,2024.3.0", "2024.4.1"]
    assert {j["framework"] for j in jobs} <= set(pins.sweepable()) and "directml" not in {j["framework"] for j in jobs}
    assert len({j["part"] for j in jobs}) == len(jobs)


# --- docs/mapping ---------------------------------------------------------------------------------------------

MAPPING = ROOT / "docs" / "mapping" / "README.md"


def mapping_table(text: str) -> dict[str, dict[str, list[str]]]:
    """The README's variants table: framework -> operator -> variants (in the order written)."""
    rows = [[c.strip() for c in line.strip().strip("|").split("|")] for line in text.splitlines()
            if line.startswith("| ") and not line.startswith("|---")]
    header = next(r for r in rows if r[0] == "operator")
    table: dict[str, dict[str, list[str]]] = {fw: {} for fw in header[1:]}
    for row in rows[rows.index(header) + 1:]:
        for fw, cell in zip(header[1:], row[1:], strict=True):
            table[fw][row[0]] = re.findall(r"`([^`]+)`", cell)
    return table


def mapping_problems(text: str) -> list[str]:
    """The mapping README against the registry: a column per framework adapter, each cell its variants, and a
    link to each adapter's own mapping page."""
    table = mapping_table(text)
    problems = differences("docs/mapping/README.md table", FRAMEWORKS, table)
    for fw in sorted(set(table) & set(FRAMEWORKS)):
        for op in OPS:
            if table[fw].get(op) != adapters.get(fw).variants(op):
                problems.append(f"docs/mapping/README.md: {fw} {op} says {table[fw].get(op)}, the adapter "
                                f"{adapters.get(fw).variants(op)}")
        page = Path(adapters.get(fw).mapping).name
        if f"]({page})" not in text:
            problems.append(f"docs/mapping/README.md: no link to {fw}'s page {page}")
    return problems


def test_the_mapping_docs_agree_with_the_adapters() -> None:
    assert mapping_problems(MAPPING.read_text()) == []


def test_a_variant_the_docs_lack_is_named() -> None:
    broken = MAPPING.read_text().replace("`np.take`<br>", "", 1)
    assert any(p.startswith("docs/mapping/README.md: mxnet Gather says") for p in mapping_problems(broken))


# --- data files and test lists --------------------------------------------------------------------------------


@pytest.mark.parametrize("folder", ["baselines", "known"])
def test_per_framework_data_files_name_registered_adapters(folder: str) -> None:
    """A renamed or removed adapter leaves no orphan baseline or known file (claims cover more: onnx, caffe2)."""
    assert [p.name for p in sorted((ROOT / folder).glob("*.yaml")) if p.stem not in NAMES] == []


def test_the_default_axis_test_runs_registered_frameworks() -> None:
    from tests.test_default_axis import FRAMEWORKS as default_axis

    assert sorted(set(default_axis) - set(FRAMEWORKS)) == []
