"""MNN (Alibaba): the expression API of its Python package, ``MNN.expr``, run by MNN's expression executor.

Each variant is one expression over the names ``data``, ``indices`` and ``updates`` (MNN Vars made with
``expr.const``) and the module ``expr``; that expression is the ``api`` string and is what runs (``eval`` of
``lambda data, ...: <expr>``, as the torch adapter does), so the repro cannot drift from the call measured.

What the Python API offers for the six operators (MNN 3.6.1; ``MNN.numpy.take``, ``take_along_axis``, ``put`` and
``put_along_axis`` exist but raise NotImplementedError):

- ``expr.gather(x, index)``: ``x[index]`` along axis 0, no axis argument (Gather, Take with axis 0 or flattened);
- ``data[indices]``, ``data[:, indices]``: ``Var.__getitem__`` with a Var index (Gather, the ``indexing`` variant);
- ``expr.gather_nd(x, indices)``: no batch_dims (GatherND);
- ``expr.scatter_nd(indices, updates, shape)``: into zeros, no data input, no reduction (ScatterND with all-zero
  data and no reduction, as the tensorflow adapter maps ``tf.scatter_nd``).

GatherElements and ScatterElements have no Python call: not mapped (the onnx~mnnconvert~mnn path runs them).

Dtypes: MNN's Python Vars are made with ``expr.const(array, shape, expr.NCHW, dtype)``. float32, int32 and uint8
hold their values; ``expr.double`` and ``expr.int64`` consts read the array's bytes as 32-bit words (measured:
``expr.const(np.array([1, 2], np.int64), [2], expr.NCHW, expr.int64).read()`` is ``[1, 0]``) and ``expr.int8`` is
refused, so data of those types is Unsupported. int64 indices are cast to int32, as MNN's own conversion of NumPy
input does (``MNN.expr._to_var``: ``x.astype(np.int32)``), where every value fits; else Unsupported.

Delegation: the expression executor runs on the backend ``expr.set_global_executor_config`` names (the CPU by
default); the Python API has no call that reads back which backend executed an expression, so no ``providers``
fact is recorded; nor ``ops``: an expression on consts is folded as it is built (the output Var's ``op_type`` is
already ``Const``).
"""

from __future__ import annotations

from typing import Any, ClassVar

import numpy as np

from gather_scatter_conformance.adapters.attrs import batch_dims_count
from gather_scatter_conformance.adapters.base import Adapter, Call, CaseData, ReleaseRules, Unsupported

# NumPy dtype -> the expr dtype whose consts hold its values (measured, MNN 3.6.1).
DTYPES = {"float32": "float", "int32": "int", "uint8": "uint8"}
INT32 = np.iinfo(np.int32)
EXPR_GATHER, EXPR_GATHER_ND, EXPR_SCATTER_ND, INDEXING = "expr.gather", "expr.gather_nd", "expr.scatter_nd", "indexing"
VARIANTS: dict[str, tuple[str, ...]] = {
    "Gather": (EXPR_GATHER, INDEXING),
    "GatherND": (EXPR_GATHER_ND,),
    "ScatterND": (EXPR_SCATTER_ND,),
    "Take": (EXPR_GATHER,),
}
_NAMES = ("data", "indices", "updates")


def _expr() -> Any:
    import MNN.expr

    return MNN.expr


def version() -> str:
    """The installed MNN's version string (``MNN.version()``)."""
    import MNN

    return str(MNN.version())


def mnn_array(name: str, arr: np.ndarray) -> tuple[np.ndarray, str]:
    """(the array MNN gets, the expr dtype name) for input ``name``; Unsupported where MNN's Python consts cannot hold
    it. int64 indices become int32 (MNN's own conversion of NumPy input) when every value fits."""
    dtype = arr.dtype.name
    if dtype == "int64" and name == "indices":
        if arr.size and (arr.min() < INT32.min or arr.max() > INT32.max):
            raise Unsupported("MNN indices are int32 (expr.int64 consts are read as int32 words); these int64 "
                              "indices do not fit in int32")
        return arr.astype(np.int32), "int"
    if dtype not in DTYPES:
        raise Unsupported(f"MNN's Python API makes no {dtype} tensors that hold their values ({name} is {dtype}; "
                          "expr.const keeps float32, int32 and uint8, reads double and int64 arrays as 32-bit words, "
                          "refuses int8)")
    return arr, DTYPES[dtype]


