"""Emulations of an operator a framework lacks (TensorScatter through index_copy, tensor_scatter_nd_update,
dynamic_update_slice or ``.at[].set``): which inputs they can stand for.

An emulation computes positions for a native call, so it has no operator of its own to refuse an input the operator
refuses. Such an input (a shape TensorScatter-24 forbids, the batch axis as the sequence axis) is not expressible
through it: :class:`Unsupported`, with the reason, never a deviation of the framework. What the native call does
with the positions it is given (negative, past the end) is the measurement.
"""

from __future__ import annotations

from collections.abc import Mapping

from gather_scatter_conformance.adapters.attrs import valid_axis
from gather_scatter_conformance.adapters.base import Unsupported


def tensor_scatter_axis(shapes: Mapping[str, tuple[int, ...]], axis: int) -> int:
    """The sequence axis (non-negative) of a TensorScatter case with these input shapes (``data``, ``updates``,
    optional ``indices``); Unsupported where TensorScatter-24 would refuse them whatever the write indices."""
    data, updates, write = shapes["data"], shapes["updates"], shapes.get("indices")
    a = valid_axis(axis, len(data))
    why = ""
    if len(data) < 2:
        why = f"past_cache of rank {len(data)} has no batch and sequence axis"
    elif a is None or a == 0:
        why = f"axis={axis} is not a sequence axis of rank {len(data)} (the batch axis 0 is refused)"
    elif len(updates) != len(data) or any(u != d for k, (u, d) in enumerate(zip(updates, data, strict=True)) if k != a):
        why = f"update shape {tuple(updates)} differs from past_cache shape {tuple(data)} off the sequence axis"
    elif updates[a] > data[a]:
        why = f"sequence_length {updates[a]} exceeds max_sequence_length {data[a]}"
    elif write is not None and tuple(write) != (data[0],):
        why = f"write_indices shape {tuple(write)} is not (batch_size,) = ({data[0]},)"
    if why:
        raise Unsupported(f"an input TensorScatter-24 refuses ({why}); the emulation has no operator to refuse it")
    assert a is not None
    return a
