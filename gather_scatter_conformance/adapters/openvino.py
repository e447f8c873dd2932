"""OpenVINO: one native opset node (or a one-node ONNX model through OpenVINO's ONNX frontend), compiled for CPU.

Each case becomes an ``ov.Model`` of Parameters (the case's shapes and element types) feeding one node built with
OpenVINO's Python opset API (``ov.opset8.gather`` and friends), compiled with ``ov.Core().compile_model(model,
"CPU")`` and run through an infer request. Compiling costs tens to hundreds of milliseconds, so compiled models are
cached by (node, attributes, input shapes and element types); inference is what a run times.

The ``read_model`` variant builds the one-node ONNX model of :mod:`adapters.onnx_graph` and loads it from memory
with ``core.read_model(model_bytes)``, the other way users meet OpenVINO.
"""

from __future__ import annotations

import importlib
import inspect
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np

from gather_scatter_conformance.adapters import onnx_graph
from gather_scatter_conformance.adapters.attrs import required
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
from gather_scatter_conformance.vocab import variants
from gather_scatter_conformance.vocab.dimensions import DUPLICATE_TARGET_OPS

ONNX = "read_model"  # the one-node ONNX model through the ONNX frontend: core.read_model(model_bytes)
# Variants per operator, the default (newest opset node) first.
_VARIANTS: dict[str, list[str]] = {
    "Gather": ["Gather-8", "Gather-7", "Gather-1", ONNX],
    "GatherElements": ["GatherElements-6", ONNX],
    "GatherND": ["GatherND-8", "GatherND-5", ONNX],
    "ScatterElements": ["ScatterElementsUpdate-12", "ScatterElementsUpdate-3", ONNX],
    "ScatterND": ["ScatterNDUpdate-15", "ScatterNDUpdate-3", "ScatterUpdate-3", ONNX],
    "Take": ["Gather-8", ONNX],
    "TensorScatter": [ONNX],  # no opset node does its per-batch write (slice_scatter-15 takes one start for all)
}
# Index provenance (issue #40): the default node and the ONNX frontend again, with the indices an ``ov.opset8.constant``
# (an ONNX initializer through read_model) instead of a Parameter: what a deployed model's Gather usually has, and
# what OpenVINO's compile-time passes see (openvino#35687's fix, PR #35756, covers constant indices only).
# Dynamic shapes (issue #40): the same two again with every input dimension dynamic (a Parameter of shape [-1, ...],
# dim_params through read_model), which the CPU plugin runs with its shape-agnostic kernels.
for _names in _VARIANTS.values():
    _names += [variants.twin(v, kind) for kind in variants.TWIN_MODES for v in dict.fromkeys([_names[0], ONNX])]
# Threads (issue #40): the scatters' default node again, compiled with one inference thread
# ({"INFERENCE_NUM_THREADS": 1}) where the CPU plugin's default is a thread a core.
for _op in DUPLICATE_TARGET_OPS:
    if _VARIANTS[_op][0] != ONNX:
        _VARIANTS[_op].append(variants.twin(_VARIANTS[_op][0], variants.ONE_THREAD_MODE))
ONE_THREAD = {"INFERENCE_NUM_THREADS": 1}  # the compile config of a one_thread twin
# What the ONNX frontend says of an operator it has no converter for (2026.4.1: "No conversion rule found for
# operations: TensorScatter-24"; 2023.0.2: "OpenVINO does not support the following ONNX operations:
# TensorScatter"): that case is unsupported through it (onnx_graph.importing).
NO_CONVERTER = (r"(?:No conversion rule found for operations:[^\n]*\b{op}-\d+"
                r"|does not support the following ONNX operations:[^\n]*\b{op}\b)")
# Which Python opset module builds which node version (checked against node.get_type_info() on 2026.4.1):
# ScatterNDUpdate-3 is registered in opset4 and is what ov.opset4.scatter_nd_update makes (ov.opset3 has none;
# 2023.0-2023.2 have no Python function for it at all, and node_function falls back on the node factory).
_NODES: dict[str, tuple[int, str]] = {
    "Gather-8": (8, "gather"),
    "Gather-7": (7, "gather"),
    "Gather-1": (1, "gather"),
    "GatherElements-6": (6, "gather_elements"),
    "GatherND-8": (8, "gather_nd"),
    "GatherND-5": (5, "gather_nd"),
    "ScatterElementsUpdate-12": (12, "scatter_elements_update"),
    "ScatterElementsUpdate-3": (3, "scatter_elements_update"),
    "ScatterNDUpdate-15": (15, "scatter_nd_update"),
    "ScatterNDUpdate-3": (4, "scatter_nd_update"),
    "ScatterUpdate-3": (3, "scatter_update"),
}
# Canonical reduction names -> OpenVINO's (ScatterElementsUpdate-12 and ScatterNDUpdate-15 spell them alike).
REDUCTIONS = {"none": "none", "add": "sum", "mul": "prod", "max": "max", "min": "min"}
CACHE_SIZE = 256  # compiled models kept; generated cases would otherwise grow the cache without bound


