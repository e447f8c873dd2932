"""Apache TVM (Relax): Relax's own gather/scatter ops, and the Relax ONNX frontend, built for ``llvm`` and run on the
Relax VirtualMachine on the CPU.

Two kinds of variant per operator:

- ``relax.op.<name>`` (the default): the Relax op itself (``relax.op.take``, ``relax.op.gather_elements``,
  ``relax.op.gather_nd``, ``relax.op.scatter_elements``, ``relax.op.scatter_nd``) as the one binding of a ``main``
  function made with ``relax.BlockBuilder``, its parameters typed with the case's shapes and dtypes;
- ``from_onnx``: the case's one-node ONNX model (``adapters.onnx_graph.build``, as onnxruntime's adapter builds it),
  imported with ``tvm.relax.frontend.onnx.from_onnx``: what the frontend makes of the node is recorded; and its
  twins (issue #40, vocab/variants.py), as ONNX Runtime's: ``from_onnx/constant`` with the indices an initializer
  (the frontend makes it a Relax constant, which its passes may fold), and ``from_onnx/dynamic`` with the inputs'
  dimensions symbolic (``dim_param``: Relax's symbolic shape variables, apache/tvm#20297's other code path).

Both are compiled with ``tvm.compile(mod, target="llvm")`` (its default Relax pipeline legalizes the ops to TIR) and
run by ``relax.VirtualMachine(ex, tvm.cpu())``. ``Call.facts["ops"]`` is the list of Relax ops of ``main`` before
legalization, in binding order (``["relax.take"]``; for ``from_onnx`` every op the frontend emitted).

Attribute translation: Gather and Take are ``relax.op.take`` (no ``batch_dims``: a non-zero one is Unsupported);
Take's modes map to ``take``'s ``mode`` (raise -> ``"fast"``, the default, which assumes in-range indices and has no
mode that raises; wrap -> ``"wrap"``; clip -> ``"clip"``; fill -> ``"nan"``); Take with ``axis=None`` takes from
``relax.op.reshape(data, (-1,))`` (``take``'s own ``axis=None`` accepts 1-D data only). ONNX reduction ``none`` is
Relax's ``"update"``; the others keep their names. An attribute in ``case.omit`` is not passed (TVM's default).

Executables are cached by what shapes them (variant, the module's text or the ONNX model's bytes: op, attributes,
shapes, dtypes) in one LRU. A relax.op module builds in 0.03-0.06 s and a frontend module in 0.15-0.2 s here,
so no variant counts as slow. A risky case (``CaseData.fresh``) runs in a forked child that starts with an empty
LRU, and a memory-unsafe one five times a run, every run (docs/cache.md): there the executable is also kept on disk
(``export_library``, a shared library linked by the system's C compiler, about 0.1 s; beside it the op list), under
``<conversion cache>/tvm/`` by TVM's version, the target, the machine, the variant and the module, and the next
child loads it (``tvm.runtime.load_module``, about 1 ms) instead of importing and compiling. A case run in the warm
worker exports nothing: there the LRU serves, and the export would cost more than the build it saves.

TVM's runtime thread pool is limited to one thread (``TVM_NUM_THREADS=1``, set before TVM is first imported unless
already set): the one-op kernels gain nothing from threads, and one thread keeps the order of duplicate
scatter writes fixed.
"""

from __future__ import annotations

import hashlib
import json
import os
import platform
from collections.abc import Callable
from typing import Any

import numpy as np

from gather_scatter_conformance.adapters import onnx_graph
from gather_scatter_conformance.adapters.base import (
    Adapter,
    Call,
    CaseData,
    ReleaseRules,
    Unsupported,
    fmt_attrs,
    importing,
)
from gather_scatter_conformance.adapters.cache import LRU
from gather_scatter_conformance.adapters.convert.path import cache_file, read_entry, write_atomic
from gather_scatter_conformance.vocab import variants

TARGET = "llvm"
THREADS_ENV = "TVM_NUM_THREADS"
CACHE_SIZE = 256
FROM_ONNX = "from_onnx"
# Case operator -> the Relax op (relax.op.<name>) a user calls for it.
RELAX_OPS = {
    "Gather": "take",
    "GatherElements": "gather_elements",
    "GatherND": "gather_nd",
    "ScatterElements": "scatter_elements",
    "ScatterND": "scatter_nd",
    "Take": "take",
}
_ONNX_VARIANTS = [FROM_ONNX, *variants.twins(FROM_ONNX)]
_VARIANTS = {op: [f"relax.op.{name}", *_ONNX_VARIANTS] for op, name in RELAX_OPS.items()}
# Relax has no op of its own for it, and the frontend no converter (NO_CONVERTER): no twins, whatever the inputs.
_VARIANTS["TensorScatter"] = [FROM_ONNX]
# What the frontend raises for an operator it has no converter for (0.27: OpNotImplemented "The following operators
# are not supported for frontend ONNX: TensorScatter"): such a case is unsupported through it.
NO_CONVERTER = r"not supported for frontend ONNX: [^\n]*\b{op}\b"
# Take's modes -> relax.op.take's: 'fast' (the default) does no bounds check at all; there is no mode that raises.
TAKE_MODES = {"raise": "fast", "wrap": "wrap", "clip": "clip", "fill": "nan"}
# ONNX reduction -> Relax's (scatter_elements and scatter_nd).
REDUCTIONS = {"none": "update", "add": "add", "mul": "mul", "max": "max", "min": "min"}
_NAMES = ("data", "indices", "updates")


