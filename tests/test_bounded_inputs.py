"""Case files may come from anyone (issue #37): whatever a file holds, loading and collecting it is bounded in time
and memory, and a file past a bound is one line naming file, line and field, never a traceback or a hang.

Each test is capped (pytest-timeout, or a subprocess timeout): on the unbounded code each ran for minutes or ate
gigabytes."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest
from _cases import GATHER_IN_RANGE

from gather_scatter_conformance.harness.cases.errors import CaseFileError
from gather_scatter_conformance.harness.cases.load import Case, load_file


@pytest.fixture(autouse=True)
def _no_parse_cache(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("GSC_CASE_CACHE", "off")  # each test measures a fresh load


def _load(tmp_path: Path, text: str) -> list[Case | CaseFileError]:
    path = tmp_path / "cases.yaml"
    path.write_text(textwrap.dedent(text))
    return load_file(path, "cases/x.yaml")


def _more(cases: str) -> str:
    """Cases to append to a file's ``cases:`` (written at any indent)."""
    return textwrap.indent(textwrap.dedent(cases), "  ")


def _errors(entries: list[Case | CaseFileError]) -> list[str]:
    return [str(e) for e in entries if isinstance(e, CaseFileError)]


def _laughs(levels: int) -> str:
    """A 'billion laughs' case file: each level an anchor aliasing the one below nine times (9**levels leaves)."""
    lines = ["op: Gather", "l0: &l0 [1, 2, 3, 4, 5, 6, 7, 8, 9]"]
    for i in range(1, levels + 1):
        lines.append(f"l{i}: &l{i} [" + ", ".join([f"*l{i - 1}"] * 9) + "]")
    lines += ["cases:", "  - id: laughs", "    source: test", f"    inputs: {{data: *l{levels}, indices: [0]}}"]
    return "\n".join(lines) + "\n"


# 1. YAML aliases ------------------------------------------------------------------------------------------------


@pytest.mark.timeout(20)
def test_an_alias_bomb_is_one_line_within_milliseconds(tmp_path: Path) -> None:
    text = _laughs(9)
    assert len(text) < 700
    start = time.perf_counter()
    entries = _load(tmp_path, text)
    elapsed = time.perf_counter() - start
    (msg,) = _errors(entries)
    assert msg.startswith("cases/x.yaml:"), msg
    assert "alias" in msg and "\n" not in msg, msg
    assert elapsed < 1.0, f"{elapsed:.1f} s"


def test_a_few_aliases_still_load(tmp_path: Path) -> None:
    entries = _load(tmp_path, """\
        op: Gather
        cases:
          - id: a
            source: &src test
            inputs: {data: &d [1, 2, 3], indices: [2, 0]}
          - id: b
            source: *src
            inputs: {data: *d, indices: [1]}
            attrs: {axis: 0}
        """)
    assert not _errors(entries)
    assert [e.inputs()["data"].tolist() for e in entries if isinstance(e, Case)] == [[1, 2, 3], [1, 2, 3]]


def test_a_duplicate_key_under_an_alias_is_still_found(tmp_path: Path) -> None:
    (msg,) = _errors(_load(tmp_path, GATHER_IN_RANGE + "  - &b {id: b, source: x, source: y, inputs: {}}\n  - *b\n"))
    assert msg == "cases/x.yaml:6: cases[1].source: duplicate key (first at line 6)"


@pytest.mark.timeout(20)
def test_a_recursive_alias_is_refused(tmp_path: Path) -> None:
    (msg,) = _errors(_load(tmp_path, GATHER_IN_RANGE + "  - id: r\n    source: x\n    inputs: &i {data: *i}\n"))
    assert msg.startswith("cases/x.yaml:8:") and "recursive" in msg, msg


# 2. File size ---------------------------------------------------------------------------------------------------


