"""The conformance gate (gsc gate, docs/gate.md): a real numpy run judged against baselines that gsc baseline wrote
from it, then against baselines edited to say what a changed system would contradict; exit status by kind, and
its JUnit, JSON and Markdown reports."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).resolve().parent.parent
GSC = [sys.executable, "-m", "gather_scatter_conformance"]
# A probe file (behaviour labels) and a conformance file (verdicts), as shipped.
FILES = ("cases/probes/gather.yaml", "cases/gather.yaml")


def _gsc(*args: str | Path, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*GSC, *map(str, args)], cwd=cwd, capture_output=True, text=True, timeout=600)


@pytest.fixture(scope="module")
def run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A numpy run of FILES and the baselines gsc baseline wrote from it (./baselines): the project folder."""
    tmp = tmp_path_factory.mktemp("gate")
    for name in FILES:
        (tmp / name).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(ROOT / name, tmp / name)
    done = _gsc("run", "cases", "--framework", "numpy", "--results", "r.jsonl", cwd=tmp)
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    wrote = _gsc("baseline", "r.jsonl", "--dir", "baselines", cwd=tmp)
    assert wrote.returncode == 0, wrote.stderr
    return tmp


def _baselines(run: Path, to: Path, edit: object = None) -> Path:
    """A copy of the run's baselines in ``to``, its numpy file passed through ``edit(data)`` first."""
    shutil.copytree(run / "baselines", to)
    if edit is not None:
        path = to / "numpy.yaml"
        data = yaml.safe_load(path.read_text())
        edit(data)  # type: ignore[operator]
        path.write_text(yaml.safe_dump(data))
    return to


def _gate(run: Path, baselines: Path, *args: str) -> tuple[int, dict, ET.Element, str]:
    out = baselines.parent / f"{baselines.name}-out"
    done = _gsc("gate", "r.jsonl", "--baselines", baselines, "--junit", out / "junit.xml", "--json",
                out / "gate.json", "--markdown", out / "summary.md", *args, cwd=run)
    assert "Traceback" not in done.stderr, done.stderr
    return (done.returncode, json.loads((out / "gate.json").read_text()), ET.parse(out / "junit.xml").getroot(),
            (out / "summary.md").read_text())


def _failures(junit: ET.Element) -> dict[str, str]:
    """JUnit test case name -> its failure's type, for the failing ones."""
    return {case.get("name", ""): failure.get("type", "") for case in junit.iter("testcase")
            for failure in case.iter("failure")}


def test_the_baseline_holds_labels_and_verdicts_and_the_gate_passes_on_its_own_run(run: Path, tmp_path: Path) -> None:
    data = yaml.safe_load((run / "baselines" / "numpy.yaml").read_text())
    assert data["labels"]["cases/probes/gather.yaml::probe-negative-indices[take]"] == "wrap"
    assert data["verdicts"]["cases/gather.yaml::gather-negative-indices-2d[take]"] == "conforms"
    status, verdict, junit, summary = _gate(run, _baselines(run, tmp_path / "b"))
    assert status == 0 and verdict["passed"] and not _failures(junit), verdict["findings"][:3]
    checked = verdict["checked"]["numpy"]
    assert checked == sum(1 for _ in junit.iter("testcase")) == len(data["labels"]) + len(data["verdicts"])
    assert summary.startswith("## gsc gate: passed")


def test_a_changed_label_a_new_deviation_and_lost_coverage_each_fail_with_their_bit(run: Path, tmp_path: Path
                                                                                     ) -> None:
    probe = "cases/probes/gather.yaml::probe-negative-indices[take]"
    case = "cases/gather.yaml::gather-negative-indices-2d[take]"
    gone = "cases/gather.yaml::no-such-case[take]"

    def edit(data: dict) -> None:
        data["labels"][probe] = "clamp"  # the baseline a clamping runtime would have written
        data["verdicts"][case] = "deviates"  # harmless: deviating less is no finding
        data["verdicts"][gone] = "conforms"  # a cell of a covered file that the run did not record

    status, verdict, junit, summary = _gate(run, _baselines(run, tmp_path / "b", edit))
    assert status == 8 + 32, verdict["counts"]
    assert _failures(junit) == {probe: "label-change", gone: "lost-coverage"}
    assert "baseline says 'clamp'" in next(f["message"] for f in verdict["findings"] if f["key"] == probe)
    assert "failed (exit status 40)" in summary and "probe-negative-indices\\[take\\]" in summary

    def unseen(data: dict) -> None:  # a baseline written before the probe file existed
        data["labels"] = {k: v for k, v in data["labels"].items() if not k.startswith("cases/probes/")}

    status, verdict, junit, _ = _gate(run, _baselines(run, tmp_path / "c", unseen))
    deviating = [r["case"] + "[" + r["variant"] + "]" for r in map(json.loads, (run / "r.jsonl").open())
                 if r.get("verdict") == "deviates" and not r.get("known_deviation")]
    assert deviating and _failures(junit) == dict.fromkeys(deviating, "new-deviation"), verdict["findings"]
    assert status == 4


