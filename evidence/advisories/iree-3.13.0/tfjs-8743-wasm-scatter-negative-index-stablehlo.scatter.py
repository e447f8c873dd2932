#!/usr/bin/env python3
# Repro of cases/regression/tfjs-8743.yaml::tfjs-8743-wasm-scatter-negative-index: written by `gsc repro`; it exits 0 when the behaviour reproduces.
import base64
import json
import sys

import numpy as np

try:
    import ml_dtypes
except ImportError:  # needed only for bfloat16
    ml_dtypes = None

data = np.array([0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0], dtype=np.float32).reshape((100,))
indices = np.array([[-1]], dtype=np.int32).reshape((1, 1))
updates = np.array([42.0], dtype=np.float32).reshape((1,))
INPUTS = {'data': data, 'indices': indices, 'updates': updates}
# iree 3.13.0 (stablehlo.scatter, cpu)
# Observed: crash. crash: worker died with SIGSEGV
# Canonical (ONNX): an array of shape [100].
# Case: ScatterND {"reduction": "none"}; source: tfjs#8743 https://github.com/tensorflow/tfjs/pull/8743 (inputs from the PR text; expected: reference engine)

def run(data, indices, updates):
    """The native call, as the harness made it."""
    mlir = '''
    func.func @main(%data: tensor<100xf32>, %indices: tensor<1x1xi32>, %updates: tensor<1xf32>) -> tensor<100xf32> {
      %v0 = "stablehlo.scatter"(%data, %indices, %updates) ({
      ^bb0(%old: tensor<f32>, %new: tensor<f32>):
          stablehlo.return %new : tensor<f32>
      }) {scatter_dimension_numbers = #stablehlo.scatter<inserted_window_dims = [0], scatter_dims_to_operand_dims = [0], index_vector_dim = 1>, indices_are_sorted = false, unique_indices = false} : (tensor<100xf32>, tensor<1x1xi32>, tensor<1xf32>) -> tensor<100xf32>
      return %v0 : tensor<100xf32>
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
print('child process ended with', proc.returncode, '(expected -signal.SIGSEGV)')
assert -proc.returncode in [6, 7, 11], f'expected a memory-damage signal (SIGSEGV when recorded), got {proc.returncode}'
