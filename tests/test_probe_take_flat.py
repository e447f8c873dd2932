"""Take's index probes reach torch.take, which has no axis (it reads the flattened data): each index dimension has a
probe with ``axis: null`` (issue #27: before probe-oob-positive-flat and probe-oob-negative-flat every out-of-range
Take probe stated an axis, and torch.take's out-of-range behaviour was never measured). And the flat probes' inputs
tell every candidate behaviour apart, so the classifier's order never decides their label."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from gather_scatter_conformance.adapters import torch_calls
from gather_scatter_conformance.harness.cases.load import Case, load_file
from gather_scatter_conformance.harness.judge.classify import _index_candidates

ROOT = Path(__file__).resolve().parents[1]
PROBES = [c for c in load_file(ROOT / "cases/probes/take.yaml", "cases/probes/take.yaml") if isinstance(c, Case)]


def _flat(dimension: str) -> list[Case]:
    return [c for c in PROBES if c.spec.dimension == dimension and c.attrs.get("axis") is None
            and "axis" not in c.spec.omit]


@pytest.mark.parametrize("dimension", ["negative-indices", "oob-positive", "oob-negative"])
def test_each_index_dimension_has_a_flat_probe_torch_take_can_express(dimension: str) -> None:
    flat = _flat(dimension)
    assert flat, f"no Take probe of {dimension} with axis null: torch.take would never be measured on it"
    for case in flat:
        shapes = {name: arr.shape for name, arr in case.inputs().items()}
        call = torch_calls.expression("Take", "take", shapes, dict(case.attrs), tuple(case.spec.omit))
        assert call == "torch.take(data, indices)"


@pytest.mark.parametrize("case", _flat("oob-positive") + _flat("oob-negative"), ids=lambda c: c.spec.id)
def test_flat_out_of_range_probes_have_no_ties(case: Case) -> None:
    outputs = [np.asarray(out) for _, out in _index_candidates("Take", case.inputs(), dict(case.attrs))
               if out is not None and not isinstance(out, Exception)]
    assert len(outputs) >= 4  # wrap, clamp, zero and fill at least
    for i, a in enumerate(outputs):
        for b in outputs[i + 1:]:
            assert a.shape != b.shape or not np.array_equal(a, b, equal_nan=True)
