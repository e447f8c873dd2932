"""The MXNet adapter: every shipped case through the MXNet worker, and focused tests of the translation.

MXNet 1.9 lives in its own interpreter (.venv-mxnet, numpy<1.24), so every native call here goes through
harness.isolation.Isolated, the way `pytest cases --framework mxnet` runs it. Building a Call (prepare) imports no
MXNet, so the api strings and the Unsupported decisions are tested in this process.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest

ROOT = Path(__file__).resolve().parent.parent
MXNET_PYTHON = ROOT / ".venv-mxnet" / "bin" / "python"
if not MXNET_PYTHON.exists():
    pytest.skip("MXNet's environment is not built (make mxnet-env)", allow_module_level=True)
pytest.importorskip("execnet")

from adapters.base import CaseData, Unsupported  # noqa: E402
from adapters.mxnet import ADAPTER, element_coords  # noqa: E402
from harness import dtypes, wire  # noqa: E402
from harness.cases import Case, load_file  # noqa: E402
from harness.isolation import Isolated  # noqa: E402
from harness.ops import SCATTER_OPS, with_defaults  # noqa: E402
from harness.runner import execute  # noqa: E402

PYTHONS = {"mxnet": str(MXNET_PYTHON)}

_TAKE_NEG = "mx.nd.take's default mode 'clip' clips negative indices to 0 instead of wrapping them"
_RAISE_NEG = "MXNet's mode='raise' rejects every negative index, in-range ones included"
_CLIP_OOB = "mode 'clip' (mx.nd.take's default) clamps out-of-range indices instead of raising"
_LEGACY_0D = "mx.nd under legacy shape semantics has no 0-d arrays: shape inference of take fails"
_ND_RANK1 = "mx.nd.gather_nd requires an index array of rank >= 2 (rank-1 indices are one tuple)"
_PICK_NEG = "mx.nd.pick's default mode 'clip' clips negative indices to 0 instead of wrapping them"
_PICK_OOB = "mx.nd.pick has no 'raise' mode: out-of-range indices are clipped (mxnet#12009)"
_PICK_WRAP_OOB = "mx.nd.pick(mode='wrap') wraps out-of-range indices instead of raising"
_BF16_COPY = "mx.np ndarray.copy() of a bfloat16 array raises KeyError (numpy.void has no MXNet type)"
_BOOL_INDEX_COPY = "mx.nd.contrib.index_copy has no bool kernel: 'Unknown type enum 7'"
_OUTSIDE = ("MXNet scatters without a bounds check: an index outside [0, dim) (negatives included) is written "
            "outside the array — wrong result, heap corruption, abort or hang")

# (case nodeid, variant) -> why it deviates. Every entry is measured MXNet 1.9.1 behaviour, not a translation choice.
KNOWN_DEVIATIONS: dict[tuple[str, str], str] = {}

# Cases that make MXNet write outside an array (see _OUTSIDE) run in a throwaway worker: the heap damage they do
# surfaces later (an abort or a hang in whatever case runs next), so they must not share the warm worker.
OUTSIDE_TIMEOUT = 30.0


def _cases() -> list[Case]:
    out = []
    for path in sorted((ROOT / "cases").glob("*.yaml")):
        for entry in load_file(path, f"cases/{path.name}"):
            if isinstance(entry, Case) and "crash" not in entry.spec.tags:
                out.append(entry)
    return out


def _case_data(case: Case) -> CaseData:
    return CaseData(op=case.op, inputs=case.inputs(), attrs=case.attrs, opset=case.spec.opset)


def writes_outside(case: Case, variant: str) -> bool:
    """True when ``variant`` reaches an MXNet scatter with an index outside [0, dim) for its dimension."""
    if case.op not in SCATTER_OPS:
        return False
    try:
        ADAPTER.prepare(_case_data(case), variant)
    except (Unsupported, ValueError):
        return False
    data, indices = case.inputs()["data"], case.inputs()["indices"].astype(np.int64)
    if case.op == "ScatterND":
        k = indices.shape[-1] if indices.ndim else 0
        dims = np.array(data.shape[:k], dtype=np.int64)
        return bool(k <= data.ndim and ((indices < 0) | (indices >= dims)).any())
    axis = int(case.attrs["axis"])
    if not -data.ndim <= axis < data.ndim:
        return False
    return bool(((indices < 0) | (indices >= data.shape[axis])).any())


@pytest.fixture(scope="module")
def executor() -> Any:
    ex = Isolated(PYTHONS, timeout=120.0)
    yield ex
    ex.close()


def _run_outside(case: Case, variant: str) -> dict[str, Any]:
    ex = Isolated(PYTHONS, timeout=OUTSIDE_TIMEOUT)
    try:
        return execute(case, "mxnet", variant, ex)
    finally:
        ex.close()


def test_every_shipped_case(executor: Any) -> None:
    deviating: dict[tuple[str, str], str] = {}
    missing_reason = []
    outside_not_deviating = []
    for case in _cases():
        for variant in ADAPTER.variants(case.op):
            outside = writes_outside(case, variant)
            rec = _run_outside(case, variant) if outside else execute(case, "mxnet", variant, executor)
            if rec["verdict"] == "n/a" and not rec["reason"]:
                missing_reason.append((case.nodeid, variant))
            if rec["verdict"] == "deviates":
                deviating[(case.nodeid, variant)] = f"{rec['outcome']}: {rec['reason']}"[:160]
            elif outside:
                outside_not_deviating.append((case.nodeid, variant, rec["verdict"]))
    assert not missing_reason, f"n/a records without a reason: {missing_reason}"
    unexpected = {k: v for k, v in deviating.items() if k not in KNOWN_DEVIATIONS}
    fixed = sorted(k for k in KNOWN_DEVIATIONS if k not in deviating)
    assert not unexpected and not fixed, f"new deviations: {unexpected}\nno longer deviating: {fixed}"