@dataclass
class NodeSpec:
    """One native node call: ``ov.opset<opset>.<fn>(*inputs, **kwargs)`` on Parameters named after ``inputs``.

    ``flatten`` reshapes ``data`` to 1-D first (Take with no axis); ``arg_text`` overrides how an input is written
    in the api string (ScatterUpdate's ``indices[..., 0]``).
    """

    variant: str
    opset: int
    fn: str
    inputs: dict[str, np.ndarray]
    kwargs: dict[str, Any]
    flatten: bool = False
    arg_text: dict[str, str] = field(default_factory=dict)
    constants: tuple[str, ...] = ()  # inputs made ``ov.opset8.constant`` nodes of their values, not Parameters
    dynamic: bool = False  # every Parameter's dimensions dynamic (-1), not the case's sizes
    op: str = ""  # the case's operator (which dimensions a dynamic twin keeps: onnx_graph.static_dims)

    def shape(self, name: str) -> list[int]:
        """The Parameter shape of input ``name``: the case's, or -1 for each dimension a dynamic twin leaves open
        (onnx_graph.static_dims: GatherND's index depth stays)."""
        shape = self.inputs[name].shape
        if not self.dynamic:
            return list(shape)
        kept = onnx_graph.static_dims(self.op, name, len(shape))
        return [size if i in kept else -1 for i, size in enumerate(shape)]

    @property
    def fed(self) -> dict[str, np.ndarray]:
        """The inputs fed at inference: those not made constants."""
        return {n: a for n, a in self.inputs.items() if n not in self.constants}

    def api(self) -> str:
        """The call as a user writes it, with the compile step it runs under."""
        args = [f"ov.opset8.constant({n})" if n in self.constants else self.arg_text.get(n, n) for n in self.inputs]
        if self.flatten:
            args[0] = f"ov.opset{self.opset}.reshape({args[0]}, [-1], special_zero=False)"
        params = ", ".join(self.fed)
        if self.kwargs:
            args.append(fmt_attrs(**self.kwargs))
        call = f"ov.opset{self.opset}.{self.fn}({', '.join(args)})"
        shapes = "; Parameters of dynamic shape [-1, ...]" if self.dynamic else ""
        return f"{call}  # {self.variant}; ov.Core().compile_model(ov.Model([node], [{params}]), 'CPU'" \
               f"{self.config_text()}){shapes}"

    def config(self) -> dict[str, Any]:
        """The compile config: one inference thread for a one_thread twin, else the plugin's defaults."""
        found = variants.threads_of(self.variant)
        return dict(ONE_THREAD) if found and found[1] == variants.ONE_THREAD_MODE else {}

    def config_text(self) -> str:
        """``, {config}`` as compile_model's third argument, or nothing."""
        return f", {self.config()!r}" if self.config() else ""

    def key(self) -> tuple[Any, ...]:
        """Cache key: node version, attributes, and every Parameter's name, shape and element type."""
        shapes = tuple((n, a.shape, a.dtype.name) for n, a in self.inputs.items())
        values = tuple((n, self.inputs[n].tobytes()) for n in self.constants)  # a constant is part of the model
        return (self.variant, self.opset, self.fn, tuple(sorted(self.kwargs.items())), self.flatten, shapes, values,
                self.dynamic)


def ov_module() -> Any:
    """The module that holds OpenVINO's API (Core, Model, Tensor, Type, __version__): ``openvino`` from 2023.1 on;
    in 2023.0 the top-level package is empty and all of it lives in ``openvino.runtime`` (removed in 2026)."""
    import openvino

    if hasattr(openvino, "Core"):
        return openvino
    import openvino.runtime

    return openvino.runtime


