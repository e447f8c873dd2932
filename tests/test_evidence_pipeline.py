"""gsc memcheck and gsc advisories end to end on a real record: a NumPy probe finding measured by the harness here
(cases/probes/gather.yaml::probe-default-axis: np.take flattens), its label set to a memory-unsafe one (garbage) so
that the commands pick it. NumPy reads nothing out of bounds, so the checkers run for real and find nothing: the
verdict must be ``unprovable`` with a reason made of what ran."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from _cases import records_of

from gather_scatter_conformance.harness.cli import main

ROOT = Path(__file__).resolve().parents[1]
CASE = "cases/probes/gather.yaml::probe-default-axis"


@pytest.fixture(scope="module")
def results(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A results file with NumPy's record of the probe, measured now, labelled garbage."""
    tmp = tmp_path_factory.mktemp("evidence")
    measured = tmp / "measured.jsonl"
    subprocess.run([sys.executable, "-m", "gather_scatter_conformance", "run", "--framework", "numpy", "--results",
                    str(measured), "-p", "no:xdist", "cases/probes/gather.yaml", "-k",
                    "probe-default-axis and not batch"], cwd=ROOT, check=True, capture_output=True)
    records = records_of(measured)
    assert [(r["case"], r["label"]) for r in records] == [(CASE, "flatten")]
    records[0]["label"] = "garbage"
    records[0]["distribution"] = {"garbage": 3, "flatten": 2}
    path = tmp / "results.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in records))
    return path


@pytest.mark.slow
@pytest.mark.skipif(not shutil.which("valgrind"), reason="needs valgrind (apt-get install valgrind)")
def test_memcheck_finds_nothing_in_numpy_and_says_what_it_ran(results: Path, tmp_path: Path, capsys) -> None:
    out = tmp_path / "evidence.jsonl"
    assert main(["memcheck", str(results), "--out", str(out), "--timeout", "300"]) == 0
    lines = [json.loads(line) for line in out.read_text().splitlines()]
    assert len(lines) == 1
    ev = lines[0]
    assert (ev["case"], ev["framework"], ev["variant"], ev["label"]) == (CASE, "numpy", "take", "garbage")
    assert ev["verdict"] == "unprovable"
    by_name = {c["name"]: c for c in ev["checkers"]}
    assert set(by_name) == {"plain", "memcheck", "efence", "malloc"}
    mc = by_name["memcheck"]
    assert mc["ran"] and not mc["timed_out"] and mc["errors"] == [] and mc["seconds"] > 0
    assert ev["reason"].startswith(f"memcheck ran {mc['seconds']:g} s, reported 0 errors outside the suppressions")
    assert "malloc: no heap message" in ev["reason"]
    if by_name["efence"]["ran"]:
        assert "efence: no fault" in ev["reason"]
    else:
        assert "efence: not run (Electric Fence is not installed" in ev["reason"]
    # a second run resumes: the cell is in the file, nothing is run again
    capsys.readouterr()
    assert main(["memcheck", str(results), "--out", str(out)]) == 0
    assert "1 already in" in capsys.readouterr().out and len(out.read_text().splitlines()) == 1


def test_memcheck_refuses_a_file_that_is_not_results(tmp_path: Path, capsys) -> None:
    bad = tmp_path / "history.jsonl"
    bad.write_text((ROOT / "history" / "torch.jsonl").read_text().splitlines()[0] + "\n")
    assert main(["memcheck", str(bad), "--out", str(tmp_path / "e.jsonl")]) == 2
    err = capsys.readouterr().err
    assert err.startswith("gsc memcheck: ") and len(err.strip().splitlines()) == 1 and "Traceback" not in err


def test_advisories_render_and_their_repro_runs(results: Path, tmp_path: Path) -> None:
    evidence = tmp_path / "evidence.jsonl"
    line = {"case": CASE, "framework": "numpy", "variant": "take", "verdict": "unprovable",
            "reason": "memcheck ran 20 s, reported 0 errors outside the suppressions", "measured": "2026-11-26",
            "checkers": [{"name": "memcheck", "ran": True, "seconds": 20.0, "exit": 0, "error_count": 0, "errors": [],
                          "note": ""}]}
    evidence.write_text(json.dumps(line) + "\n")
    out = tmp_path / "adv"
    assert main(["advisories", str(results), "--evidence", str(evidence), "--history", str(ROOT / "history"),
                 "--out", str(out)]) == 0
    pages = sorted(out.glob("*.md"))
    assert [p.name for p in pages] == [f"numpy-{json.loads(results.read_text())['framework_version']}.md"]
    text = pages[0].read_text()
    assert "## 1. take: probe-default-axis (cases/probes/gather.yaml)" in text
    assert "- API: `np.take(data, indices)` (variant take, cpu)" in text
    assert f"- Case: `{CASE}`: Gather" in text
    assert "- Distribution: garbage 3/5, flatten 2/5" in text
    assert "- Releases: no release history" in text  # history/ has no numpy.jsonl
    assert "**unprovable**: memcheck ran 20 s" in text
    assert "```python\ndata = np.array(" in text
    script = out / pages[0].stem / "probe-default-axis-take.py"
    assert f"]({pages[0].stem}/probe-default-axis-take.py)" in text
    proc = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, timeout=120)
    # the script asserts the class of an unchecked read: np.take's flattened result is no valid one, so it holds
    assert proc.returncode == 0, proc.stderr
    assert "no valid result: an unchecked read" in proc.stdout
