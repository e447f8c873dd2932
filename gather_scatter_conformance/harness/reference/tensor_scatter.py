"""TensorScatter (ONNX TensorScatter-24): the KV-cache write, with policies for what its text leaves open.

Canonical semantics, from the operator's text and pseudocode: ``present = copy(past_cache)``; for every batch b and
sequence position i of ``update``, ``present[b, ..., p, ...] = update[b, ..., i, ...]`` at the sequence position
``p = write_indices[b] + i`` (on ``axis``), which circular mode takes modulo ``max_sequence_length``. Absent
``write_indices`` are zeros; ``axis`` cannot be 0 (the batch axis); ``update`` has the cache's shape but on
``axis``, where it is at most as long.

The text leaves three things open, and the :class:`Policy` fields decide them here (docs/reference-engine.md says
why the canonical values are the ones chosen):

- a negative position in linear mode: ``negative`` wrap counts it from the end (valid down to -s), error raises,
  oob hands it to ``out_of_bounds``;
- a position past the end in linear mode (the text *requires* write_index + sequence_length <= s):
  ``out_of_bounds`` error raises, clamp clips it to s-1, wrap continues at 0 (circular), skip drops it and writes
  the rest (a partial write);
- circular mode on a negative position: ``negative`` wrap is the floor modulo (Python's ``%``, the pseudocode's),
  error raises, oob is the truncated remainder (C's ``%``), whose negative result ``out_of_bounds`` then decides.

:func:`undecided` names the open question an input hits, so the judge never makes a verdict of the policy alone;
:func:`unchecked` is what a kernel that never checks its write positions writes (the classifier's ``alias``).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from gather_scatter_conformance.harness.reference.indices import check_index_dtype, normalize_axis
from gather_scatter_conformance.harness.reference.policy import IndexOutOfRange, InvalidInput, Policy
from gather_scatter_conformance.vocab import dtypes
from gather_scatter_conformance.vocab.ops import TENSOR_SCATTER_MODES


def _shapes(data: np.ndarray, updates: np.ndarray, write: np.ndarray | None, axis: Any, mode: Any) -> int:
    """Check everything but the write index values; return the normalised sequence axis."""
    if mode not in TENSOR_SCATTER_MODES:
        raise InvalidInput(f"mode={mode!r} is not one of {', '.join(TENSOR_SCATTER_MODES)}")
    if data.ndim < 2:
        raise InvalidInput(f"past_cache must have rank >= 2 (a batch axis and a sequence axis), got {data.ndim}")
    a = normalize_axis(axis, data.ndim)
    if a == 0:
        raise InvalidInput("axis cannot be 0 (the batch dimension), as TensorScatter-24 says")
    if updates.dtype != data.dtype:
        raise InvalidInput(
            f"update dtype {dtypes.name_of(updates.dtype)} differs from past_cache dtype {dtypes.name_of(data.dtype)}"
        )
    if updates.ndim != data.ndim or any(u != d for k, (u, d) in enumerate(zip(updates.shape, data.shape,
                                                                               strict=True)) if k != a):
        raise InvalidInput(f"update shape {updates.shape} must equal past_cache shape {data.shape} but on axis {a}")
    if updates.shape[a] > data.shape[a]:
        raise InvalidInput(f"sequence_length {updates.shape[a]} exceeds max_sequence_length {data.shape[a]}")
    if write is not None:
        check_index_dtype(write)
        if write.shape != (data.shape[0],):
            raise InvalidInput(f"write_indices shape {write.shape} must be (batch_size,) = ({data.shape[0]},)")
    return a


def positions(write: np.ndarray, seq: int, size: int, mode: str, policy: Policy) -> tuple[np.ndarray, np.ndarray]:
    """(target position, kept) for every (batch, sequence position): the cache position each update row lands on
    under ``policy``, and False where the policy drops it. Raises IndexOutOfRange where the policy makes it an
    error."""
    w = write
    if w.dtype == np.uint64 and size:
        # Past int64: the same residue, still past the end, so every policy treats it as it would the true value.
        w = np.where(w >= size, size + w % np.uint64(size), w)
    p = w.astype(np.int64)[:, None] + np.arange(seq, dtype=np.int64)[None, :]
    keep = np.ones(p.shape, dtype=bool)
    if policy.negative == "error" and write.dtype.kind == "i" and (write < 0).any():
        raise IndexOutOfRange(f"write index {int(write.min())} is negative (policy negative=error)")
    if size == 0:  # then sequence_length is 0 too: nothing is written
        return p, keep
    if mode == "circular":
        if policy.negative == "wrap":
            # Floor modulo, in [0, size); of the write index first, so that one near INT64_MAX cannot overflow
            # when the sequence position is added (onnxruntime#32012).
            start = np.mod(w.astype(np.int64), size)[:, None]
            return np.mod(start + np.arange(seq, dtype=np.int64)[None, :], size), keep
        p = np.fmod(p, size)  # truncated remainder: negative positions stay negative
    elif policy.negative == "wrap":
        p = np.where((p < 0) & (p >= -size), p + size, p)
    low, high = p < 0, p >= size
    if not (low | high).any():
        return p, keep
    oob = policy.out_of_bounds
    if oob == "error":
        bad = int(p[low | high][0])
        raise IndexOutOfRange(f"write position {bad} is outside [0, {size - 1}] (write index + sequence position)")
    if oob == "clamp":
        return np.clip(p, 0, size - 1), keep
    if oob == "wrap":
        return np.mod(p, size), keep
    # skip (partial write): zero and fill mean nothing for a scatter, so Policy.applies_to rejects them earlier
    return np.where(low | high, 0, p), ~(low | high)


def tensor_scatter(data: np.ndarray, updates: np.ndarray, write: np.ndarray | None, axis: Any, mode: Any,
                   policy: Policy) -> np.ndarray:
    """TensorScatter-24: a copy of ``data`` (past_cache) with ``updates`` written along ``axis`` from each batch's
    write index (zeros when ``write`` is None), circular mode modulo the axis' length; open cases per ``policy``.

    Writes follow the pseudocode's order, so where a policy sends two rows to one position (clamp) the later one
    wins. Raises InvalidInput for shapes, dtypes, axis or mode the operator does not take, IndexOutOfRange where a
    position is an error.
    """
    a = _shapes(data, updates, write, axis, mode)
    size, seq, batch = data.shape[a], updates.shape[a], data.shape[0]
    out = data.copy()
    if write is None:
        write = np.zeros(batch, dtype=np.int64)
    target, keep = positions(write, seq, size, mode, policy)
    if not keep.any():
        return out
    view, rows = np.moveaxis(out, a, 1), np.moveaxis(updates, a, 1)  # (batch, sequence, ...) views
    b, i = np.nonzero(keep)
    t = target[b, i]
    # The last write to a position wins: keep each (batch, position)'s last sequence row only.
    last = np.unique(np.stack([b, t])[:, ::-1], axis=1, return_index=True)[1]
    pick = len(b) - 1 - last
    view[b[pick], t[pick]] = rows[b[pick], i[pick]]
    return out


def reference(arrays: Mapping[str, np.ndarray], attrs: Mapping[str, Any], policy: Policy) -> np.ndarray:
    """The engine's entry (harness.reference.compute): TensorScatter-24 of the case's inputs, named as case files
    name them (data = past_cache, updates = update, indices = write_indices, which may be absent)."""
    return tensor_scatter(arrays["data"], arrays["updates"], arrays.get("indices"), attrs["axis"], attrs["mode"],
                          policy)


def undecided(arrays: Mapping[str, np.ndarray], attrs: Mapping[str, Any]) -> str | None:
    """What TensorScatter-24's text leaves open on this input, in one phrase, or None where it decides everything:
    a negative write index, or in linear mode a block running past max_sequence_length."""
    data, write = arrays["data"], arrays.get("indices")
    if write is None or data.ndim < 2 or write.size == 0:
        return None
    try:
        a = normalize_axis(attrs["axis"], data.ndim)
    except InvalidInput:
        return None
    seq = arrays["updates"].shape[a] if arrays["updates"].ndim == data.ndim else 0
    w = write.astype(np.float64)  # exact enough to compare with lengths; never wraps as int64 would
    if (w < 0).any():
        return f"negative write index {int(write.min())} ({attrs['mode']} mode)"
    if attrs["mode"] == "linear" and seq and (w + seq > data.shape[a]).any():
        return (f"write index {int(write.max())} + sequence_length {seq} > max_sequence_length {data.shape[a]} "
                "in linear mode")
    return None


def unchecked(arrays: Mapping[str, np.ndarray], attrs: Mapping[str, Any]) -> np.ndarray | None:
    """The output of a linear TensorScatter that writes at unchecked flat offsets (row by row, in the pseudocode's
    order): a position past the end of a batch's sequence lands in the next batch's (or head's) rows. None where an
    offset leaves the buffer, in circular mode, or for an input the operator refuses."""
    data, updates, write = arrays["data"], arrays["updates"], arrays.get("indices")
    try:
        a = _shapes(data, updates, write, attrs["axis"], attrs["mode"])
    except InvalidInput:
        return None
    if attrs["mode"] != "linear":
        return None
    batch = data.shape[0]
    w = np.zeros(batch, np.int64) if write is None else write.astype(np.int64)
    # Every element's coordinates, its sequence coordinate moved by its batch's write index, flattened with the
    # cache's strides and never checked. C order of the update is the pseudocode's order (prefix, sequence, rest).
    coords = list(np.indices(updates.shape))
    coords[a] = coords[a] + w.reshape((batch,) + (1,) * (updates.ndim - 1))
    offsets = sum((c.reshape(-1) * s for c, s in zip(coords, _strides(data.shape), strict=True)),
                  np.zeros(updates.size, np.int64))
    if offsets.size and (offsets.min() < 0 or offsets.max() >= data.size):
        return None
    out = data.copy().reshape(-1)
    out[offsets] = updates.reshape(-1)
    return out.reshape(data.shape)


def shifted(arrays: Mapping[str, np.ndarray], attrs: Mapping[str, Any]) -> list[np.ndarray]:
    """What a linear TensorScatter writes when each batch's block is moved, whole, to the nearest start where it
    fits: start clamped into [0, max_sequence_length - sequence_length], as XLA's dynamic_update_slice clamps its
    start indices (the classifier's ``shift``). Two readings, a negative start taken as it is and counted from the
    end first (jax.lax.dynamic_update_slice's negative indices); [] in circular mode or for an input the operator
    refuses."""
    data, updates, write = arrays["data"], arrays["updates"], arrays.get("indices")
    try:
        a = _shapes(data, updates, write, attrs["axis"], attrs["mode"])
    except InvalidInput:
        return []
    if attrs["mode"] != "linear" or write is None or data.dtype == object:
        return []
    size, seq = data.shape[a], updates.shape[a]
    w = write.astype(np.float64)  # no int64 wrap-around for huge uint64 values
    outs = []
    for start in (w, np.where((w < 0) & (w >= -size), w + size, w)):
        moved = np.clip(start, 0, size - seq).astype(np.int64)
        outs.append(tensor_scatter(data, updates, moved, a, "linear", Policy()))
    return outs


def _strides(shape: tuple[int, ...]) -> list[int]:
    """Element strides of a C-ordered array of ``shape``."""
    return [int(np.prod(shape[k + 1:], dtype=np.int64)) for k in range(len(shape))]


# Behaviours no Policy models, by label (harness.reference.alternatives; the classifier tries them last).
ALTERNATIVES = {"shift": shifted}