def _tvm() -> tuple[Any, Any]:
    """Import tvm and tvm.relax with the runtime's thread pool at one thread (unless TVM_NUM_THREADS is set)."""
    os.environ.setdefault(THREADS_ENV, "1")  # read when TVM's thread pool starts: must precede the first import
    import tvm
    from tvm import relax

    return tvm, relax


def version() -> str:
    """The installed TVM's version string (``tvm.__version__``)."""
    tvm, _ = _tvm()
    return str(tvm.__version__)


def relax_ops(mod: Any) -> list[str]:
    """The Relax ops called in ``mod["main"]``, in the order their calls complete (arguments first), repeats kept."""
    tvm, relax = _tvm()
    ops: list[str] = []

    def visit(expr: Any) -> None:
        if isinstance(expr, relax.Call) and isinstance(expr.op, tvm.ir.Op):
            ops.append(str(expr.op.name))

    relax.analysis.post_order_visit(mod["main"], visit)
    return ops


_DISK_FORMAT = 1  # bump when what is kept (the library and its op list) changes


def disk_key(variant: str, source: str | bytes) -> str:
    """The disk cache's name for the executable of ``variant`` built from ``source`` (module text or model bytes)."""
    h = hashlib.sha256(repr((_DISK_FORMAT, version(), TARGET, platform.machine(), variant)).encode())
    h.update(source.encode() if isinstance(source, str) else source)
    return h.hexdigest()[:32]


def load_kept(key: str) -> tuple[list[str], Any] | None:
    """``(ops, VirtualMachine)`` of the executable kept under ``key`` (:func:`disk_key`); None where none is kept
    (or the cache is off, or an entry is unreadable: a miss, never an error)."""
    lib, listing = cache_file("tvm", f"{key}.so"), cache_file("tvm", f"{key}.ops.json")
    text = read_entry(listing)
    if lib is None or text is None or not lib.exists():
        return None
    try:
        ops = json.loads(text)
        if not isinstance(ops, list) or not all(isinstance(op, str) for op in ops):
            return None  # not the op list compile_module writes
        tvm, relax = _tvm()
        return ops, relax.VirtualMachine(tvm.runtime.load_module(str(lib)), tvm.cpu())
    except Exception:  # a damaged or foreign library: build it again
        return None


def compile_module(mod: Any, keep: str | None = None, ops: list[str] | None = None) -> Any:
    """``mod`` built with ``tvm.compile(mod, target="llvm")`` (legalization included), as a CPU VirtualMachine;
    with ``keep`` (:func:`disk_key`), its executable and ``ops`` (:func:`relax_ops`) are also kept on disk for the
    next process (best effort: no C compiler, or an unwritable cache, keeps nothing)."""
    tvm, relax = _tvm()
    executable = tvm.compile(mod, target=TARGET)
    lib = cache_file("tvm", f"{keep}.so") if keep else None
    if lib is not None:
        try:
            write_atomic(lib.with_name(f"{keep}.ops.json"), json.dumps(ops or []).encode())  # makes the folder
            tmp = lib.with_name(f".tmp-{os.getpid()}-{keep}.so")
            executable.export_library(str(tmp))
            os.replace(tmp, lib)  # whole or absent: another worker may be loading it
        except Exception:
            pass
    return relax.VirtualMachine(executable, tvm.cpu())


def run_vm(vm: Any, arrays: list[np.ndarray]) -> np.ndarray:
    """``vm["main"]`` called on ``arrays`` (as TVM tensors, in parameter order); its output as a NumPy array."""
    tvm, _ = _tvm()
    return vm["main"](*[tvm.runtime.tensor(np.ascontiguousarray(a).reshape(a.shape)) for a in arrays]).numpy()


