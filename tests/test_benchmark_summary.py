"""benchmarks/run.py's rows and closing summary print every kind of row: a claim with no value (its part failed or
was skipped) reads n/a instead of ending the run in a TypeError after minutes of measuring."""

from __future__ import annotations

import io
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from benchmarks.common import Row, print_rows, summary_lines  # noqa: E402


def rows() -> list[Row]:
    return [
        Row("overhead", "numpy (40 cases)", 1.2, "<= 1.5", True),
        Row("overhead", "tfjs", None, "<= 1.5", False, "x", "failed: ZeroDivisionError('float division by zero')"),
        Row("onnx-runner", "onnx runner / harness", None, ">= 10", None, "x", "skipped"),
        Row("report", "skipped: needs chromium", None),
        Row("collection", "as-is (3 items)", 4.76, "<= 1.5 s", False, "s"),
        Row("overhead", "  cache over the suite", None, "", None, "%", "RuntimeError()"),
    ]


def test_summary_counts_claims_and_lists_misses_a_missing_value_as_na() -> None:
    lines = summary_lines(rows())
    assert lines[0] == "summary: 1 of 3 claims hold"
    assert lines[1:] == ["  misses: overhead tfjs: n/a (target <= 1.5)",
                         "  misses: collection as-is (3 items): 4.76 s (target <= 1.5 s)"]


def test_every_row_prints() -> None:
    out = io.StringIO()
    print_rows(rows(), out)
    text = out.getvalue()
    assert text.count("\n") == len(rows()) and "n/a" in text and "1.20x" in text and "4.76 s" in text


def test_the_phases_part_reads_each_runs_wall_time_from_its_manifest(tmp_path: Path) -> None:
    import json

    from benchmarks import phases

    manifest = {"gsc_manifest": {"format": "gsc-results", "run_id": "r1", "harness_version": "0.1.0",
                                 "started": "2026-11-28T14:05:23+00:00", "ended": "2026-11-28T14:30:16+00:00",
                                 "status": "complete", "records": 2, "workers": 2, "memory_peak_gib": 17.8}}
    record = {"case": "f.yaml::c", "framework": "iree", "outcome": "ok", "verdict": "conforms", "duration_s": 0.5}
    done = tmp_path / "results.jsonl"
    done.write_text("".join(json.dumps(x) + "\n" for x in (manifest, record, {**record, "case": "f.yaml::d"})))
    rows = phases.run([str(done), str(tmp_path / "absent.jsonl")])
    assert [r.name for r in rows] == ["results.jsonl", "make report (phases summed)"]
    assert rows[0].value == 24 * 60 + 53 and rows[0].extra == {"records": 2, "calls_s": 1.0}
    assert "2 workers, peak 17.8 GiB" in rows[0].detail and rows[1].holds is True
    manifest["gsc_manifest"]["ended"] = "<script>../x"  # a file from elsewhere: named, not a traceback
    done.write_text(json.dumps(manifest) + "\n")
    (row, total) = phases.run([str(done)])
    assert row.value is None and "times do not read" in row.detail and total.holds is None
