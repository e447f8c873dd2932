"""TensorRT's tensor element types as NumPy names: what both the layer translation (:mod:`adapters.tensorrt`) and
the engine runner (:mod:`adapters.tensorrt_engine`) need, in a module of its own so neither imports the other.

Pure Python: imports no TensorRT.
"""

from __future__ import annotations

import numpy as np

from gather_scatter_conformance.adapters.base import Unsupported

# NumPy dtype name -> trt.DataType member. TensorRT 11.4's DataType is FLOAT, HALF, BF16, INT8, INT32, INT64, BOOL,
# UINT8, FP8, INT4, FP4, E8M0: float64, int16, uint16/32/64, complex and strings have no tensor type at all.
DTYPES: dict[str, str] = {
    "float32": "FLOAT",
    "float16": "HALF",
    "bfloat16": "BF16",
    "int8": "INT8",
    "int32": "INT32",
    "int64": "INT64",
    "bool": "BOOL",
    "uint8": "UINT8",
}
NUMPY_OF: dict[str, str] = {v: k for k, v in DTYPES.items()}


def dtype_name(arr: np.ndarray) -> str:
    """The harness name of an array's dtype: 'string' for str/object arrays, else NumPy's (ml_dtypes' bfloat16)."""
    return "string" if arr.dtype.kind in "OUS" else arr.dtype.name


def trt_dtype(arr: np.ndarray) -> str:
    """The ``trt.DataType`` member name for ``arr``; raises Unsupported for a dtype TensorRT has no tensor type for."""
    name = dtype_name(arr)
    if name not in DTYPES:
        raise Unsupported(f"TensorRT has no {name} tensor type (trt.DataType: {', '.join(DTYPES.values())}, FP8, "
                          "INT4, FP4, E8M0)")
    return DTYPES[name]
