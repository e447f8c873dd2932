"""Read at the start of every interpreter `make check` starts (tests/conftest.py puts this folder on PYTHONPATH):
the frameworks that the lane refuses are refused in subprocesses and worker processes too."""

import os

_modules = os.environ.get("GSC_TEST_NO_FRAMEWORKS")
if _modules:
    from refuse_frameworks import install

    install(_modules.split(","))
