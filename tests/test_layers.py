"""Imports run one way only: down the data flow (docs/architecture.md, "Rules the layout keeps").

Each subpackage of ``gather_scatter_conformance`` has a rank, bottom to top. A module may import its own layer and
the layers of lower ranks, never one of its own rank or above: every import is walked, lazy ones inside functions
and ``if TYPE_CHECKING:`` ones included (a lazy import is still a dependency), as tests/test_import_cycles.py walks
them. A failure names the file, the line and both modules.
"""

from __future__ import annotations

import ast
from pathlib import Path

from tests.test_import_cycles import ROOT, _modules

PACKAGE = "gather_scatter_conformance"

# Bottom to top. Layers on one line share a rank and may not import each other.
RANKS: tuple[tuple[str, ...], ...] = (
    ("",),  # the package itself: its version, asked of the installed metadata; it imports nothing
    # the harness's __init__, the shared vocabulary (operators, dtypes, dimensions, variant names, the array wire
    # format, the record) and where the shipped data lives
    ("harness", "vocab", "resources"),
    ("harness.reference",),  # the canonical semantics, and how an output is compared with it
    ("harness.cases",),  # case files, checked against the reference engine when they load
    ("adapters",),  # a case -> a framework's native call (the registry included)
    ("api",),  # the public adapter API: a face of adapters.base for third parties
    ("harness.judge",),  # what an observation means: verdict, label, baseline, known deviations
    ("harness.run",),  # running a case in isolation and recording it (the pytest plugin included)
    ("harness.history",),  # release sweeps: runs of old releases, folded into history files
    ("harness.evidence",),  # the memory checkers' evidence for memory-unsafe findings, and the advisories
    # what a reader sees: tables, claims, the page, repro scripts' place on it, upstream issues (with the evidence)
    ("harness.report",),
    ("harness.importers",),  # making cases from ONNX node tests and bug reports (they run them)
    ("harness.fuzz",),  # making cases by differential fuzzing (written with the importers' writer)
    ("harness.console",),  # the terminal face of gsc run: progress per phase, the failure log, the summary table
    ("harness.scaffold",),  # gsc new-adapter: the package a runtime team starts from (it knows the adapters)
    ("harness.cli",),  # the commands
    ("__main__",),  # python -m gather_scatter_conformance
)
RANK = {layer: rank for rank, layers in enumerate(RANKS) for layer in layers}


def layer_of(module: str) -> str | None:
    """The layer of a module of the package: the longest ranked prefix of its name below the package (None: no
    layer has a rank for it)."""
    parts = module.split(".")[1:]
    for n in range(len(parts), -1, -1):
        if ".".join(parts[:n]) in RANK:
            return ".".join(parts[:n])
    return None


def imports(path: Path, module: str, known: set[str]) -> list[tuple[int, str]]:
    """(line, imported module) for every import of the package's modules in ``path``, wherever it stands; a
    ``from package import name`` counts as importing the package and, where ``name`` is a module, that module."""
    is_package = path.name == "__init__.py"
    out = []
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            targets = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:  # relative: resolve against this module's package
                pkg = module.split(".") if is_package else module.split(".")[:-1]
                base = ".".join(pkg[: len(pkg) - (node.level - 1)] + ([base] if base else []))
            targets = [base] + [f"{base}.{a.name}" for a in node.names]
        else:
            continue
        out += [(node.lineno, t) for t in targets if t in known and t != module]
    return out


def upward_imports(modules: dict[str, Path], root: Path = ROOT) -> list[str]:
    """One line per import that runs up or sideways: ``file:line: module (layer) imports module (layer)``."""
    known = set(modules)
    found = []
    for module, path in sorted(modules.items()):
        here = layer_of(module)
        for line, target in imports(path, module, known):
            there = layer_of(target)
            if here is not None and there is not None and there != here and RANK[there] >= RANK[here]:
                found.append(f"{path.relative_to(root)}:{line}: {module} ({here}) imports {target} ({there})")
    return found


def test_every_module_has_a_layer() -> None:
    """A new subpackage gets its rank here before anything is checked about it."""
    assert [m for m in _modules(PACKAGE) if layer_of(m) is None] == []


def test_no_import_runs_up_the_layers() -> None:
    assert upward_imports(_modules(PACKAGE)) == []


def test_run_and_judge_import_nothing_from_report() -> None:
    """The issue's own words (#24): the verdict path never reads what the report shows (claims above all)."""
    assert RANK["harness.report"] > max(RANK["harness.run"], RANK["harness.judge"])


def test_an_upward_import_is_named_with_its_file_and_line(tmp_path: Path) -> None:
    judge = tmp_path / PACKAGE / "harness" / "judge" / "verdict.py"
    judge.parent.mkdir(parents=True)
    judge.write_text("def f():\n    from gather_scatter_conformance.harness.report import claims\n")
    report = tmp_path / PACKAGE / "harness" / "report" / "claims.py"
    report.parent.mkdir(parents=True)
    report.write_text("")
    modules = {f"{PACKAGE}.harness.judge.verdict": judge, f"{PACKAGE}.harness.report.claims": report,
               f"{PACKAGE}.harness.report": report}
    found = upward_imports(modules, tmp_path)
    assert [line.split(": ", 1)[0] for line in found] == [f"{PACKAGE}/harness/judge/verdict.py:2"] * 2
    what = f"{PACKAGE}.harness.judge.verdict (harness.judge) imports {PACKAGE}.harness.report"
    assert [line.split(": ", 1)[1] for line in found] == [f"{what} (harness.report)", f"{what}.claims (harness.report)"]
