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
# iree 3.13.0 (import_onnx, cpu)
# Observed: ok, label oob-alias = alias-write. returned a value where canonical semantics raise (IndexOutOfRange: index 5 at indices[0, 1] is out of range [-5, 4] for axis 1 of size 5)
# Canonical (ONNX): an error (IndexOutOfRange: index 5 at indices[0, 1] is out of range [-5, 4] for axis 1 of size 5).
# Case: ScatterND {"reduction": "none"}; source: probe: does an unchecked out-of-range index tuple write into the neighbouring row? (harness/alias.py)

def run(data, indices, updates):
    """The native call, as the harness made it."""
    import onnx
    from onnx import TensorProto, helper
    nodes = [
        helper.make_node('ScatterND', ['data', 'indices', 'updates'], ['output']),
    ]
    graph = helper.make_graph(nodes, 'case', [helper.make_tensor_value_info('data', TensorProto.FLOAT, [3, 5]), helper.make_tensor_value_info('indices', TensorProto.INT64, [3, 2]), helper.make_tensor_value_info('updates', TensorProto.FLOAT, [3])],
                              [helper.make_tensor_value_info('output', TensorProto.FLOAT, [3, 5])],
                              initializer=[])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid('', 18)])
    model.ir_version = 10
    import subprocess, sys, tempfile, pathlib
    tmp = pathlib.Path(tempfile.mkdtemp())
    (tmp / 'model.onnx').write_bytes(model.SerializeToString())
    subprocess.run([sys.executable, '-m', 'iree.compiler.tools.import_onnx', str(tmp / 'model.onnx'),
                    '-o', str(tmp / 'model.mlir')], check=True)  # iree-import-onnx model.onnx -o model.mlir
    mlir = (tmp / 'model.mlir').read_text()
    import iree.compiler as ireec
    vmfb = ireec.compile_str(mlir, target_backends=['llvm-cpu'], input_type='onnx',
                             extra_args=['--iree-llvmcpu-target-cpu=generic'])
    import iree.runtime as ireert
    ctx = ireert.SystemContext(config=ireert.Config('local-sync'))
    vm_module = ireert.VmModule.copy_buffer(ctx.instance, vmfb)
    ctx.add_vm_module(vm_module)
    entry = [f for f in vm_module.function_names if not f.startswith('__') and '$' not in f][0]
    result = np.asarray(ctx.modules[vm_module.name][entry](data, indices, updates).to_host())
    return result


result = run(**INPUTS)
print(result)
observed = np.asarray(json.loads("[[1.0, 2.0, 3.0, 4.0, 5.0], [-1.0, 7.0, 8.0, 9.0, 10.0], [-3.0, -2.0, 13.0, 14.0, 15.0]]"), dtype=np.float32)
assert result.shape == observed.shape and np.array_equal(result, observed, equal_nan=result.dtype.kind in 'fc'), f'observed {observed}, got {result}'