def from_onnx(model: Any) -> tuple[Callable[[dict[str, np.ndarray]], np.ndarray], list[str]]:
    """Import ``model`` (an ``onnx.ModelProto``) with ``tvm.relax.frontend.onnx.from_onnx``, build it for ``llvm``.

    Returns ``(run, ops)``: ``run(feeds)`` takes the graph inputs by name (initializers excluded) and returns the
    first output as a NumPy array; ``ops`` is the Relax op list of the imported ``main`` before legalization. Import
    and build errors propagate (TVM's own exceptions).
    """
    _tvm()
    from tvm.relax.frontend.onnx import from_onnx as import_onnx

    mod = import_onnx(model)
    ops = relax_ops(mod)
    vm = compile_module(mod)
    initializers = {t.name for t in model.graph.initializer}
    names = [i.name for i in model.graph.input if i.name not in initializers]

    def run(feeds: dict[str, np.ndarray]) -> np.ndarray:
        return run_vm(vm, [feeds[n] for n in names])

    return run, ops


def _dtype_name(arr: np.ndarray) -> str:
    """The TVM dtype string of ``arr`` (NumPy's name; ml_dtypes' bfloat16 is "bfloat16")."""
    return str(arr.dtype)


def _check_dtypes(case: CaseData) -> None:
    for name, arr in case.inputs.items():
        if arr.dtype == object or arr.dtype.kind in "USc":
            kind = "complex" if arr.dtype.kind == "c" else "string"
            raise Unsupported(f"TVM has no {kind} tensor type ({name} is {arr.dtype})")


def _shape(shape: tuple[int, ...]) -> str:
    return "(" + ", ".join(map(str, shape)) + ("," if len(shape) == 1 else "") + ")"


def relax_call(case: CaseData) -> str:
    """The Relax op call of ``case`` on relax.Vars named ``data``, ``indices`` (``updates``): what a user writes.

    Raises Unsupported where the op has no argument for the case's attribute (Gather's batch_dims)."""
    a, op, omit = case.attrs, case.op, case.omit
    name = f"relax.op.{RELAX_OPS[op]}"
    kw: dict[str, Any] = {}
    if op == "Gather":
        if a.get("batch_dims", 0) and "batch_dims" not in omit:
            raise Unsupported("relax.op.take has no batch_dims")
        if "axis" not in omit:
            kw["axis"] = int(a["axis"])
        return f"{name}(data, indices{', ' if kw else ''}{fmt_attrs(**kw)})"
    if op == "Take":
        kw["mode"] = TAKE_MODES[a["mode"]]
        src = "data"
        if "axis" not in omit:
            if a["axis"] is None:
                # relax.op.take's axis=None needs 1-D data: Take's flattening is a reshape first.
                if case.inputs["data"].ndim != 1:
                    src = "relax.op.reshape(data, (-1,))"
            else:
                kw = {"axis": int(a["axis"]), **kw}
        return f"{name}({src}, indices, {fmt_attrs(**kw)})"
    if op in ("GatherElements", "ScatterElements") and "axis" not in omit:
        kw["axis"] = int(a["axis"])
    if op == "GatherND" and "batch_dims" not in omit:
        kw["batch_dims"] = int(a["batch_dims"])
    if op in ("ScatterElements", "ScatterND"):
        kw["reduction"] = REDUCTIONS[a["reduction"]]
    args = "data, indices, updates" if op.startswith("Scatter") else "data, indices"
    return f"{name}({args}{', ' if kw else ''}{fmt_attrs(**kw)})"


def tensor_type() -> str:
    """The name of the Relax class that types a tensor parameter by shape and dtype in the installed TVM:
    ``TensorType(shape, dtype)`` from 0.26; ``TensorStructInfo(shape, dtype)`` before, where ``TensorType`` took
    ``(ndim, dtype)`` (0.25 refuses a shape: "Expected `int` but got `ffi.Array`")."""
    _, relax = _tvm()
    return "TensorStructInfo" if hasattr(relax, "TensorStructInfo") else "TensorType"


def module_source(case: CaseData, call: str) -> str:
    """Statements that build the one-op ``main`` of ``call`` with relax.BlockBuilder and assign it to ``mod``.

    The parameters are relax.Vars with the inputs' shapes and dtypes; ``call`` names them as ``data``, ``indices``,
    ``updates``, which the statements bind inside a function so that the NumPy arrays of a repro keep their names.
    """
    params = [n for n in _NAMES if n in case.inputs]
    typed = tensor_type()
    lines = ["def build_main():", "    bb = relax.BlockBuilder()"]
    lines += [f"    {n} = relax.Var({n!r}, relax.{typed}({_shape(case.inputs[n].shape)}, "
              f"{_dtype_name(case.inputs[n])!r}))" for n in params]
    lines += [f"    with bb.function('main', [{', '.join(params)}]):",
              "        with bb.dataflow():",
              f"            out = bb.emit_output({call})",
              "        bb.emit_func_output(out)",
              "    return bb.get()",
              "mod = build_main()"]
    return "\n".join(lines)


