"""No import cycles among the project's own modules (the ``gather_scatter_conformance`` package).

Two graphs are checked. Module-level imports (``import x`` / ``from x import y`` outside any function or class
body, ``if TYPE_CHECKING:`` blocks excluded) run when a module loads: a cycle there can break loading. Every import,
lazy ones inside functions included, says which module needs which: a cycle there means two modules that cannot be
understood apart, and the layout (case -> adapter -> record -> judge -> report) has none. Lazy imports stay the
sanctioned way for adapters to put off importing a framework; they just must not close a loop. A
``from package import module`` counts as an edge to the package and to that module.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = ("gather_scatter_conformance",)


def _module_name(path: Path) -> str:
    parts = path.relative_to(ROOT).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _modules(package: str) -> dict[str, Path]:
    return {_module_name(p): p for p in sorted((ROOT / package).rglob("*.py"))}


def _top_level_imports(tree: ast.Module) -> list[ast.Import | ast.ImportFrom]:
    """Imports executed when the module loads: module body and its if/try blocks, not functions or classes."""
    found: list[ast.Import | ast.ImportFrom] = []
    stack: list[ast.stmt] = list(tree.body)
    while stack:
        node = stack.pop()
        if isinstance(node, ast.Import | ast.ImportFrom):
            found.append(node)
        elif isinstance(node, ast.If):
            if "TYPE_CHECKING" not in ast.unparse(node.test):
                stack += node.body + node.orelse
        elif isinstance(node, ast.Try):
            stack += node.body + node.orelse + node.finalbody + [s for h in node.handlers for s in h.body]
        elif isinstance(node, ast.With):
            stack += node.body
    return found


def _all_imports(tree: ast.Module) -> list[ast.Import | ast.ImportFrom]:
    """Every import statement of a module, wherever it stands (functions and classes included)."""
    return [n for n in ast.walk(tree) if isinstance(n, ast.Import | ast.ImportFrom)]


def import_graph(packages: tuple[str, ...] = PACKAGES, lazy: bool = False) -> dict[str, set[str]]:
    """Module -> the project modules it imports at module level (with ``lazy``, anywhere in it)."""
    modules = {name: path for pkg in packages for name, path in _modules(pkg).items()}
    graph: dict[str, set[str]] = {name: set() for name in modules}
    for name, path in modules.items():
        is_package = path.name == "__init__.py"
        tree = ast.parse(path.read_text(), str(path))
        for node in (_all_imports(tree) if lazy else _top_level_imports(tree)):
            if isinstance(node, ast.Import):
                targets = [a.name for a in node.names]
            else:
                base = node.module or ""
                if node.level:  # relative import: resolve against this module's package
                    pkg = name.split(".") if is_package else name.split(".")[:-1]
                    pkg = pkg[: len(pkg) - (node.level - 1)]
                    base = ".".join(pkg + ([base] if base else []))
                targets = [base] + [f"{base}.{a.name}" for a in node.names]
            graph[name] |= {t for t in targets if t in modules and t != name}
    return graph


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Every strongly connected component of more than one module (each holds at least one cycle), sorted."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    on_stack: set[str] = set()
    stack: list[str] = []
    found: list[list[str]] = []

    def visit(v: str) -> None:  # Tarjan's algorithm; the graph is a few dozen modules, recursion is fine
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in sorted(graph[v]):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return sorted(found)


def test_the_graph_sees_module_level_imports_only() -> None:
    graph = import_graph()
    adapters = "gather_scatter_conformance.adapters"
    assert f"{adapters}.base" in graph[f"{adapters}.openvino"]
    assert f"{adapters}.tensorrt_engine" not in graph[f"{adapters}.tensorrt"]  # imported inside functions only


def test_cycle_search_finds_a_cycle() -> None:
    assert cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]


def test_no_module_level_cycles_among_harness_and_adapters() -> None:
    assert cycles(import_graph()) == []


@pytest.mark.slow  # over 5 s here (make check: tests under 5 s each)
def test_no_cycles_even_counting_lazy_imports() -> None:
    adapters = "gather_scatter_conformance.adapters"
    assert f"{adapters}.tensorrt_engine" in import_graph(lazy=True)[f"{adapters}.tensorrt"]  # it sees lazy imports
    assert cycles(import_graph(lazy=True)) == []
