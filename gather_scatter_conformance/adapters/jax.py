"""JAX: jnp.take, jnp.take_along_axis, NumPy-style indexing and the ``.at[...]`` scatters, eager or under jax.jit.

Every call is one pure function of the input arrays with the attributes bound statically. A variant is named by
the API it calls (``take``, ``take_along_axis``, ``indexing``, ``at``) and runs it op by op; ``<api>/jit`` runs
``jax.jit`` of the same function (compiled once per (api, attributes), then per input shape/dtype by JAX itself).
Gather has a third variant, ``indexing``: ``data[:, indices]``, which the JAX documentation gives as the indexing
equivalent of ``jnp.take`` but whose out-of-bounds default differs.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from functools import partial
from typing import Any

from gather_scatter_conformance.adapters.attrs import (
    InvalidAttribute,
    axis_index,
    batch_dims_count,
    batched_index_shapes,
    required,
)
from gather_scatter_conformance.adapters.base import (
    Adapter,
    Call,
    CaseData,
    NoDevice,
    ReleaseRules,
    Unsupported,
    fmt_attrs,
)
from gather_scatter_conformance.adapters.emulation import tensor_scatter_axis
from gather_scatter_conformance.vocab import variants

# TensorScatter's emulations (JAX has none): lax.dynamic_update_slice vmapped over the batch, the KV-cache write
# JAX models use, and .at[].set at the positions write index + arange computes.
DUS, AT = "emulated.dynamic_update_slice", "emulated.at"
# Variants per operator, named by the jnp API the call uses (``at``: ``data.at[...].set/add/...``); each runs
# eagerly and, as ``<api>/jit``, under jax.jit. The default first.
_APIS = {
    "Gather": ("take",),
    "GatherElements": ("take_along_axis",),
    "GatherND": ("indexing",),
    "ScatterElements": ("at",),
    "ScatterND": ("at",),
    "Take": ("take",),
    "TensorScatter": (DUS, AT),
}
JIT = "jit"
_VARIANTS = {op: [v for api in apis for v in (api, variants.join(api, JIT))] for op, apis in _APIS.items()}
_VARIANTS["Gather"].append("indexing")  # data[:, indices], eager only
# Index provenance (issue #40): the default API under jax.jit again, the indices a constant the traced function
# closes over (folded into the compiled program) instead of an argument. A compile per index value: focus cases only.
for _op, _names in _VARIANTS.items():
    _names.append(variants.constant_twin(variants.join(_APIS[_op][0], JIT)))  # take/jit_constant
# ONNX reduction -> the jax.numpy.ndarray.at method a user calls.
AT_METHODS = {"none": "set", "add": "add", "mul": "multiply", "max": "max", "min": "min"}

_JITTED: dict[tuple[Any, ...], Callable[..., Any]] = {}  # (api key, attributes) -> jax.jit-compiled callable


def _closing_over(jax: Any, fn: Callable[..., Any], indices: Any, at: int) -> Callable[..., Any]:
    """A function of all the case's arrays (as the runner passes them) that ignores its ``at``-th, the indices, and
    calls ``jax.jit`` of ``fn`` with ``indices`` closed over: a NumPy array captured by the trace is a constant of the
    compiled program."""
    jitted = jax.jit(lambda *rest: fn(*rest[:at], indices, *rest[at:]))
    return lambda *args: jitted(*args[:at], *args[at + 1:])
_READY = False


# JAX's persistent compilation cache, shared by this process's compiles and by the forked children of risky cases:
# a child otherwise compiles anew what every child compiles (importing jax2onnx's plugins compiles 74 XLA programs:
# 13.4 s in a child, 4.6 s with this cache warm). A directory, or "off".
JAX_CACHE_ENV = "GSC_JAX_CACHE"


def _jax() -> tuple[Any, Any]:
    """Import jax and jax.numpy, enabling 64-bit types first (else int64/float64 inputs silently become 32-bit) and
    the persistent compilation cache (``$GSC_JAX_CACHE``, else ``~/.cache/gather-scatter-conformance/jax``: a cached
    executable is the program XLA compiled for the same computation, flags and device)."""
    global _READY
    # Every worker and forked child is a JAX client of one GPU, and each would otherwise take 75 % of its memory
    # when its backend starts: the second fails to allocate. A user's own setting wins.
    os.environ.setdefault("XLA_PYTHON_CLIENT_PREALLOCATE", "false")
    import jax
    import jax.numpy as jnp

    if not _READY:
        from gather_scatter_conformance.resources import cache_dir

        jax.config.update("jax_enable_x64", True)
        where = cache_dir(JAX_CACHE_ENV, "jax")
        if where is not None:
            jax.config.update("jax_compilation_cache_dir", str(where))
            jax.config.update("jax_persistent_cache_min_compile_time_secs", 0.0)  # the suite's compiles are short
            jax.config.update("jax_persistent_cache_min_entry_size_bytes", 0)
        _READY = True
    return jax, jnp


def _target(jax: Any, device: str) -> Any:
    """The jax.Device a run on ``device`` ("cpu" | "gpu") uses; NoDevice when this jaxlib has no such backend."""
    try:
        return jax.devices(device)[0]
    except RuntimeError as exc:  # "Unknown backend gpu" / "Backend 'gpu' failed to initialize"
        raise NoDevice(f"jax {jax.__version__} has no {device} backend: {str(exc).splitlines()[0]}") from exc


# --- the native computations (pure functions of arrays; keyword arguments are the static attributes) -----------


_OMITTED: Any = object()  # an attribute the case leaves to JAX's default (case.omit): not passed at all


def _take(data: Any, indices: Any, *, axis: int | None, mode: str | None) -> Any:
    _, jnp = _jax()
    kw: dict[str, Any] = {} if axis is _OMITTED else {"axis": axis}  # omitted: jnp.take's axis=None, flattened
    if mode is None:  # Gather: what the user gets without naming a mode (jnp.take's default, 'fill')
        return jnp.take(data, indices, **kw)
    return jnp.take(data, indices, **kw, mode=mode)


def _take_batched(data: Any, indices: Any, *, axis: int, batch_dims: int) -> Any:
    # Gather with batch_dims, the JAX way: jnp.take on one batch element, vmapped once per batch dim.
    jax, jnp = _jax()
    fn = jnp.take if axis is _OMITTED else partial(jnp.take, axis=axis)
    for _ in range(batch_dims):
        fn = jax.vmap(fn)
    return fn(data, indices)


def _getitem(data: Any, indices: Any, *, axis: int, batch_dims: int) -> Any:
    _, jnp = _jax()
    if batch_dims == 0:
        return data[(slice(None),) * axis + (indices,)]
    *grids, ishape = batched_index_shapes(data.shape, indices.shape, axis, batch_dims)
    aranges = tuple(jnp.arange(data.shape[i]).reshape(s) for i, s in enumerate(grids))
    return data[(*aranges, indices.reshape(ishape))]


def _take_along_axis(data: Any, indices: Any, *, axis: int) -> Any:
    _, jnp = _jax()
    if axis is _OMITTED:
        return jnp.take_along_axis(data, indices)  # jnp.take_along_axis's default axis=-1
    return jnp.take_along_axis(data, indices, axis=axis)


def _arange_shape(i: int, batch_dims: int, trailing: int) -> tuple[int, ...]:
    """Shape of batch dim ``i``'s arange, so that it broadcasts against ``trailing`` more index dims."""
    return (-1,) + (1,) * (batch_dims - 1 - i + trailing)


