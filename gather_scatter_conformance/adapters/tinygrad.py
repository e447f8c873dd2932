"""tinygrad: ``Tensor.gather``, ``Tensor.scatter``, ``Tensor.scatter_reduce``, indexing and indexed assignment.

Each variant is one function body over the Tensors ``data``, ``indices`` and ``updates``: its lines are the
``api`` string (joined by ``; ``) and, compiled once per text, the code that runs, so the repro is what ran.

Device: tinygrad's ``CPU`` device, which compiles each kernel with clang (``make clang`` installs it); where no
``clang`` is on the PATH the adapter runs on tinygrad's ``PYTHON`` device (a Python interpreter of its UOps) instead,
chosen before tinygrad is first imported (``DEV``, unless the user set it). The record's ``device_name`` is the
device that ran (``Tensor.device``).

tinygrad compiles a kernel per input shape and dtype and caches it itself (in memory, and on disk in its
``cache.db``); a new shape costs 0.08-0.25 s here (clang -O2), the order of TVM's builds, so no variant is slow.

Inputs become Tensors with ``Tensor(array)`` in their own dtype; bfloat16 (ml_dtypes) goes through float32 and
``.cast(dtypes.bfloat16)``, strings and complex numbers are Unsupported (tinygrad has neither).
"""

from __future__ import annotations

import os
import shutil
from typing import Any

import numpy as np

from gather_scatter_conformance.adapters import onnx_graph
from gather_scatter_conformance.adapters.attrs import batch_dims_count, required
from gather_scatter_conformance.adapters.base import Adapter, Call, CaseData, ReleaseRules, Unsupported

GATHER, SCATTER, SCATTER_REDUCE, INDEXING, SETITEM = "gather", "scatter", "scatter_reduce", "indexing", "setitem"
# tinygrad's ONNX importer (tinygrad.nn.onnx.OnnxRunner) on the case's one-node model: the only way tinygrad has to
# run TensorScatter, which its Tensor API lacks.
ONNX_RUNNER = "nn.onnx.OnnxRunner"
VARIANTS: dict[str, tuple[str, ...]] = {
    "Gather": (INDEXING,),
    "GatherElements": (GATHER,),
    "GatherND": (INDEXING,),
    "ScatterElements": (SCATTER, SCATTER_REDUCE),
    "ScatterND": (SETITEM,),
    "Take": (INDEXING,),
    "TensorScatter": (ONNX_RUNNER,),
}
# ONNX reduction -> Tensor.scatter_reduce's reduce.
SCATTER_REDUCE_REDUCES = {"add": "sum", "mul": "prod", "max": "amax", "min": "amin"}
DEVICE_ENV = "DEV"
_NAMES = ("data", "indices", "updates")
_COMPILED: dict[str, Any] = {}  # function text -> the function


def device() -> str:
    """The tinygrad device runs use: ``CPU`` where clang is on the PATH, else ``PYTHON``; set as ``DEV`` before
    tinygrad is first imported (a ``DEV`` the user set wins)."""
    os.environ.setdefault(DEVICE_ENV, "CPU" if shutil.which("clang") else "PYTHON")
    return os.environ[DEVICE_ENV]


def _tinygrad() -> Any:
    device()  # must precede the first import: tinygrad reads DEV when it picks its default device
    import tinygrad

    return tinygrad


def version() -> str:
    """The installed tinygrad's version (its distribution's; the module has no ``__version__``)."""
    from importlib.metadata import version as dist_version

    return dist_version("tinygrad")


def _subscript(axis: int, index: str) -> str:
    """``data[:, index]`` for axis 1, ``data[..., index, :]`` for axis -2 (the way users spell it)."""
    if axis >= 0:
        return "data[" + ":, " * axis + index + "]"
    return "data[..., " + index + ", :" * (-axis - 1) + "]"


