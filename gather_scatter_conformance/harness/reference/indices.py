"""Shared validation and index normalisation for the reference operators."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from gather_scatter_conformance.harness.reference.policy import IndexOutOfRange, InvalidInput, Policy
from gather_scatter_conformance.vocab import dtypes

_INT64_MAX = np.iinfo(np.int64).max
_PAST = {"clamp": "clamped", "wrap": "wrapped"}


def as_array(x: Any, name: str) -> np.ndarray:
    """Return ``x`` as an ndarray without copying ndarrays; fixed-width strings become object arrays of str."""
    arr = np.asarray(x)
    if arr.dtype.kind in "US":
        # Fixed-width string arrays would silently truncate longer strings written into them by a scatter.
        arr = arr.astype(object)
    try:
        dtypes.name_of(arr.dtype)
    except ValueError:
        raise InvalidInput(f"{name} has unsupported dtype {arr.dtype}") from None
    return arr


def check_index_dtype(indices: np.ndarray) -> None:
    """Raise InvalidInput unless ``indices`` has an integer dtype (bool is not an index type here)."""
    if indices.dtype.kind not in "iu":
        raise InvalidInput(f"indices must have an integer dtype, got {dtypes.name_of(indices.dtype)}")


def normalize_axis(axis: Any, rank: int, name: str = "axis") -> int:
    """Return ``axis`` mapped into [0, rank-1]; raise InvalidInput unless it is an int in [-rank, rank-1]."""
    if isinstance(axis, bool) or not isinstance(axis, (int, np.integer)):
        raise InvalidInput(f"{name} must be an integer, got {axis!r}")
    if rank == 0:
        raise InvalidInput(f"{name}={axis} is out of range for rank 0 (data is a scalar)")
    if not -rank <= axis < rank:
        raise InvalidInput(f"{name}={axis} is out of range for rank {rank} (valid: [{-rank}, {rank - 1}])")
    return int(axis) + rank if axis < 0 else int(axis)


def check_int_attr(value: Any, name: str) -> int:
    """Return ``value`` as int; raise InvalidInput if it is not an integer."""
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)):
        raise InvalidInput(f"{name} must be an integer, got {value!r}")
    return int(value)


def fill_value(dtype: np.dtype, zero: bool) -> Any:
    """The value a gather writes for a dropped index: 0 (``zero``) or JAX's fill convention.

    Fill: NaN for floating and complex types, the most negative value for signed integers, the maximum for
    unsigned integers, True for bool, "" for strings. Zero: 0, False or "".
    """
    name = dtypes.name_of(dtype)
    if name == "string":
        return ""
    if name == "bool":
        return not zero
    if zero:
        return 0
    if name in dtypes.FLOAT_DTYPES or name in dtypes.COMPLEX_DTYPES:
        return np.nan
    if name in dtypes.SIGNED_DTYPES:
        return np.iinfo(np.dtype(name)).min
    return np.iinfo(np.dtype(name)).max


def _position(flat: int, shape: tuple[int, ...]) -> tuple[int, ...]:
    return tuple(int(i) for i in np.unravel_index(flat, shape)) if shape else ()


def _where(pos: tuple[int, ...]) -> str:
    return "indices[" + ", ".join(map(str, pos)) + "]" if pos else "indices"


def resolve(
    indices: np.ndarray,
    sizes: int | Sequence[int],
    first_axis: int,
    policy: Policy,
) -> tuple[np.ndarray, np.ndarray | None]:
    """Apply ``policy`` to integer ``indices`` addressing axes of the given sizes.

    ``sizes`` is one axis size (the axis is ``first_axis``), or one size per component of index tuples laid out
    along the last dimension of ``indices`` (component j addresses data axis ``first_axis + j``).
    Returns ``(idx, dropped)``: ``idx`` is an int64 array of in-range, non-negative indices shaped like
    ``indices`` (possibly ``indices`` itself when nothing had to change, so treat it as read-only);
    ``dropped`` is None or a bool mask of the positions the policy drops (zero/fill/skip), where ``idx`` holds 0.
    Raises IndexOutOfRange where the policy makes an index an error. Never modifies ``indices``.
    """
    vector = not isinstance(sizes, (int, np.integer))
    s = np.asarray(sizes, dtype=np.int64)
    quick = _in_range(indices, s, vector, policy)
    if quick is not None:
        return quick, None
    if indices.dtype == np.uint64:
        if policy.out_of_bounds == "wrap" and s.all():
            # Reduce in uint64 first: values >= 2**63 have no int64 representation but do have a residue.
            idx = (indices % s.astype(np.uint64)).astype(np.int64)
        else:
            # Every size is < 2**63, so saturating keeps huge values out of range without wrapping to negatives.
            idx = np.minimum(indices, np.uint64(_INT64_MAX)).astype(np.int64)
    else:
        idx = indices.astype(np.int64)

    if indices.dtype.kind == "i":
        neg = idx < 0
        if policy.negative == "wrap":
            np.add(idx, s, out=idx, where=neg)
        elif policy.negative == "error" and neg.any():
            pos = _position(int(np.argmax(neg)), idx.shape)
            raise IndexOutOfRange(
                f"negative index {int(indices[pos])} at {_where(pos)} is not allowed"
                f" (axis {_axis(pos, first_axis, vector)})"
            )
        del neg
    bad = (idx < 0) | (idx >= s)
    if not bad.any():
        return idx, None

    pos = _position(int(np.argmax(bad)), idx.shape)
    axis = _axis(pos, first_axis, vector)
    size = int(s[pos[-1]]) if vector else int(s)
    mode = policy.out_of_bounds
    if mode == "error":
        low = -size if policy.negative == "wrap" and indices.dtype.kind == "i" else 0
        raise IndexOutOfRange(
            f"index {int(indices[pos])} at {_where(pos)} is out of range [{low}, {size - 1}]"
            f" for axis {axis} of size {size}"
        )
    if mode in ("clamp", "wrap"):
        if not s.all():
            raise IndexOutOfRange(
                f"index {int(indices[pos])} at {_where(pos)} cannot be {_PAST[mode]} into axis {axis} of size 0"
            )
        if mode == "clamp":
            np.clip(idx, 0, s - 1, out=idx)
        else:
            np.mod(idx, s, out=idx)
        return idx, None
    idx[bad] = 0
    return idx, bad


def _in_range(indices: np.ndarray, s: np.ndarray, vector: bool, policy: Policy) -> np.ndarray | None:
    """The common case in two reductions and one copy: every index valid without help from the policy."""
    if indices.size == 0:
        return indices.astype(np.int64)
    if vector:
        # Per component, on column views: NumPy reduces a (n, k) array over axis 0 far slower than k columns.
        cols = indices.reshape(-1, indices.shape[-1])
        lo = np.array([cols[:, j].min() for j in range(cols.shape[1])])
        hi = np.array([cols[:, j].max() for j in range(cols.shape[1])])
    else:
        lo, hi = indices.min(), indices.max()
    if indices.dtype == np.uint64 and (hi > _INT64_MAX).any():
        return None
    if not (hi < s).all():
        return None
    if (lo >= 0).all():
        return indices.astype(np.int64, copy=False)
    if policy.negative != "wrap" or not (lo >= -s).all():
        return None
    idx = indices.astype(np.int64)
    np.add(idx, s, out=idx, where=idx < 0)
    return idx


def _axis(pos: tuple[int, ...], first_axis: int, vector: bool) -> int:
    return first_axis + pos[-1] if vector else first_axis


def fill_dropped(out: np.ndarray, dropped: np.ndarray, policy: Policy) -> np.ndarray:
    """Write the zero/fill value into ``out`` (in place) where the broadcastable mask ``dropped`` is set."""
    value = np.array(fill_value(out.dtype, zero=policy.out_of_bounds == "zero"), dtype=out.dtype)
    np.copyto(out, value, where=dropped)
    return out


def full_of_fill(shape: tuple[int, ...], dtype: np.dtype, policy: Policy) -> np.ndarray:
    """An output made only of dropped positions (the gathered axis is empty, so nothing can be read)."""
    value = np.array(fill_value(dtype, zero=policy.out_of_bounds == "zero"), dtype=dtype)
    return np.full(shape, value, dtype=dtype)


def fast_path_ok(indices: np.ndarray, policy: Policy) -> bool:
    """True if NumPy's own indexing (negatives wrap, out of range raises IndexError) matches ``policy`` here.

    uint64 is excluded because NumPy silently casts values >= 2**63 to negative intp.
    """
    if indices.dtype.kind == "u":
        return indices.dtype.itemsize < 8
    if policy.negative == "wrap":
        return True
    return indices.size == 0 or int(indices.min()) >= 0


def prod(shape: Sequence[int]) -> int:
    """Product of a shape as a Python int (1 for an empty shape)."""
    return int(np.prod(shape, dtype=np.int64)) if len(shape) else 1
