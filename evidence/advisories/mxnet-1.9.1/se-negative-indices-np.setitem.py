#!/usr/bin/env python3
# Repro of cases/scatter_elements.yaml::se-negative-indices: written by `gsc repro`; it exits 0 when the behaviour reproduces.
import base64
import json
import sys

import numpy as np

try:
    import ml_dtypes
except ImportError:  # needed only for bfloat16
    ml_dtypes = None

data = np.array([[1.0, 2.0, 3.0, 4.0]], dtype=np.float32).reshape((1, 4))
indices = np.array([[-1, -4, 1]], dtype=np.int64).reshape((1, 3))
updates = np.array([[10.0, 20.0, 30.0]], dtype=np.float32).reshape((1, 3))
INPUTS = {'data': data, 'indices': indices, 'updates': updates}
# mxnet 1.9.1 (np.setitem, cpu)
# Observed: crash. crash: worker exited with status 255
# Canonical (ONNX): [[20.0, 30.0, 3.0, 10.0]].
# Case: ScatterElements {"axis": 1, "reduction": "none"}; source: hand-written

def run(data, indices, updates):
    """The native call, as the harness made it."""
    import mxnet as mx
    from mxnet import npx
    npx.set_np()
    data = mx.np.array(data, dtype=data.dtype)
    indices = mx.np.array(indices, dtype=indices.dtype)
    updates = mx.np.array(updates, dtype=updates.dtype)
    out = data.copy()
    out[(mx.np.arange(1, dtype='int64').reshape((1, 1)), indices)] = updates
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
