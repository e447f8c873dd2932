"""TensorFlow.js (npm ``@tensorflow/tfjs``) in Node: tf.gather, tf.gatherND, tf.tensorScatterUpdate and
tf.scatterND, on the ``cpu`` backend and the ``wasm`` backend (``@tensorflow/tfjs-backend-wasm``).

The backend is part of the variant: ``<api>/<backend>`` (``gather/cpu``, ``gather/wasm``). Each call is one piece
of JavaScript, written once here: a persistent Node process (adapters/tfjs_node/worker.js, driven by
adapters/node_worker.py) runs it on the case's tensors, and the repro script (``Call.source``) runs the very same
statements with ``node -e``. The npm packages come from the project's own package.json and package-lock.json
(``make tfjs``: ``npm ci`` in adapters/tfjs_node/), or from ``$GSC_TFJS_DIR`` (a folder where that package.json was
installed with ``npm ci``). tfjs has float32, int32, bool and string tensors: integer indices of other types are cast
to int32 as a JS user must (said in the call and the repro; a value that does not fit is unsupported), and data of
other types is unsupported (tfjs cannot hold it).
"""

from __future__ import annotations

import base64
import inspect
import json
import os
import shutil
from pathlib import Path
from typing import Any, ClassVar

import numpy as np

from gather_scatter_conformance import resources
from gather_scatter_conformance.adapters.attrs import axis_index, required
from gather_scatter_conformance.adapters.base import (
    Adapter,
    Call,
    CaseData,
    NativeCrash,
    NoDevice,
    ReleaseRules,
    Unsupported,
    delegation,
)
from gather_scatter_conformance.vocab import variants

HERE = resources.PACKAGE / "adapters" / "tfjs_node"  # worker.js, package.json, package-lock.json
DIR_ENV = "GSC_TFJS_DIR"  # a folder holding node_modules from `npm ci` of tfjs_node/package.json
NODE_ENV = "GSC_NODE"  # the node executable (default: `node` on PATH)
PACKAGES = ("@tensorflow/tfjs", "@tensorflow/tfjs-backend-wasm")
BACKENDS = ("cpu", "wasm")
HELD = ("float32", "int32", "bool")  # tfjs's numeric tensor dtypes (besides string and complex64)
INT32 = np.iinfo(np.int32)
# What a repro script says, and its exit status (harness.run.repro.NEEDS), where TensorFlow.js cannot run there.
NEEDS_STATUS = 3
NEEDS_PACKAGES = ("needs TensorFlow.js's Node packages (@tensorflow/tfjs, @tensorflow/tfjs-backend-wasm): set "
                  f"{DIR_ENV} to a folder where `npm ci` ran with the harness's adapters/tfjs_node/package.json, or "
                  "run from a checkout after `make tfjs`")
NEEDS_NODE = f"needs Node.js: install it (Debian's nodejs), or set {NODE_ENV} to a node executable"

# The tfjs function each operator is called through, per API; every API runs on every backend, cpu first.
APIS: dict[str, tuple[str, ...]] = {
    "Gather": ("gather",),
    "GatherElements": ("gatherND",),  # with the full coordinate of each element (tfjs has no take_along_axis)
    "GatherND": ("gatherND",),
    "ScatterElements": ("tensorScatterUpdate",),  # with the full coordinate of each element
    "ScatterND": ("tensorScatterUpdate", "scatterND"),
    "Take": ("gather",),
}
_VARIANTS = {op: [variants.join(api, backend) for api in apis for backend in BACKENDS] for op, apis in APIS.items()}

# GatherElements/ScatterElements: the coordinate of every element of `indices`, with `indices` itself on the axis
# and an arange on each other dimension (what a tfjs user writes; tfjs has no element-wise gather or scatter).
COORDS = ("const coords = tf.stack(indices.shape.map((n, d) => d === {axis} ? indices : tf.range(0, n, 1, 'int32')"
          ".reshape(indices.shape.map((m, e) => (e === d ? m : 1))).broadcastTo(indices.shape)), -1);")
