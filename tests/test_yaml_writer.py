"""The case files' one writer (harness/importers/yamltext.py): a found, an imported and a regression case, rendered
again from what the loader read, load back into identical cases (inputs, dtypes, attributes, expected, tags)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from gather_scatter_conformance.harness.cases.load import Case, load_file
from gather_scatter_conformance.harness.cases.values import to_array
from gather_scatter_conformance.harness.importers import yamltext

ROOT = Path(__file__).resolve().parents[1]


def _first(path: str, case_id: str) -> Case:
    (case,) = [c for c in load_file(ROOT / path, path) if isinstance(c, Case) and c.id == case_id]
    return case


def _fields(case: Case) -> dict:
    """The case's mapping with its inputs as the loader materialised them (generated ones too: written inline) and
    a value ``expected`` as an array of the output dtype (the data's)."""
    raw = {**case.raw, "inputs": case.inputs()}
    if "expected" in raw and not isinstance(raw["expected"], dict):
        raw["expected"] = to_array(raw["expected"], case.inputs()["data"].dtype.name)
    return raw


@pytest.mark.parametrize("path, case_id", [
    # a found case: the finding block, a batch_dims Gather that crashes OpenVINO
    ("cases/found/gather.yaml", "fuzz-gather-a35d640aa4"),
    # an imported case: ONNX's float inputs, exact to the bit
    ("cases/imported/onnx_node_gather.yaml", "test_gather_0"),
    # a regression case: a bug block, and a fill input written back inline
    ("cases/regression/gather.yaml", "tensorflow-61865-xla-gather-clamps"),
])
def test_written_case_loads_back_identical(tmp_path: Path, path: str, case_id: str) -> None:
    case = _first(path, case_id)
    text = yamltext.file_text(["round trip"], case.op, [yamltext.case_lines(_fields(case), ["why it exists"])])
    out = tmp_path / "case.yaml"
    out.write_text(text)
    (back,) = load_file(out, "case.yaml")
    assert isinstance(back, Case), str(back)
    assert (back.id, back.tags, back.attrs, back.spec.expected) == (case.id, case.tags, case.attrs, case.spec.expected)
    assert back.spec.finding == case.spec.finding and back.spec.bug == case.spec.bug
    for name, want in case.inputs().items():
        got = back.inputs()[name]
        assert got.dtype == want.dtype and got.shape == want.shape and got.tobytes() == want.tobytes(), name
    assert "  # why it exists\n  - id: " in text


def test_found_cases_carry_a_finding_and_a_one_line_description() -> None:
    for path in sorted((ROOT / "cases" / "found").glob("*.yaml")):
        for case in load_file(path, path.name):
            assert isinstance(case, Case), str(case)
            f = case.spec.finding
            assert f is not None and f.by.startswith("gsc fuzz --op ") and f.kinds, case.id
            assert not set(f.agree) & set(f.apis), case.id
            assert "\n" not in case.spec.description and len(case.spec.description) < 400, case.id
            assert np.all([api in case.spec.description for api in f.kinds]), case.id
