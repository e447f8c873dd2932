"""ExecuTorch programs of one torch call: ``torch.export.export`` -> ``executorch.exir.to_edge_transform_and_lower``
(with the XNNPACK partitioner, or none: the portable kernels) -> ``.to_executorch()``, run by the ExecuTorch runtime's
Python bindings (``executorch.runtime.Runtime``). Shared by the executorch adapter and the
``torch~torch-export~executorch`` converter paths, so the two lower and run the same way.

Which backend runs each operator is read from the lowered edge program, never assumed: an
``executorch_call_delegate`` node's lowered module names its ``backend_id`` (``XnnpackBackend``) and holds the ops
it took; every other operator runs on the runtime's kernels (:data:`PORTABLE`).

The runtime reports a failing kernel as ``RuntimeError: method->execute() failed with error 0x12`` and logs the
reason (``Check failed (...): index[1] = 9 is out of range [0, 4)``) through Python's ``sys.stderr`` (the
bindings route the C++ log there): :func:`execute` copies those lines into the error it raises, so the record says
why.
"""

from __future__ import annotations

import contextlib
import io
import sys
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

PORTABLE = "portable"  # the runtime's own CPU kernels (ExecuTorch's portable kernel library): no delegate
XNNPACK = "XnnpackBackend"  # the XNNPACK delegate's backend_id
BACKENDS = {"portable": PORTABLE, "xnnpack": XNNPACK}  # a variant's backend mode -> the backend it asks for
_DELEGATE = "executorch_call_delegate"
_THREADS = 1  # the runtime's thread pool (XNNPACK uses it): one thread, like the torch adapter's
_configured = False


def runtime() -> Any:
    """``executorch.runtime.Runtime.get()``, its thread pool limited to one thread on first use."""
    global _configured
    from executorch.runtime import Runtime

    rt = Runtime.get()
    if not _configured:
        from executorch.extension.pybindings import portable_lib

        # The machines have 2 cores shared with the harness; one thread also keeps duplicate scatter writes ordered.
        portable_lib._unsafe_reset_threadpool(_THREADS)
        _configured = True
    return rt


def version() -> str:
    """The installed executorch distribution's version (the package has no ``__version__``)."""
    import importlib.metadata

    return importlib.metadata.version("executorch")


def partitioners(backend: str) -> list[Any] | None:
    """The partitioner list ``to_edge_transform_and_lower`` gets for ``backend`` (None: portable kernels only)."""
    if backend == PORTABLE:
        return None
    if backend == XNNPACK:
        from executorch.backends.xnnpack.partition.xnnpack_partitioner import XnnpackPartitioner

        return [XnnpackPartitioner()]
    raise ValueError(f"unknown ExecuTorch backend {backend!r}; known: {', '.join(BACKENDS.values())}")


@dataclass
class Lowered:
    """A lowered program: the ``.pte`` bytes, the operators in execution order (a delegate's own ops in its place)
    and which backend runs each (operator -> backend_id, or :data:`PORTABLE`)."""

    buffer: bytes
    ops: list[str]
    placement: dict[str, str]


def _op_name(target: Any) -> str:
    """``aten.gather.default`` for an edge op (its ``__name__``), else the target's string."""
    return str(getattr(target, "__name__", target))


def placement_of(graph_module: Any) -> tuple[list[str], dict[str, str]]:
    """(operators in order, operator -> backend) of a lowered edge program's graph module.

    An operator that runs on two backends in one program (a reshape delegated in one place, not in another) is
    recorded as ``"A+B"``."""
    ops: list[str] = []
    placement: dict[str, str] = {}

    def place(op: str, backend: str) -> None:
        ops.append(op)
        known = placement.get(op)
        placement[op] = backend if known in (None, backend) else "+".join(sorted({*known.split("+"), backend}))

    for node in graph_module.graph.nodes:
        if node.op != "call_function" or _op_name(node.target) == "getitem":
            continue
        if _DELEGATE in str(node.target):
            lowered = getattr(graph_module, node.args[0].target)
            for inner in lowered.original_module.graph_module.graph.nodes:
                if inner.op == "call_function" and _op_name(inner.target) != "getitem":
                    place(_op_name(inner.target), str(lowered.backend_id))
        else:
            place(_op_name(node.target), PORTABLE)
    return ops, placement


def lower(module: Any, example: tuple[Any, ...], backend: str, dynamic: bool = False) -> Lowered:
    """Export ``module`` on ``example`` (static shapes; with ``dynamic``, :func:`dynamic_shapes`), lower it for
    ``backend`` and serialise it. Exceptions are the exporter's or the lowering's own."""
    import torch
    from executorch.exir import to_edge_transform_and_lower

    from gather_scatter_conformance.adapters.torch_export import reuse_op_tables

    reuse_op_tables()  # half of lowering a one-node program, otherwise (adapters/torch_export.py)
    # forward takes *args: its dynamic_shapes are one entry, the tuple of the inputs' own
    program = torch.export.export(module, example, dynamic_shapes=(dynamic_shapes(example),) if dynamic else None)
    edge = to_edge_transform_and_lower(program, partitioner=partitioners(backend))
    ops, placement = placement_of(edge.exported_program().graph_module)
    return Lowered(bytes(edge.to_executorch().buffer), ops, placement)


def load(buffer: bytes) -> Any:
    """The ``forward`` method of the program in ``buffer``, loaded by the runtime (a missing kernel fails here)."""
    return _logged(lambda: runtime().load_program(buffer).load_method("forward"))


