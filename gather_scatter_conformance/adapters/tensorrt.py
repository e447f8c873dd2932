"""TensorRT: a one-layer network built with TensorRT's network API, or a one-node ONNX model through ``trt.OnnxParser``.

The network API variants are the layers a user adds by hand: ``INetworkDefinition.add_gather_v2`` with
``trt.GatherMode.DEFAULT`` (Gather, Take), ``ELEMENT`` (GatherElements) or ``ND`` (GatherND), the older
``add_gather(input, indices, axis)`` (DEFAULT mode only, the axis in the call), and ``add_scatter`` with
``trt.ScatterMode.ELEMENT`` (ScatterElements) or ``ND`` (ScatterND). The ``OnnxParser`` variant parses the one-node
ONNX model of :mod:`adapters.onnx_graph` (IR version set there explicitly) into the network instead.

Translating a case into layer parameters (:func:`layer_spec`, :func:`trt_dtype`) is pure Python and imports no
TensorRT, so it is tested on machines without a GPU; building and running engines (:mod:`adapters.tensorrt_engine`)
needs the ``tensorrt`` wheel, ``cuda-python`` and an NVIDIA GPU. Without a GPU, :meth:`TensorRTAdapter.unavailable`
gives the reason and every case is skipped with it.

Every API name used here was checked by introspection against tensorrt-cu12-bindings 11.4.0.106 (see
docs/mapping/tensorrt.md): ``GatherMode`` has DEFAULT, ELEMENT, ND; ``ScatterMode`` has ELEMENT, ND and
``IScatterLayer`` has only ``axis`` and ``mode`` (no reduction); ``IGatherLayer`` has ``axis``, ``mode`` and
``num_elementwise_dims``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from gather_scatter_conformance.adapters import onnx_graph
from gather_scatter_conformance.adapters.attrs import required
from gather_scatter_conformance.adapters.base import Adapter, Call, CaseData, Unsupported, importing
from gather_scatter_conformance.adapters.tensorrt_types import dtype_name, trt_dtype
from gather_scatter_conformance.vocab import variants

PARSER = "OnnxParser"
_V2 = "add_gather_v2"
# Variants per operator, the default first. add_gather (TensorRT < 8.5's way, axis in the call) says DEFAULT mode only.
_VARIANTS: dict[str, list[str]] = {
    "Gather": [f"{_V2}/DEFAULT", "add_gather", PARSER],
    "GatherElements": [f"{_V2}/ELEMENT", PARSER],
    "GatherND": [f"{_V2}/ND", PARSER],
    "ScatterElements": ["add_scatter/ELEMENT", PARSER],
    "ScatterND": ["add_scatter/ND", PARSER],
    "Take": [f"{_V2}/DEFAULT", "add_gather", PARSER],
    "TensorScatter": [PARSER],  # no layer of its own; the parser's answer is the measurement (needs a GPU)
}
# What the parser says of an operator it has no importer for (onnx-tensorrt: "No importer registered for op: X",
# then a failed plugin lookup): such a case is unsupported through it.
NO_CONVERTER = r"\b{op}: [^\n]*(?:No importer registered|UNSUPPORTED_NODE|Plugin not found)"
@dataclass(frozen=True)
class LayerSpec:
    """One layer call: ``network.<method>(*inputs[, mode | call_axis])``, then ``layer.<attr> = value`` for ``attrs``.

    ``flatten`` reshapes ``data`` to 1-D first with an IShuffleLayer (Take with no axis).
    """

    variant: str
    method: str  # add_gather_v2 | add_gather | add_scatter
    mode: str | None  # trt.GatherMode / trt.ScatterMode member; None for add_gather (always DEFAULT)
    inputs: tuple[str, ...]
    attrs: tuple[tuple[str, int], ...] = ()
    call_axis: int | None = None
    flatten: bool = False

    def api(self) -> str:
        """The network-building code as a user writes it."""
        args = list(self.inputs)
        if self.flatten:
            args[0] = "flat"
        if self.method == "add_gather":
            args.append(f"axis={self.call_axis}")
        else:
            enum = "GatherMode" if self.method == _V2 else "ScatterMode"
            args.append(f"trt.{enum}.{self.mode}")
        text = f"layer = network.{self.method}({', '.join(args)})"
        if self.attrs:
            text += "; " + "; ".join(f"layer.{k} = {v!r}" for k, v in self.attrs)
        if self.flatten:
            text = "flat = network.add_shuffle(data); flat.reshape_dims = (-1,); " + text
        return text

    def key(self) -> tuple[Any, ...]:
        """Everything about the layer that shapes an engine (input shapes and dtypes are added by the caller)."""
        return (self.variant, self.method, self.mode, self.attrs, self.call_axis, self.flatten)


def _axis_attr(case: CaseData, method: str) -> tuple[tuple[str, int], ...]:
    if "axis" in case.omit:
        return ()  # IGatherLayer / IScatterLayer axis defaults to 0 when not set (NvInfer.h setGatherAxis)
    return (("axis", int(case.attrs["axis"])),)


def _elementwise_attr(case: CaseData) -> tuple[tuple[str, int], ...]:
    # num_elementwise_dims defaults to 0 (seed 003: "without setting parameter num_elementwise_dims (default
    # value: 0)"), so batch_dims 0 leaves it unset. Other values pass through unchecked: TensorRT documents 0 or 1
    # for DEFAULT and 0 .. rank(data)-1 for ND, and rejecting anything else is TensorRT's to do (a result).
    batch = case.attrs.get("batch_dims", 0)
    if "batch_dims" in case.omit or not batch:
        return ()
    return (("num_elementwise_dims", int(batch)),)


def layer_spec(case: CaseData, variant: str) -> LayerSpec:
    """Translate ``case`` into the layer of a network-API ``variant``; raise Unsupported where TensorRT cannot say it.

    Gather/Take -> IGatherLayer DEFAULT (batch_dims -> num_elementwise_dims), GatherElements -> ELEMENT, GatherND ->
    ND (batch_dims -> num_elementwise_dims), ScatterElements/ScatterND -> IScatterLayer ELEMENT/ND (no reduction).
    """
    if variant not in _VARIANTS.get(case.op, ()) or variant == PARSER:
        raise ValueError(f"unknown TensorRT network variant {variant!r} for {case.op}; expected one of "
                         f"{_VARIANTS.get(case.op, [])[:-1]}")
    a = case.attrs
    inputs = tuple(n for n in ("data", "indices", "updates") if n in case.inputs)
    method, mode = variants.split(variant)
    if case.op.startswith("Scatter"):
        if a.get("reduction", "none") != "none":
            raise Unsupported(f"IScatterLayer has no reduction (reduction={a['reduction']!r}): its attributes are "
                              "axis and mode only, and ScatterMode is ELEMENT or ND")
        attrs = _axis_attr(case, method) if case.op == "ScatterElements" else ()
        return LayerSpec(variant, method, mode, inputs, attrs)
    if case.op == "GatherElements":
        return LayerSpec(variant, method, mode, inputs, _axis_attr(case, method))
    if case.op == "GatherND":
        return LayerSpec(variant, method, mode, inputs, _elementwise_attr(case))
    flatten = False
    if case.op == "Take":
        if a["mode"] != "raise":
            raise Unsupported(f"IGatherLayer has no index mode {a['mode']!r} (the header says 'Zero will be stored "
                              "for OOB access')")
        flatten = a["axis"] is None and "axis" not in case.omit
        axis_attrs: tuple[tuple[str, int], ...] = ()
        if "axis" not in case.omit:
            axis_attrs = (("axis", 0 if flatten else int(a["axis"])),)
        elementwise: tuple[tuple[str, int], ...] = ()
    else:
        axis_attrs, elementwise = _axis_attr(case, method), _elementwise_attr(case)
    if method == "add_gather":
        if not axis_attrs:
            raise required("network.add_gather")
        return LayerSpec(variant, method, None, inputs, elementwise, call_axis=axis_attrs[0][1], flatten=flatten)
    return LayerSpec(variant, method, mode, inputs, axis_attrs + elementwise, flatten=flatten)


def signature(inputs: dict[str, np.ndarray]) -> tuple[tuple[str, tuple[int, ...], str], ...]:
    """(name, shape, dtype) of every input: with the layer, what an engine is built for."""
    return tuple((n, tuple(v.shape), dtype_name(v)) for n, v in inputs.items())


class TensorRTAdapter(Adapter):
    name = "tensorrt"
    requires = ("tensorrt",)
    extra = "tensorrt"
    devices = ("gpu",)
    VARIANTS = _VARIANTS
    mapping = "docs/mapping/tensorrt.md"

    def __init__(self) -> None:
        self._runner: Any = None

    def unavailable(self) -> str | None:
        from gather_scatter_conformance.adapters.tensorrt_engine import gpu_problem

        return gpu_problem()

    def version(self) -> str:
        import tensorrt as trt

        return trt.__version__

    def warm(self) -> None:
        """Import TensorRT and cuda-python, create the builder, runtime and CUDA stream once, and import onnx for
        the OnnxParser variant (as OpenVINO does, for the same forked children)."""
        _ = self.runner
        onnx_graph.preload()

    @property
    def runner(self) -> Any:
        """The process's :class:`adapters.tensorrt_engine.Runner` (engine cache, builder, stream)."""
        if self._runner is None:
            from gather_scatter_conformance.adapters.tensorrt_engine import Runner

            self._runner = Runner()
        return self._runner

    def is_slow(self, variant: str) -> bool:
        return True  # every variant builds an engine per input signature (hundreds of ms each)

    def prepare(self, case: CaseData, variant: str) -> Call:
        inputs = {n: case.inputs[n] for n in ("data", "indices", "updates") if n in case.inputs}
        for arr in inputs.values():
            trt_dtype(arr)  # a dtype with no TensorRT tensor type cannot even be a network input
        suffix = "  # builder.build_serialized_network -> context.execute_async_v3 on cuda:0"
        if variant == PARSER:
            model, _, text = onnx_graph.build(case)  # raises Unsupported where ONNX cannot say the case
            blob = model.SerializeToString()
            api = f"trt.OnnxParser(network, logger).parse(model.SerializeToString())  # model: {text};{suffix[3:]}"
            key = (PARSER, blob)
            feeds = onnx_graph.feeds(case)  # bound by the model's (ONNX's) input names

            def run() -> Any:
                with importing("TensorRT's OnnxParser", NO_CONVERTER, model.graph.node[-1].op_type):
                    return self.runner.run(key, lambda net, trt, log: _parse(net, trt, log, blob), feeds)

            return Call(api, run, "gpu")
        spec = layer_spec(case, variant)
        key = (spec.key(), signature(inputs))
        build = lambda net, trt, log: _populate(net, trt, spec, inputs)  # noqa: E731
        return Call(spec.api() + suffix, lambda: self.runner.run(key, build, inputs), "gpu")


