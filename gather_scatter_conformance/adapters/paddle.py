"""PaddlePaddle (CPU): gather, index_select, take, take_along_axis, gather_nd, put_along_axis, scatter,
scatter_nd_add and index_put, in the dynamic graph and under ``paddle.jit.to_static``.

Every call is one Python expression over ``data``, ``indices`` and ``updates`` (adapters/paddle_calls.py); that
expression is the ``api`` string and is also what runs, as a real function (``paddle_calls.function``), so the
repro a report shows cannot drift from the code that produced the result. Each variant has a ``<api>/static`` twin
that runs the same function through ``paddle.jit.to_static(fn, input_spec=[InputSpec per input],
full_graph=True)``: a static program run by the PIR interpreter (about 10 ms to trace a new shape here).

Inputs become tensors as a user makes them, ``paddle.to_tensor(array)``, which keeps the dtype; nothing is
bounds-checked or cast, so a dtype or index value paddle rejects is a recorded error. The conversions: bfloat16
(``ml_dtypes``, which paddle.to_tensor refuses) goes through float32 (exact) and ``.astype('bfloat16')``, and back;
dtypes paddle.to_tensor cannot hold (uint32, uint64, strings) or holds as another type (uint16 becomes bfloat16)
are Unsupported.
"""

from __future__ import annotations

import os
from typing import Any

import numpy as np

from gather_scatter_conformance.adapters import source
from gather_scatter_conformance.adapters.base import Adapter, Call, CaseData, NoDevice, ReleaseRules, Unsupported
from gather_scatter_conformance.adapters.paddle_calls import STATIC, VARIANTS, arg_names, define, expression
from gather_scatter_conformance.vocab import variants

_THREADS = 1  # the project's machines have 2 cores; a run should leave one to the harness and its neighbours
_CONFIGURED = False


def _paddle() -> Any:
    """Import paddle once, on the CPU, with one math-library thread."""
    global _CONFIGURED
    # Read at import by paddle's OpenMP/MKL: without them every case starts a thread per core.
    os.environ.setdefault("OMP_NUM_THREADS", str(_THREADS))
    os.environ.setdefault("MKL_NUM_THREADS", str(_THREADS))
    import paddle

    if not _CONFIGURED:
        paddle.set_device("cpu")
        paddle.base.core.set_num_threads(_THREADS)
        # Paddle's C++ signal handlers print a stack trace on SIGABRT/SIGSEGV, allocating inside the handler: after
        # an out-of-bounds write (index_put with an out-of-range index corrupts the heap) a forked worker hung
        # there until its 120 s timeout (measured). Without them the process dies at once, as a crash is recorded.
        paddle.disable_signal_handler()
        _CONFIGURED = True
    return paddle


# numpy dtypes paddle.to_tensor cannot hold as themselves (measured on 3.3.1): the reason a case is n/a.
_NO_TENSOR = {
    "uint16": "paddle.to_tensor reads a uint16 array as bfloat16 (even with dtype='uint16'): paddle has no uint16 "
              "tensors",
    "uint32": "paddle.to_tensor refuses uint32 arrays (tensor.set() supports bool, float16/32/64, int8/16/32/64, "
              "uint8, uint16)",
    "uint64": "paddle.to_tensor refuses uint64 arrays (tensor.set() supports bool, float16/32/64, int8/16/32/64, "
              "uint8, uint16)",
}


def _check_dtype(name: str, arr: np.ndarray) -> None:
    if arr.dtype == object or arr.dtype.kind in "US":
        raise Unsupported(f"paddle has no string tensors ({name} is a string tensor)")
    if arr.dtype.name in _NO_TENSOR:
        raise Unsupported(f"{_NO_TENSOR[arr.dtype.name]} ({name} is {arr.dtype.name})")


def to_tensor(arr: np.ndarray) -> Any:
    """A CPU tensor holding ``arr`` in its own dtype (bfloat16 via float32, which is exact)."""
    paddle = _paddle()
    if arr.dtype.name == "bfloat16":
        return paddle.to_tensor(arr.astype(np.float32)).astype("bfloat16")
    return paddle.to_tensor(arr)


_STATIC: dict[tuple[Any, ...], Any] = {}  # (expression, input signature) -> paddle.jit.to_static function


