"""Skip a test module whose framework is not installed, without importing it.

``pytest.importorskip`` at module level imports the framework while the suite is collected, and every pytest-xdist
worker collects every module: TensorFlow, TVM and paddle alone took 17 s of each worker's collection (2026-11-30),
in workers that then ran none of their tests. Here the framework is only looked up; the tests that use it import it.
"""

from __future__ import annotations

import importlib.machinery
import importlib.util
import os
import sys

import pytest

# The modules the developer lane refuses (make check's --no-frameworks, tests/conftest.py), comma-separated: set in
# the test process and inherited by the processes its tests start.
NO_FRAMEWORKS_ENV = "GSC_TEST_NO_FRAMEWORKS"


def installed(module: str) -> bool:
    """Whether ``module`` (dotted names too) can be imported here; nothing is imported but a dotted name's parents.

    The top-level name is looked up on sys.path directly, past the import hooks (tests/conftest.py's own); a module
    the developer lane refuses (``--no-frameworks``: tests/lanes/refuse_frameworks.py) is not installed, as an import
    of it would say."""
    top, _, rest = module.partition(".")
    if top in os.environ.get(NO_FRAMEWORKS_ENV, "").split(","):
        return False
    if top not in sys.modules and importlib.machinery.PathFinder.find_spec(top) is None:
        return False
    return not rest or importlib.util.find_spec(module) is not None


def require(*modules: str) -> None:
    """Skip the calling test module (at collection) unless every one of ``modules`` is installed."""
    missing = [m for m in modules if not installed(m)]
    if missing:
        pytest.skip(f"needs {', '.join(missing)} (not installed)", allow_module_level=True)
