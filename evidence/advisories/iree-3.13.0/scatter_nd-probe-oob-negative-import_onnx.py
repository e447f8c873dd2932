#!/usr/bin/env python3
# Repro of cases/probes/scatter_nd.yaml::probe-oob-negative: written by `gsc repro`; it exits 0 when the behaviour reproduces.
import base64
import json
import sys

import numpy as np

try:
    import ml_dtypes
except ImportError:  # needed only for bfloat16
    ml_dtypes = None

data = np.array([10.0, 20.0, 30.0, 40.0, 50.0], dtype=np.float32).reshape((5,))
indices = np.array([[1], [-7]], dtype=np.int64).reshape((2, 1))
updates = np.array([-1.0, -2.0], dtype=np.float32).reshape((2,))
INPUTS = {'data': data, 'indices': indices, 'updates': updates}
# iree 3.13.0 (import_onnx, cpu)
# Observed: crash, label oob-negative = crash:SIGSEGV. crash: worker died with SIGSEGV
# Canonical (ONNX): an error (IndexOutOfRange: index -7 at indices[1, 0] is out of range [-5, 4] for axis 0 of size 5).
# Case: ScatterND {"reduction": "none"}; source: probe: what happens to an index < -s? (002, Table 1 'Out of bound indices')

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