NO_REDUCTION = ("tfjs has no scatter that combines with the data: tf.tensorScatterUpdate replaces, tf.scatterND sums "
                "into zeros; reduction={!r} cannot be expressed")


def tfjs_dir() -> Path:
    """The folder whose node_modules holds the npm packages: $GSC_TFJS_DIR, else the adapter's own tfjs_node/."""
    return Path(os.environ.get(DIR_ENV) or HERE)


def _repro_dir() -> str:
    """The tfjs folder as a repro script names it: relative to the directory the run was made in where it lies
    inside it (a checkout's ``gather_scatter_conformance/adapters/tfjs_node``), so that a script written from one
    clone runs from the root of another; else its absolute path."""
    folder = tfjs_dir().resolve()
    try:
        return folder.relative_to(Path.cwd().resolve()).as_posix()
    except ValueError:
        return str(folder)


def node_executable() -> str | None:
    """The node executable: $GSC_NODE, else `node` on PATH; None where there is none."""
    return os.environ.get(NODE_ENV) or shutil.which("node")


def package_version(name: str) -> str | None:
    """The installed version of npm package ``name`` under :func:`tfjs_dir` (None where it is not installed)."""
    try:
        return str(json.loads((tfjs_dir() / "node_modules" / name / "package.json").read_text())["version"])
    except (OSError, ValueError, KeyError):
        return None


class TfjsError(Exception):
    """An error tfjs threw; subclasses carry the JavaScript error's name (``tfjs.Error``, ``tfjs.RuntimeError``)."""


_ERRORS: dict[str, type[TfjsError]] = {}


def js_error(name: str, message: str) -> TfjsError:
    """The exception for a JavaScript error ``name``: recorded as ``tfjs.<name>`` with the error's message."""
    if name not in _ERRORS:
        _ERRORS[name] = type(name, (TfjsError,), {"__module__": "tfjs", "__qualname__": name})
    return _ERRORS[name](message)


# --- the inputs as tfjs holds them ------------------------------------------------------------------------------


def spec(a: np.ndarray) -> dict[str, Any]:
    """A NumPy array as the Node side reads it (dtype, shape, raw little-endian bytes; string values as a list)."""
    if a.dtype == object:
        return {"dtype": "string", "shape": list(a.shape), "values": [str(v) for v in a.reshape(-1).tolist()]}
    dtype = "bool" if a.dtype == np.bool_ else a.dtype.name
    raw = np.ascontiguousarray(a, dtype=a.dtype.newbyteorder("<")).tobytes()
    return {"dtype": dtype, "shape": list(a.shape), "b64": base64.b64encode(raw).decode()}


def value(reply: dict[str, Any]) -> np.ndarray:
    """The NumPy array of a tfjs result as the Node side sends it."""
    if reply["dtype"] == "string":
        out = np.empty(len(reply["values"]), dtype=object)
        out[:] = reply["values"]
        return out.reshape(reply["shape"])
    kinds = {"float32": np.float32, "int32": np.int32, "bool": np.bool_}
    return np.frombuffer(base64.b64decode(reply["b64"]), dtype=kinds[reply["dtype"]]).reshape(reply["shape"]).copy()


