"""PyTorch (CPU): index_select / take / advanced indexing, gather, scatter / scatter_add / scatter_reduce, index_put.

Every call is built as one Python expression over the names ``data``, ``indices`` and ``updates``; that expression
*is* the ``api`` string and is also what runs (``eval`` of ``lambda data, ...: <expr>``), so the repro a report
shows cannot drift from the code that produced the result. Each eager variant has a ``<variant>/compile`` twin that
runs the same lambda through ``torch.compile(backend="inductor", dynamic=False)``.

Inputs are passed in their own dtypes (``torch.from_numpy`` keeps them); nothing is bounds-checked or cast, so a
dtype or index value torch rejects is a recorded error. The one conversion is bfloat16: ``torch.from_numpy`` does
not take ml_dtypes arrays, so those go through float32 (exact) and ``.to(torch.bfloat16)``, and back.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterator
from typing import Any

import numpy as np

from gather_scatter_conformance.adapters import source
from gather_scatter_conformance.adapters.base import Adapter, Call, CaseData, NoDevice, ReleaseRules, Unsupported
from gather_scatter_conformance.adapters.torch_calls import COMPILE, VARIANTS, expression
from gather_scatter_conformance.vocab import variants
from gather_scatter_conformance.vocab.dimensions import DUPLICATE_TARGET_OPS

_CONFIGURED = False
_THREADS = 1  # the project's machines have 2 cores; a run should leave one to the harness and its neighbours
# Inductor's compiled kernels and graphs (torch.compile) on disk: ``$GSC_INDUCTOR_CACHE``, else beside the harness's
# other caches (docs/cache.md), so a run's forked children and its next run load what a worker compiled. Inductor
# would keep them in the temporary folder, which a run's workers get of their own and lose at its end
# (harness.run.isolation, Isolated.scratch). A user's own TORCHINDUCTOR_CACHE_DIR wins.
INDUCTOR_CACHE_ENV = "GSC_INDUCTOR_CACHE"
# Threads (issue #40): each eager scatter call again with torch.set_num_threads(a thread a core) around it, where the
# others run on _THREADS.
_VARIANTS = {op: (*calls, *(variants.twin(v, variants.THREADS_MODE) for v in calls if variants.mode(v) is None))
             if op in DUPLICATE_TARGET_OPS else calls for op, calls in VARIANTS.items()}


def _torch() -> Any:
    """Import torch once and keep it polite on small machines."""
    global _CONFIGURED
    if not _CONFIGURED:
        from gather_scatter_conformance.resources import cache_dir

        where = cache_dir(INDUCTOR_CACHE_ENV, "torchinductor")
        if where is not None:
            os.environ.setdefault("TORCHINDUCTOR_CACHE_DIR", str(where))
    import torch

    if not _CONFIGURED:
        torch.set_num_threads(_THREADS)
        # Inductor compiles in the calling thread, without its pool of compile threads/processes: risky cases run
        # in children forked from a warmed-up template, and a child waited forever on futures of a pool that
        # only its parent had (a full run: eight torch.compile probes recorded as 120 s timeouts).
        import torch._inductor.config as inductor

        inductor.compile_threads = 1
        _CONFIGURED = True
    return torch


@contextlib.contextmanager
def _threads(n: int | None) -> Iterator[None]:
    """torch's intra-op threads set to ``n`` while it lasts (None: left as they are)."""
    if n is None:
        yield
        return
    torch = _torch()
    before = torch.get_num_threads()
    torch.set_num_threads(n)
    try:
        yield
    finally:
        torch.set_num_threads(before)


def to_tensor(arr: np.ndarray) -> Any:
    """A CPU tensor holding ``arr`` in its own dtype (bfloat16 via float32, which is exact)."""
    torch = _torch()
    if arr.dtype == object:
        raise Unsupported("torch has no string tensors")
    if arr.dtype.name == "bfloat16":
        return torch.from_numpy(arr.astype(np.float32)).to(torch.bfloat16)
    return torch.from_numpy(arr)


def _toolchain_problem() -> str | None:
    """Why inductor cannot compile C++ on this machine, or None when a compiler is there (checked once)."""
    global _TOOLCHAIN
    if _TOOLCHAIN is _UNCHECKED:
        _torch()
        from torch._inductor.cpp_builder import get_cpp_compiler

        try:
            get_cpp_compiler()
            _TOOLCHAIN = None
        except Exception as exc:  # InvalidCxxCompiler, or anything else that stops inductor's C++ backend
            _TOOLCHAIN = f"torch.compile (inductor, CPU) needs a C++ compiler: {type(exc).__name__}: {exc}"
    return _TOOLCHAIN  # type: ignore[return-value]


_UNCHECKED = object()
_TOOLCHAIN: object = _UNCHECKED


