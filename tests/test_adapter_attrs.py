"""Invalid axis and batch_dims raise in every adapter, as the reference engine does: no adapter wraps them into a
valid value (adapters/attrs.py is the one place that checks and normalises them)."""

from __future__ import annotations

from pathlib import Path

import pytest
from _invalid_attrs import computed_invalid, invalid_cases

from gather_scatter_conformance import adapters
from gather_scatter_conformance.adapters.attrs import InvalidAttribute, axis_index, batch_dims_count, valid_axis
from gather_scatter_conformance.harness.run.isolation import Isolated
from gather_scatter_conformance.harness.run.runner import InProcess

ROOT = Path(__file__).resolve().parents[1]


def _frameworks() -> list[str]:
    # The converter paths' run is tests/test_convert_paths.py's, in the worker that converts their seed examples.
    pythons = adapters.venv_pythons(ROOT)
    return [n for n in adapters.names() if (adapters.is_available(n) or n in pythons)
            and adapters.get(n).unavailable() is None and not adapters.is_path(n)]


@pytest.mark.parametrize("framework", _frameworks())
def test_no_adapter_computes_a_value_for_an_invalid_axis_or_batch_dims(
        framework: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    pythons = adapters.venv_pythons(ROOT)
    executor = Isolated(pythons, 120.0) if framework in pythons else InProcess()
    try:
        problems = computed_invalid(framework, invalid_cases(tmp_path, monkeypatch), executor)
    finally:
        if hasattr(executor, "close"):
            executor.close()
    assert not problems, problems


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
