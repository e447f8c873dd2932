"""The default-axis probes end to end: every adapter leaves an omitted axis out of its native call.

The probes are the ``dimension: default-axis`` cases of cases/probes/*.yaml (``omit: [axis]``); their labels per
(framework, variant) live in baselines/<framework>.yaml and are checked by ``pytest cases/probes --framework NAME``.
What a label cannot show is checked here: a call that ran passes no ``axis=`` (the framework's own default decided),
and a ``required`` label comes from the adapter's "axis is required (no default)", not from some other refusal.
"""

from __future__ import annotations

import pytest
from _shipped import ROOT

from gather_scatter_conformance import adapters
from gather_scatter_conformance.harness.cases.load import Case, load_file
from gather_scatter_conformance.harness.run.runner import InProcess, execute

PROBES = [
    case
    for path in sorted((ROOT / "cases" / "probes").glob("*.yaml"))
    for case in load_file(path, path.relative_to(ROOT).as_posix())
    if isinstance(case, Case) and case.spec.dimension == "default-axis"
]
# Frameworks that run together in one process (MXNet runs in its own interpreter; paddle segfaults in a process
# that has run the others: `pytest cases/probes --framework NAME` covers those in isolation). A subset of the
# registry: tests/test_registry_lists.py checks the names.
FRAMEWORKS = ["numpy", "onnx-reference", "onnxruntime", "openvino", "tensorflow", "torch", "jax"]


def test_the_probes_exist() -> None:
    assert len(PROBES) >= 6, [c.nodeid for c in PROBES]
    assert all("axis" in c.spec.omit for c in PROBES)


@pytest.mark.parametrize("framework", FRAMEWORKS)
@pytest.mark.parametrize("case", PROBES, ids=lambda c: c.nodeid)
def test_an_omitted_axis_stays_out_of_the_call(framework: str, case: Case) -> None:
    if not adapters.is_available(framework):
        pytest.skip(f"no {framework} adapter in this interpreter")
    for variant in adapters.get(framework).variants(case.op):
        record = execute(case, framework, variant, InProcess())
        if record.outcome in ("ok", "error"):
            assert "axis=" not in record.api, (variant, record.api)
        if record.label == "required" and record.outcome == "unsupported":
            assert "axis is required (no default)" in record.reason, (variant, record.reason)
