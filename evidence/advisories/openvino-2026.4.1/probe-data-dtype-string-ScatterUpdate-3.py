#!/usr/bin/env python3
# Repro of cases/probes/scatter_nd.yaml::probe-data-dtype-string: written by `gsc repro`; it exits 0 when the behaviour reproduces.
import base64
import json
import sys

import numpy as np

try:
    import ml_dtypes
except ImportError:  # needed only for bfloat16
    ml_dtypes = None

data = np.array([['alpha', 'beta', 'gamma'], ['delta', 'eps', 'zeta']], dtype=object).reshape((2, 3))
indices = np.array([[1]], dtype=np.int64).reshape((1, 1))
updates = np.array([['theta', 'eta', 'beta']], dtype=object).reshape((1, 3))
INPUTS = {'data': data, 'indices': indices, 'updates': updates}
# openvino 2026.4.1-22982-e213a147257-releases/2026/4 (ScatterUpdate-3, cpu)
# Observed: crash, label data-dtype:string = crash:SIGABRT (its baseline: crash:SIGABRT|crash:SIGSEGV). crash: returned ok, then its process died with SIGABRT on exit (memory corrupted by the call)
# Canonical (ONNX): an array of shape [2, 3].
# Case: ScatterND {"reduction": "none"}; source: probe: is string data accepted? (pure data movement)

def run(data, indices, updates):
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

    indices = indices[..., 0]
    params = [ov.opset8.parameter(list(data.shape), ov.Type.string if data.dtype == object else ov.Type.bf16 if data.dtype.name == 'bfloat16' else ov.Type(data.dtype), name='data'), ov.opset8.parameter(list(indices.shape), ov.Type.string if indices.dtype == object else ov.Type.bf16 if indices.dtype.name == 'bfloat16' else ov.Type(indices.dtype), name='indices'), ov.opset8.parameter(list(updates.shape), ov.Type.string if updates.dtype == object else ov.Type.bf16 if updates.dtype.name == 'bfloat16' else ov.Type(updates.dtype), name='updates')]
    args = list(params)
    node = ov.opset3.scatter_update(*args, axis=0)
    model = ov.Model([node], params, 'ScatterUpdate-3')
    compiled = ov.Core().compile_model(model, 'CPU')
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
