"""ONNX's own Python reference implementation (onnx.reference.ReferenceEvaluator) on a one-node model."""

from __future__ import annotations

from typing import Any

import numpy as np

from gather_scatter_conformance.adapters import onnx_graph
from gather_scatter_conformance.adapters.base import Adapter, Call, CaseData
from gather_scatter_conformance.vocab.ops import OPS

_VARIANTS = {op: ("ReferenceEvaluator",) for op in OPS}  # one ONNX node per operator (Take's is a Gather)


class OnnxReferenceAdapter(Adapter):
    name = "onnx-reference"
    requires = ("onnx",)
    extra = "onnx"
    # A forked child of a worker that ran cases runs cases (checked on the pinned release).
    fork_after_run = True
    VARIANTS = _VARIANTS
    mapping = "docs/mapping/onnx-reference.md"

    def version(self) -> str:
        import onnx

        return onnx.__version__

    def warm(self) -> None:
        import onnx.reference  # noqa: F401  (slow first import: keep it out of the first case's time)

    def prepare(self, case: CaseData, variant: str) -> Call:
        from onnx.reference import ReferenceEvaluator

        model, _, text = onnx_graph.build(case)

        def run() -> Any:
            return ReferenceEvaluator(model).run(None, onnx_graph.feeds(case))[0]

        source = "\n".join([onnx_graph.model_source(model), "from onnx.reference import ReferenceEvaluator",
                            f"result = np.asarray(ReferenceEvaluator(model).run(None, "
                            f"{onnx_graph.feeds_source(list(case.inputs), case.op)})[0])"])
        return Call(f"ReferenceEvaluator(model).run(None, feeds)  # model: {text}", run, source=source)

    def to_numpy(self, out: Any) -> np.ndarray:
        return np.asarray(out)


ADAPTER = OnnxReferenceAdapter()
