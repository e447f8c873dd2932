#!/usr/bin/env python3
# Repro of cases/probes/take.yaml::probe-negative-indices-default-mode: written by `gsc repro`; it exits 0 when the behaviour reproduces.
import base64
import json
import sys

import numpy as np

try:
    import ml_dtypes
except ImportError:  # needed only for bfloat16
    ml_dtypes = None

data = np.array([10.0, 20.0, 30.0, 40.0, 50.0], dtype=np.float32).reshape((5,))
indices = np.array([-2, 1], dtype=np.int64).reshape((2,))
INPUTS = {'data': data, 'indices': indices}
# tvm 0.27.0.post1 (relax.op.take, cpu)
# Observed: ok, label negative-indices = wrong (its baseline: wrong|garbage). 1 of 2 element(s) differ
# Canonical (ONNX): [40.0, 20.0].
# Case: Take {"axis": 0, "mode": "raise"}; source: probe: what happens to an index in [-s, -1] in the framework's default mode? (002, Table 2)

def run(data, indices):
    """The native call, as the harness made it."""
    import tvm
    from tvm import relax
    def build_main():
        bb = relax.BlockBuilder()
        data = relax.Var('data', relax.TensorType((5,), 'float32'))
        indices = relax.Var('indices', relax.TensorType((2,), 'int64'))
        with bb.function('main', [data, indices]):
            with bb.dataflow():
                out = bb.emit_output(relax.op.take(data, indices, axis=0, mode='fast'))
            bb.emit_func_output(out)
        return bb.get()
    mod = build_main()
    ex = tvm.compile(mod, target='llvm')
    vm = relax.VirtualMachine(ex, tvm.cpu())
    result = vm['main'](tvm.runtime.tensor(data), tvm.runtime.tensor(indices)).numpy()
    return result


result = run(**INPUTS)
print(result)
# An unchecked read returns whatever lies in memory (here it was seen to differ from run to run), so the
# script asserts the class of the result, not its bytes: no valid result, or not the same twice.
VALID = [np.array([40.0, 20.0], dtype=np.float32).reshape((2,))]  # canonical semantics: [40.0, 20.0]


def same(a, b):
    try:
        return a.shape == b.shape and np.array_equal(np.asarray(a).astype(b.dtype), b, equal_nan=b.dtype.kind in 'fc')
    except (TypeError, ValueError):
        return False


assert list(result.shape) == [2], f'expected a value of shape [2], got {result.shape}'
if any(same(result, valid) for valid in VALID):
    again = run(**INPUTS)
    assert not same(again, result), 'a valid result, the same on two runs: the unchecked read did not reproduce'
    print('another run read other bytes: an unchecked read')
else:
    print('no valid result: an unchecked read')
