"""Cases whose axis or batch_dims is invalid under the canonical semantics (the reference engine raises InvalidInput
for each), and the check that a system computes no value for them unless it was handed them as they are: for the
frameworks in tests/test_adapter_attrs.py, for the converter paths in tests/test_convert_paths.py (in the worker
that converts the path's seed examples)."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from gather_scatter_conformance import adapters
from gather_scatter_conformance.harness.cases.load import Case, ExpectedError, load_file
from gather_scatter_conformance.harness.run.runner import Executor, execute
from gather_scatter_conformance.vocab.variants import twin_of

INVALID = """\
op: {op}
cases:
  - id: axis-3-on-rank-2
    source: "issue: numpy's adapter returned a value for this (axis taken mod the rank)"
    inputs: {{data: [[1, 2], [3, 4]], indices: [[0], [1]]}}
    attrs: {{axis: 3, batch_dims: 1}}
  - id: batch-dims-past-axis
    source: test
    inputs: {{data: [[1, 2], [3, 4]], indices: [[0], [1]]}}
    attrs: {{axis: 0, batch_dims: 1}}
  - id: batch-dims-past-indices
    source: test
    inputs: {{data: [[1, 2], [3, 4]], indices: [[0], [1]]}}
    attrs: {{axis: 1, batch_dims: 3}}
"""
INVALID_ND = """\
op: GatherND
cases:
  - id: nd-batch-dims-past-indices
    source: test
    inputs: {data: [[1, 2], [3, 4]], indices: [[0], [1]]}
    attrs: {batch_dims: 2}
"""


def invalid_cases(folder: Path, monkeypatch: pytest.MonkeyPatch) -> list[Case]:
    """The four invalid cases, written to ``folder`` and loaded (not from the case cache)."""
    monkeypatch.setenv("GSC_CASE_CACHE", "off")
    (folder / "g.yaml").write_text(textwrap.dedent(INVALID.format(op="Gather")))
    (folder / "nd.yaml").write_text(INVALID_ND)
    out = [c for f in ("g.yaml", "nd.yaml") for c in load_file(folder / f)]
    assert all(isinstance(c, Case) and isinstance(c.reference(), ExpectedError) for c in out), out
    return out  # type: ignore[return-value]


def computed_invalid(framework: str, cases: list[Case], executor: Executor) -> list[str]:
    """One line per (case, variant) where ``framework`` computed a value for an invalid case without having been
    handed the invalid attributes as they are (an adapter that translated them must raise), or computed one that is
    not a deviation. Twins are left out: a twin changes where the indices come from or how shapes are known, not how
    the attributes are handed, and its parent's run covers them (a twin's compile per case would be most of it)."""
    problems = []
    for case in cases:
        for variant in adapters.get(framework).variants(case.op):
            if twin_of(variant):
                continue
            record = execute(case, framework, variant, executor)
            if record.outcome != "ok":
                continue
            handed = [f"{k}={v}" for k, v in case.spec.attrs.items()]
            if not all(h in record.api.replace(" ", "") for h in handed):
                problems.append(f"{framework}:{variant} computed {record.observed} for {case.id} via {record.api!r}")
            elif record.verdict != "deviates":
                problems.append(f"{framework}:{variant} computed {record.observed} for {case.id}: {record.verdict}")
    return problems