def body(case: CaseData, variant: str) -> list[str]:
    """The variant's lines for ``case``: statements, then the expression whose value is the result. Unsupported
    where tinygrad's API cannot say the case; attributes in ``case.omit`` are left to tinygrad's default."""
    a, op, omit = case.attrs, case.op, case.omit
    omit_axis = "axis" in omit
    if op in ("Gather", "Take"):
        if op == "Take" and a["mode"] != "raise":
            raise Unsupported(f"tinygrad indexing has no mode; Take mode={a['mode']!r} cannot be expressed")
        if op == "Gather" and "batch_dims" not in omit and \
                batch_dims_count(int(a["batch_dims"]), case.inputs["indices"].ndim):
            raise Unsupported("tinygrad indexing has no batch_dims")
        if omit_axis:
            return ["data[indices]"]
        if a["axis"] is None:  # Take's flattened form
            return ["data.flatten()[indices]"]
        return [_subscript(int(a["axis"]), "indices")]
    if op == "GatherElements":
        if omit_axis:
            raise required("Tensor.gather(dim, index)")
        return [f"data.gather({int(a['axis'])}, indices)"]
    if op == "GatherND":
        if "batch_dims" not in omit and int(a["batch_dims"]):
            raise Unsupported("tinygrad indexing has no batch_dims")
        return ["data[tuple(indices[..., k] for k in range(indices.shape[-1]))]"]
    if op == "ScatterElements":
        if omit_axis:
            raise required(f"Tensor.{variant}(dim, index, src)")
        axis, reduction = int(a["axis"]), a["reduction"]
        if variant == SCATTER:
            if reduction == "none":
                return [f"data.scatter({axis}, indices, updates)"]
            # Tensor.scatter's reduce ('add' | 'multiply') takes a scalar src only ("non-scalar src is not supported
            # with reduce arg. use scatter_reduce"): reductions are the scatter_reduce variant's.
            raise Unsupported(f"Tensor.scatter's reduce takes a scalar src only; reduction={reduction!r} of a "
                              "Tensor of updates is the scatter_reduce variant's")
        if reduction == "none":
            raise Unsupported("Tensor.scatter_reduce has no plain assignment; the 'scatter' variant assigns")
        return [f"data.scatter_reduce({axis}, indices, updates, reduce={SCATTER_REDUCE_REDUCES[reduction]!r}, "
                "include_self=True)"]
    if op == "ScatterND":
        if a["reduction"] != "none":
            raise Unsupported(f"tinygrad's indexed assignment only assigns; reduction={a['reduction']!r}")
        return ["data = data.contiguous()",
                "data[tuple(indices[..., k] for k in range(indices.shape[-1]))] = updates",
                "data"]
    raise ValueError(f"tinygrad maps no operator {op!r}")


def function(lines: list[str], names: tuple[str, ...]) -> Any:
    """The lines as a function of ``names`` (compiled once per text; the only global it sees is nothing but
    builtins: the lines use the Tensors' own methods)."""
    text = f"def call({', '.join(names)}):\n" + "".join(f"    {line}\n" for line in lines[:-1]) + \
        f"    return {lines[-1]}\n"
    fn = _COMPILED.get(text)
    if fn is None:
        scope: dict[str, Any] = {}
        exec(text, scope)  # our own text: body() writes it from fixed strings and validated integers
        fn = _COMPILED[text] = scope["call"]
    return fn


def to_tensor(arr: np.ndarray, dev: str) -> Any:
    """A tinygrad Tensor on ``dev`` holding ``arr`` in its own dtype (bfloat16 through float32, exactly)."""
    from tinygrad import Tensor, dtypes

    if arr.dtype.name == "bfloat16":
        return Tensor(arr.astype(np.float32), device=dev).cast(dtypes.bfloat16)
    return Tensor(arr, device=dev)


