#!/usr/bin/env python3
# Repro of cases/probes/scatter_nd.yaml::probe-oob-negative-zero-data: written by `gsc repro`; it exits 0 when the behaviour reproduces.
import base64
import json
import sys

import numpy as np

try:
    import ml_dtypes
except ImportError:  # needed only for bfloat16
    ml_dtypes = None

data = np.array([0.0, 0.0, 0.0, 0.0, 0.0], dtype=np.float32).reshape((5,))
indices = np.array([[1], [-7]], dtype=np.int64).reshape((2, 1))
updates = np.array([-1.0, -2.0], dtype=np.float32).reshape((2,))
INPUTS = {'data': data, 'indices': indices, 'updates': updates}
# tvm 0.27.0.post1 (from_onnx, cpu)
# Observed: timeout, label oob-negative = crash:SIGABRT|timeout. timeout: no result within 120 s; its process was killed
# Canonical (ONNX): an error (IndexOutOfRange: index -7 at indices[1, 0] is out of range [-5, 4] for axis 0 of size 5).
# Case: ScatterND {"reduction": "none"}; source: probe: probe-oob-negative on zero data, for tf.scatter_nd / mx.nd.scatter_nd (002, Table 1)

def run(data, indices, updates):
    """The native call, as the harness made it."""
    import onnx
    from onnx import TensorProto, helper
    nodes = [
        helper.make_node('ScatterND', ['data', 'indices', 'updates'], ['output']),
    ]
    graph = helper.make_graph(nodes, 'case', [helper.make_tensor_value_info('data', TensorProto.FLOAT, [5]), helper.make_tensor_value_info('indices', TensorProto.INT64, [2, 1]), helper.make_tensor_value_info('updates', TensorProto.FLOAT, [2])],
                              [helper.make_tensor_value_info('output', TensorProto.FLOAT, [5])],
                              initializer=[])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid('', 18)])
    model.ir_version = 10
    import tvm
    from tvm import relax
    from tvm.relax.frontend.onnx import from_onnx
    mod = from_onnx(model)
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
try:
    subprocess.run([sys.executable, __file__, '--child'], timeout=60)
except subprocess.TimeoutExpired:
    print('reproduced: the call did not finish within 60 s')
else:
    raise AssertionError('the call finished: the hang did not reproduce')
