#!/usr/bin/env python3
# Repro of cases/gather.yaml::gather-index-int16-negative: written by `gsc repro`; it exits 0 when the behaviour reproduces.
import base64
import json
import sys

import numpy as np

try:
    import ml_dtypes
except ImportError:  # needed only for bfloat16
    ml_dtypes = None

data = np.array([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]], dtype=np.float32).reshape((2, 3))
indices = np.array([-1, -2, 1], dtype=np.int16).reshape((3,))
INPUTS = {'data': data, 'indices': indices}
# tvm 0.27.0.post1 (relax.op.take, cpu)
# Observed: ok. 6 of 9 element(s) differ
# Canonical (ONNX): [[4.0, 5.0, 6.0], [1.0, 2.0, 3.0], [4.0, 5.0, 6.0]].
# Case: Gather {"axis": 0, "batch_dims": 0}; source: hand-written

def run(data, indices):
    """The native call, as the harness made it."""
    import tvm
    from tvm import relax
    def build_main():
        bb = relax.BlockBuilder()
        data = relax.Var('data', relax.TensorType((2, 3), 'float32'))
        indices = relax.Var('indices', relax.TensorType((3,), 'int16'))
        with bb.function('main', [data, indices]):
            with bb.dataflow():
                out = bb.emit_output(relax.op.take(data, indices, axis=0))
            bb.emit_func_output(out)
        return bb.get()
    mod = build_main()
    ex = tvm.compile(mod, target='llvm')
    vm = relax.VirtualMachine(ex, tvm.cpu())
    result = vm['main'](tvm.runtime.tensor(data), tvm.runtime.tensor(indices)).numpy()
    return result


result = run(**INPUTS)
print(result)
observed = np.asarray(json.loads("[[0.0, 4.624284932271896e-44, 0.0], [1.401298464324817e-45, 0.0, -4.344025239406933e-44], [4.0, 5.0, 6.0]]"), dtype=np.float32)
assert result.shape == observed.shape and np.array_equal(result, observed, equal_nan=result.dtype.kind in 'fc'), f'observed {observed}, got {result}'
