"""`gsc import onnx-node`: the committed cases/imported files are exactly a fresh import of ONNX's
node tests, and every imported case holds ONNX's inputs and output bit for bit."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import ml_dtypes
import numpy as np
import onnx
import pytest

from gather_scatter_conformance.harness.cases import yamlsrc
from gather_scatter_conformance.harness.cases.load import Case, load_file
from gather_scatter_conformance.harness.importers import onnx_node, yamltext
from gather_scatter_conformance.vocab.ops import INPUTS, OPS

ROOT = Path(__file__).resolve().parents[1]
IMPORTED = ROOT / "cases" / "imported"


@pytest.fixture(scope="module")
def tests_and_skipped() -> tuple[list[onnx_node.NodeTest], list[tuple[str, str]]]:
    return onnx_node.node_tests()


@pytest.fixture(scope="module")
def loaded() -> dict[str, Case]:
    out: dict[str, Case] = {}
    for path in sorted(IMPORTED.glob("onnx_node_*.yaml")):
        for entry in load_file(path, path.relative_to(ROOT).as_posix()):
            assert isinstance(entry, Case), str(entry)
            out[entry.id] = entry
    return out


@pytest.mark.slow
def test_committed_files_equal_a_fresh_import() -> None:
    # --check in a separate interpreter: the committed bytes equal what a fresh import writes, so the import
    # depends on nothing in this process (and the files must be regenerated when ONNX's tests change).
    check = subprocess.run([sys.executable, "-m", "gather_scatter_conformance", "import", "onnx-node", "--check"],
                           cwd=ROOT, capture_output=True, text=True, timeout=300)
    hint = f"re-run `gsc import onnx-node` (onnx {onnx.__version__})"
    assert check.returncode == 0, f"{hint}:\n{check.stdout}"
    # One file per operator of the vocabulary that ONNX has (Take is NumPy's).
    assert sorted(p.name for p in IMPORTED.glob("*.yaml")) == sorted(
        onnx_node.file_name(op) for op in OPS if op != "Take")


@pytest.mark.slow  # over 5 s here (make check: tests under 5 s each)
def test_check_finds_a_stale_file(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from gather_scatter_conformance.harness.cli import main

    assert main(["import", "onnx-node", "--out", str(tmp_path)]) == 0
    assert main(["import", "onnx-node", "--check", "--out", str(tmp_path)]) == 0
    text = (tmp_path / "onnx_node_gather.yaml").read_text()
    (tmp_path / "onnx_node_gather.yaml").write_text(text.replace("1.7640524", "1.7640525", 1))
    capsys.readouterr()
    assert main(["import", "onnx-node", "--check", "--out", str(tmp_path)]) == 1
    out = capsys.readouterr().out
    assert "stale:" in out and "onnx_node_gather.yaml" in out and "gather_nd" not in out


def test_the_operators_have_29_tests_and_none_is_left_out(tests_and_skipped) -> None:
    tests, skipped = tests_and_skipped
    assert onnx.__version__ == "1.23.2", "recount the operators' node tests for this onnx version"
    assert len(tests) == 29  # 26 of the gather/scatter family, 3 of TensorScatter (opset 24)
    assert sum(t.op_type == "TensorScatter" for t in tests) == 3
    assert skipped == []  # every test whose name says gather or scatter is one of the operators'
    header = (IMPORTED / "onnx_node_tensor_scatter.yaml").read_text().split("\nop:")[0]
    assert "3 TensorScatter tests" in header


def test_each_case_is_its_node_test_bit_for_bit(tests_and_skipped, loaded: dict[str, Case]) -> None:
    tests, _ = tests_and_skipped
    assert sorted(loaded) == sorted(t.name for t in tests)
    for t in tests:
        case = loaded[t.name]
        assert case.spec.source == f"onnx {onnx.__version__} backend node test {t.name}"
        assert case.op == onnx_node.FAMILY[t.op_type]
        assert case.spec.opset == (onnx_node.SCATTER_OPSET if t.op_type == "Scatter" else t.opset)
        assert case.spec.attrs == t.attrs
        for name, want in zip(INPUTS[case.op], t.inputs, strict=False):  # an optional input may be left out
            got = case.inputs()[name]
            assert got.dtype == want.dtype and got.shape == want.shape
            assert got.tobytes() == want.tobytes(), f"{t.name}.{name} does not round-trip"
        expected = yamltext_array(case)
        assert expected.tobytes() == t.output.tobytes() and expected.shape == t.output.shape, t.name
        assert case.spec.caveat is None, f"{t.name}: the reference engine disagrees with ONNX"


def yamltext_array(case: Case) -> np.ndarray:
    """The case's declared expected value as an array of the output dtype (how the loader reads it)."""
    from gather_scatter_conformance.harness.cases.values import to_array

    return to_array(case.spec.expected, case.inputs()["data"].dtype.name)


