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
# iree 3.13.0 (stablehlo.scatter, cpu)
# Observed: ok, label oob-alias = alias-write. returned a value where canonical semantics raise (IndexOutOfRange: index 5 at indices[0, 1] is out of range [-5, 4] for axis 1 of size 5)
# Canonical (ONNX): an error (IndexOutOfRange: index 5 at indices[0, 1] is out of range [-5, 4] for axis 1 of size 5).
# Case: ScatterND {"reduction": "none"}; source: probe: does an unchecked out-of-range index tuple write into the neighbouring row? (harness/alias.py)

def run(data, indices, updates):
    """The native call, as the harness made it."""
    mlir = '''
    func.func @main(%data: tensor<3x5xf32>, %indices: tensor<3x2xi64>, %updates: tensor<3xf32>) -> tensor<3x5xf32> {
      %v0 = "stablehlo.scatter"(%data, %indices, %updates) ({
      ^bb0(%old: tensor<f32>, %new: tensor<f32>):
          stablehlo.return %new : tensor<f32>
      }) {scatter_dimension_numbers = #stablehlo.scatter<inserted_window_dims = [0, 1], scatter_dims_to_operand_dims = [0, 1], index_vector_dim = 1>, indices_are_sorted = false, unique_indices = false} : (tensor<3x5xf32>, tensor<3x2xi64>, tensor<3xf32>) -> tensor<3x5xf32>
      return %v0 : tensor<3x5xf32>
    }
    '''
    import iree.compiler as ireec
    vmfb = ireec.compile_str(mlir, target_backends=['llvm-cpu'], input_type='stablehlo',
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
