"""MXNet 1.x: mx.nd.take, mx.nd.pick, mx.nd.gather_nd, mx.nd.scatter_nd, mx.nd.contrib.index_copy, and the
NumPy-compatible interface (mx.np.take, mx.np indexing and item assignment, after ``npx.set_np()``).

This module runs in MXNet's own interpreter (MXNet 1.9 needs numpy<1.24), reached through harness.run.worker; it
must work on NumPy 1.23. MXNet runs operators asynchronously and reports their errors when a result is read, so
every call ends in ``.asnumpy()``: an error belongs to the case that caused it.

Arrays are made as a user makes them, with the case's element type: ``mx.nd.array(x, dtype=x.dtype)`` (the default
would be float32, which rounds indices above 2**24). In ``api`` strings ``data``, ``indices`` and ``updates`` are
those arrays; any other conversion is written out before the call. An NDArray cannot hold int16, uint16, uint32,
uint64, complex or strings: data of such a type is unsupported; integer indices of such a type are cast to int64,
as a user has to. bfloat16 data goes through ``mx.nd.amp_cast`` (MXNet's own bfloat16, exact for bfloat16 values).

The mx.nd variants run under MXNet 1.x's legacy shape semantics, which users get by default (no 0-d or zero-size
arrays: a 0 in a shape means "unknown"); the mx.np variants run under ``npx.set_np()``, as that interface requires.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable
from typing import Any, ClassVar

import numpy as np

from gather_scatter_conformance.adapters.attrs import (
    InvalidAttribute,
    axis_index,
    batch_dims_count,
    batched_index_shapes,
    required,
    valid_axis,
)
from gather_scatter_conformance.adapters.base import Adapter, Call, CaseData, ReleaseRules, Unsupported, fmt_attrs
from gather_scatter_conformance.vocab import dtypes

_VARIANTS = {
    "Gather": ["take", "take/raise", "np.take", "np.indexing"],
    "GatherElements": ["pick", "pick/wrap", "np.indexing"],
    "GatherND": ["gather_nd", "np.indexing"],
    "ScatterElements": ["np.setitem"],
    "ScatterND": ["scatter_nd", "np.setitem", "index_copy"],
    "Take": ["take", "np.take"],
}
# Element types an MXNet 1.9 NDArray holds as NumPy types (bfloat16 is MXNet's own, reached through amp_cast).
MX_DTYPES = ("float16", "float32", "float64", "int8", "int32", "int64", "uint8", "bool")
_HELD = "float16/32/64, bfloat16, int8, int32, int64, uint8, bool"
_BF16_NAMES = ("bfloat16",)  # the field name of MXNet's structured bfloat16 dtype, as .asnumpy() returns it

Body = Callable[..., Any]  # (mx, data, indices[, updates]) -> MXNet array


def _mx() -> Any:
    import mxnet as mx

    return mx


# --- input conversion -----------------------------------------------------------------------------------------


def _maker(ns: str, arr: np.ndarray, dtype: str) -> Callable[[Any], Any]:
    def make(mx: Any) -> Any:
        if dtype == "bfloat16":
            # Exact: every bfloat16 value is a float32 value, and amp_cast rounds it back to itself.
            out = mx.nd.amp_cast(mx.nd.array(arr.astype(np.float32), dtype="float32"), dtype="bfloat16")
            return out.as_np_ndarray() if ns == "np" else out
        return getattr(mx, ns).array(arr, dtype=dtype)

    return make


def plan_inputs(case: CaseData, ns: str) -> tuple[list[str], dict[str, Callable[[Any], Any]]]:
    """Statements a user writes before the call (conversions beyond ``mx.<ns>.array(x, dtype=x.dtype)``) and, per
    input, a function of the mxnet module that makes the MXNet array. Raises Unsupported for a data type MXNet
    cannot hold."""
    pre: list[str] = []
    makers: dict[str, Callable[[Any], Any]] = {}
    for name, arr in case.inputs.items():
        kind = dtypes.name_of(arr.dtype)
        if kind in MX_DTYPES:
            makers[name] = _maker(ns, arr, kind)
        elif name == "indices" and kind in dtypes.INDEX_DTYPES:
            # MXNet has no such type: the cast a user has to write (lossless, bar uint64 above 2**63 - 1).
            pre.append(f"indices = mx.{ns}.array(indices.astype('int64'), dtype='int64')")
            makers[name] = _maker(ns, arr.astype(np.int64), "int64")
        elif kind == "bfloat16":
            conv = ".as_np_ndarray()" if ns == "np" else ""
            pre.append(f"{name} = mx.nd.amp_cast(mx.nd.array({name}, dtype='float32'), dtype='bfloat16'){conv}")
            makers[name] = _maker(ns, arr, kind)
        else:
            raise Unsupported(f"MXNet NDArrays cannot hold {kind} ({name}); they hold {_HELD}")
    return pre, makers


# --- translation helpers ----------------------------------------------------------------------------------------


def _shape_str(shape: tuple[int, ...]) -> str:
    return "(" + ", ".join(map(str, shape)) + ("," if len(shape) == 1 else "") + ")"


def _arange_api(n: int, shape: tuple[int, ...]) -> str:
    return f"mx.np.arange({n}, dtype='int64').reshape({_shape_str(shape)})"


def element_coords(shape: tuple[int, ...], axis: int) -> list[tuple[int, ...] | None]:
    """Per dim of ``indices``, the broadcast shape of its arange, or None at ``axis`` (where the indices go):
    the full coordinates of GatherElements/ScatterElements as NumPy-style advanced indices."""
    return [None if d == axis else tuple(n if j == d else 1 for j in range(len(shape))) for d, n in enumerate(shape)]


def _coords(mx: Any, indices: Any, axis: int) -> tuple[Any, ...]:
    shapes = element_coords(tuple(indices.shape), axis)
    return tuple(
        indices if s is None else mx.np.arange(indices.shape[d], dtype="int64").reshape(s) for d, s in enumerate(shapes)
    )


def _coords_api(shape: tuple[int, ...], axis: int) -> str:
    parts = ["indices" if s is None else _arange_api(shape[d], s) for d, s in enumerate(element_coords(shape, axis))]
    return "(" + ", ".join(parts) + ("," if len(parts) == 1 else "") + ")"


class MxnetAdapter(Adapter):
    name = "mxnet"
    requires = ("mxnet",)
    extra = "mxnet"
    # MXNet 1.x never moved past NumPy 1.23 (np.bool and friends were removed in 1.24).
    releases = ReleaseRules("mxnet", "mxnet", pinned=("numpy<1.24",))
    # A forked child of a worker that ran cases runs cases (checked on the pinned release).
    fork_after_run = True
    VARIANTS = _VARIANTS
    # mx.nd.scatter_nd(data=updates, indices, shape): into zeros
    NO_DATA_INPUT: ClassVar[dict[str, tuple[str, ...]]] = {"ScatterND": ("scatter_nd",)}
    mapping = "docs/mapping/mxnet.md"

    def version(self) -> str:
        return str(_mx().__version__)

    def prepare(self, case: CaseData, variant: str) -> Call:
        self.check_variant(case.op, variant)
        ns = "np" if variant.startswith("np.") else "nd"  # np.take, np.indexing, np.setitem
        pre, makers = plan_inputs(case, ns)
        api, body = getattr(self, "_" + case.op.lower())(case, variant)
        statements = (["npx.set_np()"] if ns == "np" else []) + pre + [api]
        # The plain conversions (mx.<ns>.array(x, dtype=x.dtype)) are implicit in the api text; a script spells them.
        converted = {line.split(" = ", 1)[0] for line in pre}
        plain = [f"{n} = mx.{ns}.array({n}, dtype={n}.dtype)" for n in case.inputs if n not in converted]
        source = ["import mxnet as mx", "from mxnet import npx", *(["npx.set_np()"] if ns == "np" else []),
                  *plain, *pre,
                  # A scatter is spelled as statements that leave the output in `out`; the others are expressions.
                  *(api.split("; ") + ["out = out.asnumpy()"] if api.startswith("out = ") else
                    [f"out = ({api}).asnumpy()"]),
                  "result = out.view(np.uint16).reshape(out.shape).view(ml_dtypes.bfloat16) "
                  f"if out.dtype.names == {_BF16_NAMES!r} else out"]
        return Call("; ".join(statements), _runner(ns, makers, body), device="cpu", source="\n".join(source))

    def to_numpy(self, out: Any) -> np.ndarray:
        arr = out.asnumpy() if hasattr(out, "asnumpy") else np.asarray(out)
        if arr.dtype.names == _BF16_NAMES:
            # MXNet's bfloat16 comes back as a structured uint16 record; its bits are those of ml_dtypes.bfloat16.
            arr = arr.view(np.uint16).reshape(arr.shape).view(dtypes.to_numpy("bfloat16"))
        return arr

    # --- one method per operator: (api call, body) ----------------------------------------------------------

    def _take(self, case: CaseData, variant: str) -> tuple[str, Body]:
        axis, mode = case.attrs["axis"], case.attrs["mode"]
        fn = "mx.np.take" if variant == "np.take" else "mx.nd.take"
        if mode == "fill":
            raise Unsupported(f"{fn} has no 'fill' mode (modes: raise, clip, wrap)")
        if variant == "np.take":
            return (
                f"mx.np.take(data, indices, {fmt_attrs(axis=axis, mode=mode)})",
                lambda mx, data, indices: mx.np.take(data, indices, axis=axis, mode=mode),
            )
        if axis is None:
            # mx.nd.take has no axis=None; taking from the flattened array is data.reshape(-1) along axis 0.
            return (
                f"mx.nd.take(data.reshape(-1), indices, axis=0, mode={mode!r})",
                lambda mx, data, indices: mx.nd.take(data.reshape(-1), indices, axis=0, mode=mode),
            )
        return (
            f"mx.nd.take(data, indices, {fmt_attrs(axis=axis, mode=mode)})",
            lambda mx, data, indices: mx.nd.take(data, indices, axis=axis, mode=mode),
        )

    def _gather(self, case: CaseData, variant: str) -> tuple[str, Body]:
        axis, given = int(case.attrs["axis"]), int(case.attrs["batch_dims"])
        indices = case.inputs["indices"]
        b = batch_dims_count(given, indices.ndim)  # negative batch_dims counts from the indices rank
        if variant == "np.indexing":
            if b and "axis" in case.omit:  # the aranges place the indices at a stated axis
                raise required(f"data[...] with batch_dims={given} (indices at a stated axis)")
            return self._gather_indexing(case.inputs["data"].shape, indices.shape, axis, given, b)
        fn = {"take": "mx.nd.take", "take/raise": "mx.nd.take", "np.take": "mx.np.take"}[variant]
        if b != 0:
            raise Unsupported(f"batch_dims={given}: {fn} has no batch_dims (the np.indexing variant spells it)")
        if variant == "take":  # MXNet's default mode, 'clip': what a user gets without naming one
            return f"mx.nd.take(data, indices, axis={axis})", lambda mx, data, indices: mx.nd.take(data, indices, axis)
        if variant == "take/raise":
            return (
                f"mx.nd.take(data, indices, axis={axis}, mode='raise')",
                lambda mx, data, indices: mx.nd.take(data, indices, axis=axis, mode="raise"),
            )
        # mx.np.take's default mode is 'raise'.
        return f"mx.np.take(data, indices, axis={axis})", lambda mx, data, indices: mx.np.take(data, indices, axis)

    @staticmethod
    def _gather_indexing(
        data_shape: tuple[int, ...], idx_shape: tuple[int, ...], axis: int, given: int, b: int
    ) -> tuple[str, Body]:
        # Advanced indexing places dims by position, so it needs a valid, non-negative axis and batch_dims <= axis.
        ax = axis_index(axis, len(data_shape))
        b = batch_dims_count(given, len(idx_shape), ax)
        if b == 0:
            return ("data[" + ":, " * ax + "indices]", lambda mx, data, indices: data[(slice(None),) * ax + (indices,)])
        *grids, ishape = batched_index_shapes(data_shape, idx_shape, ax, b)
        parts = [_arange_api(data_shape[i], s) for i, s in enumerate(grids)]
        api = "data[" + ", ".join([*parts, f"indices.reshape({_shape_str(ishape)})"]) + "]"

        def body(mx: Any, data: Any, indices: Any) -> Any:
            aranges = tuple(mx.np.arange(data_shape[i], dtype="int64").reshape(s) for i, s in enumerate(grids))
            return data[(*aranges, indices.reshape(ishape))]

        return api, body

    def _gatherelements(self, case: CaseData, variant: str) -> tuple[str, Body]:
        data, indices = case.inputs["data"], case.inputs["indices"]
        axis = int(case.attrs["axis"])
        ax = valid_axis(axis, data.ndim)  # mx.nd.pick takes the axis as given and judges it itself
        if variant == "np.indexing":
            ax = axis_index(axis, data.ndim)
            if indices.ndim != data.ndim:
                raise InvalidAttribute(f"indices rank {indices.ndim} differs from data rank {data.ndim}")
            return (f"data[{_coords_api(indices.shape, ax)}]", lambda mx, data, indices: data[_coords(mx, indices, ax)])
        mode = {"pick": "", "pick/wrap": ", mode='wrap'"}[variant]
        view, sl = "data", None
        if ax is not None and indices.ndim == data.ndim:
            if indices.shape[ax] != 1:
                raise Unsupported(
                    f"mx.nd.pick picks one element per position along the axis: it expresses "
                    f"GatherElements only when indices.shape[axis] == 1 (here {indices.shape[ax]})"
                )
            if any(i < n for d, (i, n) in enumerate(zip(indices.shape, data.shape, strict=True)) if d != ax):
                # GatherElements reads the leading part of data where indices are smaller; pick wants equal shapes.
                sl = tuple(slice(None) if d == ax else slice(0, i) for d, i in enumerate(indices.shape))
                view = "data[" + ", ".join(":" if d == ax else f":{i}" for d, i in enumerate(indices.shape)) + "]"
        kw = {"mode": "wrap"} if variant == "pick/wrap" else {}

        def body(mx: Any, data: Any, indices: Any) -> Any:
            return mx.nd.pick(data if sl is None else data[sl], indices, axis=axis, keepdims=True, **kw)

        return f"mx.nd.pick({view}, indices, axis={axis}, keepdims=True{mode})", body

    def _gathernd(self, case: CaseData, variant: str) -> tuple[str, Body]:
        b = int(case.attrs["batch_dims"])
        shape = case.inputs["indices"].shape
        if not 0 <= b < len(shape):
            raise InvalidAttribute(f"batch_dims={b} is out of range for GatherND with indices of rank {len(shape)}")
        if variant == "np.indexing":
            trailing = len(shape) - 1 - b
            grid_shapes = [(-1,) + (1,) * (b - 1 - i + trailing) for i in range(b)]
            tup = "tuple(mx.np.moveaxis(indices, -1, 0))"
            api = (
                f"data[{tup}]"
                if b == 0
                else (
                    "data[("
                    + ", ".join(
                        f"mx.np.arange(data.shape[{i}], dtype='int64').reshape({_shape_str(s)})"
                        for i, s in enumerate(grid_shapes)
                    )
                    + f",) + {tup}]"
                )
            )

            def index(mx: Any, data: Any, indices: Any) -> Any:
                grid = tuple(mx.np.arange(data.shape[i], dtype="int64").reshape(s) for i, s in enumerate(grid_shapes))
                return data[grid + tuple(mx.np.moveaxis(indices, -1, 0))]

            return api, index
        # mx.nd.gather_nd reads index tuples along the FIRST axis of its indices: ONNX's last axis moved to the front.
        if b == 0:
            return (
                "mx.nd.gather_nd(data, mx.nd.moveaxis(indices, -1, 0))",
                lambda mx, data, indices: mx.nd.gather_nd(data, mx.nd.moveaxis(indices, -1, 0)),
            )
        # Batch dims become explicit leading coordinates: row i holds the batch-i position of every index tuple.
        api = (
            f"mx.nd.gather_nd(data, mx.nd.concat(mx.nd.array(np.indices({_shape_str(shape[:-1])})[:{b}], "
            f"dtype=indices.dtype), mx.nd.moveaxis(indices, -1, 0), dim=0))"
        )

        def batched(mx: Any, data: Any, indices: Any) -> Any:
            grid = mx.nd.array(np.indices(shape[:-1])[:b], dtype=indices.dtype)
            return mx.nd.gather_nd(data, mx.nd.concat(grid, mx.nd.moveaxis(indices, -1, 0), dim=0))

        return api, batched

    def _scatternd(self, case: CaseData, variant: str) -> tuple[str, Body]:
        data, indices = case.inputs["data"], case.inputs["indices"]
        reduction = case.attrs["reduction"]
        if reduction != "none":
            raise Unsupported(
                f"reduction={reduction!r}: MXNet 1.9 has no scatter-{reduction} (scatter_nd, "
                "index_copy and item assignment only assign)"
            )
        if variant == "scatter_nd":
            if np.any(data):
                raise Unsupported("mx.nd.scatter_nd has no data input: it scatters into zeros (data is not all zeros)")
            shape = tuple(data.shape)
            return (
                f"mx.nd.scatter_nd(updates, mx.nd.moveaxis(indices, -1, 0), shape={shape})",
                lambda mx, data, indices, updates: mx.nd.scatter_nd(updates, mx.nd.moveaxis(indices, -1, 0), shape),
            )
        if variant == "index_copy":
            if indices.ndim == 0 or indices.shape[-1] != 1:
                raise Unsupported(
                    "mx.nd.contrib.index_copy copies whole rows of axis 0: it expresses ScatterND only "
                    f"for index tuples of length 1 (indices shape {indices.shape})"
                )
            rows = (-1, *data.shape[1:])
            return (
                f"mx.nd.contrib.index_copy(data, indices.reshape(-1), updates.reshape({_shape_str(rows)}))",
                lambda mx, data, indices, updates: mx.nd.contrib.index_copy(
                    data, indices.reshape(-1), updates.reshape(rows)
                ),
            )

        def assign(mx: Any, data: Any, indices: Any, updates: Any) -> Any:
            out = data.copy()
            out[tuple(mx.np.moveaxis(indices, -1, 0))] = updates
            return out

        return "out = data.copy(); out[tuple(mx.np.moveaxis(indices, -1, 0))] = updates", assign

    def _scatterelements(self, case: CaseData, variant: str) -> tuple[str, Body]:
        reduction, axis = case.attrs["reduction"], int(case.attrs["axis"])
        if reduction != "none":
            raise Unsupported(
                f"reduction={reduction!r}: MXNet 1.9 has no scatter-{reduction} (item assignment only "
                "assigns; mx.np has no ufunc.at or put_along_axis)"
            )
        shape = case.inputs["indices"].shape
        ax = axis_index(axis, len(shape))

        def assign(mx: Any, data: Any, indices: Any, updates: Any) -> Any:
            out = data.copy()
            out[_coords(mx, indices, ax)] = updates
            return out

        return f"out = data.copy(); out[{_coords_api(shape, ax)}] = updates", assign


def _runner(ns: str, makers: dict[str, Callable[[Any], Any]], body: Body) -> Callable[[], Any]:
    def run() -> Any:
        mx = _mx()
        if ns == "np" and not hasattr(mx.util, "np_array"):
            # The NumPy-compatible interface arrived in MXNet 1.6; the release sweeps run 1.5 too.
            raise Unsupported(f"mxnet {mx.__version__} has no NumPy-compatible interface (mx.np, since 1.6)")
        with contextlib.ExitStack() as scope:
            if ns == "np":  # what npx.set_np() switches on, for this call only: the mx.nd variants keep legacy shapes
                scope.enter_context(mx.util.np_shape(True))
                scope.enter_context(mx.util.np_array(True))
            args = {name: make(mx) for name, make in makers.items()}
            # .asnumpy() waits for the asynchronous engine, so that MXNet's error (if any) is raised here.
            return body(mx, **args).asnumpy()

    return run


ADAPTER = MxnetAdapter()
