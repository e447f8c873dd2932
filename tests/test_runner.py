"""The pytest runner end to end: ids, results records, bad files reported cleanly while other files still run."""

from __future__ import annotations

import sys
import textwrap

import pytest
from _cases import GATHER_IN_RANGE, records_of

GATHER = GATHER_IN_RANGE + """\
    expected: [3, 1]
  - id: oob
    source: test
    inputs: {data: [1, 2, 3], indices: [3]}
    expected: {error: true}
  - id: take-fill
    source: test
    inputs: {data: [1, 2, 3], indices: [-1]}
    expected: [3]
"""


@pytest.fixture
def project(pytester: pytest.Pytester) -> pytest.Pytester:
    cases = pytester.mkdir("cases")
    (cases / "gather.yaml").write_text(GATHER)
    (cases / "broken.yaml").write_text("op: Gather\ncases:\n  - id: x\n    inputs: {data: [1, 2\n")
    (cases / "take.yaml").write_text(
        textwrap.dedent("""\
        op: Take
        cases:
          - id: fill-mode
            source: test
            inputs: {data: [1, 2, 3], indices: [5]}
            attrs: {axis: 0, mode: fill}
        """)
    )
    return pytester


def test_ids_records_and_clean_errors(project: pytest.Pytester) -> None:
    result = project.runpytest_subprocess(
        "cases", "--framework", "numpy", "--results", "r.jsonl", "-v", "-p", "no:cacheprovider"
    )
    out = result.stdout.str()
    assert "cases/gather.yaml::in-range[numpy] PASSED" in out
    assert "cases/gather.yaml::oob[numpy] PASSED" in out
    assert "cases/take.yaml::fill-mode[numpy] SKIPPED" in out
    # The broken file is one failing item with one clear line, no traceback; the other files still ran.
    assert "cases/broken.yaml:5: YAML syntax error" in out
    assert "Traceback" not in out
    result.assert_outcomes(passed=3, failed=1, skipped=1)
    records = records_of(project.path / "r.jsonl")
    assert {r["case"] for r in records} == {
        "cases/gather.yaml::in-range",
        "cases/gather.yaml::oob",
        "cases/gather.yaml::take-fill",
        "cases/take.yaml::fill-mode",
    }
    by_case = {r["case_id"]: r for r in records}
    assert by_case["oob"]["outcome"] == "error" and by_case["oob"]["verdict"] == "conforms"
    assert by_case["oob"]["error_type"] == "IndexError"
    assert by_case["in-range"]["api"] == "np.take(data, indices, axis=0)"
    assert by_case["fill-mode"]["outcome"] == "unsupported" and by_case["fill-mode"]["verdict"] == "n/a"
    for rec in records:
        for key in (
            "case",
            "op",
            "framework",
            "framework_version",
            "api",
            "device",
            "outcome",
            "verdict",
            "error_type",
            "error_message",
            "max_abs_err",
            "mismatches",
            "duration_s",
        ):
            assert key in rec or rec["outcome"] != "ok", (key, rec)


def test_collection_imports_no_framework(project: pytest.Pytester) -> None:
    """Collecting with every installed adapter imports none of any registered adapter's modules (their
    ``requires``, adapters.framework_modules()), whatever the registry holds."""
    probe = project.run(
        sys.executable,
        "-c",
        "import sys, pytest; pytest.main(['cases', '--collect-only', '-q', '-p', 'no:cacheprovider']); "
        "from gather_scatter_conformance import adapters; names = adapters.framework_modules(); "
        "print('CHECKED', len(names), 'IMPORTED', [m for m in names if m in sys.modules])",
    )
    assert "IMPORTED []" in probe.stdout.str()
    assert "CHECKED 0 " not in probe.stdout.str()