def _batch_aranges(jnp: Any, shape: tuple[int, ...], batch_dims: int, trailing: int) -> tuple[Any, ...]:
    return tuple(jnp.arange(shape[i]).reshape(_arange_shape(i, batch_dims, trailing)) for i in range(batch_dims))


def _gather_nd(data: Any, indices: Any, *, batch_dims: int) -> Any:
    _, jnp = _jax()
    grid = _batch_aranges(jnp, data.shape, batch_dims, indices.ndim - 1 - batch_dims)
    return data[grid + tuple(jnp.moveaxis(indices, -1, 0))]


def _scatter_elements(data: Any, indices: Any, updates: Any, *, axis: int, method: str) -> Any:
    _, jnp = _jax()
    # Every coordinate spelled out: indices on `axis`, sparse aranges (jnp.indices) on the other dims.
    coords = tuple(indices if d == axis else g for d, g in enumerate(jnp.indices(indices.shape, sparse=True)))
    return getattr(data.at[coords], method)(updates)


def _scatter_nd(data: Any, indices: Any, updates: Any, *, method: str) -> Any:
    _, jnp = _jax()
    return getattr(data.at[tuple(jnp.moveaxis(indices, -1, 0))], method)(updates)


# --- the api strings (what a user pastes, with `data`, `indices`, `updates` as jax arrays) ----------------------


