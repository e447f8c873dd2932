#!/usr/bin/env python3
# Repro of cases/regression/tfjs-8743.yaml::tfjs-8743-wasm-scatter-negative-index: written by `gsc repro`; it exits 0 when the behaviour reproduces.
import base64
import json
import sys

import numpy as np

try:
    import ml_dtypes
except ImportError:  # needed only for bfloat16
    ml_dtypes = None

data = np.array([0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0], dtype=np.float32).reshape((100,))
indices = np.array([[-1]], dtype=np.int32).reshape((1, 1))
updates = np.array([42.0], dtype=np.float32).reshape((1,))
INPUTS = {'data': data, 'indices': indices, 'updates': updates}
# mxnet 1.9.1 (np.setitem, cpu)
# Observed: crash. crash: worker exited with status 255
# Canonical (ONNX): an array of shape [100].
# Case: ScatterND {"reduction": "none"}; source: tfjs#8743 https://github.com/tensorflow/tfjs/pull/8743 (inputs from the PR text; expected: reference engine)

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


# The call killed (or hung) its process: run it in a child process and check how that ended.
import subprocess
if '--child' in sys.argv:
    run(**INPUTS)
    import ctypes, gc
    gc.collect()
    ctypes.CDLL(None).malloc_trim(0)  # glibc walks its free lists here: damaged memory shows
    sys.exit(0)
import signal
proc = subprocess.run([sys.executable, __file__, '--child'])
print('child process ended with', proc.returncode, '(expected the exit status)')
assert proc.returncode != 0, f'expected a crash, got exit status {proc.returncode}'
