"""jax -> StableHLO (``jax.export``) -> IREE: the jax adapter's eager call, exported with
``jax.export.export(jax.jit(fn))(*[jax.ShapeDtypeStruct(...) per input])``, its ``mlir_module()`` text compiled by
IREE for ``llvm-cpu`` with ``input_type="stablehlo"`` and run on the ``local-sync`` device.

The source is the jax adapter's pure function of the inputs (its variants without ``/jit``, adapters/jax.py) with
``jax_enable_x64`` on, as the adapter runs it. The export traces abstractly (shapes and dtypes only). JAX lowers
its index normalisation (negative indices counted from the end) and its out-of-bounds mode (``fill``: a select, or
``promise_in_bounds``: nothing) around the ``stablehlo.gather``/``scatter`` it emits, so what IREE does with the
module shows whether those survive IREE's compilation. The compile and the run are the iree adapter's
(adapters/iree.py); the artifact is the .vmfb, kept on disk too.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from gather_scatter_conformance.adapters.base import Call, CaseData
from gather_scatter_conformance.adapters.convert.jax_onnx import refuse_take_raise
from gather_scatter_conformance.adapters.convert.onnx_iree import VmfbArtifact, vmfb
from gather_scatter_conformance.adapters.convert.path import ConversionPath, Converted
from gather_scatter_conformance.adapters.iree import compile_source, run_source


def _function(case: CaseData, variant: str) -> tuple[Any, str]:
    """(the jax adapter's pure function of the inputs for ``case`` in ``variant``, its expression)."""
    from gather_scatter_conformance.adapters.jax import ADAPTER

    _, fn, api = ADAPTER._translate(case, variant)
    return fn, api


class JaxIree(VmfbArtifact, ConversionPath):
    source = "jax"
    converter = "jax.export"
    converter_id = "jax-export"
    target = "iree"

    def prepare(self, case: CaseData, variant: str) -> Call:
        refuse_take_raise(case)
        return super().prepare(case, variant)

    def converter_version(self) -> str:
        from gather_scatter_conformance.adapters import iree
        from gather_scatter_conformance.adapters.jax import ADAPTER

        return f"jax {ADAPTER.version()}, iree {iree.version()}"

    def convert(self, case: CaseData, variant: str, example: dict[str, np.ndarray]) -> Converted:
        from gather_scatter_conformance.adapters.jax import _jax

        jax, _ = _jax()  # x64 on, as the source runs
        fn, _ = _function(case, variant)
        shapes = [jax.ShapeDtypeStruct(a.shape, a.dtype) for a in example.values()]
        exported = jax.export.export(jax.jit(fn))(*shapes)
        return vmfb(exported.mlir_module(), "stablehlo", {"platforms": list(exported.platforms)})

    def repro(self, case: CaseData, variant: str) -> str:
        _, api = _function(case, variant)
        names = list(case.inputs)
        shapes = ", ".join(f"jax.ShapeDtypeStruct({n}.shape, {n}.dtype)" for n in names)
        return "\n".join([
            f"def fn({', '.join(names)}):",
            f"    return {api}",
            f"mlir = jax.export.export(jax.jit(fn))({shapes}).mlir_module()",
            compile_source("mlir", "stablehlo"),
            run_source(names),
        ])


ADAPTER = JaxIree()
