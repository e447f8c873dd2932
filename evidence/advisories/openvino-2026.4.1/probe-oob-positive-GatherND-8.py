#!/usr/bin/env python3
# Repro of cases/probes/gather_nd.yaml::probe-oob-positive: written by `gsc repro`; it exits 0 when the behaviour reproduces.
import base64
import json
import sys

import numpy as np

try:
    import ml_dtypes
except ImportError:  # needed only for bfloat16
    ml_dtypes = None

data = np.array([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]], dtype=np.float32).reshape((2, 3))
indices = np.array([[4, 0], [1, 1]], dtype=np.int64).reshape((2, 2))
INPUTS = {'data': data, 'indices': indices}
# openvino 2026.4.1-22982-e213a147257-releases/2026/4 (GatherND-8, cpu)
# Observed: ok, label oob-positive = garbage. returned a value where canonical semantics raise (IndexOutOfRange: index 4 at indices[0, 0] is out of range [-2, 1] for axis 0 of size 2)
# Canonical (ONNX): an error (IndexOutOfRange: index 4 at indices[0, 0] is out of range [-2, 1] for axis 0 of size 2).
# Case: GatherND {"batch_dims": 0}; source: probe: what happens to an index >= s? (002, Table 1 'Out of bound indices')

def run(data, indices):
    """The native call, as the harness made it."""
    import openvino as ov
    from typing import Any
    def ov_module() -> Any:
        """The module that holds OpenVINO's API (Core, Model, Tensor, Type, __version__): ``openvino`` from 2023.1 on;
        in 2023.0 the top-level package is empty and all of it lives in ``openvino.runtime`` (removed in 2026)."""
        import openvino

        if hasattr(openvino, "Core"):
            return openvino
        import openvino.runtime

        return openvino.runtime

    def _string_type() -> Any:
        """ov.Type.string, or None in releases before it (2023.x: the release sweeps run them)."""
        ov = ov_module()

        return getattr(ov.Type, "string", None)

    def to_tensor(arr: np.ndarray) -> Any:
        """An ov.Tensor holding a copy of ``arr`` with its element type (bf16 and string included)."""
        ov = ov_module()

        if arr.dtype == object or arr.dtype.kind == "S":
            return ov.Tensor(arr.astype(str))  # ov.Tensor makes a string tensor from a NumPy str_ array
        if arr.dtype.name == "bfloat16":
            # NumPy has no native bfloat16, so ov.Tensor cannot take the array itself: copy its bits into a bf16 tensor.
            t = ov.Tensor(ov.Type.bf16, ov.Shape(list(arr.shape)))
            t.data.view(np.uint16)[...] = arr.view(np.uint16)
            return t
        # np.array(order="C"), not np.ascontiguousarray: the latter turns a 0-d array into shape (1,).
        return ov.Tensor(np.array(arr, order="C"))

    def from_tensor(t: Any) -> np.ndarray:
        """Copy an output ov.Tensor into NumPy with the same element type (bf16 -> ml_dtypes.bfloat16, string -> object)."""
        ov = ov_module()

        et = t.get_element_type()
        shape = tuple(t.get_shape())
        if _string_type() is not None and et == _string_type():
            out = np.empty(shape, dtype=object)
            out[...] = np.asarray(t.str_data).reshape(shape)
            return out
        if et == ov.Type.bf16:
            import ml_dtypes

            # OpenVINO exposes bf16 data as a float16-typed view of the raw bits; reinterpret them.
            return np.asarray(t.data).view(np.uint16).copy().view(ml_dtypes.bfloat16).reshape(shape)
        return np.array(t.data, copy=True).reshape(shape)

    params = [ov.opset8.parameter(list(data.shape), ov.Type.string if data.dtype == object else ov.Type.bf16 if data.dtype.name == 'bfloat16' else ov.Type(data.dtype), name='data'), ov.opset8.parameter(list(indices.shape), ov.Type.string if indices.dtype == object else ov.Type.bf16 if indices.dtype.name == 'bfloat16' else ov.Type(indices.dtype), name='indices')]
    args = list(params)
    node = ov.opset8.gather_nd(*args, batch_dims=0)
    model = ov.Model([node], params, 'GatherND-8')
    compiled = ov.Core().compile_model(model, 'CPU')
    request = compiled.create_infer_request()
    request.infer([to_tensor(a) for a in (data, indices,)])
    result = from_tensor(request.get_output_tensor(0))
    return result


result = run(**INPUTS)
print(result)
# An unchecked read returns whatever lies in memory (here it was seen to differ from run to run), so the
# script asserts the class of the result, not its bytes: no valid result, or not the same twice.
VALID = []  # canonical semantics: an error (IndexOutOfRange: index 4 at indices[0, 0] is out of range [-2, 1] for axis 0 of size 2)


def same(a, b):
    try:
        return a.shape == b.shape and np.array_equal(np.asarray(a).astype(b.dtype), b, equal_nan=b.dtype.kind in 'fc')
    except (TypeError, ValueError):
        return False


assert list(result.shape) == [2], f'expected a value of shape [2], got {result.shape}'
if any(same(result, valid) for valid in VALID):
    again = run(**INPUTS)
    assert not same(again, result), 'a valid result, the same on two runs: the unchecked read did not reproduce'
    print('another run read other bytes: an unchecked read')
else:
    print('no valid result: an unchecked read')
