"""The result cache (harness.run.cache): a second run of unchanged cases reuses the first run's records, which are
the records a measurement gives; what may never be reused is measured again; --no-cache reuses nothing; a changed
case changes the key. Real frameworks (numpy, onnxruntime) run in a pytest subprocess: no mocks."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from _cases import records_of

from gather_scatter_conformance.harness.cases.load import Case, load_file
from gather_scatter_conformance.harness.run import cache
from gather_scatter_conformance.vocab.record import Record

ROOT = Path(__file__).resolve().parent.parent
CASES = """\
op: Gather
cases:
  - id: plain
    source: "test: an in-range gather"
    inputs:
      data: {value: [1, 2, 3, 4, 5], dtype: float32}
      indices: {value: [4, 0], dtype: int64}
    attrs: {axis: 0}
  - id: probe-oob
    source: "test: an index past the end"
    dimension: oob-positive
    inputs:
      data: {value: [10, 20, 30, 40, 50], dtype: float32}
      indices: {value: [7], dtype: int64}
    attrs: {axis: 0}
  - id: probe-negative
    source: "test: a negative index"
    dimension: negative-indices
    inputs:
      data: {value: [10, 20, 30, 40, 50], dtype: float32}
      indices: {value: [-1], dtype: int64}
    attrs: {axis: 0}
