"""Refuse the frameworks' modules in this interpreter: the developer lane (`make check`, tests/conftest.py) holds
its tests, and the processes they start, to the harness's own code.

An import of a refused module raises ModuleNotFoundError naming the module and what to do: code that takes it for
"not installed" (pytest.importorskip) skips, as on a machine without that framework; other code fails with the name.
"""

from __future__ import annotations

import importlib.abc
import importlib.machinery
import importlib.util
import sys
from collections.abc import Iterable, Sequence
from types import ModuleType

# The case builders' language (onnx.helper: importers, graphs, the ONNX checker) is no framework to the lane.
ALLOWED = frozenset({"onnx"})


def refused_modules() -> list[str]:
    """Every top-level module an adapter or a converter path needs, bar NumPy and onnx
    (adapters.framework_modules, which imports no framework)."""
    from gather_scatter_conformance import adapters

    return [m for m in adapters.framework_modules() if m not in ALLOWED]


class Refused(ModuleNotFoundError):
    """A framework imported in the developer lane."""


class _Loader(importlib.abc.Loader):
    def create_module(self, spec: importlib.machinery.ModuleSpec) -> ModuleType | None:
        raise Refused(f"`make check` runs no framework, and this imports {spec.name}: mark the test "
                      "@pytest.mark.framework (docs/development.md)")

    def exec_module(self, module: ModuleType) -> None:  # never reached: create_module refuses
        raise Refused(module.__name__)


class RefuseFrameworks(importlib.abc.MetaPathFinder):
    """A finder ahead of all others that answers for the refused modules with a loader that refuses them."""

    def __init__(self, modules: Iterable[str]) -> None:
        self.modules = frozenset(modules)

    def find_spec(self, name: str, path: Sequence[str] | None = None,
                  target: ModuleType | None = None) -> importlib.machinery.ModuleSpec | None:
        if name.partition(".")[0] not in self.modules:
            return None
        return importlib.util.spec_from_loader(name, _Loader())


def install(modules: Iterable[str]) -> None:
    """Refuse ``modules`` from now on in this interpreter (once; a module imported already stays)."""
    if not any(isinstance(f, RefuseFrameworks) for f in sys.meta_path):
        sys.meta_path.insert(0, RefuseFrameworks(modules))