def expression(case: CaseData, variant: str) -> str:
    """The MNN expression for ``case`` in ``variant``, over Vars named data, indices, updates; Unsupported where the
    Python API cannot say it."""
    a, op, omit = case.attrs, case.op, case.omit
    data, indices = case.inputs["data"], case.inputs["indices"]
    if op in ("Gather", "Take"):
        if op == "Take" and a["mode"] != "raise":
            raise Unsupported(f"MNN.expr.gather has no mode; Take mode={a['mode']!r} cannot be expressed")
        if op == "Gather" and "batch_dims" not in omit and batch_dims_count(int(a["batch_dims"]), indices.ndim):
            raise Unsupported("MNN.expr.gather and Var indexing have no batch_dims")
        axis = None if "axis" in omit else a["axis"]
        if variant == INDEXING:
            return _subscript(0 if axis is None else int(axis))
        if op == "Take" and axis is None and "axis" not in omit:
            return "expr.gather(expr.reshape(data, [-1]), indices)"
        if axis not in (None, 0):
            raise Unsupported(f"MNN.expr.gather has no axis argument (it gathers along axis 0); axis={axis}")
        return "expr.gather(data, indices)"
    if op == "GatherND":
        if "batch_dims" not in omit and int(a["batch_dims"]):
            raise Unsupported("MNN.expr.gather_nd has no batch_dims")
        return "expr.gather_nd(data, indices)"
    if op == "ScatterND":
        if a["reduction"] != "none":
            raise Unsupported(f"MNN.expr.scatter_nd has no reduction; reduction={a['reduction']!r}")
        if data.dtype == object or np.any(data != 0):
            raise Unsupported("MNN.expr.scatter_nd has no data input (it scatters into zeros); data is not all zeros")
        return f"expr.scatter_nd(indices, updates, {[int(n) for n in data.shape]})"
    raise ValueError(f"mnn maps no operator {op!r}")


def _subscript(axis: int) -> str:
    """``data[indices]`` for axis 0, ``data[:, indices]`` for 1, ``data[..., indices, :]`` for -2: as users write."""
    if axis >= 0:
        return "data[" + ":, " * axis + "indices]"
    return "data[..., indices" + ", :" * (-axis - 1) + "]"


def _const_source(name: str, dtype: str, cast: bool) -> str:
    arr = f"{name}.astype(np.int32)" if cast else name
    return f"{name} = expr.const({arr}, list({name}.shape), expr.NCHW, expr.{dtype})"


class MnnAdapter(Adapter):
    name = "mnn"
    requires = ("MNN",)
    extra = "mnn"
    releases = ReleaseRules("MNN", "MNN", check="import MNN.expr; MNN.expr.gather; MNN.expr.scatter_nd; MNN.version()")
    VARIANTS = VARIANTS
    # expr.scatter_nd(indices, updates, shape): into zeros
    NO_DATA_INPUT: ClassVar[dict[str, tuple[str, ...]]] = {"ScatterND": ("expr.scatter_nd",)}
    mapping = "docs/mapping/mnn.md"

    def version(self) -> str:
        return version()

    def prepare(self, case: CaseData, variant: str) -> Call:
        self.check_variant(case.op, variant)
        if case.op == "ScatterND":
            names: tuple[str, ...] = ("indices", "updates")  # scatter_nd has no data input
        else:
            names = tuple(n for n in _NAMES if n in case.inputs)
        converted = {n: mnn_array(n, case.inputs[n]) for n in names}
        expr_text = expression(case, variant)
        casts = [n for n in names if converted[n][0].dtype != case.inputs[n].dtype]
        note = f"  # {', '.join(casts)} int64 -> int32" if casts else ""

        def run() -> np.ndarray:
            F = _expr()
            fn = eval(f"lambda {', '.join(names)}: {expr_text}", {"expr": F})  # our own text: see expression()
            args = [F.const(arr, list(arr.shape), F.NCHW, getattr(F, dtype)) for arr, dtype in converted.values()]
            return np.array(fn(*args).read())

        lines = ["import MNN.expr as expr",
                 *(_const_source(n, converted[n][1], n in casts) for n in names),
                 f"result = np.array(({expr_text}).read())"]
        return Call(expr_text + note, run, device="cpu", source="\n".join(lines))


ADAPTER = MnnAdapter()
