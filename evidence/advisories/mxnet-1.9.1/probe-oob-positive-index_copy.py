#!/usr/bin/env python3
# Repro of cases/probes/scatter_nd.yaml::probe-oob-positive: written by `gsc repro`; it exits 0 when the behaviour reproduces.
import base64
import json
import sys

import numpy as np

try:
    import ml_dtypes
except ImportError:  # needed only for bfloat16
    ml_dtypes = None

data = np.array([10.0, 20.0, 30.0, 40.0, 50.0], dtype=np.float32).reshape((5,))
indices = np.array([[1], [7]], dtype=np.int64).reshape((2, 1))
updates = np.array([-1.0, -2.0], dtype=np.float32).reshape((2,))
INPUTS = {'data': data, 'indices': indices, 'updates': updates}
# mxnet 1.9.1 (index_copy, cpu)
# Observed: crash, label oob-positive = crash:SIGABRT. crash: worker died with SIGABRT
# Canonical (ONNX): an error (IndexOutOfRange: index 7 at indices[1, 0] is out of range [-5, 4] for axis 0 of size 5).
# Case: ScatterND {"reduction": "none"}; source: probe: what happens to an index >= s? (002, Table 1 'Out of bound indices')

def run(data, indices, updates):
    """The native call, as the harness made it."""
    import mxnet as mx
    from mxnet import npx
    data = mx.nd.array(data, dtype=data.dtype)
    indices = mx.nd.array(indices, dtype=indices.dtype)
    updates = mx.nd.array(updates, dtype=updates.dtype)
    out = (mx.nd.contrib.index_copy(data, indices.reshape(-1), updates.reshape((-1,)))).asnumpy()
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
