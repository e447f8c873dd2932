"""The report is a function of its results (issue #37): what it needs (the cases as the run saw them, the baseline
label each probe was judged by) travels in the results file, so ``gsc report`` on the same results in two folders
gives the same files, and opens nothing outside its inputs, its output and the installed packages.

On main at 24852cd the report read case YAML from the current directory (then the shipped corpus) and
``./baselines``: a folder with its own ``mine/probe.yaml`` or ``baselines/`` gave other repro scripts.
"""

from __future__ import annotations

import filecmp
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
PROBE = """\
op: GatherElements
cases:
  # numpy's take_along_axis has no default axis: the probe's label says which one the harness's call used
  - id: ge-default-axis
    source: "test: numpy's take_along_axis defaults to the last axis"
    dimension: default-axis
    omit: [axis]
    inputs:
      data: {value: [[1, 2, 3], [4, 5, 6]], dtype: float32}
      indices: {value: [[1, 0, 1], [0, 1, 0]], dtype: int64}
  - id: in-range
    source: test
    inputs:
      data: {value: [[1, 2], [3, 4]], dtype: float32}
      indices: {value: [[0, 0], [1, 0]], dtype: int64}
    attrs: {axis: 1}
"""
# What another folder holds under the same names: a case of other values, a baseline of other labels.
DECOY = PROBE.replace("[[1, 2, 3], [4, 5, 6]]", "[[7, 7, 7], [7, 7, 7]]")
DECOY_BASELINE = "framework: numpy\nversion: '0'\nlabels:\n  mine/probe.yaml::ge-default-axis[take_along_axis]: " \
                 "axis-0|last\n"
ENV = {**{k: v for k, v in os.environ.items() if not k.startswith(("PYTEST_", "GSC_"))},
       "PYTHONPATH": os.pathsep.join([str(ROOT), *filter(None, [os.environ.get("PYTHONPATH")])]),
       "SOURCE_DATE_EPOCH": "1790000000"}


def _gsc(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "gather_scatter_conformance", *args], cwd=cwd, env=ENV,
                          capture_output=True, text=True, timeout=600)


@pytest.fixture(scope="module")
def results(tmp_path_factory: pytest.TempPathFactory) -> Path:
    pytest.importorskip("jinja2")
    run = tmp_path_factory.mktemp("run")
    (run / "mine").mkdir()
    (run / "mine" / "probe.yaml").write_text(PROBE)
    done = _gsc("run", "mine", "--framework", "numpy", "--results", "r.jsonl", cwd=run)
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    return run / "r.jsonl"


@pytest.mark.slow
def test_the_same_results_give_the_same_report_in_any_folder(results: Path, tmp_path: Path) -> None:
    plain, decoyed = tmp_path / "plain", tmp_path / "decoyed"
    for folder in (plain, decoyed):
        folder.mkdir()
        shutil.copy(results, folder / "r.jsonl")
    (decoyed / "mine").mkdir()
    (decoyed / "mine" / "probe.yaml").write_text(DECOY)
    (decoyed / "baselines").mkdir()
    (decoyed / "baselines" / "numpy.yaml").write_text(DECOY_BASELINE)
    for folder in (plain, decoyed):
        done = _gsc("report", "r.jsonl", "--out", "out", cwd=folder)
        assert done.returncode == 0, done.stderr[-2000:]
    left = sorted(p.relative_to(plain / "out") for p in (plain / "out").rglob("*") if p.is_file())
    right = sorted(p.relative_to(decoyed / "out") for p in (decoyed / "out").rglob("*") if p.is_file())
    assert left == right and len(left) > 10
    _, mismatch, errors = filecmp.cmpfiles(plain / "out", decoyed / "out", [str(p) for p in left], shallow=False)
    assert not mismatch and not errors, mismatch[:5]
    # The repro scripts are the run's case's: its data, not the decoy's.
    data = (plain / "out" / "report-data.js").read_text()
    assert "[4.0, 5.0, 6.0]" in data or "[4, 5, 6]" in data.replace(".0", "")
    assert "7.0, 7.0, 7.0" not in data


AUDIT = """
import sys, json
opened = []
def hook(event, args):
    if event == "open" and isinstance(args[0], (str, bytes)) and args[0]:
        opened.append(args[0] if isinstance(args[0], str) else args[0].decode(errors="replace"))
sys.addaudithook(hook)
from gather_scatter_conformance.harness import cli
code = cli.main(sys.argv[1:])
json.dump(opened, open(sys.argv[-1] + ".opened.json", "w"))
sys.exit(code)
"""


def test_the_report_opens_nothing_outside_its_inputs_output_and_packages(results: Path, tmp_path: Path) -> None:
    work = tmp_path / "work"
    work.mkdir()
    shutil.copy(results, work / "r.jsonl")
    (work / "mine").mkdir()  # a case folder beside it that the report must not read
    (work / "mine" / "probe.yaml").write_text(DECOY)
    out = tmp_path / "out"
    done = subprocess.run([sys.executable, "-c", AUDIT, "report", "r.jsonl", "--out", str(out)], cwd=work, env={
        **ENV, "GSC_RESULT_CACHE": "off", "XDG_CACHE_HOME": str(tmp_path / "cache")},
        capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-2000:]
    opened = json.loads(Path(str(out) + ".opened.json").read_text())
    allowed = [str(work / "r.jsonl"), str(out), str(tmp_path / "cache"), sys.prefix, sys.base_prefix,
               str(ROOT / "gather_scatter_conformance"), "/dev/", "/proc/", "/sys/", "/etc/localtime",
               "/usr/share/zoneinfo", "/etc/ld.so", "/lib", "/usr/lib"]
    paths = [p for p in opened if "/" in p or (work / p).exists()]  # (the editable install's hook is no file)
    outside = sorted({p for p in paths if not any(os.path.abspath(os.path.join(work, p)).startswith(a)
                                                  for a in allowed)})
    assert not outside, outside[:20]
    assert not [p for p in opened if "mine" in p and "probe.yaml" in p]