def _string_type() -> Any:
    """ov.Type.string, or None in releases before it (2023.x: the release sweeps run them)."""
    ov = ov_module()

    return getattr(ov.Type, "string", None)


def element_type(arr: np.ndarray) -> Any:
    """The ov.Type of a case array: strings (object arrays) -> string, ml_dtypes.bfloat16 -> bf16."""
    ov = ov_module()

    if arr.dtype == object or arr.dtype.kind in "US":
        if _string_type() is None:
            raise Unsupported(f"openvino {ov.__version__} has no string element type")
        return _string_type()
    if arr.dtype.name == "bfloat16":
        return ov.Type.bf16
    if arr.dtype.kind == "c":
        raise Unsupported(f"OpenVINO has no complex element type (got {arr.dtype.name})")
    return ov.Type(arr.dtype)


def to_tensor(arr: np.ndarray) -> Any:
    """An ov.Tensor holding a copy of ``arr`` with its element type (bf16 and string included)."""
    ov = ov_module()

    if arr.dtype == object or arr.dtype.kind == "S":
        return ov.Tensor(arr.astype(str))  # ov.Tensor makes a string tensor from a NumPy str_ array
    if arr.dtype.name == "bfloat16":
        # NumPy has no native bfloat16, so ov.Tensor cannot take the array itself: copy its bits into a bf16 tensor.
        t = ov.Tensor(ov.Type.bf16, ov.Shape(list(arr.shape)))
        t.data.view(np.uint16)[...] = arr.view(np.uint16)
        return t
    # np.array(order="C"), not np.ascontiguousarray: the latter turns a 0-d array into shape (1,).
    return ov.Tensor(np.array(arr, order="C"))


def from_tensor(t: Any) -> np.ndarray:
    """Copy an output ov.Tensor into NumPy with the same element type (bf16 -> ml_dtypes.bfloat16, string -> object)."""
    ov = ov_module()

    et = t.get_element_type()
    shape = tuple(t.get_shape())
    if _string_type() is not None and et == _string_type():
        out = np.empty(shape, dtype=object)
        out[...] = np.asarray(t.str_data).reshape(shape)
        return out
    if et == ov.Type.bf16:
        import ml_dtypes

        # OpenVINO exposes bf16 data as a float16-typed view of the raw bits; reinterpret them.
        return np.asarray(t.data).view(np.uint16).copy().view(ml_dtypes.bfloat16).reshape(shape)
    return np.array(t.data, copy=True).reshape(shape)


def _take(case: CaseData, spec: NodeSpec) -> NodeSpec:
    a = case.attrs
    if a["mode"] != "raise":
        raise Unsupported(f"OpenVINO Gather has no mode {a['mode']!r} (out-of-range indices give zeros)")
    _need_axis(case, spec)
    axis = 0 if a["axis"] is None else int(a["axis"])
    return replace(spec, kwargs={"axis": axis, "batch_dims": 0}, flatten=a["axis"] is None)


def _gather(case: CaseData, spec: NodeSpec) -> NodeSpec:
    _need_axis(case, spec)
    kwargs: dict[str, Any] = {"axis": int(case.attrs["axis"])}
    if "batch_dims" not in case.omit:
        if spec.variant == "Gather-1":
            if case.attrs["batch_dims"]:
                raise Unsupported("Gather-1 has no batch_dims (added in Gather-7)")
        else:
            kwargs["batch_dims"] = int(case.attrs["batch_dims"])
    return replace(spec, kwargs=kwargs)


def _gather_elements(case: CaseData, spec: NodeSpec) -> NodeSpec:
    return replace(spec, kwargs={} if "axis" in case.omit else {"axis": int(case.attrs["axis"])})


def _gather_nd(case: CaseData, spec: NodeSpec) -> NodeSpec:
    return replace(spec, kwargs={} if "batch_dims" in case.omit else {"batch_dims": int(case.attrs["batch_dims"])})


def _scatter_elements(case: CaseData, spec: NodeSpec) -> NodeSpec:
    _need_axis(case, spec)
    kwargs: dict[str, Any] = {"axis": int(case.attrs["axis"])}
    reduction = case.attrs.get("reduction", "none")
    if spec.variant == "ScatterElementsUpdate-3":
        if reduction != "none":
            raise Unsupported(f"ScatterElementsUpdate-3 has no reduction ({reduction!r} came in -12)")
    else:
        kwargs.update(reduction=REDUCTIONS[reduction], use_init_val=True)
    return replace(spec, kwargs=kwargs)