"""
# What differs between a measured record and the same record reused.
VOLATILE = {"time", "duration_s", "host", "cached"}


def _env() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PYTEST_", "GSC_"))}
    env["PYTHONPATH"] = os.pathsep.join([str(ROOT), *filter(None, [os.environ.get("PYTHONPATH")])])
    return env


def _run(work: Path, results: str, *extra: str, frameworks: str = "numpy,onnxruntime") -> list[dict]:
    """pytest over work/cases.yaml with the plugin, cache in work/cache; the records written."""
    cmd = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-p", "no:xdist", "-c", os.devnull,
           "--rootdir", str(work), "cases.yaml", "--gsc-framework", frameworks, "--gsc-results", results,
           "--gsc-cache-dir", str(work / "cache"), *extra]
    done = subprocess.run(cmd, cwd=work, env=_env(), capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    return records_of(work / results)


def _stable(record: dict) -> dict:
    return {k: v for k, v in record.items() if k not in VOLATILE}


@pytest.fixture
def work(tmp_path: Path) -> Path:
    (tmp_path / "cases.yaml").write_text(CASES)
    return tmp_path


@pytest.mark.slow
def test_second_run_reuses_the_first_runs_records(work: Path) -> None:
    first = _run(work, "r1.jsonl")
    assert first and not any(r.get("cached") for r in first)
    assert {r["framework"] for r in first} == {"numpy", "onnxruntime"}
    second = _run(work, "r2.jsonl")
    assert all(r.get("cached") is True for r in second), [r["case"] for r in second if not r.get("cached")]
    by_key = {(r["case"], r["framework"], r["variant"]): r for r in first}
    assert len(by_key) == len(second)
    for rec in second:
        measured = by_key[(rec["case"], rec["framework"], rec["variant"])]
        assert _stable(rec) == _stable(measured)
        assert rec["time"] == measured["time"]  # a reused record keeps when it was measured


@pytest.mark.slow
def test_memory_unsafe_entry_is_measured_again(work: Path) -> None:
    first = _run(work, "r1.jsonl", frameworks="numpy")
    entries = sorted((work / "cache").rglob("*.json"))
    assert len(entries) == len(first)
    # Make one stored probe record read `garbage` (memory-unsafe): it must not be reused.
    doctored = None
    for path in entries:
        entry = json.loads(path.read_text())
        if entry["record"].get("label"):
            entry["record"]["label"] = "garbage"
            path.write_text(json.dumps(entry))
            doctored = entry["record"]
            break
    assert doctored is not None
    second = _run(work, "r2.jsonl", frameworks="numpy")
    fresh = [r for r in second if not r.get("cached")]
    assert [(r["case"], r["variant"]) for r in fresh] == [(doctored["case"], doctored["variant"])]
    assert fresh[0]["label"] != "garbage"  # measured: the framework's real label
    assert len(second) - len(fresh) == len(first) - 1
    # The report counts the reused records and marks each one's evidence.
    pytest.importorskip("pandas")
    pytest.importorskip("jinja2")
    from gather_scatter_conformance.harness.report.page import generate

    html = generate([work / "r2.jsonl"], work / "report", claims_dir=work / "no-claims")["index.html"].read_text()
    assert f"{len(second) - 1} of {len(second)} records reused from the result cache" in html
    data_js = (work / "report" / "report-data.js").read_text()  # the evidence the page loads on first drill-down
    data = json.loads(data_js.removeprefix("window.GSC_REPORT_DATA = ").removesuffix(";\n"))
    assert sum(r.get("ca", 0) for r in data["recs"]) == len(second) - 1


@pytest.mark.slow
def test_no_cache_reuses_nothing_and_stores_nothing(work: Path) -> None:
    _run(work, "r1.jsonl", "--no-cache", frameworks="numpy")
    assert not (work / "cache").exists()
    _run(work, "r1.jsonl", frameworks="numpy")
    again = _run(work, "r2.jsonl", "--no-cache", frameworks="numpy")
    assert again and not any(r.get("cached") for r in again)


def test_gsc_run_takes_no_cache(work: Path) -> None:
    cmd = [sys.executable, "-m", "gather_scatter_conformance", "run", "--framework", "numpy", "--results", "r.jsonl",
           "--no-cache", "cases.yaml", "--gsc-cache-dir", str(work / "cache")]
    done = subprocess.run(cmd, cwd=work, env=_env(), capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    assert (work / "r.jsonl").read_text().strip() and not (work / "cache").exists()


def _cases(text: str, tmp_path: Path) -> dict[str, Case]:
    path = tmp_path / "c.yaml"
    path.write_text(text)
    return {c.id: c for c in load_file(path, "c.yaml") if isinstance(c, Case)}


def test_changed_case_input_changes_the_key(tmp_path: Path) -> None:
    before = _cases(CASES, tmp_path)
    after = _cases(CASES.replace("value: [4, 0]", "value: [3, 0]"), tmp_path)
    retyped = _cases(CASES.replace("value: [1, 2, 3, 4, 5], dtype: float32", "value: [1, 2, 3, 4, 5], dtype: float64"),
                     tmp_path)
    key = lambda c, fw="numpy", variant="take": cache.key(c, fw, variant, "cpu", sys.executable)  # noqa: E731
    assert key(before["plain"]) == key(_cases(CASES, tmp_path)["plain"])  # the same content: the same key
    assert key(before["plain"]) != key(after["plain"])
    assert key(before["plain"]) != key(retyped["plain"])
    assert key(before["probe-oob"]) == key(after["probe-oob"])  # other cases keep theirs
    assert key(before["plain"]) != key(before["plain"], variant="other")
    assert key(before["plain"]) != key(before["plain"], fw="onnxruntime")


def _record(**fields: object) -> Record:
    return Record.read({"case": "c.yaml::plain", "framework": "numpy", "outcome": "ok", "verdict": "conforms",
                        "device": "cpu", "distinct_outputs": 1, **fields})


def test_reusable_rule() -> None:
    assert cache.reusable(_record(), None)
    assert cache.reusable(_record(label="error", outcome="error"), "error")
    for outcome in ("crash", "timeout", "harness-error"):
        assert not cache.reusable(_record(outcome=outcome), None), outcome
    # Not an outcome a record holds (execute returns runner.Skipped), nor one it may: whatever is not ok, error or
    # unsupported is never reused.
    assert not cache.reusable(_record().model_copy(update={"outcome": "skipped"}), None)
    for label in ("garbage", "alias", "alias-write", "crash:SIGSEGV", "wrap|garbage", "nondeterministic"):
        assert not cache.reusable(_record(label=label), None), label
    assert not cache.reusable(_record(distinct_outputs=2), None)
    assert not cache.reusable(_record(label="zero", distribution={"zero": 3, "garbage": 2}), None)
    assert not cache.reusable(_record(label="wrong", distribution={"wrong": 5}), None)  # repeated: suspect
    assert not cache.reusable(_record(label="zero"), "zero|garbage")  # the cell flipped in its baseline
    assert not cache.reusable(_record(label="zero"), "wrap|zero")
    assert not cache.reusable(_record(label="zero"), "garbage")  # memory-unsafe in its baseline
    assert not cache.reusable(_record(device="gpu"), None)
    assert cache.reusable(_record(device="openvino"), None)  # ONNX Runtime's OpenVINO EP runs on OpenVINO's CPU


def test_directory_follows_the_conversion_caches_rule(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.delenv(cache.ENV, raising=False)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    assert cache.directory() == tmp_path / "gather-scatter-conformance" / "results"
    monkeypatch.setenv(cache.ENV, "off")
    assert cache.directory() is None
    assert cache.directory(str(tmp_path / "given")) == tmp_path / "given"


def test_the_nightly_keeps_the_result_cache_between_nights() -> None:
    """A hosted runner starts empty: the framework jobs point GSC_RESULT_CACHE at a workspace directory and keep it
    with actions/cache, restored from an earlier night's key (issue #27: the nightly matrix keeps it)."""
    import yaml

    root = Path(__file__).resolve().parents[1]
    steps = yaml.safe_load((root / ".github/workflows/nightly.yml").read_text())["jobs"]["framework"]["steps"]
    cached = [s for s in steps if str(s.get("uses", "")).startswith("actions/cache@")]
    tox = [s for s in steps if str(s.get("run", "")).startswith("tox -e")]
    assert len(cached) == 1 and len(tox) == 1 and steps.index(cached[0]) < steps.index(tox[0])
    where = tox[0]["env"]["GSC_RESULT_CACHE"]
    assert where.endswith("/" + cached[0]["with"]["path"])
    assert cached[0]["with"]["restore-keys"] and "matrix.env" in cached[0]["with"]["key"]


