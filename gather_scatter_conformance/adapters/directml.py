"""DirectML, as users reach it from Python: onnxruntime-directml's ``DmlExecutionProvider`` (Windows only).

The case becomes the same one-node ONNX model as for onnxruntime (:mod:`adapters.onnx_graph`, IR version set there
explicitly), run by an ``InferenceSession`` whose only provider is ``DmlExecutionProvider``. ONNX Runtime's DirectML
page asks for memory patterns off and sequential execution, and the session sets ``session.disable_cpu_ep_fallback``
so that a node DirectML cannot take fails the session instead of silently running on the CPU: a result recorded as
``dml`` is DirectML's. onnxruntime-directml's DirectML "supports up to ONNX opset 17", so the default variant of each
operator is its newest version at or below 17 (ScatterElements/ScatterND-16); opset 18 stays a variant.

How DirectML's own DML_GATHER_OPERATOR_DESC (Axis, IndexDimensions, right-aligned sizes) maps to ONNX Gather is
:func:`dml_gather_to_onnx` and :func:`onnx_gather_to_dml`, pure functions checked against the DirectML page's examples
on any machine (docs/mapping/directml.md).
"""

from __future__ import annotations

import dataclasses
import sys
from dataclasses import dataclass
from importlib import metadata
from typing import Any

from gather_scatter_conformance.adapters.attrs import axis_index
from gather_scatter_conformance.adapters.base import Call, CaseData
from gather_scatter_conformance.adapters.onnxruntime import (
    OnnxruntimeAdapter,
    _is_bfloat16,
    _Plan,
    _variants,
    build_model,
    variant_target,
)
from gather_scatter_conformance.vocab import variants

PROVIDER = "DmlExecutionProvider"
DISTRIBUTION = "onnxruntime-directml"
MAX_OPSET = 17  # "The DirectML Execution Provider ... supports up to ONNX opset 17"


def platform_problem(platform: str = sys.platform) -> str | None:
    """Why DirectML cannot run here (one line), or None on Windows with onnxruntime-directml installed.

    Reads package metadata only: onnxruntime and onnxruntime-directml install the same ``onnxruntime`` module, so
    importing it would not tell them apart (and would import a framework).
    """
    if platform != "win32":
        return f"DirectML needs Windows ({DISTRIBUTION}); this is {platform}"
    try:
        metadata.version(DISTRIBUTION)
    except metadata.PackageNotFoundError:
        return f"DirectML needs {DISTRIBUTION} (pip install {DISTRIBUTION}); only plain onnxruntime is installed"
    return None


def dml_variants(op: str) -> list[str]:
    """onnxruntime's variants of ``op``, reordered so the newest version DirectML supports (<= opset 17) is first."""
    names = [v for v in _variants(op) if variants.mode(v) is None]  # no /constant twins: never measured here
    supported = [v for v in names if _version(v) <= MAX_OPSET]
    return supported + [v for v in names if v not in supported]


def _version(variant: str) -> int:
    # Scatter-9/11 are no ONNX version's newest: they stay where they are, among the supported.
    onnx_type, version = variants.op_version(variant) or ("", 0)
    return 0 if onnx_type == "Scatter" else version


class DirectMLAdapter(OnnxruntimeAdapter):
    name = "directml"
    requires = ("onnxruntime",)
    extra = "directml"
    mapping = "docs/mapping/directml.md"
    distribution = DISTRIBUTION  # plain onnxruntime brings no DirectML column of skips
    devices = ("gpu",)  # DirectML runs on a Direct3D 12 GPU

    def unavailable(self) -> str | None:
        return platform_problem()

    def version(self) -> str:
        try:
            return metadata.version(DISTRIBUTION)
        except metadata.PackageNotFoundError:
            return f"{DISTRIBUTION} not installed"

    def variants(self, op: str) -> list[str]:
        return dml_variants(op)

    @staticmethod
    def new_session(plan: _Plan) -> Any:
        """A session with the options the DirectML execution provider needs (ONNX Runtime's DirectML page)."""
        import onnxruntime as ort

        options = ort.SessionOptions()
        options.enable_mem_pattern = False
        options.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
        options.add_session_config_entry("session.disable_cpu_ep_fallback", "1")
        return ort.InferenceSession(plan.model.SerializeToString(), sess_options=options, providers=plan.providers)

    def prepare(self, case: CaseData, variant: str) -> Call:
        onnx_type, version = variant_target(case.op, variant)
        # As for onnxruntime, the default variant honours a case's own opset; otherwise the variant pins its version
        # (for the default too: ONNX's newest version may be past what DirectML supports).
        own = variant == self.variants(case.op)[0] and case.opset is not None
        target = case if own else dataclasses.replace(case, opset=version)
        model, text, op_key = build_model(target, onnx_type)  # raises Unsupported where ONNX cannot say the case
        signature = tuple((n, tuple(v.shape), str(v.dtype)) for n, v in case.inputs.items())
        plan = _Plan((op_key, signature, PROVIDER), model, [PROVIDER], 1)
        inputs = dict(case.inputs)
        comment = f"  # {PROVIDER} only (session.disable_cpu_ep_fallback=1, enable_mem_pattern=False)"
        if any(_is_bfloat16(v) for v in inputs.values()):
            api = f"onnxruntime.InferenceSession(model: {text}).run_with_ort_values(None, {{...}}){comment}"
            return Call(api, lambda: self._run_ort_values(plan, inputs), "gpu")
        api = f"onnxruntime.InferenceSession(model: {text}).run(None, {{{', '.join(inputs)}}}){comment}"
        return Call(api, lambda: self._session(plan).run(None, inputs)[0], "gpu")


