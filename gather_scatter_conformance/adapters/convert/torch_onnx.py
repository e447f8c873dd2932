"""torch -> torch.onnx.export (the dynamo exporter and the TorchScript one) -> onnxruntime or OpenVINO, and
torch -> openvino.convert_model -> OpenVINO CPU.

The source is the torch adapter's eager call (adapters/torch_calls.py), wrapped in an ``nn.Module`` whose
``forward`` takes the case's inputs in order; each exporter runs with its own defaults (opset included), as a user
who calls it plainly gets them. TorchScript tracing executes the function: it sees in-range example indices
(gather_scatter_conformance.adapters.convert.path.example_inputs).
"""

from __future__ import annotations

import io
from typing import Any

import numpy as np

from gather_scatter_conformance.adapters.base import CaseData
from gather_scatter_conformance.adapters.convert import targets
from gather_scatter_conformance.adapters.convert.path import ConversionPath, Converted
from gather_scatter_conformance.adapters.torch_calls import expression


def _names(case: CaseData) -> tuple[str, ...]:
    # The case's inputs in the operator's order (TensorScatter: data, updates, indices): the converted model's
    # inputs, which the targets feed in that order.
    return tuple(case.inputs)


def module(case: CaseData, variant: str) -> tuple[Any, tuple[str, ...], str]:
    """(an nn.Module whose forward is the torch call of ``case`` in ``variant``, its argument names, the
    expression)."""
    import torch

    from gather_scatter_conformance.adapters.torch import _lambda

    names = _names(case)
    expr = expression(case.op, variant, {n: case.inputs[n].shape for n in names}, case.attrs, case.omit)
    fn = _lambda(expr, names)

    class Case(torch.nn.Module):
        def forward(self, *args: Any) -> Any:
            return fn(*args)

    return Case().eval(), names, expr


def _tensors(arrays: dict[str, np.ndarray], names: tuple[str, ...]) -> tuple[Any, ...]:
    from gather_scatter_conformance.adapters.torch import to_tensor

    return tuple(to_tensor(arrays[n]) for n in names)


def _module_source(expr: str, names: tuple[str, ...]) -> list[str]:
    args = ", ".join(names)
    return ["class Case(torch.nn.Module):",
            f"    def forward(self, {args}):",
            f"        return {expr}",
            "indices_example = torch.zeros_like(indices)  # exporters trace with in-range indices",
            f"example = ({args.replace('indices', 'indices_example')},)"]


def _array(name: str) -> str:
    """The script's expression for the array the harness passes the converted model in place of torch tensor
    ``name``: its own dtype, bfloat16 (which ``Tensor.numpy`` refuses) through float32 into ml_dtypes' bfloat16."""
    return (f"({name}.float().numpy().astype(ml_dtypes.bfloat16) if {name}.dtype == torch.bfloat16 "
            f"else {name}.numpy())")


class TorchOnnx(targets.OnnxArtifact, ConversionPath):
    """torch.onnx.export with ``dynamo`` True or False, to onnxruntime or OpenVINO (through its ONNX frontend)."""

    source = "torch"

    def __init__(self, dynamo: bool, target: str) -> None:
        super().__init__()
        self.dynamo = dynamo
        self.target = target
        self.converter = f"torch.onnx.export(dynamo={dynamo})"
        self.converter_id = "onnx-dynamo" if dynamo else "onnx-torchscript"
        self.converter_requires = ("onnxscript",) if dynamo else ("onnx",)
        self.options = {"dynamo": dynamo}

    def converter_version(self) -> str:
        import torch

        if not self.dynamo:
            return torch.__version__
        import onnxscript

        return f"{torch.__version__}, onnxscript {onnxscript.__version__}"

    def convert(self, case: CaseData, variant: str, example: dict[str, np.ndarray]) -> Converted:
        import onnx
        import torch

        model, names, _ = module(case, variant)
        args = _tensors(example, names)
        if self.dynamo:
            from gather_scatter_conformance.adapters.torch_export import reuse_op_tables

            reuse_op_tables()  # the exporter's run_decompositions walks every operator table (torch_export.py)
            program = torch.onnx.export(model, args, input_names=list(names), dynamo=True, verbose=False)
            proto = program.model_proto
        else:
            buffer = io.BytesIO()
            torch.onnx.export(model, args, buffer, input_names=list(names), dynamo=False)
            proto = onnx.load_from_string(buffer.getvalue())
        return Converted(proto, targets.onnx_ops(proto), {"opset": targets.onnx_opset(proto)})


    def runner(self, converted: Converted) -> Any:
        if self.target == "onnxruntime":
            return targets.onnxruntime_session(converted.artifact)
        return targets.openvino_compiled(converted.artifact)

    def execute(self, runner: Any, inputs: dict[str, np.ndarray]) -> np.ndarray:
        if self.target == "onnxruntime":
            return targets.run_onnxruntime(runner, inputs)
        return targets.run_openvino(runner, inputs)

    def repro(self, case: CaseData, variant: str) -> str:
        names = _names(case)
        expr = expression(case.op, variant, {n: case.inputs[n].shape for n in names}, case.attrs, case.omit)
        if self.dynamo:
            export = [f"model = torch.onnx.export(Case(), example, input_names={list(names)!r}, dynamo=True)"
                      ".model_proto"]
        else:
            export = ["import io", "import onnx", "buffer = io.BytesIO()",
                      f"torch.onnx.export(Case(), example, buffer, input_names={list(names)!r}, dynamo=False)",
                      "model = onnx.load_from_string(buffer.getvalue())"]
        arrays = [_array(n) for n in names]
        run = (targets.onnxruntime_repro(arrays) if self.target == "onnxruntime"
               else targets.openvino_repro(arrays))
        return "\n".join([*_module_source(expr, names), *export, run])


class TorchOpenVino(ConversionPath):
    """openvino.convert_model on the nn.Module, with example inputs, compiled for OpenVINO's CPU."""

    source = "torch"
    converter = "openvino.convert_model"
    converter_id = "ov-convert"
    target = "openvino"

    def converter_version(self) -> str:
        return _openvino_version()

    def convert(self, case: CaseData, variant: str, example: dict[str, np.ndarray]) -> Converted:
        import openvino as ov

        model, names, _ = module(case, variant)
        converted = ov.convert_model(model, example_input=_tensors(example, names))
        return Converted(converted, targets.openvino_ops(converted))

    def runner(self, converted: Converted) -> Any:
        return targets.openvino_compiled(converted.artifact)

    def execute(self, runner: Any, inputs: dict[str, np.ndarray]) -> np.ndarray:
        return targets.run_openvino(runner, inputs)

    def repro(self, case: CaseData, variant: str) -> str:
        names = _names(case)
        expr = expression(case.op, variant, {n: case.inputs[n].shape for n in names}, case.attrs, case.omit)
        return "\n".join([*_module_source(expr, names), "import openvino as ov",
                          "model = ov.convert_model(Case(), example_input=example)",
                          targets.openvino_repro([_array(n) for n in names], onnx_model=False)])


DYNAMO_ONNXRUNTIME = TorchOnnx(dynamo=True, target="onnxruntime")
TORCHSCRIPT_ONNXRUNTIME = TorchOnnx(dynamo=False, target="onnxruntime")
DYNAMO_OPENVINO = TorchOnnx(dynamo=True, target="openvino")
TORCHSCRIPT_OPENVINO = TorchOnnx(dynamo=False, target="openvino")
CONVERT_MODEL = TorchOpenVino()


def _openvino_version() -> str:
    from gather_scatter_conformance import adapters

    return adapters.get("openvino").version()
