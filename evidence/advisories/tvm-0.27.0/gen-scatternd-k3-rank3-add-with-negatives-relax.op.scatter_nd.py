#!/usr/bin/env python3
# Repro of cases/scatter_nd.yaml::gen-scatternd-k3-rank3-add-with-negatives: written by `gsc repro`; it exits 0 when the behaviour reproduces.
import base64
import json
import sys

import numpy as np

try:
    import ml_dtypes
except ImportError:  # needed only for bfloat16
    ml_dtypes = None

data = np.array([[[5.803723752156749, 5.268520358194456, 8.649616587869662, 7.347604128106864, 4.7658484007382285, 8.16696228623281], [5.4463477611557085, 4.374157646184109, 0.08451104579143554, 6.7847370696971545, 7.863135837363124, 7.05927724024058], [9.62109328514403, 7.216828155012925, 0.11431790806055164, 9.275036108488356, 8.22529156033584, 6.817147437191435], [7.3382701125207825, 0.6819782745709435, 0.18213762155533386, 5.376862830728946, 9.018542070623978, 7.211462141494762], [8.951485247408336, 2.934518922831608, 4.698524795700916, 2.866297806498266, 5.489505030427871, 8.639408500349559]], [[5.279124668037831, 7.628643315158074, 9.188320560461912, 4.483621995226344, 5.148089948025932, 5.4968553075240445], [4.815816652059343, 8.463926260976907, 5.211653218262706, 2.246570004730927, 4.803168580548002, 1.1534369725429183], [5.4378738842843966, 5.179428197402341, 8.445354502541164, 2.9325740850001636, 8.205197894107116, 1.6583378121790149], [4.425141877865673, 8.304951761643624, 3.364032410221859, 4.459146052660965, 7.400241530041088, 6.960854945815015], [0.7092868360798643, 1.3875422036418572, 1.2906965073627619, 5.804862399020287, 5.0270434162281905, 9.120511440947453]], [[1.9838823448131127, 8.58247178428224, 8.37461291323061, 6.1997609763651464, 3.2804640421769804, 6.50953333703735], [7.571051684534794, 5.076659924422441, 1.147589451370774, 6.3859253844239925, 7.352097020116265, 2.6682690282639134], [5.472109795597413, 9.958332722897007, 5.946884774697596, 1.7843167168554819, 1.9234528237926674, 1.5631845630028984], [6.971131523461118, 7.930157038537704, 7.983501519388481, 1.308500858089543, 5.90285008230794, 5.609969845272291], [0.5423492329916246, 1.9352842202904996, 4.3992566592945215, 1.8518767136369119, 6.378089492257163, 5.126357364387223]], [[3.9107963108807864, 9.2660139539121, 0.07268947563227268, 8.729800700187699, 0.26553196584079175, 3.898177647996992], [3.1816658329320613, 9.012565881272167, 8.062163862764283, 4.382622490989777, 0.5192577441148172, 8.602324295080647], [7.292365034862414, 3.9564142050946405, 1.4479420559631784, 5.676724686030575, 8.50577869445794, 3.1157621810434186], [4.053109756493432, 7.51638285272414, 1.745822076978376, 7.471610983171133, 9.010073597040048, 5.031979527255958], [6.515843422771215, 6.484067591415878, 5.55797057861353, 6.002078640140985, 7.540785585784985, 3.5721845619598804]]], dtype=np.float64).reshape((4, 5, 6))
indices = np.array([[-4, -5, -6], [0, 0, -4], [1, -4, -4], [0, 2, 4], [2, -3, 4], [2, 4, 4], [-1, 2, 1], [1, -1, 1], [3, -2, 2], [-1, 0, -3], [1, 1, -1], [2, 0, 1], [1, -1, -5], [0, -1, 3], [2, 1, 3], [-1, 3, 0], [2, -5, -3], [-4, 0, -5], [1, 3, -6], [1, -3, 1], [0, -5, 4], [2, -1, 2], [-4, 0, -3], [1, -4, -3], [-3, -3, -4], [3, 0, 0], [1, 4, 3], [1, 0, 5], [1, -4, -6], [-4, 3, 1], [0, 3, -1], [3, -3, -4], [-3, -3, -2], [2, 3, -4], [-1, 4, 0], [1, -4, -5], [-3, 0, 5], [1, -1, 2], [0, -4, -3], [-4, 3, 3], [2, -1, -2], [-4, -2, 3], [-2, -1, -4], [0, -1, -5], [-4, -1, 2], [3, 2, 1], [-1, -1, 2], [1, 1, 0], [2, -1, 4], [3, -5, -6], [-2, 1, -1], [-2, -4, -4], [1, 3, 4], [-1, -4, -1], [3, -4, -5], [-2, 0, -4], [1, 3, -6], [0, 0, 1], [0, -4, 3], [2, 4, 0]], dtype=np.int64).reshape((60, 3))
updates = np.array([3.807348452151429, 7.2380585091200444, 3.221893262459786, 9.652239563946083, 7.403466337926475, 4.581979924321303, 2.0755226826609876, 0.029166072187428727, 7.84264848368576, 2.331682930880199, 0.15461693608692761, 3.4447884942308726, 1.7027339074395786, 0.4904776563115498, 2.350262393244693, 3.1255899474578097, 7.17166718931488, 1.6822204457615242, 0.20490361383498912, 0.8399530626623619, 1.4281909414057103, 3.2268643200270084, 4.527372985520282, 2.3089747330863086, 2.1767088734510773, 8.083768831851811, 1.747949044712136, 6.39013250300215, 5.889217328523966, 6.819230752674429, 3.128092611890235, 0.6140937000675628, 4.582880715942165, 5.137017714588449, 0.8191434435214529, 9.731576326301973, 2.9518180047002742, 2.6055566450452683, 9.094119962835562, 4.189110412101574, 1.3204887684963185, 7.019654599218196, 1.13395310834712, 5.808682593437217, 2.8925208775861986, 6.984487771390768, 4.435249506982661, 9.03212959480147, 7.899271236119349, 6.590619587914706, 2.6921546211209635, 0.49159765380843656, 2.146707755906464, 6.210421243081607, 9.409059641483916, 3.783618717338805, 3.046993998273498, 0.6239865214830487, 7.9167194847830675, 1.5479029548941026], dtype=np.float64).reshape((60,))
INPUTS = {'data': data, 'indices': indices, 'updates': updates}
# tvm 0.27.0.post1 (relax.op.scatter_nd, cpu)
# Observed: crash. crash: returned ok, then its process died with SIGABRT on exit (memory corrupted by the call)
# Canonical (ONNX): an array of shape [4, 5, 6].
# Case: ScatterND {"reduction": "add"}; source: generated; expected from the reference engine

def run(data, indices, updates):
    """The native call, as the harness made it."""
    import tvm
    from tvm import relax
    def build_main():
        bb = relax.BlockBuilder()
        data = relax.Var('data', relax.TensorType((4, 5, 6), 'float64'))
        indices = relax.Var('indices', relax.TensorType((60, 3), 'int64'))
        updates = relax.Var('updates', relax.TensorType((60,), 'float64'))
        with bb.function('main', [data, indices, updates]):
            with bb.dataflow():
                out = bb.emit_output(relax.op.scatter_nd(data, indices, updates, reduction='add'))
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
