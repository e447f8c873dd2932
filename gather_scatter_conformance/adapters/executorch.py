"""ExecuTorch (PyTorch's edge runtime): each torch call of the torch adapter, exported and run by ExecuTorch.

The calls are the torch adapter's own declarations (adapters/torch_calls.py: ``torch.index_select``, indexing,
``torch.gather``, ``Tensor.scatter`` / ``scatter_add`` / ``scatter_reduce``, ``Tensor.index_put``, ``torch.take``),
never re-declared here. Each becomes an ``nn.Module``, ``torch.export.export``-ed with the case's shapes and dtypes
(in-range example indices: the program depends on shapes and dtypes only), lowered with
``executorch.exir.to_edge_transform_and_lower`` and ``.to_executorch()``, and run by ``executorch.runtime.Runtime``
on the case's own inputs (adapters/executorch_program.py).

Variants: ``<torch variant>/portable`` (no partitioner: ExecuTorch's portable kernels) and ``<torch
variant>/xnnpack`` (the XNNPACK partitioner); and the twins (issue #40, vocab/variants.py) of each operator's
default: ``<call>/portable_constant`` with the indices a buffer of the module (torch.export makes it a constant of
the program, in its constant data) and ``<call>/portable_dynamic`` with every dimension exported ``Dim.AUTO``. Every
variant exports per input signature (0.4-1.5 s here), so all are slow: the default runs on every case, the others on
focus cases. Which backend ran each operator is read from the lowered program and recorded as ``providers`` /
``fallback`` (``delegation``), with ``ops``.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np

from gather_scatter_conformance.adapters import executorch_program as et
from gather_scatter_conformance.adapters import source
from gather_scatter_conformance.adapters.base import Adapter, Call, CaseData, ReleaseRules, delegation
from gather_scatter_conformance.adapters.cache import LRU
from gather_scatter_conformance.adapters.convert.path import (
    cache_file,
    entry_name,
    example_inputs,
    read_entry,
    write_atomic,
)
from gather_scatter_conformance.adapters.torch_calls import VARIANTS as TORCH_VARIANTS
from gather_scatter_conformance.adapters.torch_calls import expression
from gather_scatter_conformance.vocab import variants

CACHE_SIZE = 128


def _eager(op: str) -> list[str]:
    """The torch adapter's eager variants of ``op`` (its ``/compile`` twins are no program to export)."""
    return [v for v in TORCH_VARIANTS.get(op, ()) if variants.mode(v) is None]


def _with_twins(calls: list[str]) -> list[str]:
    """``calls``, then the twins (#40) of the first: ``<call>/portable_constant`` (the indices a buffer of the
    module: a constant of the program) and ``<call>/portable_dynamic`` (every dimension exported ``Dim.AUTO``)."""
    return [*calls, *variants.twins(calls[0])] if calls else calls


# Every eager torch call on the portable kernels, then the same calls with the XNNPACK partitioner, then the twins of
# the default.
VARIANTS = {op: _with_twins([variants.join(v, mode) for mode in et.BACKENDS for v in _eager(op)])
            for op in TORCH_VARIANTS}


def torch_call(case: CaseData, torch_variant: str) -> tuple[str, tuple[str, ...]]:
    """(the torch expression of ``case`` in the torch adapter's ``torch_variant``, its argument names); raises
    Unsupported where torch's API cannot say the case."""
    names = tuple(case.inputs)  # the operator's order (TensorScatter: data, updates, indices), as paths feed them
    return expression(case.op, torch_variant, {n: case.inputs[n].shape for n in names}, case.attrs, case.omit), names


def program(case: CaseData, torch_variant: str, backend: str, held: str | None = None,
            dynamic: bool = False) -> et.Lowered:
    """The case's torch call exported and lowered for ``backend`` (traced on in-range example indices), or the same
    program as an earlier process lowered it: kept on disk by what shapes it (see _stored). ``held`` (an input's
    name): that input is a buffer of the module holding the case's own values, a constant of the program;
    ``dynamic``: every dimension exported ``Dim.AUTO`` (et.dynamic_shapes)."""
    from gather_scatter_conformance.adapters.torch import _lambda, to_tensor

    expr, names = torch_call(case, torch_variant)
    example = example_inputs(case)
    constant = (names.index(held), et.standard(to_tensor(case.inputs[held]))) if held else None
    files = _program_files(expr, names, example, backend, case.inputs[held].tobytes() if held else None, dynamic)
    found = _stored(files)
    if found is not None:
        return found
    fed = tuple(et.standard(to_tensor(example[n])) for n in names if n != held)
    lowered = et.lower(et.module_of(_lambda(expr, names), constant), fed, backend, dynamic)
    _store(files, lowered)
    return lowered