class TinygradAdapter(Adapter):
    name = "tinygrad"
    requires = ("tinygrad",)
    extra = "tinygrad"
    # onnx: the TensorScatter variant builds an ONNX model for tinygrad's own ONNX runner. The check reaches the
    # Tensor API only: a release without a method (scatter_reduce, the ONNX runner) records that variant's error.
    releases = ReleaseRules("tinygrad", "tinygrad", extra=("onnx==1.23.2",),
                            check="from tinygrad import Tensor, dtypes; Tensor.gather; dtypes.float32")
    VARIANTS = VARIANTS
    mapping = "docs/mapping/tinygrad.md"

    def version(self) -> str:
        return version()

    def warm(self) -> None:
        _tinygrad()
        import tinygrad.tensor  # noqa: F401  (the Tensor machinery, before the template forks)

    def prepare(self, case: CaseData, variant: str) -> Call:
        self.check_variant(case.op, variant)
        for n, arr in case.inputs.items():
            if arr.dtype == object or arr.dtype.kind in "USc":
                raise Unsupported(f"tinygrad has no {'complex' if arr.dtype.kind == 'c' else 'string'} tensors "
                                  f"({n} is {arr.dtype})")
        if variant == ONNX_RUNNER:
            return _onnx_runner_call(case)
        names = tuple(n for n in _NAMES if n in case.inputs)
        lines = body(case, variant)
        dev = device()
        arrays = [case.inputs[n] for n in names]

        def run() -> np.ndarray:
            _tinygrad()
            from tinygrad import dtypes

            out = function(lines, names)(*(to_tensor(a, dev) for a in arrays))
            # numpy() of a bfloat16 Tensor is float32 (its dtype's name is '__bf16'): back to bfloat16, exactly
            if out.dtype == dtypes.bfloat16:
                import ml_dtypes

                return out.cast(dtypes.float32).numpy().astype(ml_dtypes.bfloat16)
            return out.numpy()

        note = "" if dev == "CPU" else f"  # on tinygrad's {dev} device (no clang here)"
        source = [f"import os; os.environ.setdefault('DEV', {dev!r})", "from tinygrad import Tensor, dtypes",
                  *(f"{n} = Tensor({n}.astype(np.float32)).cast(dtypes.bfloat16) if {n}.dtype.name == 'bfloat16' "
                    f"else Tensor({n})" for n in names),
                  *lines[:-1], f"out = {lines[-1]}",
                  "result = out.cast(dtypes.float32).numpy().astype(ml_dtypes.bfloat16) "
                  "if out.dtype == dtypes.bfloat16 else out.numpy()"]
        return Call("; ".join(lines) + note, run, device="cpu", device_name=dev, source="\n".join(source))


def _onnx_runner_call(case: CaseData) -> Call:
    """The case's one-node ONNX model (adapters.onnx_graph) run by tinygrad's ONNX importer, its inputs fed under
    ONNX's names; the model is handed over as bytes, so nothing is written to disk."""
    model, _, text = onnx_graph.build(case)  # Unsupported where ONNX cannot say the case
    blob = model.SerializeToString()
    feeds = onnx_graph.feeds(case)
    dev = device()

    def run() -> np.ndarray:
        _tinygrad()
        from tinygrad import Tensor
        from tinygrad.nn.onnx import OnnxRunner

        runner = OnnxRunner(Tensor(np.frombuffer(blob, np.uint8).copy()))
        out = runner({n: to_tensor(a, dev) for n, a in feeds.items()})
        return next(iter(out.values())).numpy()

    source = [onnx_graph.model_source(model), f"import os; os.environ.setdefault('DEV', {dev!r})",
              "from tinygrad import Tensor", "from tinygrad.nn.onnx import OnnxRunner",
              *(f"{n} = Tensor({n})" for n in case.inputs),
              "runner = OnnxRunner(Tensor(np.frombuffer(model.SerializeToString(), np.uint8).copy()))",
              f"result = next(iter(runner({onnx_graph.feeds_source(list(case.inputs), case.op)}).values())).numpy()"]
    return Call(f"OnnxRunner(model: {text})(feeds)", run, device="cpu", device_name=dev, source="\n".join(source))


ADAPTER = TinygradAdapter()
