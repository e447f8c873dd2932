#!/usr/bin/env python3
# Repro of cases/probes/scatter_elements.yaml::probe-oob-negative: written by `gsc repro`; it exits 0 when the behaviour reproduces.
import base64
import json
import sys

import numpy as np

try:
    import ml_dtypes
except ImportError:  # needed only for bfloat16
    ml_dtypes = None

data = np.array([10.0, 20.0, 30.0, 40.0, 50.0], dtype=np.float32).reshape((5,))
indices = np.array([1, -7], dtype=np.int64).reshape((2,))
updates = np.array([-1.0, -2.0], dtype=np.float32).reshape((2,))
INPUTS = {'data': data, 'indices': indices, 'updates': updates}
# openvino 2026.4.1-22982-e213a147257-releases/2026/4 (read_model, cpu)
# Observed: crash, label oob-negative = crash:SIGABRT. crash: returned ok, then its process died with SIGABRT on exit (memory corrupted by the call)
# Canonical (ONNX): an error (IndexOutOfRange: index -7 at indices[1] is out of range [-5, 4] for axis 0 of size 5).
# Case: ScatterElements {"axis": 0, "reduction": "none"}; source: probe: what happens to an index < -s?

def run(data, indices, updates):
    """The native call, as the harness made it."""
    import onnx
    from onnx import TensorProto, helper
    nodes = [
        helper.make_node('ScatterElements', ['data', 'indices', 'updates'], ['output'], axis=0),
    ]
    graph = helper.make_graph(nodes, 'case', [helper.make_tensor_value_info('data', TensorProto.FLOAT, [5]), helper.make_tensor_value_info('indices', TensorProto.INT64, [2]), helper.make_tensor_value_info('updates', TensorProto.FLOAT, [2])],
                              [helper.make_tensor_value_info('output', TensorProto.FLOAT, [5])],
                              initializer=[])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid('', 18)])
    model.ir_version = 10
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

    core = ov.Core()
    compiled = core.compile_model(core.read_model(model.SerializeToString()), 'CPU')
    request = compiled.create_infer_request()
    request.infer([to_tensor(a) for a in (data, indices, updates,)])
    result = from_tensor(request.get_output_tensor(0))
    return result


# The call killed (or hung) its process: run it in a child process and check how that ended.
import subprocess
if '--child' in sys.argv:
    run(**INPUTS)
    import ctypes, gc
    gc.collect()
    ctypes.CDLL(None).malloc_trim(0)  # glibc walks its free lists here: damaged memory shows
    sys.exit(0)
import re, signal
try:
    proc = subprocess.run([sys.executable, __file__, '--child'], timeout=120,
                          stderr=subprocess.PIPE, text=True)
    sys.stderr.write(proc.stderr)
except subprocess.TimeoutExpired as hung:
    err = hung.stderr.decode(errors='replace') if isinstance(hung.stderr, bytes) else hung.stderr or ''
    sys.stderr.write(err)
    damaged = [m for m in err.splitlines() if re.match('^(?:[\\w.]+\\(\\): .+|double free or corruption.*|corrupted .+|free\\(\\): .+)$', m.strip())]
    assert damaged, 'the child hung for 120 s without a heap message: the crash did not reproduce'
    print('reproduced: glibc reported', repr(damaged[0].strip()), 'and the child hung in its abort path (killed after 120 s)')
    sys.exit(0)
print('child process ended with', proc.returncode, '(expected -signal.SIGABRT)')
assert -proc.returncode in [6, 7, 11], f'expected a memory-damage signal (SIGABRT when recorded), got {proc.returncode}'
