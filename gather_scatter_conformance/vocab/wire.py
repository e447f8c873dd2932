"""Arrays on the wire: execnet channels carry only builtin types, so arrays travel as dtype name, shape, bytes."""

from __future__ import annotations

from typing import Any

import numpy as np

from gather_scatter_conformance.vocab import dtypes


def encode(arr: Any) -> dict[str, Any]:
    """Encode an array (or anything np.asarray accepts) as a dict of builtins."""
    arr = np.asarray(arr)
    try:
        name = dtypes.name_of(arr.dtype)
    except ValueError:
        name = str(arr.dtype)
    if name == "string":
        return {"dtype": name, "shape": list(arr.shape), "items": [str(x) for x in arr.reshape(-1).tolist()]}
    return {"dtype": name, "shape": list(arr.shape), "bytes": np.ascontiguousarray(arr).tobytes()}


def decode(obj: dict[str, Any]) -> np.ndarray:
    """Inverse of :func:`encode`."""
    shape = tuple(obj["shape"])
    if obj["dtype"] == "string":
        out = np.empty(len(obj["items"]), dtype=object)
        out[:] = obj["items"]
        return out.reshape(shape)
    try:
        dtype = dtypes.to_numpy(obj["dtype"])
    except ValueError:
        dtype = np.dtype(obj["dtype"])
    return np.frombuffer(obj["bytes"], dtype=dtype).reshape(shape).copy()
