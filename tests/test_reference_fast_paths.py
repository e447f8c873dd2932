"""The reference engine's fast paths give what the general paths give (they exist for speed, not semantics)."""

from __future__ import annotations

import numpy as np
import pytest

from gather_scatter_conformance.harness.reference import AllowedOutputs, compute
from gather_scatter_conformance.harness.reference.gather import take_along
from gather_scatter_conformance.harness.reference.take import MODE_POLICIES

RNG = np.random.default_rng(7)


@pytest.mark.parametrize("mode", ["wrap", "clip"])
@pytest.mark.parametrize("dtype", ["int8", "int32", "int64", "uint8", "uint32"])
def test_take_wrap_and_clip_equal_the_policy_path(mode: str, dtype: str) -> None:
    data = RNG.random((5, 7)).astype(np.float32)
    info = np.iinfo(dtype)
    indices = RNG.integers(max(info.min, -40), min(info.max, 40), size=(3, 4)).astype(dtype)
    for axis in (None, 0, 1, -1):
        fast = compute("Take", {"data": data, "indices": indices}, {"axis": axis, "mode": mode})
        flat, ax = (data.reshape(-1), 0) if axis is None else (data, axis % 2)
        general = take_along(flat, indices, ax, MODE_POLICIES[mode])
        np.testing.assert_array_equal(fast, general)
        assert fast.dtype == data.dtype


def test_gather_nd_batch_dims_equals_a_loop_over_batches() -> None:
    data = RNG.random((3, 4, 5, 6)).astype(np.float32)
    indices = np.stack([RNG.integers(0, 5, size=(3, 4, 2)), RNG.integers(-6, 6, size=(3, 4, 2))], axis=-1)
    out = compute("GatherND", {"data": data, "indices": indices}, {"batch_dims": 2})
    expected = np.empty((3, 4, 2), np.float32)
    for i in range(3):
        for j in range(4):
            for t in range(2):
                a, b = indices[i, j, t]
                expected[i, j, t] = data[i, j, a, b]
    np.testing.assert_array_equal(out, expected)


def test_index_tuples_are_range_checked_per_component() -> None:
    data = np.zeros((2, 3), np.float32)
    ok = np.array([[1, 2], [-2, -3]])
    assert compute("GatherND", {"data": data, "indices": ok}, {}).shape == (2,)
    with pytest.raises(ValueError, match="out of range"):
        compute("GatherND", {"data": data, "indices": np.array([[1, 3]])}, {})  # 3 is fine for axis 0, not axis 1


def test_any_of_keeps_writes_not_candidate_outputs_and_matches_the_dense_form() -> None:
    n = 2000
    rows = RNG.integers(0, n, size=3 * n)  # every row written about three times, some ten
    updates = RNG.random(3 * n).astype(np.float32)
    data = np.zeros(n, np.float32)
    allowed = compute("ScatterElements", {"data": data, "indices": rows, "updates": updates}, {"axis": 0})
    assert isinstance(allowed, AllowedOutputs)
    assert allowed._dense is None  # nothing k outputs wide was built to answer
    last = np.zeros(n, np.float32)
    for r, u in zip(rows, updates, strict=True):
        last[r] = u
    np.testing.assert_array_equal(allowed.example(), last)
    first = np.zeros(n, np.float32)
    for r, u in zip(rows[::-1], updates[::-1], strict=True):
        first[r] = u
    assert allowed.allows(first) and allowed.allows(last)
    mixed = np.where(RNG.random(n) < 0.5, first, last)
    assert allowed.allows(mixed)
    wrong = last.copy()
    wrong[rows[0]] = -1.0
    mask = allowed.contains(wrong)
    assert not mask[rows[0]] and mask.sum() == n - 1
    # The dense form (built on demand) says the same, element by element.
    dense_ok = (allowed.candidates == wrong[None]) & allowed.valid
    np.testing.assert_array_equal(dense_ok.any(axis=0), mask)
    assert allowed.candidates.shape[0] == np.bincount(rows).max()


def test_any_of_does_not_alias_the_callers_arrays() -> None:
    indices = np.array([0, 0, 1])
    updates = np.array([1.0, 2.0, 3.0], np.float32)
    allowed = compute("ScatterElements", {"data": np.zeros(2, np.float32), "indices": indices, "updates": updates},
                      {"axis": 0})
    updates[:] = 9.0
    indices[:] = 1
    assert allowed.allows(np.array([1.0, 3.0], np.float32)) and allowed.allows(np.array([2.0, 3.0], np.float32))
