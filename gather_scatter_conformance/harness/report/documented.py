"""Documented-only columns of the behaviour tables: what the documentation says where nothing was measured.

The blog's tables (seed 002) have columns for systems this harness cannot run everywhere, or at all: Caffe2 (removed
from PyTorch, no runnable build), TensorRT (needs an NVIDIA GPU), DirectML (needs Windows), and device-specific
statements such as TensorFlow's "out-of-bound gather returns zeros on GPU". Where no result exists for such a column,
it is built from the claims registry (claims/*.yaml) and marked ``measured: False`` with the reason, so a reader
never takes a quotation for a measurement. A column that has results is never shown from its claims.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from gather_scatter_conformance.harness.judge.dimensions import DIMENSIONS, conforms
from gather_scatter_conformance.harness.report.claims import DOC_ONLY_LABELS
from gather_scatter_conformance.harness.report.rows import BehaviourRow

REASONS = {
    "caffe2": "documented only (no runnable build: Caffe2 was removed from PyTorch)",
    "tensorrt": "documented only (not measured in these results: TensorRT needs an NVIDIA GPU)",
    "directml": "documented only (not measured in these results: DirectML needs Windows)",
}
# Systems that only run on a GPU: a claim naming no device is about the GPU (and so is the column it makes).
_GPU_ONLY = ("tensorrt", "directml")
# Not columns of their own: the blog's statements are marks on other columns, ONNX's are the canonical semantics.
_NOT_COLUMNS = ("blog-2020", "onnx")
# Measured frameworks whose documentation is another's (runtimes implementing a spec).
_DOCS_OF = {"onnxruntime": "onnx", "onnx-reference": "onnx"}


def reason_for(framework: str, device: str | None = None) -> str:
    """Why a documented-only column was not measured, in the words the report shows."""
    if framework in REASONS:
        return REASONS[framework]
    if device and device != "cpu":
        return f"documented only (no {device} results in these results)"
    return "documented only (not measured in these results)"


def rows(claims: Iterable[Any], measured: list[BehaviourRow]) -> list[BehaviourRow]:
    """Documented-only behaviour rows (``measured=False``, with ``doc_only`` saying why) for every
    (framework, API, device) that has claims but no measured row.

    A framework with no results at all gets its whole column from its own claims, completed by what the blog said
    about it (``source_kind: secondary``) where its documentation is silent. A framework with results gets extra
    columns only for devices its claims name but no result covers (e.g. ``tensorflow:tf.gather@gpu``).
    """
    claims = list(claims)
    names = lambda fw: {fw, _DOCS_OF.get(fw, fw)}  # noqa: E731
    measured_fw = {n for r in measured for n in names(r.framework)}
    measured_dev = {(n, r.device) for r in measured for n in names(r.framework)}
    chosen: dict[tuple[str, str, str, str, str], Any] = {}  # (framework, op, api, device, dimension) -> claim
    for claim in claims:
        fw = claim.framework
        if fw in _NOT_COLUMNS:
            continue
        device = claim.device or ("gpu" if fw in _GPU_ONLY else "cpu")
        if fw in measured_fw and (claim.device is None or (fw, device) in measured_dev):
            continue
        chosen.setdefault((fw, claim.op, claim.api or claim.op, device, claim.dimension), claim)
    # The blog on unmeasured frameworks, where their own documentation says nothing (Caffe2's says little).
    apis: dict[tuple[str, str], set[str]] = {}
    for fw, op, api, _dev, _dim in chosen:
        apis.setdefault((fw, op), set()).add(api)
    for claim in claims:
        if claim.framework != "blog-2020" or not claim.about or claim.about in measured_fw:
            continue
        if claim.about in _NOT_COLUMNS:
            continue
        fw = claim.about
        device = claim.device or ("gpu" if fw in _GPU_ONLY else "cpu")
        known = apis.get((fw, claim.op), set())
        api = next(iter(known)) if len(known) == 1 else claim.op
        if not any(k[:2] == (fw, claim.op) and k[3:] == (device, claim.dimension) for k in chosen):
            chosen.setdefault((fw, claim.op, api, device, claim.dimension), claim)
    out = []
    for (fw, op, api, device, dim), claim in sorted(chosen.items(), key=lambda kv: _order(kv[0])):
        definite = claim.label not in DOC_ONLY_LABELS
        out.append(BehaviourRow(
            op=op, dimension=dim, framework=fw, framework_version="", variant=api, api=api, device=device,
            label=claim.label, conforms=conforms(op, dim, claim.label) if definite else None,
            documented=claim.label, documented_text=claim.text, documented_source=claim.source,
            documented_kind=claim.source_kind, measured=False, doc_only=reason_for(fw, device),
        ))
    return out


def _order(key: tuple[str, str, str, str, str]) -> tuple[Any, ...]:
    fw, op, api, device, dim = key
    dims = list(DIMENSIONS)
    return fw, op, device != "cpu", api, device, dims.index(dim) if dim in dims else len(dims)
