"""Sets of allowed outputs, for scatters whose result depends on the order duplicate updates are applied in."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

EqualFn = Callable[[np.ndarray, np.ndarray], np.ndarray]


def _isnan(a: np.ndarray) -> np.ndarray:
    try:
        return np.isnan(a)
    except TypeError:  # strings, bools, integers stored as object...: nothing is NaN there
        return np.zeros(np.shape(a), dtype=bool)


def equal_nan(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Element-wise exact equality (broadcasting) where NaN equals NaN; complex parts are compared separately."""
    a, b = np.asarray(a), np.asarray(b)
    if a.dtype.kind == "c" or b.dtype.kind == "c":
        return equal_nan(np.real(a), np.real(b)) & equal_nan(np.imag(a), np.imag(b))
    eq = np.asarray(a == b)
    if eq.shape != np.broadcast_shapes(a.shape, b.shape):  # object comparisons can collapse to a scalar
        eq = np.broadcast_to(eq, np.broadcast_shapes(a.shape, b.shape))
    return eq | (_isnan(a) & _isnan(b))


@dataclass(frozen=True, eq=False)
class AllowedOutputs:
    """Every output an order-dependent scatter may legitimately produce, element by element.

    ``candidates`` has shape ``(k, *shape)`` and ``valid`` the same shape: an observed array is allowed iff at
    every position it equals some candidate marked valid at that position. Membership is element-wise on
    purpose, because parallel implementations mix the updates of different duplicates within one slice.
    For each position the valid candidates form a prefix ``valid[:c]``, in the row-major order of the updates.
    """

    candidates: np.ndarray
    valid: np.ndarray

    def __post_init__(self) -> None:
        if self.candidates.ndim < 1 or self.candidates.shape[0] < 1:
            raise ValueError("candidates must have shape (k, *shape) with k >= 1")
        if self.valid.shape != self.candidates.shape or self.valid.dtype != bool:
            raise ValueError("valid must be a bool array shaped like candidates")
        if not self.valid.any(axis=0).all():
            raise ValueError("every position needs at least one valid candidate")

    @property
    def shape(self) -> tuple[int, ...]:
        """Shape of every allowed output."""
        return self.candidates.shape[1:]

    @property
    def dtype(self) -> np.dtype:
        """Dtype of every allowed output."""
        return self.candidates.dtype

    def contains(self, observed: np.ndarray, equal: EqualFn | None = None) -> np.ndarray:
        """Per-element membership mask (shape ``self.shape``): True where ``observed`` equals a valid candidate.

        ``equal(candidates, observed[None])`` must return a broadcast bool array; the default is exact equality
        with NaN equal to NaN. Raises ValueError if ``observed`` does not have ``self.shape``.
        """
        observed = np.asarray(observed)
        if observed.shape != self.shape:
            raise ValueError(f"observed shape {observed.shape} differs from allowed shape {self.shape}")
        hits = np.asarray((equal or equal_nan)(self.candidates, observed[None]), dtype=bool)
        return (hits & self.valid).any(axis=0)

    def allows(self, observed: np.ndarray, equal: EqualFn | None = None) -> bool:
        """True iff ``observed`` is allowed at every position (see :meth:`contains`)."""
        return bool(self.contains(observed, equal).all())

    def example(self) -> np.ndarray:
        """One allowed output: the one where, at each position, the last update in row-major order wins."""
        last = self.valid.sum(axis=0) - 1
        return np.take_along_axis(self.candidates, last[None], axis=0)[0]


def any_of(base: np.ndarray, rows: np.ndarray, updates: np.ndarray, shape: tuple[int, ...]) -> AllowedOutputs:
    """Allowed outputs of writing ``updates[i]`` into row ``rows[i]`` of ``base`` (N, Q) in any order.

    ``rows`` is 1-D (M,), ``updates`` is (M, Q); rows that are never written keep ``base``. The result has
    k = (largest number of writes to one row) candidates, so memory grows as k * base.size.
    """
    m = rows.shape[0]
    order = np.argsort(rows, kind="stable")
    sorted_rows = rows[order]
    starts = np.flatnonzero(np.r_[True, sorted_rows[1:] != sorted_rows[:-1]]) if m else np.zeros(0, np.intp)
    counts = np.diff(np.r_[starts, m])
    rank = np.arange(m) - np.repeat(starts, counts)
    k = int(counts.max()) if m else 1
    candidates = np.repeat(base[None], k, axis=0)
    valid = np.zeros((k, base.shape[0]), dtype=bool)
    valid[0] = True
    candidates[rank, sorted_rows] = updates[order]
    valid[rank, sorted_rows] = True
    valid_full = np.repeat(valid[:, :, None], base.shape[1], axis=2)
    return AllowedOutputs(candidates.reshape((k, *shape)), valid_full.reshape((k, *shape)))
