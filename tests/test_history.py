"""Behaviour across releases: release specs, baseline ranges, the history store, and a real two-release sweep of
onnxruntime (each release in its own environment, made with uv) checked through its records and ``--diff``, and a
sweep that removes each environment once its release is measured (``--drop-envs``)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from gather_scatter_conformance.adapters.base import ReleaseRules
from gather_scatter_conformance.harness.history import envs, pins, releases, store
from gather_scatter_conformance.harness.history.sweep import fold
from gather_scatter_conformance.harness.judge import baseline
from gather_scatter_conformance.vocab.record import Record

ROOT = Path(__file__).resolve().parent.parent
GSC = [sys.executable, "-m", "gather_scatter_conformance"]
AVAILABLE = ("1.15.0", "1.16.0", "1.16.3", "1.17.0", "1.17.1", "1.17.3", "1.18.0", "1.20.1", "1.20.0")


def test_a_range_takes_each_minor_series_newest_patch() -> None:
    assert releases.resolve("onnxruntime", ">=1.16,<1.20", AVAILABLE) == ["1.16.3", "1.17.3", "1.18.0"]
    assert releases.resolve("onnxruntime", ">=1.20", AVAILABLE) == ["1.20.1"]


def test_a_list_is_taken_as_written_and_a_bad_spec_is_refused() -> None:
    assert releases.resolve("onnxruntime", "1.17.3, 1.16.3", AVAILABLE) == ["1.16.3", "1.17.3"]
    with pytest.raises(releases.ReleaseSpecError, match="not a release number"):
        releases.resolve("onnxruntime", "1.16.3,latest", AVAILABLE)
    with pytest.raises(releases.ReleaseSpecError, match="no release"):
        releases.resolve("onnxruntime", ">=9.0", AVAILABLE)


def test_old_releases_get_numpy_1_and_the_ir_version_they_read() -> None:
    assert "numpy<2" in pins.requirements("onnxruntime", "1.16.3")
    assert "numpy<2" not in pins.requirements("onnxruntime", "1.31.1")
    assert pins.environment("onnxruntime", "1.17.3") == {"GSC_ONNX_IR_VERSION": "9"}
    assert pins.environment("onnxruntime", "1.18.0") == {}
    assert pins.requirements("jax", "0.4.20")[0] == "jax[cpu]==0.4.20"


def test_a_companion_that_depends_on_the_release_replaces_the_one_of_newer_releases(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """companions_before: per distribution, the first rule (oldest first) newer than the release replaces its
    extra entry, or joins the extras where there is none; from the rule's release on, the extra holds."""
    rules = ReleaseRules("x", "x", extra=("conv==2.21.0", "other"),
                         companions_before=(("1.2.0", "conv==2.18.1"), ("2.0.0", "conv==2.19.1"),
                                            ("2.0.0", "lib_ffi<0.2")))
    monkeypatch.setattr(pins, "framework", lambda name: rules)
    assert pins.companions("x", "1.1.2") == ["conv==2.18.1", "other", "lib_ffi<0.2"]
    assert pins.companions("x", "1.4.0") == ["conv==2.19.1", "other", "lib_ffi<0.2"]
    assert pins.companions("x", "2.0.0") == pins.companions("x", "2.3.0") == ["conv==2.21.0", "other"]
    assert pins.requirements("x", "1.4.0")[:4] == ["x==1.4.0", "conv==2.19.1", "other", "lib_ffi<0.2"]


def _pinned(distribution: str) -> str:
    for line in (ROOT / "constraints" / "pins.txt").read_text().splitlines():
        name, _, version = line.split("#", 1)[0].strip().partition("==")
        if name == distribution:
            return version
    raise AssertionError(f"constraints/pins.txt pins no {distribution}")