class CompileCache:
    """Compiled callables per (expression, input signature).

    Each entry is compiled from a fresh ``eval`` of the lambda, i.e. a fresh code object. torch.compile keys its
    own cache on the code object and, past ``torch._dynamo.config.recompile_limit`` (8) recompiles of one code
    object, silently runs eagerly instead; one code object per signature never recompiles, so that fallback never
    happens here. (A graph break, where inductor cannot compile an op and dynamo runs it eagerly, is left as a
    user would get it: measured for 0-d indices, see docs/mapping/torch.md.)
    """

    def __init__(self) -> None:
        self._fns: dict[tuple[str, tuple[Any, ...]], Any] = {}
        self.compiles = 0  # how many callables were built (for tests)

    def get(self, expr: str, names: tuple[str, ...], tensors: tuple[Any, ...], dynamic: bool = False) -> Any:
        """The compiled lambda for ``expr`` over ``names``, built on first use for these shapes and dtypes; with
        ``dynamic``, compiled for symbolic dimensions (``dynamic=True``: sizes 0 and 1 stay specialised, as torch
        does), one code object a signature all the same, so no recompile limit is ever reached."""
        key = (expr, dynamic, tuple((tuple(t.shape), str(t.dtype)) for t in tensors))
        fn = self._fns.get(key)
        if fn is None:
            torch = _torch()
            fn = torch.compile(_lambda(expr, names), backend="inductor", dynamic=dynamic)
            self._fns[key] = fn
            self.compiles += 1
        return fn


def _lambda(expr: str, names: tuple[str, ...]) -> Any:
    """Turn the api expression into the function that runs it (the only namespace it sees is ``torch``)."""
    # Safe to eval: torch_calls builds ``expr`` from fixed text plus integers and reduction names it validated,
    # never from strings taken out of a case file.
    return eval(f"lambda {', '.join(names)}: {expr}", {"torch": _torch()})


COMPILED = CompileCache()


def _compile_closing_over(inner: Any, values: list[Any], dtype: Any, at: int) -> Any:
    """``torch.compile`` of a function of the inputs but the ``at``-th, which it makes with ``torch.tensor(values)``
    from the Python list it closes over: dynamo takes the list as a constant, so the indices are a constant of the
    graph inductor compiles. The function gets a code object of its own (a copy), as CompileCache's do: one code
    object recompiled past dynamo's recompile_limit would silently run eagerly."""
    import types

    torch = _torch()

    def body(*rest: Any) -> Any:
        return inner(*rest[:at], torch.tensor(values, dtype=dtype), *rest[at:])

    fresh = types.FunctionType(body.__code__.replace(), body.__globals__, body.__name__, body.__defaults__,
                               body.__closure__)
    return torch.compile(fresh, backend="inductor", dynamic=False)


def cuda_device() -> tuple[Any, str]:
    """(torch.device("cuda"), the GPU's name); NoDevice when this torch build or machine has no CUDA device."""
    torch = _torch()
    if not torch.cuda.is_available():
        build = "a CPU build" if torch.version.cuda is None else f"CUDA {torch.version.cuda}, but no device is visible"
        raise NoDevice(f"torch {torch.__version__} sees no CUDA device ({build})")
    return torch.device("cuda"), torch.cuda.get_device_name(0)