def held(case: CaseData) -> tuple[dict[str, np.ndarray], list[str]]:
    """The case's inputs as tfjs can hold them, and the casts made (``indices: int64 -> int32``).

    tfjs has no 64-bit or small integer types: integer indices are cast to int32 (the cast a JS user writes;
    unsupported where a value does not fit int32); indices of a dtype tfjs holds pass as they are (float32 or bool
    ones are tfjs's to refuse). Data and updates of a type tfjs cannot hold are unsupported."""
    out, casts = {}, []
    for name, arr in case.inputs.items():
        kind = "string" if arr.dtype == object else "bool" if arr.dtype == np.bool_ else arr.dtype.name
        if name == "indices" and arr.dtype.kind in "iu" and kind != "int32":
            if arr.size and (arr.min() < INT32.min or arr.max() > INT32.max):
                raise Unsupported(f"tfjs has no {kind} tensors and index values {arr.min()}..{arr.max()} do not fit "
                                  "int32, its only index type")
            out[name] = arr.astype(np.int32)
            casts.append(f"{name}: {kind} -> int32")
        elif kind in HELD or kind == "string":
            out[name] = arr
        elif kind == "complex64":  # tfjs has it (tf.complex(real, imag)); this adapter's transport does not
            raise Unsupported(f"complex64 {name}: the tfjs adapter passes float32, int32, bool and string tensors "
                              "only (tfjs builds complex64 ones with tf.complex(real, imag))")
        else:
            raise Unsupported(f"tfjs has no {kind} tensors ({name}); its dtypes are float32, int32, bool, string "
                              "and complex64")
    return out, casts


# --- the calls: JavaScript statements over `tf` and the named input tensors, the last one a `return` -----------


def body(case: CaseData, api: str) -> tuple[tuple[str, ...], list[str], str]:
    """(input names, statements before the call, the call expression) of ``case`` through ``api``; raises
    Unsupported where tfjs's API cannot write the case."""
    a, op, omit = case.attrs, case.op, case.omit
    if op == "Gather":
        return ("data", "indices"), [], _gather("data", a.get("axis"), a.get("batch_dims"), omit)
    if op == "Take":
        if a["mode"] != "raise":
            raise Unsupported(f"tf.gather has no mode argument and tfjs no take: only Take mode='raise' maps to it "
                              f"(tf.gather checks indices), not mode={a['mode']!r}")
        if "axis" not in omit and a["axis"] is None:  # Take over the flattened data
            return ("data", "indices"), [], "tf.gather(data.reshape([-1]), indices)"
        return ("data", "indices"), [], _gather("data", a["axis"], None, omit)
    if op == "GatherND":
        if "batch_dims" not in omit and int(a["batch_dims"]):
            raise Unsupported(f"tf.gatherND has no batchDims argument: batch_dims={a['batch_dims']} cannot be "
                              "expressed")
        return ("data", "indices"), [], "tf.gatherND(data, indices)"
    if op == "GatherElements":
        if "axis" in omit:
            raise required("tf.gatherND with per-axis coordinates")
        axis = axis_index(int(a["axis"]), case.inputs["indices"].ndim)
        return ("data", "indices"), [COORDS.format(axis=axis)], "tf.gatherND(data, coords)"
    if a["reduction"] != "none" and not (api == "scatterND" and a["reduction"] == "add"):
        raise Unsupported(NO_REDUCTION.format(a["reduction"]))
    if op == "ScatterElements":
        if "axis" in omit:
            raise required("tf.tensorScatterUpdate with per-axis coordinates")
        axis = axis_index(int(a["axis"]), case.inputs["indices"].ndim)
        names = ("data", "indices", "updates")
        return names, [COORDS.format(axis=axis)], "tf.tensorScatterUpdate(data, coords, updates)"
    if api == "scatterND":
        return _scatter_nd(case)
    return ("data", "indices", "updates"), [], "tf.tensorScatterUpdate(data, indices, updates)"


def _gather(data: str, axis: Any, batch_dims: Any, omit: tuple[str, ...]) -> str:
    """tf.gather(x, indices, axis, batchDims): positional; an omitted axis before a given batchDims is
    ``undefined`` (tfjs's own default, 0, applies)."""
    args = [data, "indices"]
    give_b = batch_dims is not None and "batch_dims" not in omit
    if "axis" not in omit:
        args.append(str(int(axis)))
    elif give_b:
        args.append("undefined")
    if give_b:
        args.append(str(int(batch_dims)))
    return f"tf.gather({', '.join(args)})"


