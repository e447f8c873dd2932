"""`gsc run`'s console (harness.console): a progress line per tenth in a log, failing reports (with their repro
scripts) in <results>.log and not on the terminal, malformed cases still on the terminal, one summary table; and
`pytest` run directly keeps its own output."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from _cases import records_of

from gather_scatter_conformance.harness.console import summary_text

ROOT = Path(__file__).resolve().parent.parent
PROBE = "cases/probes/gather.yaml::probe-oob-positive[take]"


def _project(tmp_path: Path) -> Path:
    """A folder whose own baseline says numpy's take wraps an index past the end (it raises): that probe fails."""
    (tmp_path / "baselines").mkdir()
    shipped = (ROOT / "baselines" / "numpy.yaml").read_text()
    assert f"  {PROBE}: error\n" in shipped
    (tmp_path / "baselines" / "numpy.yaml").write_text(shipped.replace(f"  {PROBE}: error\n", f"  {PROBE}: wrap\n"))
    (tmp_path / "cases" / "probes").mkdir(parents=True)
    (tmp_path / "cases" / "probes" / "gather.yaml").write_text(
        (ROOT / "cases" / "probes" / "gather.yaml").read_text())
    bad = tmp_path / "cases" / "bad" / "take.yaml"
    bad.parent.mkdir()
    bad.write_text("op: Take\ncases:\n  - id: x\n    source: t\n    inputs:\n      data: {value: [1, 2], dtype: "
                   "float32}\n      indices: {value: [0], dtype: int64}\n    expected: [2.0]\n")
    return tmp_path


def _run(cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PYTEST_", "GSC_"))}
    env["PYTHONPATH"] = os.pathsep.join([str(ROOT), *filter(None, [os.environ.get("PYTHONPATH")])])
    env["GSC_RESULT_CACHE"] = "off"
    return subprocess.run([sys.executable, "-m", *args], cwd=cwd, env=env, capture_output=True, text=True,
                          timeout=600)


def test_gsc_run_shows_progress_and_a_summary_and_logs_the_failures(tmp_path: Path) -> None:
    cwd = _project(tmp_path)
    (cwd / "previous.jsonl").write_text("")
    done = _run(cwd, "gather_scatter_conformance", "run", "--framework", "numpy", "--results", "r.jsonl",
                "--phase", "frameworks", "--previous", "previous.jsonl", "cases")
    out = done.stdout + done.stderr
    records = records_of(cwd / "r.jsonl")
    progress = [line for line in out.splitlines() if line.startswith("frameworks: ")]
    total = int(progress[-1].split("/")[1].split()[0])  # every test collected: one record each, and the bad file
    assert len(progress) == 10 and progress[-1].startswith(f"frameworks: {total}/{total} (100%)")
    assert total - 1 <= len(records) <= total
    # The failing probe's report, with its repro script, is in the log and not on the terminal.
    log = (cwd / "r.log").read_text()
    assert "probe-oob-positive[take]" in log and "import numpy" in log and "baseline" in log
    assert "import numpy" not in out and "FAILURES" not in out
    assert "2 failing test report(s), each with its repro script: r.log" in out  # the probe and the bad file
    assert log.count("=" * 20 + " ") == 2
    # The malformed case stays on the terminal, named by file, line and field.
    assert "malformed case files" in out and "cases/bad/take.yaml:" in out and "expected" in out
    # The summary: numpy's row, counted from the records; nothing in the (empty) previous run, so no change.
    row = next(line for line in out.splitlines() if line.startswith("numpy "))
    table = summary_text([cwd / "r.jsonl"], [cwd / "previous.jsonl"])
    assert row in table.splitlines() and row.split()[-1] == "0"
    assert int(row.split()[2]) == sum(r["verdict"] == "conforms" for r in records)
    assert len(out.splitlines()) < 30
    assert done.returncode == 1  # the malformed case


def test_pytest_run_directly_keeps_its_own_output(tmp_path: Path) -> None:
    cwd = _project(tmp_path)
    done = _run(cwd, "pytest", "cases/probes/gather.yaml", "--framework", "numpy", "-q", "-p", "no:cacheprovider",
                "-k", "oob-positive")
    assert "FAILURES" in done.stdout and "import numpy" in done.stdout  # the repro, where pytest users look
    assert not (cwd / "r.log").exists()


def test_summary_counts_changes_since_the_previous_run(tmp_path: Path) -> None:
    base = {"case": "c.yaml::a", "framework": "numpy", "variant": "take", "device": "cpu", "outcome": "ok",
            "framework_version": "2", "verdict": "conforms"}
    now = [base, {**base, "case": "c.yaml::b", "verdict": "deviates"},
           {**base, "case": "c.yaml::c", "label": "garbage", "verdict": "deviates"},
           {**base, "case": "c.yaml::d", "outcome": "crash", "verdict": "deviates"}]
    before = [base, {**base, "case": "c.yaml::b"}]
    (tmp_path / "now.jsonl").write_text("".join(json.dumps(r) + "\n" for r in now))
    (tmp_path / "before.jsonl").write_text("".join(json.dumps(r) + "\n" for r in before))
    table = summary_text([tmp_path / "now.jsonl"], [tmp_path / "before.jsonl"]).splitlines()
    assert table[0].split() == ["system", "version", "conforms", "deviates", "memory-unsafe", "crash", "other",
                                "changed"]
    assert table[1].split() == ["numpy", "2", "1", "1", "1", "1", "0", "1"]  # b changed; c, d are new
    assert "no previous run" in summary_text([tmp_path / "now.jsonl"], [tmp_path / "missing.jsonl"])