def _scatter_nd(case: CaseData, spec: NodeSpec) -> NodeSpec:
    reduction = case.attrs.get("reduction", "none")
    if spec.variant == "ScatterNDUpdate-15":
        return replace(spec, kwargs={"reduction": REDUCTIONS[reduction]})
    if reduction != "none":
        raise Unsupported(f"{spec.variant} has no reduction ({reduction!r} came in ScatterNDUpdate-15)")
    if spec.variant == "ScatterNDUpdate-3":
        return spec
    # ScatterUpdate-3 writes whole slices along one axis: it says ScatterND exactly when each index tuple has
    # length 1 (indices.shape[-1] == 1), as ScatterUpdate(data, indices[..., 0], updates, axis=0).
    idx = spec.inputs["indices"]
    if idx.ndim == 0 or idx.shape[-1] != 1:
        raise Unsupported(
            f"ScatterUpdate-3 says ScatterND only for index tuples of length 1 (indices.shape[-1] is "
            f"{idx.shape[-1] if idx.ndim else 'undefined'})"
        )
    return replace(spec, inputs={**spec.inputs, "indices": idx[..., 0]}, kwargs={"axis": 0},
                   arg_text={"indices": "indices[..., 0]"})


def _need_axis(case: CaseData, spec: NodeSpec) -> None:
    # Gather's and ScatterElementsUpdate's axis is an input with no default: leaving it out cannot be said.
    if "axis" in case.omit:
        raise required(f"ov.opset{spec.opset}.{spec.fn}")


# Operator -> how a case's attributes become the node's keyword arguments. Attributes in case.omit are left out of
# the call, so OpenVINO's own default applies: gather_elements defaults to axis=0; batch_dims to 0 (gather-7/8,
# gather_nd).
_SPECS: dict[str, Callable[[CaseData, NodeSpec], NodeSpec]] = {
    "Gather": _gather,
    "GatherElements": _gather_elements,
    "GatherND": _gather_nd,
    "ScatterElements": _scatter_elements,
    "ScatterND": _scatter_nd,
    "Take": _take,
}


def native_spec(case: CaseData, variant: str) -> NodeSpec:
    """Translate a case into the native node of ``variant``; raise Unsupported where that node cannot say it."""
    twin = variants.twin_of(variant)
    node, mode = variants.split(twin[0] if twin else variant)
    if node not in _NODES or mode is not None:
        raise Unsupported(f"unknown OpenVINO variant {variant!r} for {case.op}")
    opset, fn = _NODES[node]
    # Positional node inputs in the operator's order, whatever order the case dict has.
    ins = {n: case.inputs[n] for n in ("data", "indices", "updates") if n in case.inputs}
    spec = _SPECS[case.op](case, NodeSpec(node, opset, fn, ins, {}))
    held = tuple(n for n in onnx_graph.constant_inputs(variant) if n in spec.inputs)
    if any(spec.inputs[n].size == 0 for n in held):  # the C++ API can make one; Python's constant() cannot
        raise Unsupported("ov.opset8.constant refuses an empty array (\"Cannot create an empty Constant\")")
    return replace(spec, variant=variant, constants=held, dynamic=onnx_graph.dynamic_shapes(variant), op=case.op)


# The conversions a repro script needs, as this module runs them: the functions' own source.
_TENSOR_SOURCE = ["import openvino as ov", "from typing import Any", inspect.getsource(ov_module),
                  inspect.getsource(_string_type),
                  inspect.getsource(to_tensor),
                  inspect.getsource(from_tensor)]


def _INFER_SOURCE(names: list[str]) -> list[str]:
    return ["request = compiled.create_infer_request()",
            f"request.infer([to_tensor(a) for a in ({', '.join(names)},)])",
            "result = from_tensor(request.get_output_tensor(0))"]


