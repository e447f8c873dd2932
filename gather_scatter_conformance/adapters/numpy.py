"""NumPy: np.take, np.take_along_axis, advanced indexing, np.put_along_axis and the ufunc.at scatters."""

from __future__ import annotations

from typing import Any

import numpy as np

from gather_scatter_conformance.adapters.attrs import axis_index, batch_dims_count, batched_index_shapes, required
from gather_scatter_conformance.adapters.base import Adapter, Call, CaseData, Unsupported, fmt_attrs

_AT = {"add": "np.add.at", "mul": "np.multiply.at", "max": "np.maximum.at", "min": "np.minimum.at"}
_UFUNC = {"add": np.add, "mul": np.multiply, "max": np.maximum, "min": np.minimum}
_VARIANTS = {
    "Gather": ["take"],
    "GatherElements": ["take_along_axis"],
    "GatherND": ["indexing"],
    "ScatterElements": ["put_along_axis"],
    "ScatterND": ["indexing"],
    "Take": ["take"],
}


def _batch_grid(shape: tuple[int, ...], batch_dims: int, trailing: int) -> tuple[np.ndarray, ...]:
    """Broadcastable aranges for the leading batch dims, shaped to line up with ``trailing`` more dims."""
    return tuple(np.arange(shape[i]).reshape((-1,) + (1,) * (batch_dims - 1 - i + trailing)) for i in range(batch_dims))


def _elements_index(indices: np.ndarray, axis: int) -> tuple[np.ndarray, ...]:
    """The full index tuple that GatherElements/ScatterElements address: indices on ``axis``, aranges elsewhere."""
    grids = list(np.indices(indices.shape, sparse=True))
    grids[axis] = indices
    return tuple(grids)


def _expr(api: str, run: Any) -> Call:
    """A Call whose ``api`` is itself a NumPy expression over data/indices/updates: its source assigns it."""
    return Call(api, run, source=f"result = np.asarray({api})")


def _statements(api: str, lines: list[str], run: Any) -> Call:
    """A Call spelled by several statements that leave the output in ``out``."""
    return Call(api, run, source="\n".join([*lines, "result = out"]))


