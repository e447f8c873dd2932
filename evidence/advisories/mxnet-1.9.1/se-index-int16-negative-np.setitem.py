#!/usr/bin/env python3
# Repro of cases/scatter_elements.yaml::se-index-int16-negative: written by `gsc repro`; it exits 0 when the behaviour reproduces.
import base64
import json
import sys

import numpy as np

try:
    import ml_dtypes
except ImportError:  # needed only for bfloat16
    ml_dtypes = None

data = np.array([0.0, 0.0, 0.0, 0.0], dtype=np.float32).reshape((4,))
indices = np.array([-1, -4], dtype=np.int16).reshape((2,))
updates = np.array([5.0, 6.0], dtype=np.float32).reshape((2,))
INPUTS = {'data': data, 'indices': indices, 'updates': updates}
# mxnet 1.9.1 (np.setitem, cpu)
# Observed: crash. crash: worker exited with status 255
# Canonical (ONNX): [6.0, 0.0, 0.0, 5.0].
# Case: ScatterElements {"axis": 0, "reduction": "none"}; source: hand-written

def run(data, indices, updates):
    """The native call, as the harness made it."""
    import mxnet as mx
    from mxnet import npx
    npx.set_np()
    data = mx.np.array(data, dtype=data.dtype)
    updates = mx.np.array(updates, dtype=updates.dtype)
    indices = mx.np.array(indices.astype('int64'), dtype='int64')
    out = data.copy()
    out[(indices,)] = updates
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
