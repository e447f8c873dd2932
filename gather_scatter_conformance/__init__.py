"""gather-scatter-conformance: a cross-framework conformance harness for tensor indexing operators.

Subpackages, from the bottom of the data flow up: ``vocab`` (operators, dtypes, variant names, the array wire
format), ``harness.cases`` and ``harness.reference`` (case files and the canonical semantics), ``adapters`` (one
per framework; the public adapter API is :mod:`gather_scatter_conformance.api`), ``harness.run`` and
``harness.judge`` (running and judging a case), ``harness.report``. Importing this package imports nothing else.
"""

from __future__ import annotations


def __getattr__(name: str) -> str:
    # The version is asked of the installed distribution only when someone wants it: importing the package stays free.
    if name == "__version__":
        from importlib.metadata import PackageNotFoundError, version

        try:
            return version("gather-scatter-conformance")
        except PackageNotFoundError:
            return "0+unknown"
    raise AttributeError(name)
