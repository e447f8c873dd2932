#!/usr/bin/env python3
# Repro of cases/probes/gather_elements.yaml::probe-oob-positive: written by `gsc repro`; it exits 0 when the behaviour reproduces.
import base64
import json
import sys

import numpy as np

try:
    import ml_dtypes
except ImportError:  # needed only for bfloat16
    ml_dtypes = None

data = np.array([10.0, 20.0, 30.0, 40.0, 50.0], dtype=np.float32).reshape((5,))
indices = np.array([7, 1], dtype=np.int64).reshape((2,))
INPUTS = {'data': data, 'indices': indices}
# tfjs 4.22.0 (gatherND/wasm, cpu)
# Observed: ok, label oob-positive = garbage. returned a value where canonical semantics raise (IndexOutOfRange: index 7 at indices[0] is out of range [-5, 4] for axis 0 of size 5)
# Canonical (ONNX): an error (IndexOutOfRange: index 7 at indices[0] is out of range [-5, 4] for axis 0 of size 5).
# Case: GatherElements {"axis": 0}; source: probe: what happens to an index >= s?

def run(data, indices):
    """The native call, as the harness made it."""
    import base64, json, os, subprocess, sys
    from typing import Any
    # node_modules with @tensorflow/tfjs 4.22.0 and tfjs-backend-wasm: `npm ci` with the
    # harness's adapters/tfjs_node/package.json (make tfjs), or $GSC_TFJS_DIR.
    TFJS_DIR = os.environ.get('GSC_TFJS_DIR') or 'gather_scatter_conformance/adapters/tfjs_node'
    indices = indices.astype(np.int32)  # tfjs has no int64: the cast a JS user makes
    JS = r'''
    for (const level of ['log', 'info', 'warn', 'debug']) console[level] = console.error;
    const tf = require('@tensorflow/tfjs');
    require('@tensorflow/tfjs-backend-wasm');
    const ARRAYS = {float32: Float32Array, int32: Int32Array, bool: Uint8Array};
    const tensor = (a) => (a.dtype === 'string' ? tf.tensor(a.values, a.shape, 'string')
      : tf.tensor(new ARRAYS[a.dtype](Uint8Array.from(Buffer.from(a.b64, 'base64')).buffer), a.shape, a.dtype));
    function call(tf, data, indices) {
      const coords = tf.stack(indices.shape.map((n, d) => d === 0 ? indices : tf.range(0, n, 1, 'int32').reshape(indices.shape.map((m, e) => (e === d ? m : 1))).broadcastTo(indices.shape)), -1);
      return tf.gatherND(data, coords);
    }
    (async () => {
      await tf.setBackend('wasm');
      const inputs = JSON.parse(require('fs').readFileSync(0, 'utf8'));
      const [data, indices] = [tensor(inputs.data), tensor(inputs.indices)];
      let reply, out;
      try {
        out = tf.tidy(() => call(tf, data, indices));
        const v = out.dataSync();
        reply = {ok: true, dtype: out.dtype, shape: out.shape};
        if (out.dtype === 'string') reply.values = Array.from(v);
        else {
          const t = ArrayBuffer.isView(v) ? v : ARRAYS[out.dtype].from(v);
          reply.b64 = Buffer.from(t.buffer, t.byteOffset, t.byteLength).toString('base64');
        }
      } catch (err) {
        reply = {ok: false, name: err.name, message: err.message};
      }
      tf.dispose([data, indices, ...(out ? [out] : [])]);  // throws where the call damaged the heap
      process.stdout.write(JSON.stringify(reply));
    })();
    '''
    def spec(a: np.ndarray) -> dict[str, Any]:
        """A NumPy array as the Node side reads it (dtype, shape, raw little-endian bytes; string values as a list)."""
        if a.dtype == object:
            return {"dtype": "string", "shape": list(a.shape), "values": [str(v) for v in a.reshape(-1).tolist()]}
        dtype = "bool" if a.dtype == np.bool_ else a.dtype.name
        raw = np.ascontiguousarray(a, dtype=a.dtype.newbyteorder("<")).tobytes()
        return {"dtype": dtype, "shape": list(a.shape), "b64": base64.b64encode(raw).decode()}

    proc = subprocess.run(['node', '-e', JS], cwd=TFJS_DIR, capture_output=True, text=True,
                          input=json.dumps({'data': spec(data), 'indices': spec(indices)}))
    if proc.returncode < 0:  # node died of a signal: so does this process, as the call's did
        os.kill(os.getpid(), -proc.returncode)
    if proc.returncode:
        sys.exit(f'node exited with status {proc.returncode}: {proc.stderr.strip()[-2000:]}')
    reply = json.loads(proc.stdout)
    if not reply['ok']:
        raise type(reply['name'], (Exception,), {})(reply['message'])
    def value(reply: dict[str, Any]) -> np.ndarray:
        """The NumPy array of a tfjs result as the Node side sends it."""
        if reply["dtype"] == "string":
            out = np.empty(len(reply["values"]), dtype=object)
            out[:] = reply["values"]
            return out.reshape(reply["shape"])
        kinds = {"float32": np.float32, "int32": np.int32, "bool": np.bool_}
        return np.frombuffer(base64.b64decode(reply["b64"]), dtype=kinds[reply["dtype"]]).reshape(reply["shape"]).copy()

    result = value(reply)
    return result


result = run(**INPUTS)
print(result)
# An unchecked read returns whatever lies in memory (here it was seen to differ from run to run), so the
# script asserts the class of the result, not its bytes: no valid result, or not the same twice.
VALID = []  # canonical semantics: an error (IndexOutOfRange: index 7 at indices[0] is out of range [-5, 4] for axis 0 of size 5)


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