def _populate(network: Any, trt: Any, spec: LayerSpec, inputs: dict[str, np.ndarray]) -> None:
    """Add the case's inputs and ``spec``'s layer to ``network`` and mark its output 'output'."""
    tensors = [network.add_input(n, getattr(trt.DataType, trt_dtype(a)), trt.Dims(a.shape)) for n, a in
               inputs.items() if n in spec.inputs]
    if spec.flatten:
        shuffle = network.add_shuffle(tensors[0])
        shuffle.reshape_dims = trt.Dims((-1,))
        tensors[0] = shuffle.get_output(0)
    if spec.method == "add_gather":
        layer = network.add_gather(*tensors, spec.call_axis)
    elif spec.method == _V2:
        layer = network.add_gather_v2(*tensors, getattr(trt.GatherMode, spec.mode))
    else:
        layer = network.add_scatter(*tensors, getattr(trt.ScatterMode, spec.mode))
    if layer is None:
        raise RuntimeError(f"network.{spec.method} returned None (the layer could not be created)")
    for attr, value in spec.attrs:
        setattr(layer, attr, value)
    out = layer.get_output(0)
    out.name = "output"
    network.mark_output(out)


def _parse(network: Any, trt: Any, logger: Any, blob: bytes) -> Any:
    """Parse the ONNX model into ``network``; a parser failure raises with the parser's own messages."""
    parser = trt.OnnxParser(network, logger)
    if not parser.parse(blob):
        errors = [parser.get_error(i) for i in range(parser.num_errors)]
        raise RuntimeError("trt.OnnxParser could not parse the model: " + "; ".join(
            f"{e.node_operator()}: {e.desc()}" for e in errors))
    return parser  # the network refers to the parser's weights: keep it alive until the engine is built


ADAPTER = TensorRTAdapter()