def test_paddle_tvm_and_litert_releases_can_be_swept() -> None:
    assert {"paddle", "tvm", "litert"} <= set(pins.sweepable())
    assert pins.requirements("paddle", "2.6.2")[0] == "paddlepaddle==2.6.2"  # the CPU wheel, never paddlepaddle-gpu
    assert "numpy<2" in pins.requirements("paddle", "2.6.2")
    assert "numpy<2" not in pins.requirements("paddle", _pinned("paddlepaddle"))
    # TVM before 0.26 links against an older apache-tvm-ffi than the newest; the pinned release takes the newest.
    assert any(r.startswith("apache-tvm-ffi") for r in pins.requirements("tvm", "0.25.0.post1"))
    assert "apache-tvm-ffi" in pins.requirements("tvm", _pinned("apache-tvm"))
    # LiteRT converts with the pinned TensorFlow (its CPU wheel) on every release: the runtime is what varies.
    converter = f"tensorflow-cpu=={_pinned('tensorflow')}"
    for release in ("1.0.1", "2.1.6", _pinned("ai-edge-litert")):
        reqs = pins.requirements("litert", release)
        assert reqs[0] == f"ai-edge-litert=={release}" and converter in reqs, reqs
        assert not any(r.startswith("tensorflow==") for r in reqs), reqs


def test_iree_mnn_and_tinygrad_releases_can_be_swept() -> None:
    assert {"iree", "mnn", "tinygrad"} <= set(pins.sweepable())
    # IREE's runtime is released in lockstep with its compiler: each release gets its own, never the pinned one.
    for release in ("3.9.0", _pinned("iree-base-compiler")):
        reqs = pins.requirements("iree", release)
        assert reqs[:2] == [f"iree-base-compiler=={release}", f"iree-base-runtime=={release}"], reqs
    assert pins.requirements("mnn", "3.0.0")[0] == "MNN==3.0.0"
    assert pins.requirements("tinygrad", "0.10.3")[0] == "tinygrad==0.10.3"


def test_release_of_reads_the_head_of_a_version_string() -> None:
    assert str(baseline.release_of("2026.4.1-22982-e213a147257-releases/2026/4")) == "2026.4.1"
    assert str(baseline.release_of("2.13.0+cpu")) == "2.13.0"
    assert baseline.release_of("nightly") is None


def test_ranges_keep_a_constant_label_plain_and_split_a_changing_one() -> None:
    assert baseline.ranges({"1.16.3": "wrap", "1.17.3": "wrap"}) == "wrap"
    assert baseline.ranges({"1.18.0": "ok", "1.16.3": "error", "1.17.3": "error", "1.20.1": "error"}) == [
        {"label": "error", "until": "1.18.0"},
        {"label": "ok", "since": "1.18.0", "until": "1.20.1"},
        {"label": "error", "since": "1.20.1"},
    ]


KEY = "cases/probes/gather.yaml::probe-negative-indices[Gather-13]"


def _baseline() -> dict:
    return {"framework": "onnxruntime", "version": "1.31.1", "releases": ["1.16.3", "1.17.3", "1.31.1"],
            "labels": {KEY: "wrap"},
            "ranges": {KEY: [{"label": "error", "until": "1.17.3"}, {"label": "wrap", "since": "1.17.3"}]}}


def test_a_release_is_checked_against_the_label_valid_for_it() -> None:
    b = _baseline()
    assert baseline.check(b, KEY, "error", "1.16.3", "negative-indices") is None
    assert baseline.check(b, KEY, "wrap", "1.17.3", "negative-indices") is None
    assert baseline.check(b, KEY, "wrap", "1.31.1", "negative-indices") is None
    known = baseline.check(b, KEY, "wrap", "1.16.3", "negative-indices")
    assert known is not None and "a release it knows" in known and "'error'" in known


def test_a_change_in_an_unknown_release_names_the_dimension_both_labels_and_both_releases() -> None:
    message = baseline.check(_baseline(), KEY, "error", "1.32.0", "negative-indices")
    assert message is not None
    assert "does not know" in message and "negative-indices" in message
    assert "'wrap' on onnxruntime 1.31.1" in message and "'error' on 1.32.0" in message