def _dynamic_update_slice(data: Any, updates: Any, indices: Any = None, *, axis: int) -> Any:
    jax, jnp = _jax()
    start = jnp.zeros(data.shape[0], jnp.int64) if indices is None else indices
    return jax.vmap(lambda c, u, w: jax.lax.dynamic_update_slice_in_dim(c, u, w, axis=axis - 1))(data, updates, start)


def _at_positions(data: Any, updates: Any, indices: Any = None, *, axis: int, circular: bool) -> Any:
    _, jnp = _jax()
    pos = jnp.arange(updates.shape[axis])[None, :]
    if indices is not None:
        pos = indices[:, None] + pos
    if circular:
        pos = pos % data.shape[axis]  # jnp's % is the floor modulo, as Python's
    rows = jnp.moveaxis(data, axis, 1).at[jnp.arange(data.shape[0])[:, None], pos].set(jnp.moveaxis(updates, axis, 1))
    return jnp.moveaxis(rows, 1, axis)


def _tensor_scatter(case: CaseData, variant: str) -> tuple[tuple[Any, ...], Callable[..., Any], str]:
    """TensorScatter through one of the two emulations (its api string names the positions as computed)."""
    axis = tensor_scatter_axis({n: a.shape for n, a in case.inputs.items()}, int(case.attrs["axis"]))
    circular = case.attrs["mode"] == "circular"
    start = "indices" if "indices" in case.inputs else "jnp.zeros(data.shape[0], jnp.int64)"
    if variants.split(variant)[0] == DUS:
        if circular:
            raise Unsupported("lax.dynamic_update_slice writes one contiguous block (its start clamped so that the "
                              "block fits): no circular wrap-around")
        api = (f"jax.vmap(lambda c, u, w: jax.lax.dynamic_update_slice_in_dim(c, u, w, axis={axis - 1}))"
               f"(data, updates, {start})")
        return ("dus", axis), partial(_dynamic_update_slice, axis=axis), api
    pos = f"{'indices[:, None] + ' if 'indices' in case.inputs else ''}jnp.arange(updates.shape[{axis}])[None, :]"
    if circular:
        pos = f"({pos}) % data.shape[{axis}]"
    api = (f"jnp.moveaxis(jnp.moveaxis(data, {axis}, 1).at[jnp.arange(data.shape[0])[:, None], {pos}]"
           f".set(jnp.moveaxis(updates, {axis}, 1)), 1, {axis})")
    return ("at_positions", axis, circular), partial(_at_positions, axis=axis, circular=circular), api


def _shape_str(shape: tuple[int, ...]) -> str:
    return "(" + ", ".join(map(str, shape)) + ("," if len(shape) == 1 else "") + ")"


def _getitem_api(data_shape: tuple[int, ...], idx_shape: tuple[int, ...], axis: int, b: int) -> str:
    if b == 0:
        return "data[" + ":, " * axis + "indices]"
    *grids, ishape = batched_index_shapes(data_shape, idx_shape, axis, b)
    parts = [f"jnp.arange(data.shape[{i}]).reshape{_shape_str(s)}" for i, s in enumerate(grids)]
    return "data[" + ", ".join([*parts, f"indices.reshape{_shape_str(ishape)}"]) + "]"


def _gather_nd_api(batch_dims: int, idx_ndim: int) -> str:
    tup = "tuple(jnp.moveaxis(indices, -1, 0))"
    if batch_dims == 0:
        return f"data[{tup}]"
    trailing = idx_ndim - 1 - batch_dims
    aranges = [f"jnp.arange(data.shape[{i}]).reshape{_shape_str(_arange_shape(i, batch_dims, trailing))}"
               for i in range(batch_dims)]
    return f"data[({', '.join(aranges)},) + {tup}]"


