"""Invalid axis and batch_dims raise in every adapter, as the reference engine does: no adapter wraps them into a
valid value (adapters/attrs.py is the one place that checks and normalises them)."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from gather_scatter_conformance import adapters
from gather_scatter_conformance.adapters.attrs import InvalidAttribute, axis_index, batch_dims_count, valid_axis
from gather_scatter_conformance.harness.cases.load import Case, ExpectedError, load_file
from gather_scatter_conformance.harness.run.isolation import Isolated
from gather_scatter_conformance.harness.run.runner import InProcess, execute
from gather_scatter_conformance.vocab.variants import twin_of

ROOT = Path(__file__).resolve().parents[1]

# Each is invalid under canonical semantics: the reference engine raises InvalidInput for all three.
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


def _cases(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> list[Case]:
    monkeypatch.setenv("GSC_CASE_CACHE", "off")
    (tmp_path / "g.yaml").write_text(textwrap.dedent(INVALID.format(op="Gather")))
    (tmp_path / "nd.yaml").write_text(INVALID_ND)
    out = [c for f in ("g.yaml", "nd.yaml") for c in load_file(tmp_path / f)]
    assert all(isinstance(c, Case) and isinstance(c.reference(), ExpectedError) for c in out), out
    return out  # type: ignore[return-value]


def _frameworks() -> list[str]:
    pythons = adapters.venv_pythons(ROOT)
    return [n for n in adapters.names() if (adapters.is_available(n) or n in pythons)
            and adapters.get(n).unavailable() is None]


@pytest.mark.parametrize("framework", _frameworks())
def test_no_adapter_computes_a_value_for_an_invalid_axis_or_batch_dims(
        framework: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    pythons = adapters.venv_pythons(ROOT)
    # A converter path runs a native runtime on a converted model, in a worker of its own as a run does: MNN's
    # session on the invalid GatherND killed an xdist worker that had loaded other frameworks (CI, not alone).
    isolate = framework in pythons or adapters.is_path(framework)
    executor = Isolated(pythons, 120.0) if isolate else InProcess()
    try:
        for case in _cases(tmp_path, monkeypatch):
            for variant in adapters.get(framework).variants(case.op):
                # A twin changes where the indices come from or how shapes are known, not how the attributes are
                # handed: its parent's run covers them (and a twin's compile per case is most of this test's time).
                if twin_of(variant):
                    continue
                record = execute(case, framework, variant, executor)
                if record.outcome != "ok":
                    continue
                # A value is the framework's own answer only where the call hands it the invalid attributes as
                # they are (that is measured: a deviation); an adapter that translated them must have raised.
                handed = [f"{k}={v}" for k, v in case.spec.attrs.items()]
                assert all(h in record.api.replace(" ", "") for h in handed), (
                    f"{framework}:{variant} computed {record.observed} for {case.id} via {record.api!r}")
                assert record.verdict == "deviates"
    finally:
        if hasattr(executor, "close"):
            executor.close()


def test_the_helpers_raise_where_the_reference_engine_does() -> None:
    assert axis_index(-1, 3) == 2 and axis_index(2, 3) == 2
    for axis in (3, -4):
        with pytest.raises(InvalidAttribute, match="out of range for rank 3"):
            axis_index(axis, 3)
    assert valid_axis(5, 3) is None and valid_axis(-3, 3) == 0
    assert batch_dims_count(-1, 2) == 1 and batch_dims_count(1, 2, axis=1) == 1
    with pytest.raises(InvalidAttribute, match="must not exceed axis"):
        batch_dims_count(2, 2, axis=1)
    with pytest.raises(InvalidAttribute, match="out of range for indices of rank 2"):
        batch_dims_count(-3, 2)
