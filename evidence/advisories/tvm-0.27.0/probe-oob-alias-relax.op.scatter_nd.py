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
# tvm 0.27.0.post1 (relax.op.scatter_nd, cpu)
# Observed: ok, label oob-alias = alias-write. returned a value where canonical semantics raise (IndexOutOfRange: index 5 at indices[0, 1] is out of range [-5, 4] for axis 1 of size 5)
# Canonical (ONNX): an error (IndexOutOfRange: index 5 at indices[0, 1] is out of range [-5, 4] for axis 1 of size 5).
# Case: ScatterND {"reduction": "none"}; source: probe: does an unchecked out-of-range index tuple write into the neighbouring row? (harness/alias.py)

def run(data, indices, updates):
    """The native call, as the harness made it."""
    import tvm
    from tvm import relax
    def build_main():
        bb = relax.BlockBuilder()
        data = relax.Var('data', relax.TensorType((3, 5), 'float32'))
        indices = relax.Var('indices', relax.TensorType((3, 2), 'int64'))
        updates = relax.Var('updates', relax.TensorType((3,), 'float32'))
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


result = run(**INPUTS)
print(result)
observed = np.asarray(json.loads("[[1.0, 2.0, 3.0, 4.0, 5.0], [-1.0, 7.0, 8.0, 9.0, 10.0], [-3.0, -2.0, 13.0, 14.0, 15.0]]"), dtype=np.float32)
assert result.shape == observed.shape and np.array_equal(result, observed, equal_nan=result.dtype.kind in 'fc'), f'observed {observed}, got {result}'
