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
# mxnet 1.9.1 (np.setitem, cpu)
# Observed: ok, label oob-alias = alias-write. returned a value where canonical semantics raise (IndexOutOfRange: index 5 at indices[0, 1] is out of range [-5, 4] for axis 1 of size 5)
# Canonical (ONNX): an error (IndexOutOfRange: index 5 at indices[0, 1] is out of range [-5, 4] for axis 1 of size 5).
# Case: ScatterND {"reduction": "none"}; source: probe: does an unchecked out-of-range index tuple write into the neighbouring row? (harness/alias.py)

def run(data, indices, updates):
    """The native call, as the harness made it."""
    import mxnet as mx
    from mxnet import npx
    npx.set_np()
    data = mx.np.array(data, dtype=data.dtype)
    indices = mx.np.array(indices, dtype=indices.dtype)
    updates = mx.np.array(updates, dtype=updates.dtype)
    out = data.copy()
    out[tuple(mx.np.moveaxis(indices, -1, 0))] = updates
    out = out.asnumpy()
    result = out.view(np.uint16).reshape(out.shape).view(ml_dtypes.bfloat16) if out.dtype.names == ('bfloat16',) else out
    return result


result = run(**INPUTS)
print(result)
observed = np.asarray(json.loads("[[1.0, 2.0, 3.0, 4.0, 5.0], [-1.0, 7.0, 8.0, 9.0, 10.0], [-3.0, -2.0, 13.0, 14.0, 15.0]]"), dtype=np.float32)
assert result.shape == observed.shape and np.array_equal(result, observed, equal_nan=result.dtype.kind in 'fc'), f'observed {observed}, got {result}'