def test_update_ranges_folds_history_and_keeps_the_pinned_labels(tmp_path: Path) -> None:
    other = "cases/probes/gather.yaml::other[Gather-13]"
    baseline.update(tmp_path, "onnxruntime", "1.31.1", {KEY: "wrap", other: "ok"})
    n = baseline.update_ranges(tmp_path, "onnxruntime", {KEY: {"1.16.3": "error", "1.17.3": "wrap"}})
    saved = baseline.load(tmp_path, "onnxruntime")
    assert n == 1 and saved["releases"] == ["1.16.3", "1.17.3", "1.31.1"]
    assert saved["ranges"][KEY] == [{"label": "error", "until": "1.17.3"}, {"label": "wrap", "since": "1.17.3"}]
    assert saved["labels"][KEY] == "wrap" and baseline.label_at(saved, KEY, "1.16.3") == "error"


def test_a_post_release_is_its_release_and_the_pinned_labels_join_a_sweeps(tmp_path: Path) -> None:
    """TVM's sweep measured 0.27.0 and 0.27.0.post1 (one release to the judge) once each; the pinned 0.27.0.post1
    label holds what repeated runs saw. The fold once gave the pinned release the sweep's one label, and the next
    full run failed on a label the pinned baseline had listed."""
    baseline.update(tmp_path, "tvm", "0.27.0.post1", {KEY: "garbage|wrong|zero"})
    sweep = {KEY: {"0.26.0": "zero", "0.27.0": "wrong", "0.27.0.post1": "garbage"}}
    baseline.update_ranges(tmp_path, "tvm", sweep)
    saved = baseline.load(tmp_path, "tvm")
    assert saved["releases"] == ["0.26.0", "0.27.0"]
    latest = saved["ranges"][KEY][-1]
    assert latest["since"] == "0.27.0" and set(latest["label"].split("|")) == {"garbage", "wrong", "zero"}
    for observed in ("garbage", "wrong", "zero"):
        assert baseline.check(saved, KEY, observed, "0.27.0.post1") is None
    assert baseline.label_at(saved, KEY, "0.26.0") == "zero"


def _result(case: str, label: str, **extra: object) -> dict:
    return {"framework": "onnxruntime", "framework_version": "1.16.3", "python": "3.11.7", "op": "Gather",
            "variant": "Gather-13", "device": "cpu", "case": case, "outcome": "ok", "verdict": "conforms",
            "label": label, "dimension": "negative-indices", "tags": ["probe"], **extra}


def test_fold_makes_one_record_per_dimension_and_one_for_the_seed_cases() -> None:
    results = [_result("a.yaml::p1", "wrap"), _result("a.yaml::p2", "error"),
               {**_result("b.yaml::s1", ""), "label": None, "dimension": None, "tags": ["seed"], "verdict": "deviates"},
               {**_result("b.yaml::s2", ""), "label": None, "dimension": None, "tags": ["seed"]}]
    records = fold("onnxruntime", "1.16.3", [Record.read(r) for r in results], {"onnxruntime": "1.16.3"},
                   measured="2026-11-24")
    probe, seed = sorted(records, key=lambda r: r["dimension"])
    assert probe["label"] == "error|wrap" and probe["labels"] == {"a.yaml::p1": "wrap", "a.yaml::p2": "error"}
    assert seed["dimension"] == store.SEED_DIMENSION and seed["label"] == "deviates:1"
    assert seed["deviating"] == ["b.yaml::s1"] and seed["outcomes"] == {"ok": 2}


