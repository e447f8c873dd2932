"""The adapter registry: every adapter registered in the entry-point group ``gather_scatter_conformance.adapters``,
looked up by name. The built-in adapters register there too (pyproject.toml), so a third party's adapter is found,
listed and run exactly as they are. Looking an adapter up imports its module, never its framework.
"""

from __future__ import annotations

import importlib
import importlib.metadata
import importlib.util
from functools import cache
from pathlib import Path

from gather_scatter_conformance.adapters.base import ENTRY_POINT_GROUP, Adapter

DISTRIBUTION = "gather-scatter-conformance"
_table: dict[str, str] | None = None


def table() -> dict[str, str]:
    """Adapter name -> ``"module:ATTRIBUTE"``, in report order: frameworks' own adapters by name, then converter
    paths by name, whichever distribution registers them. Where two distributions register one name, this
    distribution's entry wins (a third party cannot replace a built-in adapter by accident)."""
    global _table
    if _table is None:
        found: dict[str, str] = {}
        for point in importlib.metadata.entry_points(group=ENTRY_POINT_GROUP):
            own = point.dist is not None and _normal(point.dist.name) == DISTRIBUTION
            if own or point.name not in found:
                found[point.name] = point.value
        _table = {name: found[name] for name in sorted(found, key=lambda n: (is_path(n), n))}
    return _table


def _normal(distribution: str) -> str:
    return distribution.lower().replace("_", "-").replace(".", "-")


def use(entries: dict[str, str]) -> None:
    """Make ``entries`` this process's registry: a worker in another interpreter (where this distribution is not
    installed, or its entry points differ) runs the adapters its parent resolved."""
    global _table
    _table = dict(entries)
    get.cache_clear()


def register(name: str, spec: str) -> None:
    """Add ``name`` -> ``spec`` (``"module:ATTRIBUTE"``) to this process's registry: an adapter made at run time
    rather than installed (``--onnx-backend``: adapters.onnx_backend). Worker processes get it with :func:`table`.
    ValueError where ``name`` is registered to another spec."""
    entries = table()
    if entries.get(name, spec) != spec:
        raise ValueError(f"adapter {name!r} is registered as {entries[name]}, not {spec}")
    entries[name] = spec


def names() -> list[str]:
    """Every registered adapter name, in report order."""
    return list(table())


@cache
def get(name: str) -> Adapter:
    """The adapter registered as ``name`` (its module imported once; its framework only when it runs a case).

    KeyError names the registered ones; TypeError says what a malformed registration points at.
    """
    if name not in table():
        raise KeyError(f"unknown framework {name!r}; registered: {', '.join(table())}")
    module, _, attribute = table()[name].partition(":")
    adapter = getattr(importlib.import_module(module), attribute or "ADAPTER")
    if not isinstance(adapter, Adapter) or adapter.name != name:
        raise TypeError(f"entry point {name} = {table()[name]} in group {ENTRY_POINT_GROUP} must be an "
                        f"Adapter instance named {name!r}, not {adapter!r}")
    return adapter


def missing(name: str) -> list[str]:
    """What ``name`` lacks in this interpreter to run: its required modules and distribution that are absent
    (nothing imported); [] when it can run here."""
    adapter = get(name)
    out = []
    if adapter.distribution:
        try:
            importlib.metadata.distribution(adapter.distribution)
        except importlib.metadata.PackageNotFoundError:
            out.append(adapter.distribution)
    for module in adapter.requires:
        try:
            found = importlib.util.find_spec(module) is not None
        except (ImportError, ValueError):
            found = False
        if not found:
            out.append(module)
    return out


def framework_modules() -> list[str]:
    """Every top-level module some registered adapter requires, bar NumPy (the harness's own dependency): the
    modules that collecting cases must not import. Nothing is imported to find out."""
    return sorted({m for name in names() for m in get(name).requires} - {"numpy"})


def is_available(name: str) -> bool:
    """True when ``name`` is registered and its framework is installed in this interpreter (nothing imported)."""
    return name in table() and not missing(name)


def install_hint(name: str) -> str:
    """One line saying how to install what ``name`` needs: its extra, or the modules it lacks."""
    adapter = get(name)
    if adapter.extra:
        return f"pip install '{DISTRIBUTION}[{adapter.extra}]'"
    return f"install {', '.join(missing(name) or adapter.requires)}"


def venv_pythons(root: Path) -> dict[str, str]:
    """Framework -> interpreter for every framework not installed here that has a project venv
    ``<root>/.venv-<name>`` (MXNet's ``.venv-mxnet``): how runs reach a framework in another interpreter."""
    out = {}
    for name in names():
        venv = root / f".venv-{name}" / "bin" / "python"
        if venv.exists() and not is_available(name):
            out[name] = str(venv)
    return out


def is_path(name: str) -> bool:
    """True for a converter path (``<source>~<converter>~<target>``), False for a framework's own adapter."""
    return "~" in name