# Lowered programs on disk, beside the converted models (the conversion cache, $GSC_CONVERSION_CACHE): the adapter
# and the torch~torch-export~executorch paths lower the same call the same way (a program depends on the torch
# expression, the inputs' names, shapes and dtypes, the backend and the releases, never on values), so the
# frameworks phase's lowering serves the paths phase, and one run's the next. An entry is the .pte bytes and a JSON
# of what was read from the lowered program; a torn or foreign entry is a miss.
_PROGRAM_FORMAT = 1


def _program_files(expr: str, names: tuple[str, ...], example: dict[str, np.ndarray], backend: str,
                   held: bytes | None = None, dynamic: bool = False) -> tuple[Path, Path] | None:
    """Where the program of ``expr`` on ``example``'s signature for ``backend`` is kept: its .pte and its JSON; a
    twin's by the held values too, or its dynamic export."""
    import torch

    shapes = tuple((n, tuple(example[n].shape), str(example[n].dtype)) for n in names)
    twin = () if held is None and not dynamic else (held, dynamic)  # the parent's entries keep their names
    name = entry_name(_PROGRAM_FORMAT, torch.__version__, et.version(), expr, shapes, backend, *twin)
    pte = cache_file("executorch", f"{name}.pte")
    return None if pte is None else (pte, pte.with_suffix(".json"))


def _stored(files: tuple[Path, Path] | None) -> et.Lowered | None:
    pte, meta_file = files or (None, None)
    try:
        meta = json.loads(read_entry(meta_file) or b"null")
        ops, placement = meta["ops"], meta["placement"]
        if not (isinstance(ops, list) and all(isinstance(o, str) for o in ops) and isinstance(placement, dict)
                and all(isinstance(k, str) and isinstance(v, str) for k, v in placement.items())):
            return None
        buffer = read_entry(pte)
        return None if buffer is None else et.Lowered(buffer, ops, placement)
    except (ValueError, KeyError, TypeError):
        return None


def _store(files: tuple[Path, Path] | None, lowered: et.Lowered) -> None:
    if files is not None:  # the program first, so a JSON that exists names a whole one
        write_atomic(files[0], lowered.buffer)
        write_atomic(files[1], json.dumps({"ops": lowered.ops, "placement": lowered.placement}).encode())


def repro(expr: str, names: tuple[str, ...], arrays: tuple[np.ndarray, ...], backend: str, held: str | None = None,
          dynamic: bool = False) -> str:
    """The whole call as standalone statements (Call.source): torch tensors as the torch adapter makes them, the
    export, the lowering and the run, the output converted as :meth:`ExecuTorchAdapter.to_numpy` does."""
    lines = ["import torch", *source.tensors(names, arrays, "torch.from_numpy({name})",
                                             bfloat16="torch.from_numpy({name}.astype(np.float32)).to(torch.bfloat16)")]
    empty = tuple(n for n, a in zip(names, arrays, strict=True) if a.size == 0)
    return "\n".join([*lines, *et.source(expr, names, backend, empty, held, dynamic)])