def test_a_group_label_lists_each_alternative_once_so_order_and_repeats_are_no_change(tmp_path: Path) -> None:
    # torch's index_put/threads duplicates read "last-wins|nondeterministic|last-wins" on one release (one probe
    # last-wins, another last-wins|nondeterministic) and "last-wins|nondeterministic" on the next: no change.
    results = [_result("a.yaml::p1", "last-wins|nondeterministic"), _result("a.yaml::p2", "last-wins")]
    (probe,) = fold("onnxruntime", "1.16.3", [Record.read(r) for r in results], {}, measured="2026-12-01")
    assert probe["label"] == "last-wins|nondeterministic"

    def rec(release: str, label: str) -> dict:
        return {"framework": "x", "release": release, "status": "ok", "op": "Gather", "variant": "v",
                "device": "cpu", "dimension": "duplicates", "label": label}
    # A file swept before: the old fold's repeated alternative, then the same set in another order.
    for release, label in (("1.0.0", "last-wins|nondeterministic|last-wins"), ("1.1.0", "nondeterministic|last-wins"),
                           ("1.2.0", "last-wins")):
        store.write_release(tmp_path, "x", release, [rec(release, label)])
    records = store.read(tmp_path, "x")
    assert [r["label"] for r in records] == ["last-wins|nondeterministic"] * 2 + ["last-wins"]
    assert [(c.before, c.after) for c in store.changes(records)] == [("1.1.0", "1.2.0")]


def test_changes_and_diff_read_consecutive_releases(tmp_path: Path) -> None:
    def rec(release: str, label: str) -> dict:
        return {"framework": "x", "release": release, "status": "ok", "op": "Gather", "variant": "v",
                "device": "cpu", "dimension": "negative-indices", "label": label}
    for release, label in (("1.9.0", "error"), ("1.10.0", "wrap"), ("1.11.0", "wrap")):
        store.write_release(tmp_path, "x", release, [rec(release, label)])
    store.write_release(tmp_path, "x", "1.12.0", [{"framework": "x", "release": "1.12.0", "status": "import-failed",
                                                   "reason": "no module"}])
    records = store.read(tmp_path, "x")
    assert [r["release"] for r in records] == ["1.9.0", "1.10.0", "1.11.0", "1.12.0"]  # by version, not text
    (change,) = store.changes(records)
    assert (change.before, change.after, change.old, change.new) == ("1.9.0", "1.10.0", "error", "wrap")
    assert change.kind == "behaviour"
    assert store.Change(change.key, "1.9.0", "1.10.0", "unsupported", "wrap").kind == "api"  # the API arrived
    assert store.diff(records, "1.9.0", "1.11.0") == [(("Gather", "v", "cpu", "negative-indices"), "error", "wrap")]
    assert store.failures(records) == {"1.12.0": "import-failed: no module"}


def test_a_sweep_of_one_operator_keeps_the_release_s_other_operators(tmp_path: Path) -> None:
    # `gsc history onnxruntime --cases cases/probes/tensor_scatter.yaml` adds TensorScatter to releases swept before.
    def rec(op: str, label: str) -> dict:
        return {"framework": "x", "release": "1.0.0", "status": "ok", "op": op, "variant": "v", "device": "cpu",
                "dimension": "d", "label": label}
    store.write_release(tmp_path, "x", "1.0.0", [rec("Gather", "wrap"), rec("ScatterND", "skip")])
    store.write_release(tmp_path, "x", "1.0.0", [rec("TensorScatter", "error"), rec("ScatterND", "error")])
    assert sorted((r["op"], r["label"]) for r in store.read(tmp_path, "x")) == [
        ("Gather", "wrap"), ("ScatterND", "error"), ("TensorScatter", "error")]
    failed = {"framework": "x", "release": "1.0.0", "status": "install-failed", "reason": "no wheel"}
    store.write_release(tmp_path, "x", "1.0.0", [failed])  # a whole-release record replaces the release
    assert store.read(tmp_path, "x") == [failed]
    # ... and a release measured after it failed (its companions fixed) keeps no failure record beside its labels.
    store.write_release(tmp_path, "x", "1.0.0", [rec("Gather", "wrap")])
    assert store.read(tmp_path, "x") == [rec("Gather", "wrap")]