def static_function(expr: str, names: tuple[str, ...], tensors: tuple[Any, ...]) -> Any:
    """``paddle.jit.to_static`` of ``expr`` with an InputSpec per input (their shapes and dtypes), cached."""
    key = (expr, tuple((tuple(t.shape), str(t.dtype)) for t in tensors))
    fn = _STATIC.get(key)
    if fn is None:
        paddle = _paddle()
        specs = [paddle.static.InputSpec(list(t.shape), t.dtype, n) for n, t in zip(names, tensors, strict=True)]
        fn = paddle.jit.to_static(define(paddle, expr, names), input_spec=specs, full_graph=True)
        _STATIC[key] = fn
    return fn


def program_ops(static_fn: Any) -> list[str]:
    """The operators of the static program ``static_fn`` runs, as PIR names them (``pd_op.gather``), the inputs
    (``pd_op.data``) left out."""
    block = static_fn.concrete_program.main_program.global_block()
    return [op.name() for op in block.ops if op.name() != "pd_op.data"]


class PaddleAdapter(Adapter):
    name = "paddle"
    requires = ("paddle",)
    extra = "paddle"
    # The CPU wheel (paddlepaddle-gpu is the CUDA build); 3.0 is the first built against NumPy 2. `import paddle`
    # imports setuptools (paddle.utils.cpp_extension), which a fresh Python 3.11 environment lacks. The check reaches
    # what _paddle() configures and what prepare() calls.
    releases = ReleaseRules("paddlepaddle", "paddle", extra=("setuptools",), numpy2_since="3.0.0",
                            check="paddle.set_device; paddle.base.core.set_num_threads; paddle.disable_signal_handler; "
                                  "paddle.to_tensor; paddle.jit.to_static; paddle.static.InputSpec; paddle.bfloat16")
    VARIANTS = VARIANTS  # paddle_calls: paddle2onnx converts the dynamic-graph ones
    mapping = "docs/mapping/paddle.md"

    def version(self) -> str:
        return str(_paddle().__version__)

    def prepare(self, case: CaseData, variant: str) -> Call:
        if case.device != "cpu":
            raise NoDevice("the paddle adapter runs the CPU build (paddlepaddle) only")
        mode = variants.mode(variant)
        names = arg_names(case.op)
        arrays = tuple(case.inputs[n] for n in names)
        shapes = {n: tuple(a.shape) for n, a in zip(names, arrays, strict=True)}
        expr = expression(case.op, variant, shapes, case.attrs, case.omit)  # omitted attributes: left out
        for n, a in zip(names, arrays, strict=True):
            _check_dtype(n, a)
        static = mode == STATIC
        paddle = _paddle()
        tensors = tuple(to_tensor(a) for a in arrays)
        args = ", ".join(names)
        note = ""
        if any(a.dtype.name == "bfloat16" for a in arrays):
            note = "  # bfloat16 inputs: paddle.to_tensor(a.astype(np.float32)).astype('bfloat16')"
        if static:
            api = (f"paddle.jit.to_static(lambda {args}: {expr}, input_spec=[InputSpec per input], "
                   f"full_graph=True)({args})")

            facts: dict[str, Any] = {}

            def run() -> Any:
                fn = static_function(expr, names, tensors)
                facts["ops"] = program_ops(fn)
                return fn(*tensors)
        else:
            facts = {}
            api = expr
            fn = define(paddle, expr, names)

            def run() -> Any:
                return fn(*tensors)

        return Call(api + note, run, source=_source(expr, names, arrays, static), facts=facts)

    def to_numpy(self, out: Any) -> np.ndarray:
        paddle = _paddle()
        if not isinstance(out, paddle.Tensor):
            return np.asarray(out)
        if out.dtype == paddle.bfloat16:
            import ml_dtypes

            return out.astype("float32").numpy().astype(ml_dtypes.bfloat16)
        return np.asarray(out.numpy())

    def release(self) -> None:
        _STATIC.clear()


def _source(expr: str, names: tuple[str, ...], arrays: tuple[np.ndarray, ...], static: bool) -> str:
    """The call as standalone statements (Call.source): tensors as to_tensor makes them, the same expression."""
    specs = ", ".join(f"paddle.static.InputSpec(list({n}.shape), {n}.dtype, {n!r})" for n in names)
    return "\n".join([
        "import paddle",
        *source.tensors(names, arrays, "paddle.to_tensor({name})",
                        bfloat16="paddle.to_tensor({name}.astype(np.float32)).astype('bfloat16')"),
        *source.function("fn", names, [expr]),
        *([f"fn = paddle.jit.to_static(fn, input_spec=[{specs}], full_graph=True)"] if static else []),
        f"out = fn({', '.join(names)})",
        "result = out.astype('float32').numpy().astype(ml_dtypes.bfloat16) if out.dtype == paddle.bfloat16 "
        "else out.numpy()",
    ])


ADAPTER = PaddleAdapter()