def execute(method: Any, tensors: list[Any]) -> Any:
    """``method.execute(tensors)``'s first output; a failing kernel's reason (from the runtime's log) is added to the
    RuntimeError it raises."""
    return _logged(lambda: method.execute(tensors)[0])


def _logged(fn: Callable[[], Any]) -> Any:
    """``fn()`` with Python's ``sys.stderr`` (where the runtime's bindings send its C++ log) caught meanwhile and passed
    on afterwards; a RuntimeError from ``fn`` is raised again with the log lines that say why."""
    caught = io.StringIO()
    error: RuntimeError | None = None
    try:
        with contextlib.redirect_stderr(caught):
            return fn()
    except RuntimeError as exc:
        error = exc
    finally:
        sys.stderr.write(caught.getvalue())
    raise RuntimeError(_with_log(error, caught.getvalue().splitlines())) from None


def _with_log(exc: BaseException, lines: list[str]) -> str:
    """The runtime's message with the log lines that say why (kernel checks, missing kernels), at most six."""
    said = [line for line in lines if "Check failed" in line or "not found" in line or "failed" in line]
    said = [line for line in said if "arg " not in line][:6]
    return f"{exc}" + (f" [log: {' | '.join(said)}]" if said else "")


def standard(tensor: Any) -> Any:
    """``tensor`` with standard contiguous strides: an empty one is copied (an empty NumPy array has stride 0, which
    ``torch.from_numpy`` keeps, and ``to_executorch`` refuses any stride 0: "0 in strides is not supported for
    ExecuTorch"); any other is returned as it is."""
    import torch

    return tensor.clone(memory_format=torch.contiguous_format) if tensor.numel() == 0 else tensor


def module_of(fn: Callable[..., Any], held: tuple[int, Any] | None = None) -> Any:
    """An ``nn.Module`` whose forward is ``fn`` over its inputs (what torch.export exports). With ``held`` (the
    argument's position, a tensor), that argument is a buffer of the module, not an input: torch.export makes it a
    constant of the program, and ExecuTorch keeps it in the program's constant data (index provenance, #40)."""
    import torch

    class Case(torch.nn.Module):
        def __init__(self) -> None:
            super().__init__()
            if held is not None:
                self.register_buffer("indices", held[1])

        def forward(self, *args: Any) -> Any:
            if held is not None:
                args = (*args[:held[0]], self.indices, *args[held[0]:])
            return fn(*args)

    return Case().eval()


def dynamic_shapes(example: tuple[Any, ...]) -> tuple[dict[int, Any], ...]:
    """``torch.export``'s ``dynamic_shapes`` that leave every dimension of every input to the exporter
    (``Dim.AUTO``): dynamic unless the program needs it fixed (a size of 0 or 1, a dimension another must equal,
    which it then ties): what a user exporting for any size writes (dynamic shapes, #40)."""
    import torch

    return tuple({i: torch.export.Dim.AUTO for i in range(t.dim())} for t in example)


def source(expr: str, names: tuple[str, ...], backend: str, empty: tuple[str, ...] = (), held: str | None = None,
           dynamic: bool = False) -> list[str]:
    """Statements that export the torch call ``expr`` over ``names`` (torch tensors already bound; those in ``empty``
    have no elements and get standard strides, see :func:`standard`), lower it for ``backend``, run it on the inputs
    and assign its output, as a NumPy array, to ``result`` (the repro's tail). ``held`` (an input's name) is a buffer
    of the module instead of an input; ``dynamic`` exports every dimension ``Dim.AUTO``."""
    args = ", ".join(names)
    fed = ", ".join(n for n in names if n != held)
    lines = [f"{n} = {n}.clone(memory_format=torch.contiguous_format)  # empty: stride 0 from NumPy, refused"
             for n in empty]
    lines += ["from executorch.exir import to_edge_transform_and_lower",
              "from executorch.runtime import Runtime"]
    part = "None"
    if backend == XNNPACK:
        lines.append("from executorch.backends.xnnpack.partition.xnnpack_partitioner import XnnpackPartitioner")
        part = "[XnnpackPartitioner()]"
    lines += ["class Case(torch.nn.Module):"]
    if held:
        lines += ["    def __init__(self):",
                  "        super().__init__()",
                  f"        self.register_buffer({held!r}, {held})  # a constant of the program, not an input",
                  f"    def forward(self, {fed}):",
                  f"        {held} = self.{held}",
                  f"        return {expr}",
                  f"example = ({fed},)"]
    else:
        lines += [f"    def forward(self, {args}):",
                  f"        return {expr}",
                  "# exported with in-range example indices (zeros): the program depends on shapes and dtypes only",
                  f"example = ({args.replace('indices', 'torch.zeros_like(indices)')},)"]
    shapes = ", dynamic_shapes=tuple({i: torch.export.Dim.AUTO for i in range(t.dim())} for t in example)" \
        if dynamic else ""
    lines += [f"program = torch.export.export(Case(), example{shapes})",
              f"edge = to_edge_transform_and_lower(program, partitioner={part})",
              "method = Runtime.get().load_program(edge.to_executorch().buffer).load_method('forward')",
              f"out = method.execute([{fed}])[0]",
              "result = out.to(torch.float32).numpy().astype(ml_dtypes.bfloat16) if out.dtype == torch.bfloat16 "
              "else out.numpy()"]
    return lines