def _build_relax(text: str) -> Any:
    """The IRModule ``module_source`` text builds (the same statements a repro runs)."""
    tvm, relax = _tvm()
    scope: dict[str, Any] = {"tvm": tvm, "relax": relax}
    exec(text, scope)  # our own generated statements: the run and its repro are the same code
    return scope["mod"]


_COMPILE_SOURCE = [
    f"ex = tvm.compile(mod, target={TARGET!r})",
    "vm = relax.VirtualMachine(ex, tvm.cpu())",
]


class TvmAdapter(Adapter):
    name = "tvm"
    requires = ("tvm",)
    extra = "tvm"
    # apache-tvm on PyPI; onnx builds the from_onnx variant's models. Its native libraries link against
    # apache-tvm-ffi, which apache-tvm requires without an upper bound: 0.25.x under the newest (0.1.15) fails to load
    # libtvm_runtime.so (undefined symbol tvm::ffi::json::Stringify), so it gets the apache-tvm-ffi of its day
    # (0.1.12, the newest when 0.25.0 shipped); naming it in extra records its version. The check reaches the Relax
    # build and run path and the ONNX frontend.
    releases = ReleaseRules("apache-tvm", "tvm", extra=("onnx==1.23.2", "apache-tvm-ffi"),
                            companions_before=(("0.26.0", "apache-tvm-ffi<0.1.13"),),
                            check="from tvm import relax; relax.BlockBuilder; relax.VirtualMachine; tvm.compile; "
                                  "tvm.cpu; tvm.runtime.tensor; from tvm.relax.frontend.onnx import from_onnx")
    # 0.27, one runtime thread: 25 of 25 children of a parent that had built and run both variants ran.
    fork_after_run = True
    VARIANTS = _VARIANTS
    mapping = "docs/mapping/tvm.md"

    def __init__(self) -> None:
        # (ops, VirtualMachine) keyed by variant and the module text / model bytes; a failed build caches nothing.
        self.cache: LRU[tuple[list[str], Any]] = LRU(CACHE_SIZE)

    def version(self) -> str:
        return version()

    def is_slow(self, variant: str) -> bool:
        # 0.03-0.06 s a relax.op module, 0.15-0.2 s a from_onnx one (tvm 0.27.0, llvm): not per-shape slow. A constant
        # twin builds per index value, a dynamic one is a twin: both run where slow variants run, as ONNX Runtime's.
        return variants.twin_of(variant) is not None

    def prepare(self, case: CaseData, variant: str) -> Call:
        self.check_variant(case.op, variant)
        _check_dtypes(case)
        names = list(case.inputs)  # the operator's order (TensorScatter: data, updates, indices), as ONNX takes it
        head = ["import tvm", "from tvm import relax"]
        facts: dict[str, Any] = {}
        if variant in _ONNX_VARIANTS:
            model, text, held = onnx_graph.build_variant(case, variant)  # Unsupported where ONNX cannot say it
            names = [n for n in names if n not in held]
            key: tuple[Any, ...] = (variant, model.SerializeToString())

            def build() -> Any:
                _tvm()
                from tvm.relax.frontend.onnx import from_onnx as import_onnx

                with importing("TVM's Relax ONNX frontend", NO_CONVERTER, model.graph.node[-1].op_type):
                    return import_onnx(model)

            api = f"tvm.relax.frontend.onnx.from_onnx(model: {text})"
            source = [onnx_graph.model_source(model), *head, "from tvm.relax.frontend.onnx import from_onnx",
                      "mod = from_onnx(model)"]
        else:
            call = relax_call(case)
            text = module_source(case, call)
            key = (variant, text)

            def build() -> Any:
                return _build_relax(text)

            api = call
            source = [*head, text]
        api += f"  # tvm.compile(target={TARGET!r}), relax.VirtualMachine(tvm.cpu())"
        arrays = [case.inputs[n] for n in names]
        tensors = ", ".join(f"tvm.runtime.tensor({n})" for n in names)
        source += [*_COMPILE_SOURCE, f"result = vm['main']({tensors}).numpy()"]

        def make() -> tuple[list[str], Any]:
            kept = disk_key(*key) if case.fresh else None
            loaded = load_kept(kept) if kept else None
            if loaded is not None:
                return loaded
            mod = build()
            facts["ops"] = relax_ops(mod)  # known before the build, so a failed build records them too
            return facts["ops"], compile_module(mod, kept, facts["ops"])

        def run() -> np.ndarray:
            ops, vm = self.cache.get_or_make(key, make)
            facts["ops"] = list(ops)
            return run_vm(vm, arrays)

        return Call(api, run, device="cpu", device_name="llvm", source="\n".join(source), facts=facts)

    def to_numpy(self, out: Any) -> np.ndarray:
        return np.asarray(out)

    def release(self) -> None:
        self.cache.clear()


ADAPTER = TvmAdapter()