def test_the_policy_ignores_kinds_and_a_system_without_baseline_cannot_pass(run: Path, tmp_path: Path) -> None:
    def edit(data: dict) -> None:
        data["verdicts"]["cases/gather.yaml::no-such-case[take]"] = "conforms"

    status, verdict, junit, _ = _gate(run, _baselines(run, tmp_path / "b", edit), "--ignore", "lost-coverage")
    assert status == 0 and verdict["counts"]["lost-coverage"] == 1 and not _failures(junit)
    assert sum(1 for _ in junit.iter("skipped")) == 1
    empty = tmp_path / "empty"
    empty.mkdir()
    status, verdict, junit, _ = _gate(run, empty)
    assert status == 2 and _failures(junit) == {"(baseline)": "no-baseline"}
    missing = _gsc("gate", "r.jsonl", "--baselines", tmp_path / "nowhere", cwd=run)
    assert missing.returncode == 2 and "no baselines directory" in missing.stderr and not missing.stdout


def test_hostile_record_text_is_escaped_in_the_reports(tmp_path: Path) -> None:
    from gather_scatter_conformance.harness.judge.gate import Finding, Verdict
    from gather_scatter_conformance.harness.report.gate import junit_xml, markdown

    evil = 'x</failure><script>alert(1)</script> | [a](javascript:1) "'
    verdict = Verdict(findings=[Finding("new-deviation", "sys", evil, evil)], checked={"sys": [evil]})
    junit = ET.fromstring(junit_xml(verdict).split("\n", 1)[1])
    assert [c.get("name") for c in junit.iter("testcase")] == [evil]
    assert next(junit.iter("failure")).get("message") == evil
    md = markdown(verdict)
    # No tag and no link: the brackets are escaped (a link needs an unescaped [text](...)), the pipe too.
    assert "<script>" not in md and "[a](javascript" not in md and "\\[a\\](javascript" in md
    assert md.count("\n| `new-deviation` | sys |") == 1 and " \\| " in md


def test_the_guide_lists_every_kind_with_its_bit_and_meaning() -> None:
    from gather_scatter_conformance.vocab.gate import BITS, MEANING

    rows = [line.split(" | ") for line in (ROOT / "docs" / "gate.md").read_text().splitlines()
            if line.startswith("| `")]
    assert {r[0].strip("| `"): (int(r[1]), r[2].rstrip(" |")) for r in rows} == {
        kind: (bit, MEANING[kind]) for kind, bit in BITS.items()}


@pytest.mark.parametrize(("text", "said"), [(b": [unclosed\n", "numpy.yaml:1: not a baseline file"),
                                            (b"- a list\n", "not a baseline file (not a mapping)"),
                                            (b"labels: [1]\n", "its labels is not a mapping"),
                                            (b"labels: {'a[x]': [timeout]}\n", "the label of 'a[x]' is not text"),
                                            (b"\xff\xfe", "not a baseline file")])
def test_a_damaged_baseline_file_is_one_line_naming_it(run: Path, tmp_path: Path, text: bytes, said: str) -> None:
    baselines = tmp_path / "b"
    baselines.mkdir()
    (baselines / "numpy.yaml").write_bytes(text)
    done = _gsc("gate", "r.jsonl", "--baselines", baselines, cwd=run)
    lines = done.stderr.strip().splitlines()
    assert done.returncode == 2 and len(lines) == 1 and said in lines[0] and not done.stdout, done.stderr
