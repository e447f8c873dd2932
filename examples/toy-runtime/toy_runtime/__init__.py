"""toy_runtime: a tiny tensor runtime with two indexing operators, and one planted bug.

``gather`` and ``gather_elements`` check their indices against the axis (an index outside ``[-size, size - 1]``
raises IndexError, as ONNX requires) and then, wrongly, clamp a negative index to 0 where ONNX counts it from the
end: ``gather([1, 2, 3], [-1])`` gives ``[1]``, not ``[3]``. The harness finds it (examples/toy-runtime/README.md).
"""

from __future__ import annotations

import numpy as np

__version__ = "0.1.0"


def _checked(indices: np.ndarray, size: int) -> np.ndarray:
    indices = np.asarray(indices)
    if indices.size and (indices.min() < -size or indices.max() >= size):
        raise IndexError(f"index out of range for an axis of size {size}")
    return np.maximum(indices, 0)  # the planted bug: a negative index should wrap (index + size)


def gather(data: np.ndarray, indices: np.ndarray, axis: int = 0) -> np.ndarray:
    """ONNX Gather: ``data``'s slices along ``axis`` picked by ``indices`` (but see the planted bug)."""
    data = np.asarray(data)
    return np.take(data, _checked(indices, data.shape[axis]), axis=axis)


def gather_elements(data: np.ndarray, indices: np.ndarray, axis: int = 0) -> np.ndarray:
    """ONNX GatherElements: one element of ``data`` per index, along ``axis`` (but see the planted bug)."""
    data = np.asarray(data)
    return np.take_along_axis(data, _checked(indices, data.shape[axis]), axis=axis)