def _scatter_nd(case: CaseData) -> tuple[tuple[str, ...], list[str], str]:
    """ScatterND -> tf.scatterND(indices, updates, shape): no data input (it scatters into zeros and sums
    duplicates, as TensorFlow's tf.scatter_nd), so it expresses the cases whose data is all zeros."""
    data = case.inputs["data"]
    if data.dtype == object or not bool(np.all(data == 0)):
        raise Unsupported("tf.scatterND has no data input (it scatters into zeros): data is not all zeros")
    return ("indices", "updates"), [], f"tf.scatterND(indices, updates, {list(map(int, data.shape))})"


def js_function(names: tuple[str, ...], prelude: list[str], expr: str) -> str:
    """The body the Node worker compiles as ``function (tf, ...names)``: the prelude, then ``return expr;``."""
    return "\n".join([*prelude, f"return {expr};"])


# --- the Node process -------------------------------------------------------------------------------------------

_NODE: Any = None


def node() -> Any:
    """The persistent Node worker of this process (adapters/node_worker.py), made on first use."""
    global _NODE
    if _NODE is None:
        from gather_scatter_conformance.adapters.node_worker import NodeProcess

        exe = node_executable()
        if exe is None:
            raise NoDevice(TfjsAdapter.unavailable(ADAPTER) or "node not found")
        _NODE = NodeProcess(exe, str(HERE / "worker.js"), [str(tfjs_dir())])
    return _NODE