FIRST_TRY_PROBE = """
import pytest

def pytest_sessionfinish(session):
    from gather_scatter_conformance.harness.run import pytest_plugin

    executor = session.config.stash[pytest_plugin._KEY].executor
    print("FIRST-TRY", executor.first_try.limit(("numpy", "take")))
"""


@pytest.mark.slow  # over 5 s here (make check: tests under 5 s each)
def test_reused_records_teach_the_first_try_limit(work: Path) -> None:
    """#38: a run whose records come from the cache still learns how long its systems' calls take, so a hang
    among the cells it measures again is cut at the learned first-try limit, not the full case timeout."""
    (work / "conftest.py").write_text(FIRST_TRY_PROBE)
    base = [sys.executable, "-m", "pytest", "-q", "-s", "-p", "no:cacheprovider", "-p", "no:xdist", "-c", os.devnull,
            "--rootdir", str(work), "--confcutdir", str(work), "cases.yaml", "--gsc-framework", "numpy",
            "--gsc-variants", "default", "--gsc-cache-dir", str(work / "cache")]
    said = []
    for results in ("r1.jsonl", "r2.jsonl"):
        done = subprocess.run([*base, "--gsc-results", results], cwd=work, env=_env(), capture_output=True,
                              text=True, timeout=600)
        assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
        said.append(done.stdout.partition("FIRST-TRY ")[2].split("\n")[0])
    assert all(r.get("cached") for r in records_of(work / "r2.jsonl"))
    # the first run measured three numpy cases; the second measured none and reused three: both learned 10 s
    assert said == ["10.0", "10.0"]


def test_a_hang_entry_witnesses_only_as_a_number_at_least_this_runs_timeout(tmp_path: Path) -> None:
    # #38: an entry is data from another run; a timeout that is no number (a string, a bool, missing) or a shorter
    # one witnesses nothing, and only a hang on every run is a hang.
    hang = _record(outcome="timeout", verdict="deviates", time="2026-11-29T01:03:42+00:00",
                   distribution={"timeout": 2})
    cache.put(tmp_path, "k" * 64, hang, 120.0)
    stored, limit = cache.read(tmp_path, "k" * 64)
    assert cache.hung_before(stored, limit, 120.0) == "2026-11-29T01:03:42+00:00"
    assert cache.hung_before(stored, limit, 300.0) is None
    for bad in ("120", True, None):
        entry = tmp_path / ("k" * 64)[:2] / f"{'k' * 64}.json"
        value = json.loads(entry.read_text())
        entry.write_text(json.dumps({**value, "timeout_s": bad}))
        assert cache.hung_before(*cache.read(tmp_path, "k" * 64), 1.0) is None, bad
    mixed = hang.model_copy(update={"distribution": {"timeout": 1, "crash:SIGABRT": 1}})
    assert cache.hung_before(mixed, 120.0, 1.0) is None