def _source(spec: NodeSpec) -> str:
    """The node call as standalone statements (Call.source): the Parameters, node and model build_model makes."""
    names = list(spec.fed)
    lines = [*_TENSOR_SOURCE]
    if "indices" in spec.arg_text:
        lines.append(f"indices = {spec.arg_text['indices']}")
    lines.append("params = [" + ", ".join(
        f"ov.opset8.parameter({spec.shape(n)!r}, ov.Type.string if {n}.dtype == object else ov.Type.bf16 "
        f"if {n}.dtype.name == 'bfloat16' else ov.Type({n}.dtype), name={n!r})" for n in names) + "]")
    lines.append("inputs = iter(params)")
    lines.append("args = [" + ", ".join(f"ov.opset8.constant({n})" if n in spec.constants else "next(inputs)"
                                        for n in spec.inputs) + "]")
    if spec.flatten:
        lines.append(f"args[0] = ov.opset{spec.opset}.reshape(args[0], [-1], special_zero=False)")
    kwargs = "".join(f", {k}={v!r}" for k, v in spec.kwargs.items())
    lines += [f"node = ov.opset{spec.opset}.{spec.fn}(*args{kwargs})",
              f"model = ov.Model([node], params, {spec.variant!r})",
              f"compiled = ov.Core().compile_model(model, 'CPU'{spec.config_text()})", *_INFER_SOURCE(names)]
    return "\n".join(lines)


def opset(number: int) -> Any:
    """OpenVINO's Python module of opset ``number`` (``ov.opset8``); Unsupported where this release has none (the
    release sweeps run releases older than a node version: ScatterNDUpdate-15 needs opset15)."""
    ov = ov_module()

    mod = getattr(ov, f"opset{number}", None)
    if mod is None:  # before 2025.0 the opset modules live in openvino.runtime
        try:
            mod = importlib.import_module(f"openvino.runtime.opset{number}")
        except ImportError:
            raise Unsupported(f"openvino {ov.__version__} has no opset{number} module (the node is newer than it)") \
                from None
    return mod


def node_function(number: int, fn: str, node_type: str = "") -> Any:
    """``ov.opset<number>.<fn>``, or the same function from the nearest lower opset module that has it. Where none
    has it and ``node_type`` is given, the node factory's ``NodeFactory("opset<number>").create(node_type, inputs)``,
    which is what the function does in the releases that have it: 2023.0-2023.2 register ScatterNDUpdate-3 in
    opset4 but have no Python ``scatter_nd_update`` in any opset module (it came in 2023.3). Only for a node
    without attributes (the factory takes OpenVINO's attribute names, not the functions' keyword arguments)."""
    ov = ov_module()

    for n in range(number, 0, -1):
        try:
            mod = opset(n)
        except Unsupported:
            continue
        if hasattr(mod, fn):
            return getattr(mod, fn)
    factory = _node_factory(f"opset{number}") if node_type else None
    if factory is not None:
        return lambda *inputs: factory.create(node_type, list(inputs), {})
    raise Unsupported(f"openvino {ov.__version__} has no {fn} in opset{number} or below")


def _node_factory(opset_name: str) -> Any:
    """OpenVINO's NodeFactory for ``opset_name`` (``openvino.utils`` from 2025.0, ``openvino.runtime.utils``
    before), or None where neither module exists."""
    for module in ("openvino.utils.node_factory", "openvino.runtime.utils.node_factory"):
        try:
            return importlib.import_module(module).NodeFactory(opset_name)
        except (ImportError, AttributeError):
            continue
    return None


def build_model(spec: NodeSpec, types: dict[str, Any] | None = None) -> Any:
    """The ov.Model of ``spec``: one Parameter per input (shape and element type of the case's array), one node."""
    ov = ov_module()

    mod = opset(spec.opset)
    types = types or {n: element_type(arr) for n, arr in spec.inputs.items()}
    params = [opset(8).parameter(spec.shape(n), types[n], name=n) for n in spec.fed]
    fed = iter(params)
    args = [opset(8).constant(arr) if n in spec.constants else next(fed) for n, arr in spec.inputs.items()]
    if spec.flatten:
        args[0] = mod.reshape(args[0], [-1], special_zero=False)
    # A node without attributes can be made by the node factory where no opset module has its function; its type
    # is the variant's name before the version (ScatterNDUpdate-3 -> ScatterNDUpdate).
    node_type = "" if spec.kwargs or spec.flatten else spec.variant.rsplit("-", 1)[0]
    node = node_function(spec.opset, spec.fn, node_type)(*args, **spec.kwargs)
    return ov.Model([node], params, spec.variant)