def test_scatter_becomes_scatter_elements_11(loaded: dict[str, Case]) -> None:
    case = loaded["test_scatter_with_axis"]
    assert case.op == "ScatterElements" and case.spec.opset == 11
    assert "deprecated Scatter" in case.spec.description and "opset 10" in case.spec.description


def test_a_disagreeing_reference_gives_a_caveat_not_an_expected_value(tests_and_skipped) -> None:
    tests, _ = tests_and_skipped
    t = next(t for t in tests if t.name == "test_gather_elements_0")
    wrong = onnx_node.NodeTest(t.name, t.op_type, t.opset, t.attrs, t.inputs, t.output + 1)
    imported = onnx_node.convert(wrong, "x")
    assert "expected" not in imported.fields
    assert imported.fields["caveat"]["kind"] == "ambiguous"
    assert "4 element(s) differ" in imported.fields["caveat"]["why"]
    assert imported.notes and "disagrees" in imported.fields["description"]
    agreeing = onnx_node.convert(t, "x")
    assert "caveat" not in agreeing.fields and not agreeing.notes


@pytest.mark.parametrize("dtype", ["float16", "bfloat16", "float32", "float64"])
def test_float_spelling_reads_back_to_the_same_bits(dtype: str) -> None:
    from gather_scatter_conformance.harness.cases.values import to_array
    from gather_scatter_conformance.vocab import dtypes

    np_dtype = dtypes.to_numpy(dtype)
    rng = np.random.default_rng(7)
    raw = rng.integers(0, 2 ** (8 * np_dtype.itemsize), 4000, dtype=np.uint64)
    values = raw.astype({2: np.uint16, 4: np.uint32, 8: np.uint64}[np_dtype.itemsize]).view(np_dtype)
    with np.errstate(invalid="ignore"):
        values = values[np.isfinite(values.astype(np.float64))]  # NaN payloads are not kept: .nan is one NaN
    info = ml_dtypes.finfo(np_dtype)
    values = np.concatenate([values, np.array([0.0, -0.0, info.smallest_subnormal, info.max, 1.1], np_dtype)])
    texts = [yamltext.float_text(v, dtype) for v in values]
    data, _ = yamlsrc.load("[" + ", ".join(texts) + "]", "<test>")
    back = to_array(data, dtype)
    assert back.tobytes() == values.tobytes()


def test_long_strings_fold_back_to_the_same_text() -> None:
    text = "a description " * 20 + "with  two spaces and a \"quote\" " + "tail " * 10
    folded = yamltext.string(text, 17)
    assert "\n" in folded
    data, _ = yamlsrc.load(f"description: {folded}\n", "<test>")
    assert data["description"] == text


def test_out_must_be_a_directory(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from gather_scatter_conformance.harness.cli import main

    assert main(["import", "onnx-node", "--out", str(tmp_path / "onnx_node.yaml")]) == 2
    assert "give a directory" in capsys.readouterr().err
    assert not (tmp_path / "onnx_node.yaml").exists()
