"""Attribute translation shared by the adapters: axis and batch_dims checked and normalised in one place.

An adapter passes a case's ``axis`` and ``batch_dims`` to the framework as they are wherever the framework's API
takes them (that is what is measured). Where the adapter must translate them itself (aranges placed by position,
coordinates built per dimension), it uses these helpers: an invalid value raises :class:`InvalidAttribute`, as the
reference engine raises InvalidInput, so the record is an error instead of a value computed for a wrapped-around
axis. This module imports no framework (it also runs in the MXNet environment, on numpy 1.23).
"""

from __future__ import annotations

from gather_scatter_conformance.adapters.base import Unsupported


class InvalidAttribute(ValueError):
    """The case's axis or batch_dims is invalid for its inputs; raised before the framework is called."""


def axis_index(axis: int, rank: int, name: str = "axis") -> int:
    """``axis`` as a dimension number in [0, rank); negative values count from the end, others raise."""
    if not -rank <= axis < rank:
        raise InvalidAttribute(f"{name}={axis} is out of range for rank {rank} (valid: [{-rank}, {rank - 1}])")
    return axis + rank if axis < 0 else axis


def valid_axis(axis: int, rank: int) -> int | None:
    """:func:`axis_index`, or None where ``axis`` is invalid: for calls that hand it on to the framework to judge."""
    return axis + rank if -rank <= axis < 0 else axis if 0 <= axis < rank else None


def batch_dims_count(batch_dims: int, indices_rank: int, axis: int | None = None) -> int:
    """The number of batch dims: negative ``batch_dims`` counts from the indices' rank (TensorFlow's and OpenVINO's
    rule). Raises unless it lies in [0, indices_rank] and, for Gather (``axis`` given, normalised), is at most axis."""
    b = batch_dims + indices_rank if batch_dims < 0 else batch_dims
    if not 0 <= b <= indices_rank:
        raise InvalidAttribute(f"batch_dims={batch_dims} is out of range for indices of rank {indices_rank}")
    if axis is not None and b > axis:
        raise InvalidAttribute(f"batch_dims={batch_dims} must not exceed axis={axis}")
    return b


# What the Unsupported of an omitted axis says where the API has no default (harness.judge.classify labels it
# `required`).
AXIS_REQUIRED = "axis is required (no default)"


def required(api: str) -> Unsupported:
    """The Unsupported an omitted axis gets where the API has no default for it."""
    return Unsupported(f"{api}: {AXIS_REQUIRED}")


def batched_index_shapes(
    data_shape: tuple[int, ...], idx_shape: tuple[int, ...], axis: int, b: int
) -> list[tuple[int, ...]]:
    """Gather with batch_dims ``b`` as advanced indexing: broadcast shapes of the aranges over data dims [0, axis),
    then (last) the shape the indices are reshaped to (their batch dims first, their other dims at ``axis``)."""
    lead = axis + len(idx_shape) - b
    shapes = [tuple(data_shape[i] if j == i else 1 for j in range(lead)) for i in range(axis)]
    ishape = [1] * lead
    ishape[:b] = idx_shape[:b]
    ishape[axis:] = idx_shape[b:]
    return [*shapes, tuple(ishape)]
