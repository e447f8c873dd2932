"""Each kind of bad case file gets one clear error naming file, line and field; the rest of the file still loads."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from gather_scatter_conformance.harness.cases.errors import CaseFileError
from gather_scatter_conformance.harness.cases.load import Case, load_file

GOOD = """\
  - id: good
    source: test
    inputs:
      data: [1, 2, 3]
      indices: [2, 0]
    expected: [3, 1]
"""


def _load(tmp_path: Path, text: str) -> list[Case | CaseFileError]:
    path = tmp_path / "cases.yaml"
    path.write_text(textwrap.dedent(text))
    return load_file(path, "cases/x.yaml")


def _errors(entries: list[Case | CaseFileError]) -> list[CaseFileError]:
    return [e for e in entries if isinstance(e, CaseFileError)]


def _one_error(entries: list[Case | CaseFileError]) -> str:
    errors = _errors(entries)
    assert len(errors) == 1, errors
    return str(errors[0])


def test_yaml_syntax_error_names_line(tmp_path: Path) -> None:
    msg = _one_error(_load(tmp_path, "op: Gather\ncases:\n  - id: a\n    inputs: {data: [1, 2\n"))
    assert msg.startswith("cases/x.yaml:")
    assert "YAML syntax error" in msg
    assert int(msg.split(":")[1]) >= 4


def test_unknown_operator(tmp_path: Path) -> None:
    msg = _one_error(_load(tmp_path, "op: Gathr\ncases:\n" + GOOD))
    assert msg.startswith("cases/x.yaml:1: op:"), msg
    assert "Gather" in msg


def test_unknown_attribute_and_others_still_load(tmp_path: Path) -> None:
    entries = _load(
        tmp_path,
        "op: Gather\ncases:\n"
        + GOOD.replace("good", "bad").replace("    expected: [3, 1]\n", "    attrs: {axis: 0, bogus: 1}\n")
        + GOOD,
    )
    msg = _one_error(entries)
    assert msg == "cases/x.yaml:8: cases[0].attrs.bogus: unknown attribute for Gather; expected one of axis, batch_dims"
    assert [e.id for e in entries if isinstance(e, Case)] == ["good"]


def test_missing_input(tmp_path: Path) -> None:
    msg = _one_error(_load(tmp_path, "op: ScatterND\ncases:\n" + GOOD.replace("    expected: [3, 1]\n", "")))
    assert msg.startswith("cases/x.yaml:5: cases[0].inputs: missing input 'updates'"), msg


@pytest.mark.parametrize(
    ("spec", "field", "fragment"),
    [
        ("{value: [1.5, 0], dtype: int64}", "cases[0].inputs.indices.value", "1.5 is not an integer"),
        ("{value: [300], dtype: uint8}", "cases[0].inputs.indices.value", "out of range for uint8"),
        ("{value: [[1, 0], [1]], dtype: int64}", "cases[0].inputs.indices.value", "different lengths"),
        ("{value: [1, 0, 1], dtype: int64, shape: [2, 2]}", "cases[0].inputs.indices.shape", "does not fit shape"),
        ("{value: [0], dtype: int65}", "cases[0].inputs.indices", "Input should be"),
    ],
)
def test_value_does_not_match_dtype_or_shape(tmp_path: Path, spec: str, field: str, fragment: str) -> None:
    text = "op: Gather\ncases:\n" + GOOD.replace("indices: [2, 0]", f"indices: {spec}").replace(
        "    expected: [3, 1]\n", ""
    )
    msg = _one_error(_load(tmp_path, text))
    assert msg.startswith(f"cases/x.yaml:7: {field}"), msg
    assert fragment in msg


def test_duplicate_id(tmp_path: Path) -> None:
    entries = _load(tmp_path, "op: Gather\ncases:\n" + GOOD + GOOD)
    assert _one_error(entries) == "cases/x.yaml:9: cases[1].id: duplicate id 'good' (first at line 3)"


def test_expected_disagrees_with_reference(tmp_path: Path) -> None:
    msg = _one_error(_load(tmp_path, "op: Gather\ncases:\n" + GOOD.replace("expected: [3, 1]", "expected: [3, 2]")))
    assert msg.startswith("cases/x.yaml:8: cases[0].expected: disagrees with the reference engine"), msg
    assert "first at [1]: declared 2.0, reference 1.0" in msg


def test_expected_error_that_is_not(tmp_path: Path) -> None:
    msg = _one_error(
        _load(tmp_path, "op: Gather\ncases:\n" + GOOD.replace("expected: [3, 1]", "expected: {error: true}"))
    )
    assert "says error: true, but the reference engine computes a value" in msg


def test_duplicate_yaml_key(tmp_path: Path) -> None:
    msg = _one_error(
        _load(tmp_path, "op: Gather\ncases:\n" + GOOD.replace("    source: test\n", "    source: a\n    source: b\n"))
    )
    assert msg == "cases/x.yaml:5: cases[0].source: duplicate key (first at line 4)"


def test_missing_source(tmp_path: Path) -> None:
    msg = _one_error(_load(tmp_path, "op: Gather\ncases:\n" + GOOD.replace("    source: test\n", "")))
    assert msg.startswith("cases/x.yaml:3: cases[0].source: Field required"), msg


def test_good_file_has_no_errors(tmp_path: Path) -> None:
    entries = _load(tmp_path, "op: Gather\ncases:\n" + GOOD)
    assert not _errors(entries)
    (case,) = entries
    assert case.nodeid == "cases/x.yaml::good"
    assert case.inputs()["indices"].dtype.name == "int64"
    assert case.inputs()["data"].dtype.name == "float32"


def _filled(tmp_path: Path, fill: str) -> list[Case | CaseFileError]:
    """A Gather case whose data is ``{fill: <fill>}`` (the fill's line is line 6)."""
    return _load(tmp_path, f"op: Gather\ncases:\n  - id: f\n    source: test\n    inputs:\n"
                           f"      data: {{fill: {fill}}}\n      indices: [0]\n")


def test_a_fill_input_is_a_constant_array(tmp_path: Path) -> None:
    (case,) = _filled(tmp_path, "{value: 1.5, shape: [2, 3], dtype: float16}")
    assert isinstance(case, Case), case
    data = case.inputs()["data"]
    assert data.dtype == "float16" and data.shape == (2, 3) and (data == 1.5).all()
    assert case.reference().tolist() == [[1.5, 1.5, 1.5]]


def test_a_bad_fill_names_its_field(tmp_path: Path) -> None:
    msg = _one_error(_filled(tmp_path, "{value: 1.0, shape: [-2]}"))
    assert msg.startswith("cases/x.yaml:6: cases[0].inputs.data.fill.shape:"), msg


def test_a_probe_is_tagged_with_probe_and_its_dimension(tmp_path: Path) -> None:
    entries = _load(tmp_path, """\
        op: Gather
        cases:
          - id: p
            source: test
            dimension: negative-indices
            tags: [mine]
            inputs: {data: [1, 2, 3], indices: [-1]}
        """)
    case = entries[0]
    assert isinstance(case, Case), case
    assert case.tags == ["probe", "negative-indices", "data:float32", "mine"]


def test_data_dtypes_makes_a_copy_per_dtype_with_data_and_updates_of_it(tmp_path: Path) -> None:
    entries = _load(tmp_path, """\
        op: ScatterElements
        cases:
          - id: p
            source: test
            dimension: oob-positive
            data_dtypes: [int16, bfloat16]
            inputs:
              data: {value: [10, 20, 30], dtype: float32}
              indices: [1, 7]
              updates: {value: [-1, -2], dtype: float32}
        """)
    assert not _errors(entries), entries
    cases = {c.id: c for c in entries if isinstance(c, Case)}
    assert list(cases) == ["p", "p-int16", "p-bfloat16"]
    copy = cases["p-int16"].inputs()
    assert (str(copy["data"].dtype), str(copy["updates"].dtype), str(copy["indices"].dtype)) == ("int16", "int16",
                                                                                                  "int64")
    assert copy["data"].tolist() == [10, 20, 30]
    assert str(cases["p-bfloat16"].inputs()["data"].dtype) == "bfloat16"
    assert [c.tags[2] for c in cases.values()] == ["data:float32", "data:int16", "data:bfloat16"]
    assert cases["p-int16"].line == cases["p"].line  # an error in a copy points at the case written


def test_a_copy_is_no_focus_case_for_the_variants_that_compile_per_shape(tmp_path: Path) -> None:
    """#38: the copies on every compiled variant (torch.compile, jit, converter paths) were a quarter of a run's
    records and half its call time. A copy is tagged dtype-copy and runs on the fast variants; a slow one runs the
    case it copies, and the copies too with --slow-variants all."""
    import subprocess
    import sys

    (tmp_path / "c.yaml").write_text(textwrap.dedent("""\
        op: Gather
        cases:
          - id: p
            source: test
            dimension: oob-positive
            data_dtypes: [int16]
            inputs:
              data: {value: [10, 20, 30], dtype: float32}
              indices: [1, 7]
        """))

    def collected(*extra: str) -> list[str]:
        done = subprocess.run([sys.executable, "-m", "pytest", "c.yaml", "--framework", "torch", "--co", "-q",
                               "-p", "no:cacheprovider", *extra], cwd=tmp_path, capture_output=True, text=True)
        return [line.split("::")[-1] for line in done.stdout.splitlines() if "::" in line]

    default = collected()
    assert {"p[torch]", "p[torch:index_select/compile]", "p-int16[torch]", "p-int16[torch:indexing]"} <= set(default)
    assert not [item for item in default if item.startswith("p-int16") and "compile" in item]
    assert "p-int16[torch:index_select/compile]" in collected("--slow-variants", "all")
    (copy,) = [c for c in _load(tmp_path, (tmp_path / "c.yaml").read_text()) if c.id == "p-int16"]
    assert "dtype-copy" in copy.tags


def test_a_value_a_listed_dtype_cannot_hold_names_the_copy(tmp_path: Path) -> None:
    message = _one_error(_load(tmp_path, """\
        op: ScatterElements
        cases:
          - id: p
            source: test
            dimension: oob-positive
            data_dtypes: [int8, uint8]
            inputs:
              data: [10, 20, 30]
              indices: [1, 7]
              updates: [-1, -2]
        """))
    assert "p-uint8" in message and "updates" in message and "cases/x.yaml:" in message


def test_an_unknown_name_in_data_dtypes_is_one_error_and_makes_no_copy(tmp_path: Path) -> None:
    message = _one_error(_load(tmp_path, """\
        op: Gather
        cases:
          - id: p
            source: test
            dimension: oob-positive
            data_dtypes: [int8, "../<script>"]
            inputs: {data: [10, 20, 30], indices: [7]}
        """))
    assert "data_dtypes[1]" in message and "cases/x.yaml:6" in message


TENSOR_SCATTER = """\
op: TensorScatter
cases:
  - id: no-write-indices
    source: test
    inputs:
      data: {value: [[[1], [2], [3]]], dtype: float32}
      updates: {value: [[[-1]]], dtype: float32}
  - id: bad-mode
    source: test
    inputs:
      data: {value: [[[1], [2], [3]]], dtype: float32}
      updates: {value: [[[-1]]], dtype: float32}
    attrs: {mode: ring}
  - id: no-updates
    source: test
    inputs:
      data: {value: [[[1], [2], [3]]], dtype: float32}
"""


def test_an_optional_input_may_be_left_out_and_choices_come_from_the_vocabulary(tmp_path: Path) -> None:
    entries = _load(tmp_path, TENSOR_SCATTER)
    case = entries[0]
    assert isinstance(case, Case) and set(case.inputs()) == {"data", "updates"}
    assert case.reference().reshape(-1).tolist() == [-1, 2, 3]  # absent write indices are zeros
    errors = [str(e) for e in _errors(entries)]
    assert len(errors) == 2
    assert "cases/x.yaml:13: cases[1].attrs.mode: 'ring' is not one of linear, circular" in errors[0]
    assert "missing input 'updates' (TensorScatter needs data, updates)" in errors[1]