@dataclass(frozen=True)
class DmlGather:
    """The fields of a DML_GATHER_OPERATOR_DESC that decide its shapes: tensor sizes, Axis and IndexDimensions."""

    input_sizes: tuple[int, ...]
    indices_sizes: tuple[int, ...]
    output_sizes: tuple[int, ...]
    axis: int
    index_dimensions: int


def _strip_ones(sizes: tuple[int, ...], keep: int) -> tuple[int, ...]:
    """Drop leading 1s from ``sizes`` while more than ``keep`` dimensions remain."""
    i = 0
    while len(sizes) - i > keep and sizes[i] == 1:
        i += 1
    return sizes[i:]


def dml_gather_to_onnx(desc: DmlGather, original_rank: int) -> tuple[int, tuple[int, ...], tuple[int, ...]]:
    """(ONNX Gather axis, indices shape, output shape) of a DML gather whose InputTensor had ``original_rank``
    dimensions before DirectML's padding with leading 1s.

    The canonical axis is Axis minus the padding; the indices are IndicesTensor's last IndexDimensions sizes; the
    output is data.shape[:axis] + indices.shape + data.shape[axis+1:]. The DirectML page computes OutputTensor.Sizes
    from the padded sizes and right-aligns them, cropping leading 1s; the result here is the unpadded shape.
    """
    padding = len(desc.input_sizes) - original_rank
    data = desc.input_sizes[padding:]
    axis = desc.axis - padding
    if not 0 <= axis < original_rank:
        raise ValueError(f"Axis {desc.axis} falls in the padding of InputTensor {desc.input_sizes}")
    indices = desc.indices_sizes[len(desc.indices_sizes) - desc.index_dimensions:]
    return axis, indices, data[:axis] + indices + data[axis + 1:]


def onnx_gather_to_dml(data: tuple[int, ...], indices: tuple[int, ...], axis: int, dimension_count: int) -> DmlGather:
    """The DML_GATHER_OPERATOR_DESC sizes for an ONNX Gather, with every tensor padded to ``dimension_count``.

    Inputs are left-padded with 1s (Axis shifts by the padding); IndexDimensions is the indices' rank; the output
    sizes are the page's formula on the padded sizes, right-aligned into ``dimension_count``: leading 1s cropped, or
    1s prepended. Raises ValueError where the page says the output has too many relevant dimensions.
    """
    axis = axis_index(axis, len(data)) if data else 0
    relevant = len(data) + len(indices) - 1
    if max(len(data), len(indices), relevant) > dimension_count:
        raise ValueError(f"original rank {len(data)} + IndexDimensions {len(indices)} - 1 = {relevant} exceeds "
                         f"DimensionCount {dimension_count}")
    pad = dimension_count - len(data)
    input_sizes = (1,) * pad + tuple(data)
    indices_sizes = (1,) * (dimension_count - len(indices)) + tuple(indices)
    full = input_sizes[:axis + pad] + tuple(indices) + input_sizes[axis + pad + 1:]
    out = _strip_ones(full, dimension_count)
    out = (1,) * (dimension_count - len(out)) + out
    return DmlGather(input_sizes, indices_sizes, out, axis + pad, len(indices))


ADAPTER = DirectMLAdapter()