class NumpyAdapter(Adapter):
    name = "numpy"
    requires = ("numpy",)
    # A forked child of a worker that ran cases runs cases (checked on the pinned release).
    fork_after_run = True
    VARIANTS = _VARIANTS
    mapping = "docs/mapping/numpy.md"

    def version(self) -> str:
        return np.__version__

    def prepare(self, case: CaseData, variant: str) -> Call:
        data, indices = case.inputs["data"], case.inputs["indices"]
        a = case.attrs
        # An omitted attribute is left out of the call (case.omit): NumPy's own default applies where there is one.
        # NumPy has no batch_dims anywhere; leaving it out is the plain, unbatched call.
        omit_axis = "axis" in case.omit
        batch_dims = 0 if "batch_dims" in case.omit else int(a.get("batch_dims", 0))
        if case.op == "Gather":
            return self._gather(data, indices, None if omit_axis else int(a["axis"]), batch_dims)
        if case.op == "Take":
            if a["mode"] == "fill":
                raise Unsupported("np.take has no 'fill' mode (modes: raise, wrap, clip)")
            if omit_axis:  # np.take's default axis=None: the flattened data
                mode = a["mode"]
                return _expr(f"np.take(data, indices, mode={mode!r})", lambda: np.take(data, indices, mode=mode))
            kw = fmt_attrs(axis=a["axis"], mode=a["mode"])
            return _expr(f"np.take(data, indices, {kw})",
                         lambda: np.take(data, indices, axis=a["axis"], mode=a["mode"]))
        if case.op == "GatherElements":
            if omit_axis:  # NumPy 2.x: take_along_axis(arr, indices, axis=-1)
                return _expr("np.take_along_axis(data, indices)", lambda: np.take_along_axis(data, indices))
            axis = int(a["axis"])
            return _expr(
                f"np.take_along_axis(data, indices, axis={axis})", lambda: np.take_along_axis(data, indices, axis=axis)
            )
        if case.op == "GatherND":
            return self._gather_nd(data, indices, batch_dims)
        updates = case.inputs["updates"]
        if case.op == "ScatterElements":
            if omit_axis:
                # put_along_axis(arr, indices, values, axis) has no default; ufunc.at needs the axis to build the index
                reduction = a["reduction"]
                api = "np.put_along_axis" if reduction == "none" else f"{_AT[reduction]} (index built per axis)"
                raise required(api)
            return self._scatter_elements(data, indices, updates, int(a["axis"]), a["reduction"])
        return self._scatter_nd(data, indices, updates, a["reduction"])

    def _gather(self, data: np.ndarray, indices: np.ndarray, axis: int | None, batch_dims: int) -> Call:
        if axis is None:
            if batch_dims:
                # np.take has no batch_dims; the advanced-indexing translation places the indices at a stated axis.
                raise required("advanced indexing with batch_dims (np.take has none)")
            return _expr("np.take(data, indices)", lambda: np.take(data, indices))  # axis=None: flattened data
        if batch_dims == 0:
            return _expr(f"np.take(data, indices, axis={axis})", lambda: np.take(data, indices, axis=axis))
        # NumPy has no batch_dims; users write it as advanced indexing: aranges for the dims before `axis`,
        # the indices placed over the batch dims and at `axis`.
        ax = axis_index(axis, data.ndim)
        b = batch_dims_count(batch_dims, indices.ndim, ax)
        *grids, ishape = batched_index_shapes(data.shape, indices.shape, ax, b)

        def run() -> Any:
            idx = tuple(np.arange(data.shape[i]).reshape(s) for i, s in enumerate(grids))
            return data[(*idx, indices.reshape(ishape))]

        aranges = [f"np.arange({data.shape[i]}).reshape({tuple(s)})" for i, s in enumerate(grids)]
        api = f"data[{', '.join([*aranges, f'indices.reshape({tuple(ishape)})'])}]"
        return _expr(api, run)

    def _gather_nd(self, data: np.ndarray, indices: np.ndarray, batch_dims: int) -> Call:
        def run() -> Any:
            tup = tuple(np.moveaxis(indices, -1, 0))
            grid = _batch_grid(data.shape, batch_dims, indices.ndim - 1 - batch_dims)
            return data[grid + tup]

        grid = _batch_grid(data.shape, batch_dims, indices.ndim - 1 - batch_dims)
        aranges = "".join(f"np.arange({data.shape[i]}).reshape({g.shape}), " for i, g in enumerate(grid))
        return _expr(f"data[({aranges}) + tuple(np.moveaxis(indices, -1, 0))]" if batch_dims
                     else "data[tuple(np.moveaxis(indices, -1, 0))]", run)

    def _scatter_elements(self, data, indices, updates, axis: int, reduction: str) -> Call:
        if reduction == "none":

            def put() -> Any:
                out = data.copy()
                np.put_along_axis(out, indices, updates, axis=axis)
                return out

            lines = ["out = data.copy()", f"np.put_along_axis(out, indices, updates, axis={axis})"]
            return _statements("; ".join(lines), lines, put)

        def at() -> Any:
            out = data.copy()
            _UFUNC[reduction].at(out, _elements_index(indices, axis_index(axis, data.ndim)), updates)
            return out

        lines = ["index = list(np.indices(indices.shape, sparse=True))", f"index[{axis}] = indices",
                 "out = data.copy()", f"{_AT[reduction]}(out, tuple(index), updates)"]
        return _statements("; ".join(lines), lines, at)

    def _scatter_nd(self, data, indices, updates, reduction: str) -> Call:
        def run() -> Any:
            out = data.copy()
            tup = tuple(np.moveaxis(indices, -1, 0))
            if reduction == "none":
                out[tup] = updates
            else:
                _UFUNC[reduction].at(out, tup, updates)
            return out

        if reduction == "none":
            lines = ["out = data.copy()", "out[tuple(np.moveaxis(indices, -1, 0))] = updates"]
        else:
            lines = ["out = data.copy()", f"{_AT[reduction]}(out, tuple(np.moveaxis(indices, -1, 0)), updates)"]
        return _statements("; ".join(lines), lines, run)


ADAPTER = NumpyAdapter()