class TfjsAdapter(Adapter):
    name = "tfjs"
    # The Python side needs only NumPy; Node and the npm packages are checked by unavailable() (no pip extra
    # installs them: `make tfjs` does, from tfjs_node/package-lock.json).
    requires = ("numpy",)
    # A release sweep (gsc history tfjs) installs @tensorflow/tfjs and its wasm backend of one release, released in
    # lockstep, from npm into a folder of their own, and runs the cases with GSC_TFJS_DIR naming it.
    releases = ReleaseRules(PACKAGES[0], "", registry="npm", folder_env=DIR_ENV,
                            extra=tuple(f"{p}@{{release}}" for p in PACKAGES[1:]),
                            check="const tf = require('@tensorflow/tfjs'); require('@tensorflow/tfjs-backend-wasm'); "
                                  "tf.gather; tf.gatherND; tf.tensorScatterUpdate; tf.scatterND")
    VARIANTS: ClassVar[dict[str, list[str]]] = _VARIANTS
    # tf.scatterND(indices, updates, shape) scatters into zeros it makes itself
    NO_DATA_INPUT: ClassVar[dict[str, tuple[str, ...]]] = {
        "ScatterND": tuple(variants.join("scatterND", backend) for backend in BACKENDS)}
    mapping = "docs/mapping/tfjs.md"
    call_process = "node"  # each call runs in a Node child (adapters/node_worker.py): memcheck must follow it

    def unavailable(self) -> str | None:
        if node_executable() is None:
            return "Node.js not found (install Debian's nodejs, or set GSC_NODE to a node executable)"
        lacking = [p for p in PACKAGES if package_version(p) is None]
        if lacking:
            return (f"npm packages {', '.join(lacking)} not installed in {tfjs_dir()}: run `make tfjs` (npm ci in "
                    f"{HERE}) or set {DIR_ENV} to a folder where `npm ci` ran with that package.json")
        return None

    def version(self) -> str:
        tfjs, wasm = package_version(PACKAGES[0]), package_version(PACKAGES[1])
        return str(tfjs) if wasm == tfjs else f"{tfjs} (tfjs-backend-wasm {wasm})"

    def warm(self) -> None:
        """Start Node and load tfjs with both backends, so the first case's time is its own."""
        self.version()
        if self.unavailable() is None:
            for backend in BACKENDS:
                node().request({"backend": backend, "names": [], "body": "return tf.scalar(0);", "inputs": {}})

    def release(self) -> None:
        """Let go of this process's Node (its wasm heap may have been damaged by the case)."""
        if _NODE is not None:
            _NODE.close()

    def prepare(self, case: CaseData, variant: str) -> Call:
        """The tfjs call of ``case``; Unsupported where tfjs cannot hold the inputs or write the case."""
        self.check_variant(case.op, variant)
        why = self.unavailable()
        if why:
            raise NoDevice(why)
        api, backend = variants.split(variant)
        assert backend in BACKENDS, variant
        names, prelude, expr = body(case, api)
        inputs, casts = held(case)
        fn = js_function(names, prelude, expr)
        request = {"backend": backend, "names": list(names), "body": fn,
                   "inputs": {n: spec(inputs[n]) for n in names}}
        text = (" ".join([*prelude, f"{expr};"]) + f"  // tf.setBackend('{backend}')"
                + (f"; {', '.join(casts)} (tfjs has no int64)" if casts else ""))
        call = Call(text, lambda: None, source=_source(names, fn, backend, casts))
        call.run = lambda: self._run(call, request, f"tf.{api}")
        return call

    @staticmethod
    def _run(call: Call, request: dict[str, Any], function: str) -> dict[str, Any]:
        """One call in Node: its reply (decoded by to_numpy), or the JS error raised, or NativeCrash."""
        reply = node().request(request)
        if "unavailable" in reply:
            raise NoDevice(reply["unavailable"])
        if "damaged" in reply:
            node().close()  # its heap is damaged: the next case gets a fresh Node
            after = reply["after"]
            what = (f"returned a {after['dtype']} {after['shape']} value" if after.get("ok")
                    else f"raised {after.get('name')}: {after.get('message')}")
            raise NativeCrash(f"the call {what}, then freeing its tensors raised {reply['damaged']}: the call "
                              f"damaged the {request['backend']} backend's memory")
        backend = reply.get("backend")
        if backend:  # read from tfjs after the call: the kernels it dispatched (else the API function called)
            placement = dict.fromkeys(reply.get("kernels") or [function], backend)
            call.facts.update(delegation(placement, asked=request["backend"]))
            if reply.get("kernels"):
                call.facts["ops"] = list(reply["kernels"])
        if reply.get("ok") is False and "name" in reply:
            if reply["name"] == "RuntimeError":  # a WebAssembly trap or abort: that instance is not to be trusted
                node().close()
            if reply["name"] == "TypeError" and str(reply["message"]).startswith(f"{function} is not a function"):
                # A release from before the API (tf.tensorScatterUpdate arrived in the 4.x series): no behaviour
                # of it to record; a release sweep counts it where the API arrived.
                raise Unsupported(f"this TensorFlow.js release has no {function} ({reply['message']})")
            raise js_error(reply["name"], reply["message"])
        return reply

    def to_numpy(self, out: Any) -> np.ndarray:
        if "protocol" in out:  # the worker could not read the request: the adapter's fault, not tfjs's answer
            raise TypeError(f"the tfjs worker could not read the request: {out['protocol']}")
        return value(out)


