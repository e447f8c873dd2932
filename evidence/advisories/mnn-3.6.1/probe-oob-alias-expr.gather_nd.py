#!/usr/bin/env python3
# Repro of cases/probes/gather_nd.yaml::probe-oob-alias: written by `gsc repro`; it exits 0 when the behaviour reproduces.
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
INPUTS = {'data': data, 'indices': indices}
# mnn 3.6.1 (expr.gather_nd, cpu)
# Observed: ok, label oob-alias = alias. returned a value where canonical semantics raise (IndexOutOfRange: index 5 at indices[0, 1] is out of range [-5, 4] for axis 1 of size 5)
# Canonical (ONNX): an error (IndexOutOfRange: index 5 at indices[0, 1] is out of range [-5, 4] for axis 1 of size 5).
# Case: GatherND {"batch_dims": 0}; source: probe: does an unchecked out-of-range index tuple read the neighbouring row? (harness/alias.py)

def run(data, indices):
    """The native call, as the harness made it."""
    import MNN.expr as expr
    data = expr.const(data, list(data.shape), expr.NCHW, expr.float)
    indices = expr.const(indices.astype(np.int32), list(indices.shape), expr.NCHW, expr.int)
    result = np.array((expr.gather_nd(data, indices)).read())
    return result


result = run(**INPUTS)
print(result)
observed = np.asarray(json.loads("[6.0, 12.0, 11.0]"), dtype=np.float32)
assert result.shape == observed.shape and np.array_equal(result, observed, equal_nan=result.dtype.kind in 'fc'), f'observed {observed}, got {result}'
