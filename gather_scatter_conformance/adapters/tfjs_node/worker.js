// The Node side of gather-scatter-conformance's TensorFlow.js adapter (adapters/tfjs.py): one persistent process
// that runs calls for the Python adapter, one JSON request per stdin line, one JSON reply per stdout line.
//
//   node worker.js [DIR]      DIR holds node_modules with @tensorflow/tfjs and @tensorflow/tfjs-backend-wasm
//                             (default: this script's folder, where `npm ci` installs them from package.json)
//
// Request: {"backend": "cpu" | "wasm", "names": ["data", "indices"], "body": "<JS statements ending in return>",
//           "inputs": {"data": {"dtype": "float32", "shape": [4], "b64": "..."} | {"dtype": "string", ...,
//           "values": [...]}}}. ``body`` is the call exactly as the repro script shows it (adapters/tfjs.py writes
// both from one string); it runs as a function of `tf` and the named input tensors, inside tf.tidy.
// Reply: {"ok": true, "dtype", "shape", "b64" | "values", "backend": tf.getBackend() after the call, "kernels":
// [the kernels the call dispatched]} or {"ok": false, "name": error.name, "message": error.message} or
// {"ok": false, "unavailable": "<why the backend cannot start>"} or {"ok": false, "damaged": "<the error freeing
// the call's tensors raised>", "after": <the call's own reply>}. The process ends when stdin closes.
'use strict';

// stdout carries the protocol: tfjs's notices (console.log/warn) go to stderr.
for (const level of ['log', 'info', 'warn', 'debug']) console[level] = console.error;

const path = require('path');
const {createRequire} = require('module');

const dir = process.argv[2] || __dirname;
const load = createRequire(path.join(path.resolve(dir), 'package.json'));
const tf = load('@tensorflow/tfjs');
load('@tensorflow/tfjs-backend-wasm');

// The kernels a call dispatches, as the engine names them (GatherV2, TensorScatterUpdate): noted by wrapping the
// engine's kernel dispatch, since tfjs has no public listener and tf.profile changes how a failing call ends (it
// leaves profiling on and a rejected promise behind, which kills Node on a later call).
let kernels = null;
const engine = tf.engine();
const dispatch = engine.runKernelFunc.bind(engine);
engine.runKernelFunc = (params) => {
  if (kernels && params && params.kernelName) kernels.push(params.kernelName);
  return dispatch(params);
};

const ARRAYS = {float32: Float32Array, int32: Int32Array, bool: Uint8Array};
const functions = new Map(); // body text -> compiled function (tfjs's own op cache does the rest)

function toTensor(spec) {
  if (spec.dtype === 'string') return tf.tensor(spec.values, spec.shape, 'string');
  const Kind = ARRAYS[spec.dtype];
  if (!Kind) throw new Error(`the adapter sent dtype ${spec.dtype}, which tfjs has no tensor for`);
  const bytes = Buffer.from(spec.b64, 'base64');
  const copy = new Uint8Array(bytes.length); // an aligned copy: a Buffer may sit at any offset of its pool
  copy.set(bytes);
  return tf.tensor(new Kind(copy.buffer), spec.shape, spec.dtype);
}

function encode(out, backend, kernels) {
  const reply = {ok: true, dtype: out.dtype, shape: out.shape, backend, kernels};
  let values = out.dataSync();
  if (out.dtype === 'string') {
    reply.values = Array.from(values);
  } else {
    // A backend may hand back a plain Array (measured: the cpu backend for an empty gatherND): type it first.
    if (!ArrayBuffer.isView(values)) values = ARRAYS[out.dtype].from(values);
    reply.b64 = Buffer.from(values.buffer, values.byteOffset, values.byteLength).toString('base64');
  }
  return reply;
}

async function handle(request) {
  if (tf.getBackend() !== request.backend) {
    let ready = false;
    try {
      ready = await tf.setBackend(request.backend);
    } catch (err) {
      return {ok: false, unavailable: `tf.setBackend('${request.backend}') failed: ${err.message}`};
    }
    if (!ready) return {ok: false, unavailable: `tf.setBackend('${request.backend}') returned false`};
  }
  let fn = functions.get(request.body);
  if (!fn) {
    fn = new Function('tf', ...request.names, request.body);
    functions.set(request.body, fn);
  }
  const inputs = [];
  let ran = [];
  let reply;
  let out = null;
  try {
    // Making the tensors is part of the answer: a backend may refuse a dtype (strings on wasm).
    for (const name of request.names) inputs.push(toTensor(request.inputs[name]));
    kernels = [];
    try {
      out = tf.tidy(() => fn(tf, ...inputs));
    } finally {
      ran = kernels;
      kernels = null;
    }
    // Which backend ran it, read from tfjs after the call (a backend that failed to start leaves another active).
    reply = encode(out, tf.getBackend(), ran);
  } catch (err) {
    reply = {ok: false, name: (err && err.name) || 'Error', message: String((err && err.message) || err),
             backend: tf.getBackend(), kernels: ran};
  }
  try {
    tf.dispose([...inputs, ...(out ? [out] : [])]);
  } catch (err) {
    // Freeing the tensors failed after the call: the call damaged the backend's heap (a write outside its
    // output in wasm linear memory traps here, as glibc aborts on a damaged heap). That is the call's result.
    return {ok: false, damaged: `${err.name}: ${err.message}`, after: reply};
  }
  return reply;
}

const lines = require('readline').createInterface({input: process.stdin});
let queue = Promise.resolve();
lines.on('line', (line) => {
  queue = queue.then(async () => {
    let reply;
    try {
      reply = await handle(JSON.parse(line));
    } catch (err) { // a request the worker could not read: the adapter's fault, said as such
      reply = {ok: false, protocol: `${err.name}: ${err.message}`};
    }
    process.stdout.write(JSON.stringify(reply) + '\n');
  });
});
// stdin closed (the Python adapter exited or let go of this process): finish the call in hand, then exit.
lines.on('close', () => queue.then(() => process.exit(0)));