PROBES = ROOT / "cases" / "probes" / "gather.yaml"


@pytest.mark.framework
@pytest.mark.slow
def test_a_real_two_release_sweep_of_onnxruntime(tmp_path: Path) -> None:
    """Two onnxruntime releases, each installed into its own environment and run on the Gather probes."""
    pytest.importorskip("onnx")
    history = tmp_path / "history"
    cmd = [*GSC, "history", "onnxruntime", "--releases", "1.16.3,1.31.1",
           "--cases", str(PROBES), "--dir", str(history)]
    proc = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True, timeout=1200)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    if "install-failed" in proc.stdout:
        pytest.skip(f"the package index is out of reach here: {proc.stdout.strip()[-300:]}")
    records = [json.loads(line) for line in (history / "onnxruntime.jsonl").read_text().splitlines()]
    assert {r["release"] for r in records} == {"1.16.3", "1.31.1"}
    assert all(r["status"] == "ok" for r in records), [r for r in records if r["status"] != "ok"][:1]
    old = {store.key(r): r for r in records if r["release"] == "1.16.3"}
    # The probe's bfloat16 copy (#40) raises on 1.16, which has no bfloat16 Gather kernel (below): a sweep joins the
    # labels of a cell's probes without the behaviour table's rule for refused data types.
    assert set(old[("Gather", "Gather-13", "cpu", "negative-indices")]["label"].split("|")) == {"error", "wrap"}
    assert old[("Gather", "Gather-13", "cpu", "negative-indices")]["packages"]["onnxruntime"] == "1.16.3"
    assert old[("Gather", "Gather-13", "cpu", "negative-indices")]["packages"]["numpy"].startswith("1.")
    # 1.16 has no bfloat16 Gather kernel; 1.31 has one: the change --diff must print.
    assert old[("Gather", "Gather-13", "cpu", "data-dtype:bfloat16")]["label"] == "error"
    diff = subprocess.run([*GSC, "history", "--diff", "onnxruntime", "1.16.3", "1.31.1",
                           "--dir", str(history)], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert diff.returncode == 0, diff.stderr
    assert "Gather Gather-13 data-dtype:bfloat16: error -> ok" in diff.stdout


def test_drop_removes_a_release_environment_and_says_what_it_freed(tmp_path: Path) -> None:
    folder = envs.env_path("onnxruntime", "1.0.0", tmp_path)
    (folder / "bin").mkdir(parents=True)
    (folder / "bin" / "python").write_bytes(b"x" * 1000)
    (folder / envs.MARKER).write_text("{}")
    assert envs.drop("onnxruntime", "1.0.0", tmp_path) == 1002
    assert not folder.exists() and envs.drop("onnxruntime", "1.0.0", tmp_path) == 0


@pytest.mark.framework
@pytest.mark.slow
def test_a_sweep_with_drop_envs_keeps_the_records_and_no_environment(tmp_path: Path) -> None:
    pytest.importorskip("onnx")
    history, cache = tmp_path / "history", tmp_path / "envs"
    cmd = [*GSC, "history", "onnxruntime", "--releases", "1.31.1", "--cases", str(PROBES),
           "--dir", str(history), "--drop-envs"]
    proc = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True, timeout=1200,
                          env={**os.environ, envs.CACHE_ENV: str(cache)})
    assert proc.returncode == 0, proc.stdout + proc.stderr
    if "install-failed" in proc.stdout:
        pytest.skip(f"the package index is out of reach here: {proc.stdout.strip()[-300:]}")
    assert "environment removed" in proc.stdout and " GB freed" in proc.stdout, proc.stdout
    records = [json.loads(line) for line in (history / "onnxruntime.jsonl").read_text().splitlines()]
    assert records and all(r["status"] == "ok" for r in records)
    assert not any(cache.iterdir()), list(cache.iterdir())


