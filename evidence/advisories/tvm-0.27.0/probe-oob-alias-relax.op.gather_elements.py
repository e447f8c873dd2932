#!/usr/bin/env python3
# Repro of cases/probes/gather_elements.yaml::probe-oob-alias: written by `gsc repro`; it exits 0 when the behaviour reproduces.
import base64
import json
import sys

import numpy as np

try:
    import ml_dtypes
except ImportError:  # needed only for bfloat16
    ml_dtypes = None

data = np.array([[1.0, 2.0, 3.0, 4.0, 5.0], [6.0, 7.0, 8.0, 9.0, 10.0], [11.0, 12.0, 13.0, 14.0, 15.0]], dtype=np.float32).reshape((3, 5))
indices = np.array([[5], [6], [0]], dtype=np.int64).reshape((3, 1))
INPUTS = {'data': data, 'indices': indices}
# tvm 0.27.0.post1 (relax.op.gather_elements, cpu)
# Observed: ok, label oob-alias = alias. returned a value where canonical semantics raise (IndexOutOfRange: index 5 at indices[0, 0] is out of range [-5, 4] for axis 1 of size 5)
# Canonical (ONNX): an error (IndexOutOfRange: index 5 at indices[0, 0] is out of range [-5, 4] for axis 1 of size 5).
# Case: GatherElements {"axis": 1}; source: probe: does an unchecked out-of-range index read the neighbouring row? (harness/alias.py)

def run(data, indices):
    """The native call, as the harness made it."""
    import tvm
    from tvm import relax
    def build_main():
        bb = relax.BlockBuilder()
        data = relax.Var('data', relax.TensorType((3, 5), 'float32'))
        indices = relax.Var('indices', relax.TensorType((3, 1), 'int64'))
        with bb.function('main', [data, indices]):
            with bb.dataflow():
                out = bb.emit_output(relax.op.gather_elements(data, indices, axis=1))
            bb.emit_func_output(out)
        return bb.get()
    mod = build_main()
    ex = tvm.compile(mod, target='llvm')
    vm = relax.VirtualMachine(ex, tvm.cpu())
    result = vm['main'](tvm.runtime.tensor(data), tvm.runtime.tensor(indices)).numpy()
    return result


result = run(**INPUTS)
print(result)
observed = np.asarray(json.loads("[[6.0], [12.0], [11.0]]"), dtype=np.float32)
assert result.shape == observed.shape and np.array_equal(result, observed, equal_nan=result.dtype.kind in 'fc'), f'observed {observed}, got {result}'