class OpenVinoAdapter(Adapter):
    name = "openvino"
    requires = ("openvino",)
    extra = "openvino"
    # NumPy 2 from 2024.3; its ONNX frontend reads IR 10 models in every release swept here. The check reaches the
    # API where ov_module() finds it: top-level from 2023.1, openvino.runtime in 2023.0.
    releases = ReleaseRules("openvino", "openvino", extra=("onnx==1.23.2",), numpy2_since="2024.3.0",
                            check="ov = openvino if hasattr(openvino, 'Core') else __import__('openvino.runtime', "
                                  "fromlist=['Core']); ov.Core; ov.__version__")
    VARIANTS = _VARIANTS
    mapping = "docs/mapping/openvino.md"

    def __init__(self) -> None:
        self._core: Any = None
        self.cache: LRU[Any] = LRU(CACHE_SIZE)  # compiled models

    def version(self) -> str:
        ov = ov_module()

        return ov.__version__

    def warm(self) -> None:
        """Import OpenVINO, create the Core (plugin discovery) and import onnx for the read_model variant, so no
        case, and no forked child, pays for it."""
        _ = self.core
        onnx_graph.preload()

    @property
    def core(self) -> Any:
        """The one ov.Core of this process (creating it loads the plugins)."""
        if self._core is None:
            ov = ov_module()

            self._core = ov.Core()
        return self._core

    def compiled(self, key: Any, make_model: Any, config: dict[str, Any] | None = None) -> Any:
        """The compiled model for ``key``, compiling ``make_model()`` on CPU (with ``config``) on a miss (LRU of
        CACHE_SIZE)."""
        return self.cache.get_or_make(key, lambda: self.core.compile_model(make_model(), "CPU", config or {}))

    def prepare(self, case: CaseData, variant: str) -> Call:
        if variants.split(variant)[0] == ONNX:
            return self._prepare_onnx(case, onnx_graph.constant_inputs(variant), onnx_graph.dynamic_shapes(variant))
        spec = native_spec(case, variant)
        types = {n: element_type(arr) for n, arr in spec.inputs.items()}  # raises Unsupported for complex
        # Building the node runs OpenVINO's shape inference, which rejects invalid shapes/attributes here.
        compiled = self.compiled(spec.key(), lambda: build_model(spec, types), spec.config())
        return Call(spec.api(), lambda: self._infer(compiled, list(spec.fed.values())), source=_source(spec))

    def is_slow(self, variant: str) -> bool:
        # a constant twin compiles per index value, not per signature; twins run on focus cases only
        return variants.twin_of(variant) is not None

    def describe(self, case: CaseData, variant: str) -> tuple[str, str]:
        """The call without compiling it: OpenVINO crashes while compiling some models (SIGFPE on empty data)."""
        if variants.split(variant)[0] == ONNX:
            model, names, text = onnx_graph.build(case, None, onnx_graph.constant_inputs(variant),
                                                  onnx_graph.dynamic_shapes(variant))
            return (f"ov.Core().compile_model(core.read_model(model.SerializeToString()), 'CPU')  # model: {text}",
                    "\n".join(self._onnx_source(model, names)))
        spec = native_spec(case, variant)
        return spec.api(), _source(spec)

    @staticmethod
    def _onnx_source(model: Any, names: list[str]) -> list[str]:
        return [onnx_graph.model_source(model), *_TENSOR_SOURCE, "core = ov.Core()",
                "compiled = core.compile_model(core.read_model(model.SerializeToString()), 'CPU')",
                *_INFER_SOURCE(names)]

    def _prepare_onnx(self, case: CaseData, held: tuple[str, ...] = (), dynamic: bool = False) -> Call:
        model, _, text = onnx_graph.build(case, None, held, dynamic)
        blob = model.SerializeToString()
        with importing("OpenVINO's ONNX frontend", NO_CONVERTER, model.graph.node[-1].op_type):
            compiled = self.compiled((ONNX, blob), lambda: self.core.read_model(blob))
        names = [n for n in case.inputs if n not in held]  # the repro's variables, in the graph inputs' order
        feeds = [case.inputs[n] for n in names]
        api = f"ov.Core().compile_model(core.read_model(model.SerializeToString()), 'CPU')  # model: {text}"
        return Call(api, lambda: self._infer(compiled, feeds), source="\n".join(self._onnx_source(model, names)))

    def release(self) -> None:
        self.cache.clear()
        self._core = None

    @staticmethod
    def _infer(compiled: Any, feeds: list[np.ndarray]) -> np.ndarray:
        request = compiled.create_infer_request()
        request.infer([to_tensor(a) for a in feeds])
        return from_tensor(request.get_output_tensor(0))


ADAPTER = OpenVinoAdapter()