def _source(names: tuple[str, ...], fn: str, backend: str, casts: list[str]) -> str:
    """The call as a standalone script (Call.source): the same JavaScript, run by ``node -e`` on the inputs."""
    js = "\n".join([
        "for (const level of ['log', 'info', 'warn', 'debug']) console[level] = console.error;",
        "const tf = require('@tensorflow/tfjs');",
        "require('@tensorflow/tfjs-backend-wasm');",
        "const ARRAYS = {float32: Float32Array, int32: Int32Array, bool: Uint8Array};",
        "const tensor = (a) => (a.dtype === 'string' ? tf.tensor(a.values, a.shape, 'string')",
        "  : tf.tensor(new ARRAYS[a.dtype](Uint8Array.from(Buffer.from(a.b64, 'base64')).buffer), a.shape, a.dtype));",
        f"function call(tf, {', '.join(names)}) {{",
        *(f"  {line}" for line in fn.splitlines()),
        "}",
        "(async () => {",
        f"  await tf.setBackend('{backend}');",
        "  const inputs = JSON.parse(require('fs').readFileSync(0, 'utf8'));",
        f"  const [{', '.join(names)}] = [{', '.join(f'tensor(inputs.{n})' for n in names)}];",
        "  let reply, out;",
        "  try {",
        f"    out = tf.tidy(() => call(tf, {', '.join(names)}));",
        "    const v = out.dataSync();",
        "    reply = {ok: true, dtype: out.dtype, shape: out.shape};",
        "    if (out.dtype === 'string') reply.values = Array.from(v);",
        "    else {",
        "      const t = ArrayBuffer.isView(v) ? v : ARRAYS[out.dtype].from(v);",
        "      reply.b64 = Buffer.from(t.buffer, t.byteOffset, t.byteLength).toString('base64');",
        "    }",
        "  } catch (err) {",
        "    reply = {ok: false, name: err.name, message: err.message};",
        "  }",
        f"  tf.dispose([{', '.join(names)}, ...(out ? [out] : [])]);  // throws where the call damaged the heap",
        "  process.stdout.write(JSON.stringify(reply));",
        "})();",
    ])
    lines = [
        "import base64, json, os, shutil, subprocess, sys",
        "from typing import Any",
        f"# node_modules with @tensorflow/tfjs {package_version(PACKAGES[0])} and tfjs-backend-wasm: `npm ci` with the",
        f"# harness's adapters/tfjs_node/package.json (make tfjs), or ${DIR_ENV}. Where neither they nor node is",
        f"# found, the script says what it needs and exits with status {NEEDS_STATUS}.",
        "def tfjs_dir():",
        f"    # ${DIR_ENV}, else the folder the script was written with (relative to the directory it was written",
        "    # from, then absolute), else an installed harness's own: the first that holds the packages",
        f"    folders = [os.environ[{DIR_ENV!r}]] if os.environ.get({DIR_ENV!r}) else [{_repro_dir()!r}, "
        f"{str(tfjs_dir().resolve())!r}]",
        "    try:",
        "        import importlib.util",
        "        harness = importlib.util.find_spec('gather_scatter_conformance')",
        "        if harness is not None and harness.origin and not os.environ.get(" + repr(DIR_ENV) + "):",
        "            folders.append(os.path.join(os.path.dirname(harness.origin), 'adapters', 'tfjs_node'))",
        "    except (ImportError, ValueError):",
        "        pass",
        "    held = [f for f in folders if os.path.isdir(os.path.join(f, 'node_modules', '@tensorflow', 'tfjs'))]",
        "    return held[0] if held else None",
        "TFJS_DIR = tfjs_dir()",
        f"NODE = os.environ.get({NODE_ENV!r}) or shutil.which('node')",
        "if TFJS_DIR is None or NODE is None:",
        f"    print({NEEDS_PACKAGES!r} if TFJS_DIR is None else {NEEDS_NODE!r}, file=sys.stderr)",
        f"    sys.exit({NEEDS_STATUS})",
        *(f"{c.split(':')[0]} = {c.split(':')[0]}.astype(np.int32)  # tfjs has no {c.split()[1]}: the cast a JS "
          "user makes" for c in casts),
        f"JS = r'''\n{js}\n'''",
        inspect.getsource(spec),
        "proc = subprocess.run([NODE, '-e', JS], cwd=TFJS_DIR, capture_output=True, text=True,",
        f"                      input=json.dumps({{{', '.join(f'{n!r}: spec({n})' for n in names)}}}))",
        "if proc.returncode < 0:  # node died of a signal: so does this process, as the call's did",
        "    os.kill(os.getpid(), -proc.returncode)",
        "if proc.returncode:",
        "    sys.exit(f'node exited with status {proc.returncode}: {proc.stderr.strip()[-2000:]}')",
        "reply = json.loads(proc.stdout)",
        "if not reply['ok']:",
        "    raise type(reply['name'], (Exception,), {})(reply['message'])",
        inspect.getsource(value),
        "result = value(reply)",
    ]
    return "\n".join(lines)


ADAPTER = TfjsAdapter()
