"""``gsc new-adapter NAME``: an installable adapter package for a runtime team's own system, ready to fill in.

It writes ``gsc-NAME/``: a pyproject whose entry point registers the adapter, the adapter module with every operator
"not mapped" (its cases are recorded as unsupported until one is), a test that runs the shipped corpus through it,
and a README with the path that follows (docs/gate.md: run, review, baseline, commit, gate). Nothing is overwritten.
"""

from __future__ import annotations

import re
from pathlib import Path
from string import Template

NAME = re.compile(r"[a-z][a-z0-9_]{0,39}")  # an import name too: the package is gsc_NAME

PYPROJECT = '''\
[build-system]
requires = ["setuptools>=68"]
build-backend = "setuptools.build_meta"

[project]
name = "gsc-$name"
version = "0.1.0"
description = "$name's adapter for gather-scatter-conformance"
requires-python = ">=3.10"
dependencies = ["gather-scatter-conformance>=$harness"]

# The one line that plugs the runtime into the harness: `gsc run --framework $name` finds it here.
[project.entry-points."gather_scatter_conformance.adapters"]
$name = "gsc_$name.adapter:ADAPTER"

[tool.setuptools]
packages = ["gsc_$name"]
'''

INIT = '''\
"""$name's adapter for gather-scatter-conformance (gsc_$name.adapter)."""
'''

ADAPTER = '''\
"""$name's adapter for gather-scatter-conformance, written by `gsc new-adapter $name` (docs/adapter-api.md).

Every operator starts "not mapped": the harness records its cases as unsupported. Map one by naming its API
variants in VARIANTS and building its call in prepare(). Import your runtime inside the methods, so that collecting
cases imports no runtime. Then follow docs/gate.md: run, review, `gsc baseline`, commit, `gsc gate` in your CI.
"""

from __future__ import annotations

from importlib.metadata import version as distribution_version
from typing import ClassVar

from gather_scatter_conformance.api import Adapter, Call, CaseData, Unsupported


class ${title}Adapter(Adapter):
    name = "$name"
    # The import names your runtime needs; where one is missing, its cases are skipped with that reason.
    requires: tuple[str, ...] = ()
    # Operator -> its API variants, the default first; an operator left out is "not mapped". The operators:
    # Gather, GatherElements, GatherND, ScatterElements, ScatterND, Take, TensorScatter. For example:
    #     VARIANTS = {"Gather": ("gather",), "ScatterND": ("scatter_nd",)}
    VARIANTS: ClassVar[dict[str, tuple[str, ...]]] = {}

    def version(self) -> str:
        """The version records and baselines name: return your runtime's own once it has one."""
        return distribution_version("gsc-$name")

    def prepare(self, case: CaseData, variant: str) -> Call:
        """Build the native call of ``case`` through ``variant`` (one of VARIANTS[case.op]).

        case.inputs: NumPy arrays by ONNX input name (data, indices, updates); case.attrs: the ONNX attributes,
        defaults filled (axis, batch_dims, reduction, mode...); case.omit: attributes to leave to your API's own
        default; case.opset: the ONNX operator version; case.device: "cpu", or "gpu" where you declare devices.
        Raise Unsupported("why") for what your API cannot express (a dtype it lacks, such as bfloat16 or strings;
        an attribute value): that is recorded as not expressible, never as a deviation. Return
        Call(api, run, source=...): ``api`` the call as a user types it, ``run`` a function that makes it and
        returns an array-like, ``source`` the same as statements that assign ``result`` (its repro script).
        """
        self.check_variant(case.op, variant)
        raise Unsupported(f"$name: {case.op} through {variant!r} is not built yet")


ADAPTER = ${title}Adapter()
'''

TEST = '''\
"""The shipped corpus through $name's adapter: the run finishes and writes $name's records (tests/ of gsc-$name)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path


def test_the_shipped_corpus_runs_through_the_adapter(tmp_path: Path) -> None:
    done = subprocess.run([sys.executable, "-m", "gather_scatter_conformance", "run", "--framework", "$name",
                           "--results", str(tmp_path / "results.jsonl")], cwd=tmp_path, capture_output=True,
                          text=True, timeout=3600)
    # 1: some cases deviate (their tests fail): findings to review and baseline, not a broken run
    assert done.returncode in (0, 1), done.stdout[-3000:] + done.stderr[-3000:]
    lines = (tmp_path / "results.jsonl").read_text().splitlines()
    records = [json.loads(line) for line in lines[1:]]  # the first line is the run's manifest
    assert records and {r["framework"] for r in records} == {"$name"}
'''

README = '''\
# gsc-$name: $name in gather-scatter-conformance

Written by `gsc new-adapter $name`. From here (docs/gate.md of gather-scatter-conformance):

1. Map your operators in `gsc_$name/adapter.py`, then `pip install -e .`
2. Run the corpus: `gsc run --framework $name --results results.jsonl`
3. Review: `gsc summary results.jsonl`, `gsc report results.jsonl --out site` (the `[report]` extra)
4. Baseline: `gsc baseline results.jsonl --dir baselines`, and commit `baselines/`
5. Gate each change: `gsc gate results.jsonl --baselines baselines --junit gate.xml --markdown summary.md`
   (exit status 0 passes; the bits of what changed otherwise)

`pytest tests` runs the shipped corpus through the adapter.
'''

FILES = {"pyproject.toml": PYPROJECT, "README.md": README, "gsc_$name/__init__.py": INIT,
         "gsc_$name/adapter.py": ADAPTER, "tests/test_${name}_conformance.py": TEST}


def write_example(out: Path) -> Path:
    """Copy the shipped example package (examples/toy-runtime: a NumPy runtime whose planted bug clamps negative
    indices) to ``out/toy-runtime`` and return its folder. ValueError (one line) where that folder exists."""
    import shutil

    from gather_scatter_conformance import resources

    root = out / "toy-runtime"
    if root.exists():
        raise ValueError(f"{root} exists already; nothing was written")
    shutil.copytree(resources.toy_runtime(), root,
                    ignore=shutil.ignore_patterns("__pycache__", "*.egg-info", "build", "dist"))
    return root


def new_adapter(name: str, out: Path, harness_version: str) -> Path:
    """Write the package ``out/gsc-NAME`` and return its folder. ValueError (one line) for a name that is not a
    lowercase import name, one a shipped adapter has, or a folder that exists: nothing is overwritten."""
    from gather_scatter_conformance import adapters

    if not NAME.fullmatch(name):
        raise ValueError(f"{name!r} is no adapter name: lowercase letters, digits and _, a letter first, at most 40")
    if name in adapters.names():
        raise ValueError(f"{name!r} is the name of an adapter the harness has already; choose another")
    root = out / f"gsc-{name}"
    if root.exists():
        raise ValueError(f"{root} exists already; nothing was written")
    values = {"name": name, "title": name.title().replace("_", ""), "harness": harness_version}
    for relative, text in FILES.items():
        path = root / Template(relative).substitute(values)
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(Template(text).substitute(values))
    return root