def _scatter_elements_api(axis: int, method: str) -> str:
    coords = f"tuple(indices if d == {axis} else g for d, g in enumerate(jnp.indices(indices.shape, sparse=True)))"
    return f"data.at[{coords}].{method}(updates)"


class JaxAdapter(Adapter):
    name = "jax"
    requires = ("jax",)
    extra = "jax"
    # jax's [cpu] extra brings the jaxlib of the same release; NumPy 2 from 0.4.27.
    releases = ReleaseRules("jax", "jax", numpy2_since="0.4.27", requirement="jax[cpu]=={release}",
                            reported=("jaxlib",))
    devices = ("cpu", "gpu")
    VARIANTS = _VARIANTS
    mapping = "docs/mapping/jax.md"

    def version(self) -> str:
        jax, _ = _jax()
        return jax.__version__

    def prepare(self, case: CaseData, variant: str) -> Call:
        self.check_variant(case.op, variant)
        for name, arr in case.inputs.items():
            if arr.dtype == object or arr.dtype.kind in "US":
                raise Unsupported(f"JAX has no string arrays ({name} is a string tensor)")
        jax, _ = _jax()
        key, fn, api = self._translate(case, variant)
        names = list(case.inputs)
        if variants.mode(variant) == JIT:
            api = f"jax.jit(lambda {', '.join(names)}: {api})({', '.join(names)})"
            if key not in _JITTED:
                _JITTED[key] = jax.jit(fn)
            fn = _JITTED[key]
        elif variants.constant_parent(variant) and "indices" in names:
            at = names.index("indices")
            fed = [n for n in names if n != "indices"]
            api = f"jax.jit(lambda {', '.join(fed)}: {api})({', '.join(fed)})"  # the repro's indices: a jax Array,
            fn = _closing_over(jax, fn, case.inputs["indices"], at)  # a constant when closed over as NumPy's is
        target = _target(jax, case.device)
        call = self._runner(case, fn, target)
        note = "" if case.device == "cpu" else f"  # under jax.default_device({target})"
        lines = ["import jax", "import jax.numpy as jnp", "jax.config.update('jax_enable_x64', True)",
                 f"target = jax.devices({'cpu' if case.device == 'cpu' else 'gpu'!r})[0]",
                 "with jax.default_device(target):",
                 *(f"    {n} = jnp.asarray({n})" for n in names), f"    result = np.asarray({api})"]
        return Call(api + note, call, device=case.device, device_name=str(getattr(target, "device_kind", target)),
                    source="\n".join(lines))

    def is_slow(self, variant: str) -> bool:
        return variants.constant_parent(variant) is not None  # a compile per index value

    @staticmethod
    def _runner(case: CaseData, fn: Callable[..., Any], target: Any) -> Callable[[], Any]:
        def run() -> Any:
            jax, jnp = _jax()
            # Pinned: JAX would otherwise put a CPU run on a visible GPU. The inputs become jax arrays as a user
            # would make them; .at[] needs one.
            with jax.default_device(target):
                args = [jnp.asarray(case.inputs[n]) for n in case.inputs]
                try:
                    return fn(*args)
                except NotImplementedError as exc:
                    # jnp.take rejects mode='raise' whatever the input ("we have no way to report out of bounds
                    # errors yet"): the API cannot express that mode. Anything else JAX raises is a result.
                    if case.op == "Take" and case.attrs["mode"] == "raise":
                        raise Unsupported(f"jnp.take has no working mode='raise': NotImplementedError: {exc}") from exc
                    raise

        return run

    def _translate(self, case: CaseData, variant: str) -> tuple[tuple[Any, ...], Callable[..., Any], str]:
        """(cache key, pure function of the input arrays, api string of the eager call) for a case."""
        a, op = case.attrs, case.op
        if op == "TensorScatter":
            return _tensor_scatter(case, variant)
        # Attributes in case.omit are left out of the call so JAX's own default applies (the default-axis probe);
        # batch_dims is no JAX argument, so leaving it out is the unbatched spelling.
        omit_axis = "axis" in case.omit
        if op == "Take":
            if omit_axis:
                api = f"jnp.take(data, indices, mode={a['mode']!r})"
                return ("take", _OMITTED, a["mode"]), partial(_take, axis=_OMITTED, mode=a["mode"]), api
            kw = {"axis": a["axis"], "mode": a["mode"]}
            return ("take", *kw.values()), partial(_take, **kw), f"jnp.take(data, indices, {fmt_attrs(**kw)})"
        if op == "Gather":
            return self._gather(case, variant)
        if op == "GatherElements":
            if omit_axis:
                fn = partial(_take_along_axis, axis=_OMITTED)
                return ("take_along_axis", _OMITTED), fn, "jnp.take_along_axis(data, indices)"
            axis = int(a["axis"])
            api = f"jnp.take_along_axis(data, indices, axis={axis})"
            return ("take_along_axis", axis), partial(_take_along_axis, axis=axis), api
        if op == "GatherND":
            b = 0 if "batch_dims" in case.omit else int(a["batch_dims"])
            if not 0 <= b < case.inputs["indices"].ndim:
                raise InvalidAttribute(f"batch_dims={b} is out of range for GatherND with indices of rank "
                                       f"{case.inputs['indices'].ndim}")
            api = _gather_nd_api(b, case.inputs["indices"].ndim)
            return ("gather_nd", b), partial(_gather_nd, batch_dims=b), api
        method = AT_METHODS[a["reduction"]]
        if op == "ScatterElements":
            if omit_axis:  # the coordinates put indices on a stated axis: there is no default to fall back on
                raise required(f"data.at[<coordinates>].{method}(updates)")
            axis = int(a["axis"])
            # jnp.indices numbers dims from 0, so a negative axis is normalised here (attribute translation).
            ax = axis_index(axis, case.inputs["indices"].ndim)
            fn = partial(_scatter_elements, axis=ax, method=method)
            return ("scatter_elements", ax, method), fn, _scatter_elements_api(ax, method)
        api = f"data.at[tuple(jnp.moveaxis(indices, -1, 0))].{method}(updates)"
        return ("scatter_nd", method), partial(_scatter_nd, method=method), api

    @staticmethod
    def _gather(case: CaseData, variant: str) -> tuple[tuple[Any, ...], Callable[..., Any], str]:
        data, indices = case.inputs["data"], case.inputs["indices"]
        batch_dims = 0 if "batch_dims" in case.omit else int(case.attrs["batch_dims"])
        b = batch_dims_count(batch_dims, indices.ndim)  # OpenVINO/TF rule for negative batch_dims
        if "axis" in case.omit:
            return JaxAdapter._gather_default_axis(variant, b, batch_dims)
        axis = int(case.attrs["axis"])
        if b == 0 and variant != "indexing":
            return ("take", axis, None), partial(_take, axis=axis, mode=None), f"jnp.take(data, indices, axis={axis})"
        # The batched forms place dims by position, so they need a valid, non-negative axis and batch_dims <= axis.
        ax = axis_index(axis, data.ndim)
        b = batch_dims_count(batch_dims, indices.ndim, ax)
        if variant == "indexing":
            api = _getitem_api(data.shape, indices.shape, ax, b)
            return ("getitem", ax, b), partial(_getitem, axis=ax, batch_dims=b), api
        inner = ax - b
        fn = f"lambda d, i: jnp.take(d, i, axis={inner})"
        api = "jax.vmap(" * b + fn + ")" * b + "(data, indices)"
        return ("take_vmap", inner, b), partial(_take_batched, axis=inner, batch_dims=b), api

    @staticmethod
    def _gather_default_axis(variant: str, b: int, batch_dims: int) -> tuple[tuple[Any, ...], Callable[..., Any], str]:
        """Gather with the axis left out: jnp.take's default (axis=None, flattened), vmapped per batch dim;
        ``data[indices]`` (the first axis) for indexing, which cannot spell batch dims without a stated axis."""
        if variant == "indexing":
            if b:
                raise required(f"data[...] with batch_dims={batch_dims} (indices at a stated axis)")
            return ("getitem", _OMITTED, 0), partial(_getitem, axis=0, batch_dims=0), "data[indices]"
        if b == 0:
            return ("take", _OMITTED, None), partial(_take, axis=_OMITTED, mode=None), "jnp.take(data, indices)"
        api = "jax.vmap(" * b + "jnp.take" + ")" * b + "(data, indices)"
        return ("take_vmap", _OMITTED, b), partial(_take_batched, axis=_OMITTED, batch_dims=b), api


ADAPTER = JaxAdapter()