def test_history_tables_split_releases_evenly() -> None:
    from gather_scatter_conformance.harness.report.history import parts

    assert parts(21) == [(0, 11), (11, 21)]
    assert parts(12) == [(0, 12)] and parts(13) == [(0, 7), (7, 13)] and parts(0) == []
    assert parts(25, 12) == [(0, 9), (9, 18), (18, 25)]


def test_merging_the_weekly_sweeps_parts_replaces_their_releases_and_keeps_the_rest(tmp_path: Path) -> None:
    """The weekly sweep's report job: each part (one framework × a range of releases, swept on its own machine)
    goes into history/ with `gsc history --merge`; a release swept again replaces what was there."""
    history, parts = tmp_path / "history", tmp_path / "parts"

    def rec(release: str, label: str) -> dict:
        return {"framework": "onnxruntime", "release": release, "status": "ok", "op": "Gather",
                "variant": "Gather-13", "device": "cpu", "dimension": "negative-indices", "label": label}

    store.write_release(history, "onnxruntime", "1.16.3", [rec("1.16.3", "error")])
    store.write_release(history, "onnxruntime", "1.17.3", [rec("1.17.3", "error")])
    store.write_release(parts / "onnxruntime-1", "onnxruntime", "1.17.3", [rec("1.17.3", "wrap")])
    store.write_release(parts / "onnxruntime-2", "onnxruntime", "1.18.1", [rec("1.18.1", "wrap")])
    proc = subprocess.run([*GSC, "history", "--merge", str(parts / "onnxruntime-1"), str(parts / "onnxruntime-2"),
                           "--dir", str(history)], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    merged = store.read(history, "onnxruntime")
    assert [(r["release"], r["label"]) for r in merged] == [("1.16.3", "error"), ("1.17.3", "wrap"),
                                                            ("1.18.1", "wrap")]
    empty = subprocess.run([*GSC, "history", "--merge", str(tmp_path / "nothing"), "--dir", str(history)],
                           cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert empty.returncode == 2 and "no <framework>.jsonl" in empty.stderr


def test_case_labels_of_a_list_follow_the_list() -> None:
    # A report asks case_labels of one framework's history once per finding, so a list's answer is kept; a record
    # added to that list must still show.
    def probe(release: str, label: str) -> dict[str, object]:
        return {"status": "ok", "dimension": "negative-indices", "variant": "Gather-13", "release": release,
                "labels": {"cases/probes/gather.yaml::neg": label}}

    history = [probe("1.16.3", "error")]
    key = "cases/probes/gather.yaml::neg[Gather-13]"
    assert store.case_labels(history) == {key: {"1.16.3": "error"}}
    assert store.case_labels(history) is store.case_labels(history)
    history.append(probe("1.17.3", "wrap"))
    assert store.case_labels(history) == store.case_labels(iter(history)) == {key: {"1.16.3": "error",
                                                                                  "1.17.3": "wrap"}}


def test_a_release_environment_reports_what_its_rules_name(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """ReleaseRules.reported: the versions of what a release brings with it (jax's [cpu] extra: jaxlib) are kept in
    its records' packages. The environment here is this interpreter (a script instead of an install), so the
    versions are this one's; the import check runs for real."""
    pytest.importorskip("jax")
    import importlib.metadata

    def link(path: Path, reqs: list[str]) -> str:
        (path / "bin").mkdir(parents=True)
        python = path / "bin" / "python"
        python.write_text(f'#!/bin/sh\nexec "{sys.executable}" "$@"\n')  # a venv's python keeps its venv so
        python.chmod(0o755)
        return "link"

    monkeypatch.setattr(envs, "_create", link)
    env = envs.ensure("jax", "0.4.38", tmp_path)
    assert env.packages["jaxlib"] == importlib.metadata.version("jaxlib")
    assert env.packages["jax"] == importlib.metadata.version("jax")


def test_an_npm_release_is_pinned_package_by_package() -> None:
    """TensorFlow.js comes from npm: a release is @tensorflow/tfjs and its wasm backend at that version, released in
    lockstep; the check is JavaScript (no Python module to import)."""
    assert pins.requirements("tfjs", "4.20.0") == ["@tensorflow/tfjs@4.20.0", "@tensorflow/tfjs-backend-wasm@4.20.0"]
    rules = pins.framework("tfjs")
    assert rules.registry == "npm" and rules.check_code().startswith("const tf = require(")
    assert "import " not in rules.check_code()


@pytest.mark.framework
@pytest.mark.slow
def test_an_npm_release_gets_a_folder_of_its_own_named_to_the_adapter(tmp_path: Path) -> None:
    """The folder holds exactly the release (npm, from the registry), Node loads it, and the run's variables name it
    to the adapter (GSC_TFJS_DIR); a second call reuses it."""
    import shutil

    if not (shutil.which("npm") and shutil.which("node")):
        pytest.skip("needs npm and node (Debian's nodejs and npm)")
    from gather_scatter_conformance.adapters.tfjs import DIR_ENV

    try:
        env = envs.ensure("tfjs", "4.21.0", tmp_path)
    except envs.EnvError as exc:
        if exc.stage == "install":
            pytest.skip(f"the npm registry is out of reach here: {exc.reason[:200]}")
        raise
    folder = envs.env_path("tfjs", "4.21.0", tmp_path)
    assert env.variables == {DIR_ENV: str(folder)} and env.tool == "npm"
    assert env.packages == {"@tensorflow/tfjs": "4.21.0", "@tensorflow/tfjs-backend-wasm": "4.21.0"}
    assert env.python == sys.executable  # the cases run in the harness's own interpreter
    again = envs.ensure("tfjs", "4.21.0", tmp_path)
    assert again.tool == "reused" and again.variables == env.variables and again.packages == env.packages


def test_a_failed_import_is_told_by_its_error_not_the_log_lines_before_it() -> None:
    """ExecuTorch 1.2.0 under torch 2.15 (the sweep of 2026-12-01): torch's glog warning, which says "will be an
    error in a future release", came before the ImportError and led the release's reason."""
    stderr = ("W1201 06:40:49.405000 20739 torch/utils/_pytree.py:646] <enum 'KernelPreference'> is an Enum subclass "
              "... Calling register_constant() on Enum subclasses is deprecated and will be an error in a future "
              "release.\nTraceback (most recent call last):\n  File \"<string>\", line 1, in <module>\n"
              "ImportError: _portable_lib.so: undefined symbol: _ZN3c104impl3cow23materialize_cow_storageERNS_11Stor"
              "ageImplE\n")
    assert envs.reason(stderr) == ("ImportError: _portable_lib.so: undefined symbol: _ZN3c104impl3cow23materialize_"
                                   "cow_storageERNS_11StorageImplE")


def test_a_release_runs_with_its_environments_tools_first_on_path(tmp_path: Path) -> None:
    """ExecuTorch 1.0.1 and 1.1.0 call ``flatc`` from PATH to serialize every program; their interpreter run without
    its environment's ``bin`` on PATH failed every call (the sweep of 2026-12-01 recorded 'error' on each probe).
    The harness's own interpreter (an npm release's cases run there) gets nothing added."""
    from gather_scatter_conformance.harness.history import sweep

    release = envs.Env(str(tmp_path / "bin" / "python"), {}, 0.0, "uv", {"GSC_X": "1"})
    variables = sweep.run_variables(release)
    assert variables["PATH"].split(os.pathsep)[0] == str(tmp_path / "bin") and variables["GSC_X"] == "1"
    assert "PATH" not in sweep.run_variables(envs.Env(sys.executable, {}, 0.0, "npm", {}))
