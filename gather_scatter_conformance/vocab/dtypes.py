"""Names of the element types a case may declare, and their NumPy dtypes.

The names follow ONNX's lower-case spelling (``float32``, ``bfloat16``, ``string``). bfloat16 comes from
``ml_dtypes``; strings are NumPy object arrays of ``str``, which is what ONNX's reference evaluator and
onnxruntime accept for ``tensor(string)``.
"""

from __future__ import annotations

import numpy as np

try:  # ml_dtypes is a hard dependency in the main environment; older pinned envs may lack it.
    import ml_dtypes

    _BFLOAT16: np.dtype | None = np.dtype(ml_dtypes.bfloat16)
except ImportError:  # pragma: no cover - only in stripped-down framework environments
    _BFLOAT16 = None

FLOAT_DTYPES = ("float16", "bfloat16", "float32", "float64")
COMPLEX_DTYPES = ("complex64", "complex128")
SIGNED_DTYPES = ("int8", "int16", "int32", "int64")
UNSIGNED_DTYPES = ("uint8", "uint16", "uint32", "uint64")
INDEX_DTYPES = SIGNED_DTYPES + UNSIGNED_DTYPES
DTYPES = FLOAT_DTYPES + COMPLEX_DTYPES + SIGNED_DTYPES + UNSIGNED_DTYPES + ("bool", "string")

DEFAULT_DATA_DTYPE = "float32"
DEFAULT_INDEX_DTYPE = "int64"


def to_numpy(name: str) -> np.dtype:
    """Return the NumPy dtype for a declared type name; raise ValueError naming the valid ones otherwise."""
    if name == "string":
        return np.dtype(object)
    if name == "bfloat16":
        if _BFLOAT16 is None:
            raise ValueError("bfloat16 needs the ml_dtypes package")
        return _BFLOAT16
    if name not in DTYPES:
        raise ValueError(f"unknown dtype {name!r}; expected one of {', '.join(DTYPES)}")
    return np.dtype(name)


def name_of(dtype: np.dtype) -> str:
    """Return the declared type name of a NumPy dtype (inverse of :func:`to_numpy`)."""
    dtype = np.dtype(dtype)
    if dtype.kind in "OUS":
        return "string"
    if _BFLOAT16 is not None and dtype == _BFLOAT16:
        return "bfloat16"
    if dtype.name in DTYPES:
        return dtype.name
    raise ValueError(f"dtype {dtype} has no case-file name")


def is_float(name: str) -> bool:
    """True for real floating types (bfloat16 included)."""
    return name in FLOAT_DTYPES


def eps(name: str) -> float:
    """Machine epsilon of a floating or complex type name; 0 for exact types."""
    if name == "bfloat16":
        return 2.0**-7
    if name in FLOAT_DTYPES:
        return float(np.finfo(np.dtype(name)).eps)
    if name in COMPLEX_DTYPES:
        return float(np.finfo(np.dtype(name)).eps)
    return 0.0
