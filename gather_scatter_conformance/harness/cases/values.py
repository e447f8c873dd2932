"""Turning declared values (nested lists + dtype name + optional shape) into NumPy arrays, strictly.

Strict means a value that does not fit its dtype is an error, not a silent cast: 1.5 is not an int64, 300 is
not a uint8, a ragged list is not a tensor.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from gather_scatter_conformance.harness.cases.errors import InputValueError
from gather_scatter_conformance.vocab import dtypes


def _check_rectangular(value: Any) -> tuple[int, ...]:
    """Return the shape of a nested list, raising InputValueError if it is ragged."""
    if not isinstance(value, list):
        return ()
    if not value:
        return (0,)
    shapes = {_check_rectangular(v) for v in value}
    if len(shapes) != 1:
        raise InputValueError("nested lists have different lengths (a tensor must be rectangular)")
    return (len(value), *shapes.pop())


def _flat(value: Any) -> list[Any]:
    if isinstance(value, list):
        return [x for v in value for x in _flat(v)]
    return [value]


def _check_elements(flat: list[Any], name: str) -> None:
    if name == "string":
        bad = [x for x in flat if not isinstance(x, str)]
        if bad:
            raise InputValueError(f"{bad[0]!r} is not a string")
        return
    if name == "bool":
        bad = [x for x in flat if not isinstance(x, bool)]
        if bad:
            raise InputValueError(f"{bad[0]!r} is not a bool (write true/false)")
        return
    bad = [x for x in flat if isinstance(x, bool) or not isinstance(x, int | float | str)]
    if bad:
        raise InputValueError(f"{bad[0]!r} is not a number")
    if name in dtypes.INDEX_DTYPES:
        info = np.iinfo(np.dtype(name))
        for x in flat:
            if isinstance(x, str) or (isinstance(x, float) and not x.is_integer()):
                raise InputValueError(f"{x!r} is not an integer, so it is not a valid {name}")
            if not info.min <= int(x) <= info.max:
                raise InputValueError(f"{x!r} is out of range for {name} [{info.min}, {info.max}]")
    elif any(isinstance(x, str) for x in flat):
        # YAML has no literal for nan/inf in flow lists beyond .nan/.inf; accept their spelled forms too.
        for x in flat:
            if isinstance(x, str) and x.lower() not in ("nan", "inf", "-inf", "+inf"):
                raise InputValueError(f"{x!r} is not a number")


def to_array(value: Any, dtype_name: str, shape: list[int] | None = None) -> np.ndarray:
    """Return ``value`` as an array of ``dtype_name``; reshape a flat list to ``shape`` when given.

    Raises InputValueError when the value does not fit the dtype or the shape.
    """
    natural = _check_rectangular(value)
    flat = _flat(value) if isinstance(value, list) else [value]
    _check_elements(flat, dtype_name)
    dtype = dtypes.to_numpy(dtype_name)
    if dtype_name == "string":
        arr = np.empty(len(flat), dtype=object)
        arr[:] = flat
    elif dtype_name in dtypes.COMPLEX_DTYPES:
        arr = np.array([complex(x) for x in flat], dtype=dtype)
    elif dtype_name in dtypes.INDEX_DTYPES:
        arr = np.array([int(x) for x in flat], dtype=dtype)
    else:
        arr = np.array([float(x) if isinstance(x, str) else x for x in flat]).astype(dtype)
    if shape is None:
        return arr.reshape(natural)
    if any(d < 0 for d in shape):
        raise InputValueError(f"shape {shape} has a negative dimension", "shape")
    if int(np.prod(shape, dtype=np.int64)) != arr.size:
        raise InputValueError(
            f"value has {arr.size} element(s) (shape {list(natural)}), which does not fit shape {shape}", "shape"
        )
    if isinstance(value, list) and len(natural) > 1 and tuple(natural) != tuple(shape):
        raise InputValueError(f"value has shape {list(natural)} but shape says {shape}", "shape")
    return arr.reshape(shape)


def to_jsonable(arr: np.ndarray) -> Any:
    """Return an array as nested lists of plain Python values (NaN stays float('nan'); complex as [re, im])."""
    arr = np.asarray(arr)
    if arr.dtype.kind == "c":
        return np.stack([arr.real, arr.imag], axis=-1).astype(np.float64).tolist()
    if arr.dtype == object or arr.dtype.kind in "US":
        return arr.tolist()
    if arr.dtype.kind == "f" or dtypes.name_of(arr.dtype) == "bfloat16":
        return arr.astype(np.float64).tolist()
    return arr.tolist()
