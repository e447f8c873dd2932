"""Sets of allowed outputs, for scatters whose result depends on the order duplicate updates are applied in."""

from __future__ import annotations

from collections.abc import Callable

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


class AllowedOutputs:
    """Every output an order-dependent scatter may legitimately produce, element by element.

    The output is seen as rows (N, Q): a scatter writes whole rows (Q = 1 for ScatterElements). A row never
    written keeps its value; at a row written once or more, each element may hold that element of any of the
    writes to it. Membership is element-wise on purpose, because parallel implementations mix the updates of
    different duplicates within one slice.

    Stored compactly: the output where the last write (row-major order of the updates) wins, and the writes
    themselves (row of each, and its values; the scatter's own arrays, not copies). Memory is about one output,
    never k of them.
    """

    def __init__(self, last: np.ndarray, rows: np.ndarray, writes: np.ndarray, shape: tuple[int, ...]) -> None:
        """``last``: the (N, Q) output where the last write wins; ``rows`` (M,) and ``writes`` (M, Q): every
        write, in update order. Raises ValueError on inconsistent shapes."""
        if last.ndim != 2 or writes.ndim != 2 or writes.shape != (rows.shape[0], last.shape[1]):
            raise ValueError("last must be (N, Q), writes (M, Q) with one row index per write")
        if int(np.prod(shape, dtype=np.int64)) != last.size:
            raise ValueError(f"shape {shape} does not hold {last.size} elements")
        self._last, self._rows, self._writes, self._shape = last, rows, writes, tuple(shape)
        self._dense: tuple[np.ndarray, np.ndarray] | None = None

    @property
    def shape(self) -> tuple[int, ...]:
        """Shape of every allowed output."""
        return self._shape

    @property
    def dtype(self) -> np.dtype:
        """Dtype of every allowed output."""
        return self._last.dtype

    @property
    def k(self) -> int:
        """The most writes any one row received (the number of dense candidates)."""
        return max(int(np.bincount(self._rows).max()), 1) if self._rows.size else 1

    def contains(self, observed: np.ndarray, equal: EqualFn | None = None) -> np.ndarray:
        """Per-element membership mask (shape ``self.shape``): True where ``observed`` equals an allowed value.

        ``equal(a, b)`` must return a bool array of the two equally shaped arrays' shape; the default is exact
        equality with NaN equal to NaN. Raises ValueError if ``observed`` does not have ``self.shape``.
        """
        observed = np.asarray(observed)
        if observed.shape != self.shape:
            raise ValueError(f"observed shape {observed.shape} differs from allowed shape {self.shape}")
        equal = equal or equal_nan
        n, q = self._last.shape
        obs = observed.reshape(n, q)
        ok = np.array(np.broadcast_to(equal(self._last, obs), (n, q)), dtype=bool)
        hit = np.broadcast_to(equal(self._writes, obs[self._rows]), self._writes.shape)
        which, col = np.nonzero(hit)
        any_write = np.zeros((n, q), dtype=bool)
        any_write[self._rows[which], col] = True
        # A written row's last write is one of its writes, so this only widens what `ok` allowed there.
        written = np.zeros(n, dtype=bool)
        written[self._rows] = True
        ok[written] = any_write[written]
        return ok.reshape(self.shape)

    def allows(self, observed: np.ndarray, equal: EqualFn | None = None) -> bool:
        """True iff ``observed`` is allowed at every position (see :meth:`contains`)."""
        return bool(self.contains(observed, equal).all())

    def example(self) -> np.ndarray:
        """One allowed output: the one where, at each position, the last update in row-major order wins.

        A view of what this object holds: treat it as read-only.
        """
        return self._last.reshape(self.shape)

    def _dense_form(self) -> tuple[np.ndarray, np.ndarray]:
        if self._dense is None:
            k, (n, q) = self.k, self._last.shape
            candidates = np.repeat(self._last[None], k, axis=0)
            valid = np.zeros((k, n), dtype=bool)
            valid[0] = True
            order = np.argsort(self._rows, kind="stable")
            rows = self._rows[order]
            starts = np.flatnonzero(np.r_[True, rows[1:] != rows[:-1]]) if rows.size else np.zeros(0, np.intp)
            rank = np.arange(rows.size) - np.repeat(starts, np.diff(np.r_[starts, rows.size]))
            candidates[rank, rows] = self._writes[order]
            valid[rank, rows] = True
            valid_full = np.repeat(valid[:, :, None], q, axis=2)
            self._dense = candidates.reshape((k, *self.shape)), valid_full.reshape((k, *self.shape))
        return self._dense

    @property
    def candidates(self) -> np.ndarray:
        """Dense form, shape ``(k, *shape)``: candidate j holds each row's (j+1)-th write where it has one (the
        last write elsewhere). Built on first use, k times the output's memory: for inspecting small cases."""
        return self._dense_form()[0]

    @property
    def valid(self) -> np.ndarray:
        """Dense form's mask, shaped like :attr:`candidates`: which candidate is allowed where (a prefix)."""
        return self._dense_form()[1]


def any_of(out: np.ndarray, rows: np.ndarray, updates: np.ndarray, shape: tuple[int, ...]) -> AllowedOutputs:
    """Allowed outputs of writing ``updates[i]`` (M, Q) into row ``rows[i]`` of ``out`` (N, Q) in any order.

    ``out`` is overwritten with the last-wins output and kept by the result, with copies of ``rows`` and
    ``updates`` (they may be views of the caller's inputs). Linear in N + M: no sort.
    """
    last = np.full(out.shape[0], -1, dtype=np.int64)
    # The last write of each row, exactly: NumPy does not promise an order for duplicate fancy assignment.
    np.maximum.at(last, rows, np.arange(rows.shape[0], dtype=np.int64))
    written = np.flatnonzero(last >= 0)
    if out.shape[1] == 1:  # NumPy's fast fancy-assignment path is 1-D only
        out.reshape(-1)[written] = updates.reshape(-1)[last[written]]
    else:
        out[written] = updates[last[written]]
    return AllowedOutputs(out, rows.copy(), updates.copy(), shape)