class ExecuTorchAdapter(Adapter):
    name = "executorch"
    requires = ("executorch", "torch")
    extra = "executorch"
    # Each release's extension modules are built against one torch minor series, but from 1.1 its METADATA states
    # only a floor (1.1.0: torch>=2.10.0; 1.2.0: >=2.11.0; 1.3.1: >=2.12.0a0; 1.4.1: >=2.13.0a0), so a resolver
    # takes the newest torch and the import fails (2.15.0: undefined symbol c10::impl::cow::materialize_cow_storage,
    # the sweep of 2026-12-01); companions_before holds each to its floor's series. From the package index a CUDA
    # build, run on the CPU. setuptools: torch.export's and inductor's compiler helpers, which uv environments lack
    # (as torch's own rules say). NumPy as the release requires it.
    releases = ReleaseRules("executorch", "executorch", extra=("setuptools",), reported=("torch", "torchao"),
                            companions_before=(("1.1.0", "torch>=2.9,<2.10"), ("1.2.0", "torch>=2.10,<2.11"),
                                               ("1.3.0", "torch>=2.11,<2.12"), ("1.4.0", "torch>=2.12,<2.13"),
                                               ("1.6.0", "torch>=2.13,<2.14")),
                            check="import torch; from executorch.exir import to_edge_transform_and_lower; "
                                  "from executorch.runtime import Runtime; "
                                  "from executorch.extension.pybindings import portable_lib; "
                                  "portable_lib._unsafe_reset_threadpool; "
                                  "from executorch.backends.xnnpack.partition.xnnpack_partitioner "
                                  "import XnnpackPartitioner")
    # 1.5.1, one runtime thread: 12 of 12 children of a parent that had lowered and run every Gather variant ran
    # ScatterND on both backends (0.6-1.0 s each, against 5 s of imports for a cold one).
    fork_after_run = True
    VARIANTS = VARIANTS
    mapping = "docs/mapping/executorch.md"

    def __init__(self) -> None:
        # (Lowered, loaded method) by (torch expression, backend, input signature): values never shape a program.
        self.cache: LRU[tuple[et.Lowered, Any]] = LRU(CACHE_SIZE)

    def version(self) -> str:
        return et.version()

    def warm(self) -> None:
        from gather_scatter_conformance.adapters.torch import _torch

        _torch()  # one torch thread
        et.runtime()  # imports the runtime and limits its thread pool

    def is_slow(self, variant: str) -> bool:
        return True  # torch.export + lowering per input signature: 0.4-1.5 s a case here

    def prepare(self, case: CaseData, variant: str) -> Call:
        from gather_scatter_conformance.adapters.torch import to_tensor

        self.check_variant(case.op, variant)
        twin = variants.twin_of(variant)
        torch_variant, mode = variants.split(twin[0] if twin else variant)
        dynamic = bool(twin) and twin[1] == variants.DYNAMIC_MODE
        backend = et.BACKENDS[str(mode)]
        expr, names = torch_call(case, torch_variant)
        held = "indices" if twin and twin[1] == variants.CONSTANT_MODE and "indices" in names else None
        arrays = tuple(case.inputs[n] for n in names)
        # Unsupported for string data (torch has no string tensors); empty ones with standard strides (et.standard).
        tensors = [et.standard(to_tensor(a)) for n, a in zip(names, arrays, strict=True) if n != held]
        key = (expr, backend, tuple((n, a.shape, str(a.dtype)) for n, a in zip(names, arrays, strict=True)),
               tuple(case.omit), case.inputs[held].tobytes() if held else None, dynamic)
        facts: dict[str, Any] = {}

        def make() -> tuple[et.Lowered, Any]:
            lowered = program(case, torch_variant, backend, held, dynamic)
            self._record(facts, lowered, backend)  # known before loading: a missing kernel still says what ran
            return lowered, et.load(lowered.buffer)

        def run() -> Any:
            lowered, method = self.cache.get_or_make(key, make)
            self._record(facts, lowered, backend)
            return et.execute(method, tensors)

        how = ", indices a buffer of the module" if held else ", dynamic_shapes=Dim.AUTO" if dynamic else ""
        api = f"{expr}  # torch.export{how} -> to_edge_transform_and_lower(partitioner={_partitioner(backend)}) -> " \
              "executorch.runtime"
        return Call(api, run, device="cpu", device_name=backend,
                    source=repro(expr, names, arrays, backend, held, dynamic), facts=facts)

    @staticmethod
    def _record(facts: dict[str, Any], lowered: et.Lowered, backend: str) -> None:
        facts["ops"] = list(lowered.ops)
        facts.update(delegation(lowered.placement, backend))

    def to_numpy(self, out: Any) -> np.ndarray:
        from gather_scatter_conformance.adapters.torch import ADAPTER as TORCH

        return TORCH.to_numpy(out)

    def release(self) -> None:
        self.cache.clear()


def _partitioner(backend: str) -> str:
    return "[XnnpackPartitioner()]" if backend == et.XNNPACK else "None"


ADAPTER = ExecuTorchAdapter()
