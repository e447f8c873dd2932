#!/usr/bin/env python3
# Repro of cases/scatter_nd.yaml::scatternd-negative-indices-slices: written by `gsc repro`; it exits 0 when the behaviour reproduces.
import base64
import json
import sys

import numpy as np

try:
    import ml_dtypes
except ImportError:  # needed only for bfloat16
    ml_dtypes = None

data = np.array([[1.0, 2.0], [3.0, 4.0]], dtype=np.float32).reshape((2, 2))
indices = np.array([[-1]], dtype=np.int64).reshape((1, 1))
updates = np.array([[7.0, 8.0]], dtype=np.float32).reshape((1, 2))
INPUTS = {'data': data, 'indices': indices, 'updates': updates}
# tvm 0.27.0.post1 (relax.op.scatter_nd, cpu)
# Observed: crash. crash: returned ok, then its process died with SIGABRT on exit (memory corrupted by the call)
# Canonical (ONNX): [[1.0, 2.0], [7.0, 8.0]].
# Case: ScatterND {"reduction": "none"}; source: hand-written

def run(data, indices, updates):
    """The native call, as the harness made it."""
    import tvm
    from tvm import relax
    def build_main():
        bb = relax.BlockBuilder()
        data = relax.Var('data', relax.TensorType((2, 2), 'float32'))
        indices = relax.Var('indices', relax.TensorType((1, 1), 'int64'))
        updates = relax.Var('updates', relax.TensorType((1, 2), 'float32'))
        with bb.function('main', [data, indices, updates]):
            with bb.dataflow():
                out = bb.emit_output(relax.op.scatter_nd(data, indices, updates, reduction='update'))
            bb.emit_func_output(out)
        return bb.get()
    mod = build_main()
    ex = tvm.compile(mod, target='llvm')
    vm = relax.VirtualMachine(ex, tvm.cpu())
    result = vm['main'](tvm.runtime.tensor(data), tvm.runtime.tensor(indices), tvm.runtime.tensor(updates)).numpy()
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
