#!/usr/bin/env python3
# Repro of cases/probes/scatter_nd.yaml::probe-oob-alias: written by `gsc repro`; it exits 0 when the behaviour reproduces.
import base64
import json
import sys

import numpy as np

try:
    import ml_dtypes
except ImportError:  # needed only for bfloat16
    ml_dtypes = None

data = np.array([[1.0, 2.0, 3.0, 4.0, 5.0], [6.0, 7.0, 8.0, 9.0, 10.0], [11.0, 12.0, 13.0, 14.0, 15.0]], dtype=np.float32).reshape((3, 5))
indices = np.array([[0, 5], [1, 6], [2, 0]], dtype=np.int64).reshape((3, 2))
updates = np.array([-1.0, -2.0, -3.0], dtype=np.float32).reshape((3,))
INPUTS = {'data': data, 'indices': indices, 'updates': updates}
# paddle 3.3.1 (index_put/static, cpu)
# Observed: ok, label oob-alias = alias-write. returned a value where canonical semantics raise (IndexOutOfRange: index 5 at indices[0, 1] is out of range [-5, 4] for axis 1 of size 5)
# Canonical (ONNX): an error (IndexOutOfRange: index 5 at indices[0, 1] is out of range [-5, 4] for axis 1 of size 5).
# Case: ScatterND {"reduction": "none"}; source: probe: does an unchecked out-of-range index tuple write into the neighbouring row? (harness/alias.py)

def run(data, indices, updates):
    """The native call, as the harness made it."""
    import paddle
    data = paddle.to_tensor(data)
    indices = paddle.to_tensor(indices)
    updates = paddle.to_tensor(updates)
    def fn(data, indices, updates):
        return paddle.index_put(data, tuple(indices.unbind(-1)), updates, accumulate=False)
    fn = paddle.jit.to_static(fn, input_spec=[paddle.static.InputSpec(list(data.shape), data.dtype, 'data'), paddle.static.InputSpec(list(indices.shape), indices.dtype, 'indices'), paddle.static.InputSpec(list(updates.shape), updates.dtype, 'updates')], full_graph=True)
    out = fn(data, indices, updates)
    result = out.astype('float32').numpy().astype(ml_dtypes.bfloat16) if out.dtype == paddle.bfloat16 else out.numpy()
    return result


result = run(**INPUTS)
print(result)
observed = np.asarray(json.loads("[[1.0, 2.0, 3.0, 4.0, 5.0], [-1.0, 7.0, 8.0, 9.0, 10.0], [-3.0, -2.0, 13.0, 14.0, 15.0]]"), dtype=np.float32)
assert result.shape == observed.shape and np.array_equal(result, observed, equal_nan=result.dtype.kind in 'fc'), f'observed {observed}, got {result}'