class TorchAdapter(Adapter):
    name = "torch"
    requires = ("torch",)
    extra = "torch"
    # From the package index torch is a CUDA build of several GB; only the pinned CPU wheel is on this disk.
    # torch.compile's inductor builds its kernels with setuptools' compiler helpers, which uv environments lack
    # (2.9: "No module named 'setuptools'").
    releases = ReleaseRules("torch", "torch", extra=("setuptools",), numpy2_since="2.3.0")
    # Forked after a warm-up: torch.compile's inductor cost 9-11 s per cold child, 0.2 s warm.
    fork_after_run = True
    devices = ("cpu", "gpu")
    VARIANTS = _VARIANTS  # torch_calls' (the converter paths convert the eager ones) and the threads twins
    mapping = "docs/mapping/torch.md"

    def version(self) -> str:
        return _torch().__version__

    def is_slow(self, variant: str) -> bool:
        # inductor compiles each new shape (1.5-5 s per case here); a constant twin each index value
        twin = variants.twin_of(variant)
        return variants.mode(twin[0] if twin else variant) == COMPILE

    def prepare(self, case: CaseData, variant: str) -> Call:
        self.check_variant(case.op, variant)
        twin_of = variants.constant_parent(variant)
        dynamic = variants.dynamic_parent(variant) is not None
        threads = variants.threads_of(variant)
        twin = variants.twin_of(variant)  # constant, dynamic or threads: the parent names the call and its mode
        base, mode = variants.split(twin[0] if twin else variant)
        compiled = mode == COMPILE
        # The case's inputs in the operator's order (TensorScatter: data, updates[, indices]), as the converter paths,
        # which export this call, feed them.
        names = tuple(case.inputs)
        arrays = tuple(case.inputs[n] for n in names)
        shapes = {n: a.shape for n, a in zip(names, arrays, strict=True)}
        expr = expression(case.op, base, shapes, case.attrs, case.omit)  # omitted attributes: left out of the call
        if compiled and (problem := _toolchain_problem()):
            raise Unsupported(problem)
        tensors = tuple(to_tensor(a) for a in arrays)
        note = ""
        if any(a.dtype.name == "bfloat16" for a in arrays):
            note = "  # bfloat16 inputs: torch.from_numpy(a.astype(np.float32)).to(torch.bfloat16)"
        target, device_name = _torch().device("cpu"), ""
        if case.device == "gpu":
            target, device_name = cuda_device()
            tensors = tuple(t.to(target) for t in tensors)
            note += "  # inputs .to('cuda'), run under torch.device('cuda')"
        args = ", ".join(names)
        held = "indices" if twin_of and "indices" in names else None
        if held:
            at = names.index(held)
            fed = tuple(n for n in names if n != held)
            api = (f"torch.compile(lambda {', '.join(fed)}: (lambda {args}: {expr})"
                   f"({', '.join('torch.tensor(indices_list)' if n == held else n for n in names)}), "
                   f"backend='inductor', dynamic=False)({', '.join(fed)})  # indices_list: a Python list the "
                   "compiled function closes over")
            compiled_fn = _compile_closing_over(_lambda(expr, names), arrays[at].tolist(), tensors[at].dtype, at)
            tensors = tensors[:at] + tensors[at + 1:]

            def fn(*ts: Any) -> Any:
                return compiled_fn(*ts)
        elif not compiled:
            fn = _lambda(expr, names)
            api = expr
        else:
            api = f"torch.compile(lambda {args}: {expr}, backend='inductor', dynamic={dynamic})({args})"

            def fn(*ts: Any) -> Any:
                return COMPILED.get(expr, names, ts, dynamic)(*ts)

        n_threads = (os.cpu_count() or 1) if threads else None

        def run() -> Any:
            # Factory calls inside an expression (torch.tensor, torch.arange) must land on the inputs' device.
            with target, _threads(n_threads):
                return fn(*tensors)

        if n_threads:
            note += f"  # under torch.set_num_threads({n_threads})"
        return Call(api + note, run, device=case.device, device_name=device_name,
                    source=_source(expr, names, arrays, compiled, case.device, held, dynamic, n_threads))

    def to_numpy(self, out: Any) -> np.ndarray:
        torch = _torch()
        if not isinstance(out, torch.Tensor):
            return np.asarray(out)
        out = out.detach().cpu()
        if out.dtype == torch.bfloat16:
            import ml_dtypes

            return out.to(torch.float32).numpy().astype(ml_dtypes.bfloat16)
        return out.resolve_conj().numpy()


def _source(expr: str, names: tuple[str, ...], arrays: tuple[np.ndarray, ...], compiled: bool, device: str,
            held: str | None = None, dynamic: bool = False, n_threads: int | None = None) -> str:
    """The call as standalone statements (Call.source): tensors as to_tensor makes them, the same expression; with
    ``held``, that input is a Python list the compiled function makes its tensor of (a constant of the graph); with
    ``n_threads``, torch's intra-op threads set first."""
    threads = [f"torch.set_num_threads({int(n_threads)})"] if n_threads else []
    lines = ["import torch", *threads, *source.tensors(names, arrays, "torch.from_numpy({name})",
                                             bfloat16="torch.from_numpy({name}.astype(np.float32)).to(torch.bfloat16)")]
    if device == "gpu":
        lines += [f"{name} = {name}.to('cuda')" for name in names]
    args = ", ".join(names)
    if held:
        fed = ", ".join(n for n in names if n != held)
        passed = ", ".join(f"torch.tensor({held}_list, dtype={held}_dtype)" if n == held else n for n in names)
        lines += [f"{held}_list, {held}_dtype = {held}.tolist(), {held}.dtype",
                  f"fn = torch.compile(lambda {fed}: (lambda {args}: {expr})({passed}), backend='inductor', "
                  "dynamic=False)", f"out = fn({fed})"]
    elif compiled:
        lines.append(f"fn = torch.compile(lambda {args}: {expr}, backend='inductor', dynamic={dynamic})")
        lines.append(f"out = fn({args})")
    else:
        lines.append(f"out = {expr}")
    lines.append("out = out.detach().cpu()")
    lines.append("result = out.to(torch.float32).numpy().astype(ml_dtypes.bfloat16) if out.dtype == torch.bfloat16 "
                 "else out.resolve_conj().numpy()")
    return "\n".join(lines)


ADAPTER = TorchAdapter()