@pytest.mark.timeout(20)
def test_a_case_file_over_the_size_limit_is_refused_before_it_is_read(tmp_path: Path,
                                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "big.yaml"
    with path.open("w") as fh:  # 50 MB: 224 s then a MemoryError traceback at 5.7 GB before the limit
        fh.write(GATHER_IN_RANGE + "  - id: big\n    source: test\n    inputs:\n      indices: [0]\n      data: [")
        fh.write("1, " * (50 * 2**20 // 3))
        fh.write("1]\n")
    start = time.perf_counter()
    (msg,) = _errors(load_file(path, "cases/big.yaml"))
    assert time.perf_counter() - start < 1.0
    assert msg.startswith("cases/big.yaml: too large: 50.0 MiB, more than the 4 MiB a case file may have"), msg
    assert "GSC_CASE_FILE_LIMIT" in msg
    monkeypatch.setenv("GSC_CASE_FILE_LIMIT", "0.00001")  # raised or lowered by the variable (10 bytes)
    (msg,) = _errors(_load(tmp_path, GATHER_IN_RANGE))
    assert "more than the 1e-05 MiB" in msg


def test_the_shipped_case_files_are_far_below_the_size_limit() -> None:
    from gather_scatter_conformance import resources
    from gather_scatter_conformance.harness.cases.load import file_limit

    largest = max(p.stat().st_size for p in resources.cases_dir().rglob("*.yaml"))
    assert largest * 50 < file_limit(), largest


# 3. Integers the harness encodes --------------------------------------------------------------------------------


@pytest.mark.parametrize(("attrs", "fragment"), [
    ("{axis: 1e29}", "'1e29' is not an integer"),
    ("{axis: 1.0e+29}", "1e+29 is not an integer"),
    ("{axis: 100000000000000000000000000000}", "is out of range for int64"),
    ("{batch_dims: -9223372036854775809}", "is out of range for int64"),
    ("{axis: 2.0}", "2.0 is not an integer"),
])
def test_an_integer_attribute_must_be_an_int64(tmp_path: Path, attrs: str, fragment: str) -> None:
    (msg,) = _errors(_load(tmp_path, GATHER_IN_RANGE + f"  - id: a\n    source: x\n    inputs: {{data: [1], "
                                                       f"indices: [0]}}\n    attrs: {attrs}\n"))
    assert msg.startswith("cases/x.yaml:9: cases[1].attrs."), msg
    assert fragment in msg, msg


def test_an_int64_axis_out_of_the_data_rank_is_still_a_case(tmp_path: Path) -> None:
    entries = _load(tmp_path, GATHER_IN_RANGE + "  - id: a\n    source: x\n    inputs: {data: [1], indices: [0]}\n"
                                                "    attrs: {axis: 9223372036854775807}\n")
    assert not _errors(entries)


@pytest.mark.parametrize(("field", "value"), [
    ("opset", "100000000000000000000000"), ("opset", "13.0"), ("repeat", "2.0"),
])
def test_other_encoded_integers_are_bounded_ints(tmp_path: Path, field: str, value: str) -> None:
    (msg,) = _errors(_load(tmp_path, GATHER_IN_RANGE + f"  - id: a\n    source: x\n    {field}: {value}\n"
                                                       f"    inputs: {{data: [1], indices: [0]}}\n"))
    assert msg.startswith(f"cases/x.yaml:8: cases[1].{field}:"), msg


@pytest.mark.parametrize("spec", [
    "{random: {shape: [2], seed: -1}}", "{random: {shape: [2], seed: 100000000000000000000000}}",
    "{random: {shape: [2.0]}}", "{random: {shape: ['2']}}",
])
def test_a_seed_or_extent_is_a_bounded_int(tmp_path: Path, spec: str) -> None:
    (msg,) = _errors(_load(tmp_path, GATHER_IN_RANGE + f"  - id: a\n    source: x\n    inputs:\n"
                                                       f"      indices: [0]\n      data: {spec}\n"))
    assert msg.startswith("cases/x.yaml:10: cases[1].inputs.data.random."), msg


def test_the_published_schema_bounds_integer_attributes() -> None:
    import json

    from gather_scatter_conformance import resources
    from gather_scatter_conformance.harness.cases.schema import json_schema

    shipped = json.loads((resources.cases_dir() / "schema.json").read_text())
    assert shipped == json_schema(), "cases/schema.json is stale: make schema"
    attrs = shipped["$defs"]["CaseSpec"]["properties"]["attrs"]["additionalProperties"]
    assert {"type": "integer", "minimum": -(2**63), "maximum": 2**63 - 1} in attrs["anyOf"]


# 4. Memory ------------------------------------------------------------------------------------------------------


def _big(tmp_path: Path, data: str) -> list[Case | CaseFileError]:
    return _load(tmp_path, GATHER_IN_RANGE + f"  - id: big\n    source: test\n    inputs:\n      indices: [0]\n"
                                             f"      data: {data}\n")


@pytest.mark.timeout(30)
@pytest.mark.parametrize(("data", "mib"), [
    ("{fill: {value: 0, shape: [200000, 20000], dtype: float32}}", "15259"),
    ("{random: {shape: [100000, 100000, 100000]}}", "3814697266"),
])
def test_an_input_over_the_memory_budget_is_a_case_error_before_it_is_made(tmp_path: Path, data: str,
                                                                          mib: str) -> None:
    import resource

    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    entries = _big(tmp_path, data)
    assert resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before < 100 * 1024  # KiB: nothing was allocated
    (msg,) = _errors(entries)
    assert msg.startswith("cases/x.yaml:10: cases[1].inputs.data:"), msg
    assert f"too large: needs {mib} MiB of inputs, budget 256 MiB (raise with GSC_CASE_MEMORY" in msg, msg
    assert [e.id for e in entries if isinstance(e, Case)] == ["in-range"]  # the rest of the file goes on


def test_the_budget_counts_every_input_of_a_case_and_can_be_raised(tmp_path: Path,
                                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("GSC_CASE_MEMORY", "1")  # MiB
    text = GATHER_IN_RANGE + _more("""\
          - id: two
            source: test
            inputs:
              data: {random: {shape: [100000], dtype: float32}}
              indices: {generate: {kind: in-range, shape: [100000]}}
        """)
    (msg,) = _errors(_load(tmp_path, text))
    assert msg.startswith("cases/x.yaml:10: cases[1].inputs.indices:"), msg
    assert "needs 1.1 MiB of inputs, budget 1 MiB" in msg
    monkeypatch.setenv("GSC_CASE_MEMORY", "2")
    assert not _errors(_load(tmp_path, text))


def test_generated_unique_indices_count_their_scratch_arrays(tmp_path: Path) -> None:
    # 1000 unique indices along an axis of 10**7: the generator sorts a 10**7 x 1000 key array (80 GB).
    (msg,) = _errors(_load(tmp_path, GATHER_IN_RANGE + _more("""\
          - id: u
            source: test
            inputs:
              data: {fill: {value: 0, shape: [10000000], dtype: uint8}}
              indices: {generate: {kind: unique, shape: [1000, 1000]}}
            attrs: {axis: 0}
        """)))
    assert "cases[1].inputs.indices: too large" in msg, msg


def test_a_large_input_under_the_budget_is_not_kept_from_collection(tmp_path: Path) -> None:
    (_, case) = _big(tmp_path, "{fill: {value: 0, shape: [1000, 1000], dtype: float32}}")
    assert isinstance(case, Case) and case._inputs is None  # validated at load, made again when it runs
    assert case.inputs()["data"].shape == (1000, 1000)


# 5. Symlink loops -----------------------------------------------------------------------------------------------


def _looped(tmp_path: Path, loops: int) -> Path:
    root = tmp_path / "mine"
    (root / "sub").mkdir(parents=True)
    (root / "sub" / "gather.yaml").write_text(GATHER_IN_RANGE)  # mine/again.yaml is it too (two loops)
    (root / "sub" / "up").symlink_to("..")
    if loops > 1:
        (root / "self").symlink_to(".")
        (root / "again.yaml").symlink_to("sub/gather.yaml")  # the same file twice: collected once
    return root


def _run(args: list[str], cwd: Path, timeout: float = 60) -> subprocess.CompletedProcess[str]:
    import gather_scatter_conformance

    here = str(Path(gather_scatter_conformance.__file__).parents[1])  # this checkout's package, not an installed one
    env = {**os.environ, "GSC_CASE_CACHE": "off", "GSC_RESULT_CACHE": "off",
           "PYTHONPATH": os.pathsep.join([here, *filter(None, [os.environ.get("PYTHONPATH")])])}
    return subprocess.run([sys.executable, *args], cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout)


@pytest.mark.parametrize("loops", [1, 2])
def test_a_symlink_loop_is_not_followed_and_a_file_is_collected_once(tmp_path: Path, loops: int) -> None:
    root = _looped(tmp_path, loops)
    done = _run(["-m", "pytest", "--collect-only", "-q", "-p", "no:cacheprovider", "--framework", "numpy",
                 "--gsc-isolation", "none", str(root)], tmp_path)
    ids = [line for line in done.stdout.splitlines() if "::" in line]
    assert len(ids) == 1 and ids[0].endswith(".yaml::in-range[numpy]"), done.stdout[-2000:] + done.stderr[-2000:]


def test_validate_walks_a_folder_once_through_its_loops(tmp_path: Path) -> None:
    root = _looped(tmp_path, 2)
    done = _run(["-m", "gather_scatter_conformance", "validate", str(root)], tmp_path)
    assert done.stdout.splitlines()[-1] == "1 valid case(s), 0 error(s)", done.stdout + done.stderr
