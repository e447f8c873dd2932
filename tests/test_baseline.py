"""Probe tests compare labels with a baseline; --update-baseline records them; the behaviour table marks differences."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
import yaml
from _cases import records_of

from gather_scatter_conformance.harness.judge import baseline
from gather_scatter_conformance.harness.report.behaviour import provenance_changes, render_text, table
from gather_scatter_conformance.vocab.record import Record

# What a hand-built record needs besides the fields a test is about.
_RECORD = {"case": "f.yaml::p", "framework": "x", "outcome": "ok", "verdict": "conforms"}

PROBE = """\
op: Take
cases:
  - id: probe-oob-positive
    source: test
    dimension: oob-positive
    tags: [probe, out-of-bounds]
    inputs: {data: [10, 20, 30, 40, 50], indices: [7]}
    attrs: {axis: 0, mode: wrap}
"""


def _run(cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
    cmd = [sys.executable, "-m", "pytest", "cases", "-q", "-p", "no:cacheprovider", "--framework", "numpy", *args]
    return subprocess.run(cmd, cwd=cwd, capture_output=True, text=True, timeout=300)


@pytest.mark.slow
def test_update_then_check_then_detect_a_change(tmp_path: Path) -> None:
    (tmp_path / "cases").mkdir()
    (tmp_path / "cases" / "take.yaml").write_text(PROBE)
    # No baseline knows this file yet: the probe is labelled and recorded, with nothing to check it against.
    assert _run(tmp_path).returncode == 0
    assert _run(tmp_path, "--update-baseline").returncode == 0
    saved = baseline.load(tmp_path / "baselines", "numpy")
    assert saved["labels"] == {"cases/take.yaml::probe-oob-positive[take]": "wrap"}
    # A new probe in a file the baseline knows has no label yet: that fails until the baseline is updated.
    (tmp_path / "cases" / "take.yaml").write_text(PROBE + PROBE.split("cases:\n", 1)[1].replace(
        "probe-oob-positive", "probe-oob-positive-2"))
    first = _run(tmp_path)
    assert "no baseline label" in first.stdout and first.returncode == 1
    (tmp_path / "cases" / "take.yaml").write_text(PROBE)
    assert _run(tmp_path, "--results", "r.jsonl").returncode == 0
    (record,) = records_of(tmp_path / "r.jsonl")
    assert (record["dimension"], record["label"]) == ("oob-positive", "wrap")
    # Same probe, other mode: np.take clips now, which the baseline must flag as a behaviour change.
    (tmp_path / "cases" / "take.yaml").write_text(PROBE.replace("mode: wrap", "mode: clip"))
    changed = _run(tmp_path)
    assert changed.returncode == 1
    # The message names the dimension, both labels and the release (the one the baseline was measured on).
    out = " ".join(changed.stdout.split())
    assert "behaviour changed: oob-positive: baseline says 'wrap' on numpy" in out, out
    assert "observed 'clamp'" in out


def test_behaviour_table_marks_canonical_and_documented_differences() -> None:
    claims = Path(__file__).resolve().parent.parent / "claims"

    def rec(fw: str, variant: str, api: str, label: str) -> Record:
        return Record.read({
            "case": f"cases/g.yaml::{fw}",
            "op": "Gather",
            "framework": fw,
            "framework_version": "x",
            "variant": variant,
            "api": api,
            "device": "cpu",
            "dimension": "oob-positive",
            "label": label,
            "outcome": "ok",
            "verdict": "conforms",
        })

    rows = table(
        [
            rec("numpy", "take", "np.take(data, indices, axis=0)", "error"),
            rec("jax", "take", "jnp.take(data, indices, axis=0)", "fill-nan"),
        ],
        claims,
    )
    by_fw = {r["framework"]: r for r in rows}
    assert by_fw["numpy"]["conforms"] is True and by_fw["numpy"]["documented"] == "error"
    assert by_fw["numpy"]["agrees_with_docs"] is True and by_fw["numpy"]["documented_source"]
    assert by_fw["jax"]["conforms"] is False
    # A measurement that contradicts NumPy's documented 'raise' mode is marked.
    (contradicting,) = table([rec("numpy", "take", "np.take(data, indices, axis=0)", "clamp")], claims)
    assert contradicting["agrees_with_docs"] is False
    text = render_text([contradicting, by_fw["jax"]])
    assert "clamp!*" in text and "fill-nan!" in text


def _typed_probe(case: str, label: str, *tags: str) -> Record:
    """OpenVINO's Gather-8 past the end, one probe per data dtype (the case loader's ``data:<dtype>`` tag)."""
    return Record.read({"case": f"cases/probes/gather.yaml::{case}", "op": "Gather", "framework": "openvino",
                        "framework_version": "2026.1", "variant": "Gather-8", "api": "opset8.gather",
                        "device": "cpu", "dimension": "oob-positive", "label": label, "outcome": "ok",
                        "verdict": "deviates", "tags": ["probe", *tags]})


NO_CLAIMS = Path("/nonexistent-claims")


def test_a_cell_whose_data_dtypes_differ_shows_each_dtypes_label() -> None:
    # Issue #40: Gather-8 gives 0 past the end on float and 8-bit data, garbage on int16/int32/int64.
    recs = [_typed_probe("oob-int32", "garbage", "data:int32"), _typed_probe("oob-f32", "zero", "data:float32"),
            _typed_probe("oob-int8", "zero", "data:int8"), _typed_probe("oob-f16", "zero", "data:float16"),
            _typed_probe("oob-int64", "garbage", "data:int64"), _typed_probe("oob-int64-2", "zero", "data:int64")]
    (row,) = table(recs, NO_CLAIMS)
    assert row["label"] == "garbage|zero"  # the combined label, as before
    assert row["by_data_dtype"] == {"int32": "garbage", "float32": "zero", "int8": "zero", "float16": "zero",
                                    "int64": "garbage|zero"}
    text = render_text([row])
    assert "garbage|zero!?‡" in text
    # Grouped by label, dtypes in vocab.dtypes order, groups in the order of their first dtype.
    assert "  ‡ oob-positive, openvino:Gather-8: zero: float16, float32, int8 · garbage: int32 · garbage|zero: int64" \
        in text.splitlines()


def test_a_data_dtype_the_api_refuses_is_refused_not_an_edge_label() -> None:
    """ONNX Runtime's Gather-11 has no bfloat16 kernel: its edge probes on bfloat16 data raise whatever the index.
    Where the in-range data-dtype probe of that dtype raised too, the dtype reads ``refused`` and its records leave
    the cell's label: the edge was not measured on it."""
    def probe(case: str, label: str, dtype: str, dimension: str = "negative-indices") -> Record:
        return Record.read({"case": f"cases/probes/gather.yaml::{case}", "op": "Gather", "framework": "onnxruntime",
                            "framework_version": "1.32.0", "variant": "Gather-11", "api": "Gather-11", "device": "cpu",
                            "dimension": dimension, "label": label, "outcome": "ok", "verdict": "conforms",
                            "tags": ["probe", f"data:{dtype}"]})

    edge = [probe("neg", "wrap", "float32"), probe("neg-int8", "wrap", "int8"), probe("neg-bf16", "error", "bfloat16")]
    # Without the data-dtype probe nothing says why bfloat16 raised: its error is a label like any other.
    (row,) = table(edge, NO_CLAIMS)
    assert row["label"] == "error|wrap" and row["by_data_dtype"]["bfloat16"] == "error"
    support = probe("dt-bf16", "error", "bfloat16", "data-dtype:bfloat16")
    rows = {r["dimension"]: r for r in table([*edge, support], NO_CLAIMS)}
    assert rows["negative-indices"]["label"] == "wrap"
    assert rows["negative-indices"]["by_data_dtype"] == {"float32": "wrap", "int8": "wrap", "bfloat16": "refused"}
    assert rows["data-dtype:bfloat16"]["label"] == "error" and "by_data_dtype" not in rows["data-dtype:bfloat16"]
    # A dtype the API accepts keeps its label.
    accepted = probe("dt-bf16", "ok", "bfloat16", "data-dtype:bfloat16")
    rows = {r["dimension"]: r for r in table([*edge, accepted], NO_CLAIMS)}
    assert rows["negative-indices"]["label"] == "error|wrap"


def test_a_cell_whose_data_dtypes_agree_or_are_not_named_has_no_split() -> None:
    agree = [_typed_probe("oob-f32", "zero", "data:float32"), _typed_probe("oob-int32", "zero", "data:int32"),
             _typed_probe("oob-int32-2", "zero", "data:int32")]
    (row,) = table(agree, NO_CLAIMS)
    assert row["label"] == "zero" and "by_data_dtype" not in row and "‡" not in render_text([row]).split("\n!")[0]
    # Two probes of one dtype that disagree (two index values) are one family: the row label says it all.
    (row,) = table([_typed_probe("a", "zero", "data:int32"), _typed_probe("b", "garbage", "data:int32")], NO_CLAIMS)
    assert row["label"] == "garbage|zero" and "by_data_dtype" not in row
    # Records of an older results file name no data dtype: one unnamed family, the row as it always was.
    (row,) = table([_typed_probe("a", "zero"), _typed_probe("b", "garbage")], NO_CLAIMS)
    assert row["label"] == "garbage|zero" and "by_data_dtype" not in row
    # A cell mixing both has no dtype to name for the untagged records: no split either.
    (row,) = table([_typed_probe("a", "zero", "data:float32"), _typed_probe("b", "garbage")], NO_CLAIMS)
    assert "by_data_dtype" not in row


def test_baseline_from_results_file(tmp_path: Path) -> None:
    from gather_scatter_conformance.harness.cli import main

    results = tmp_path / "r.jsonl"
    results.write_text(
        json.dumps(
            {
                "case": "cases/p.yaml::probe",
                "framework": "numpy",
                "framework_version": "2.4",
                "variant": "take",
                "device": "cpu",
                "outcome": "ok",
                "verdict": "conforms",
                "label": "wrap",
            }
        )
        + "\n"
        + json.dumps({"case": "cases/p.yaml::plain", "framework": "numpy", "variant": "take", "outcome": "ok",
                      "verdict": "conforms"})
        + "\n"
    )
    assert main(["baseline", str(results), "--dir", str(tmp_path / "b")]) == 0
    saved = baseline.load(tmp_path / "b", "numpy")
    assert saved["labels"] == {"cases/p.yaml::probe[take]": "wrap"} and saved["version"] == "2.4"


def test_a_devices_labels_join_the_baseline_without_moving_its_pinned_version(tmp_path: Path) -> None:
    # ONNX Runtime's OpenVINO EP comes from another wheel (onnxruntime-openvino 1.24.1) than the CPU pin (1.31.1).
    def rec(device: str, version: str, label: str) -> Record:
        return Record.read({"case": "cases/p.yaml::probe", "framework": "onnxruntime", "framework_version": version,
                            "variant": "Gather-13", "device": device, "outcome": "ok", "verdict": "conforms",
                            "label": label})

    baseline.from_records(tmp_path, [rec("cpu", "1.31.1", "error")])
    baseline.from_records(tmp_path, [rec("openvino", "1.24.1", "zero")])
    saved = baseline.load(tmp_path, "onnxruntime")
    assert saved["version"] == "1.31.1"
    assert saved["labels"] == {"cases/p.yaml::probe[Gather-13]": "error",
                               "cases/p.yaml::probe[Gather-13]@openvino": "zero"}
    assert baseline.check(saved, "cases/p.yaml::probe[Gather-13]@openvino", "zero", "1.24.1") is None


def test_a_memory_unsafe_cell_is_checked_by_class_and_a_new_label_inside_it_is_a_note() -> None:
    # Which signal ends a corrupted process depends on the allocator's state (paddle's index_put: SIGABRT or
    # SIGSEGV from run to run): both are in the memory-unsafe class, so the second is a note, not a failure.
    from gather_scatter_conformance.harness.judge.baseline import check, note

    base = {"framework": "paddle", "version": "3.3.1", "labels": {"f.yaml::p[index_put]": "crash:SIGABRT"}}
    assert check(base, "f.yaml::p[index_put]", "crash:SIGSEGV", "3.3.1") is None
    assert "crash:SIGSEGV" in note(base, "f.yaml::p[index_put]", "crash:SIGSEGV", "3.3.1")
    assert note(base, "f.yaml::p[index_put]", "crash:SIGABRT", "3.3.1") is None  # nothing new
    assert check(base, "f.yaml::p[index_put]", "garbage|crash:SIGABRT", "3.3.1") is None
    left = check(base, "f.yaml::p[index_put]", "error", "3.3.1")
    assert left is not None and "left the memory-unsafe class" in left and "'crash:SIGABRT'" in left


def test_a_move_into_the_memory_unsafe_class_fails_naming_both_sides() -> None:
    from gather_scatter_conformance.harness.judge.baseline import check

    base = {"framework": "tvm", "version": "0.27", "labels": {"f.yaml::p[relax.op.take]": "zero"}}
    problem = check(base, "f.yaml::p[relax.op.take]", "garbage|zero", "0.27")
    assert problem and "entered the memory-unsafe class" in problem and "'zero'" in problem
    assert "'garbage|zero'" in problem


def test_a_paths_baseline_keeps_its_preservation_verdicts() -> None:
    from gather_scatter_conformance.harness.judge.baseline import check, record_label

    def rec(preservation: str, summary: str) -> Record:
        return Record.read({**_RECORD, "label": "wrap",
                            "conversion": {"preservation": preservation, "summary": summary}})

    assert record_label(rec("changed", "changed: error -> wrap")) == "changed: error -> wrap"
    assert record_label(rec("conversion-failed", "conversion-failed: KeyError: 'x'")) == "conversion-failed"
    hung = Record.read({**_RECORD, "outcome": "timeout", "conversion": {
        "preservation": "conversion-failed", "summary": "conversion-failed: the converter hung (timeout)"}})
    assert record_label(hung) == "conversion-failed (timeout)"  # a converter's hang is kept, as a witness
    assert record_label(rec("preserved", "preserved")) == "preserved"
    assert record_label(Record.read({**_RECORD, "label": "wrap"})) == "wrap"
    assert record_label(Record.read({**_RECORD, "verdict": "conforms"})) is None
    version = "torch 2.13.0+cpu; onnx-dynamo 2.13.0+cpu; openvino 2026.4.1"
    key = "f.yaml::p[index_select]"
    base = {"framework": "torch~onnx-dynamo~openvino", "version": version,
            "labels": {key: "changed: error -> crash:SIGSEGV"}}
    assert check(base, key, "changed: error -> crash:SIGABRT", version) is None  # the same heap corruption
    assert check(base, key, "changed: error -> crash:SIGFPE", version) is not None
    message = check(base, key, "preserved", version)
    assert message == (f"behaviour changed: baseline says 'changed: error -> crash:SIGSEGV', observed 'preserved' "
                       f"on {version} ({key})")
    upgraded = version.replace("2026.4.1", "2027.0.0")
    assert "a release the baseline does not know" in check(base, key, "preserved", upgraded)


TAKE_NEGATIVE = """\
op: Take
cases:
  - id: probe-negative
    source: test
    dimension: negative-indices
    tags: [probe]
    inputs: {data: [10, 20, 30], indices: [-1]}
    attrs: {axis: 0}
"""


@pytest.mark.framework
def test_a_paths_test_fails_on_a_new_change_xfails_on_a_recorded_one_and_fails_when_it_goes(tmp_path: Path) -> None:
    import pytest

    from gather_scatter_conformance import adapters

    path = "torch~onnx-torchscript~onnxruntime"
    if not adapters.is_available(path):
        pytest.skip("torch, onnx, onnxruntime")
    (tmp_path / "cases").mkdir()
    (tmp_path / "cases" / "take.yaml").write_text(TAKE_NEGATIVE)

    def run(*args: str) -> subprocess.CompletedProcess[str]:
        cmd = [sys.executable, "-m", "pytest", "cases", "-q", "-p", "no:cacheprovider", "-p", "no:randomly", "-rxX",
               "--framework", path, "-k", "index_select", *args]
        return subprocess.run(cmd, cwd=tmp_path, capture_output=True, text=True, timeout=600)

    # torch.index_select refuses -1; the exported Gather counts it from the end: a change, with no baseline yet.
    first = run()
    assert first.returncode == 1 and "the conversion changed the behaviour: changed: error -> wrap" in first.stdout
    assert run("--update-baseline").returncode == 0
    saved = baseline.load(tmp_path / "baselines", path)
    assert saved["labels"] == {"cases/take.yaml::probe-negative[index_select]": "changed: error -> wrap"}
    recorded = run()
    assert recorded.returncode == 0 and f"recorded in baselines/{path}.yaml: changed: error -> wrap" in recorded.stdout
    # A release whose exporter or runtime kept torch's refusal would now preserve it: the baseline no longer holds.
    file = baseline.path_for(tmp_path / "baselines", path)
    file.write_text(file.read_text().replace("'changed: error -> wrap'", "preserved"))
    gone = run()
    assert gone.returncode == 1 and "baseline says 'preserved'" in gone.stdout, gone.stdout[-2000:]


def test_only_a_cpu_record_pins_the_baseline_s_version() -> None:
    # The OpenVINO EP wheel is onnxruntime 1.24.1 beside the pinned 1.32.0: its labels join the file (gsc baseline and
    # --update-baseline alike, both through pinned_version) without moving the pin.
    from gather_scatter_conformance.harness.judge.baseline import pinned_version

    assert pinned_version(Record.read({**_RECORD, "framework_version": "1.32.0", "device": "cpu"})) == "1.32.0"
    assert pinned_version(Record.read({**_RECORD, "framework_version": "1.32.0"})) == "1.32.0"
    assert pinned_version(Record.read({**_RECORD, "framework_version": "1.24.1", "device": "openvino"})) is None


def test_garbage_and_wrong_are_one_value_no_policy_gives_and_a_checker_s_evidence_keeps_the_class(
        tmp_path: Path) -> None:
    # TVM's take before the buffer: forked processes share their heap, so the same bytes come back (`wrong`) in
    # one session and differ (`garbage`) in another; the check must not flip with the heap.
    base = {"framework": "tvm", "version": "0.27", "labels": {"f.yaml::p[relax.op.take]": "wrong"}}
    assert baseline.check(base, "f.yaml::p[relax.op.take]", "garbage", "0.27") is None
    assert "garbage" in baseline.note(base, "f.yaml::p[relax.op.take]", "garbage", "0.27")
    assert baseline.check(base, "f.yaml::p[relax.op.take]", "error", "0.27") is not None
    assert not baseline.in_class(base, "f.yaml::p[relax.op.take]", "wrong")
    base["labels"]["f.yaml::p[relax.op.take]"] = "wrong"
    (tmp_path / "tvm.yaml").write_text(yaml.safe_dump(base))
    baseline.mark_unsafe(tmp_path, "tvm", {"f.yaml::p[relax.op.take]": "memcheck: invalid read of size 4"})
    marked = baseline.load(tmp_path, "tvm")
    assert baseline.in_class(marked, "f.yaml::p[relax.op.take]", "wrong")
    assert baseline.check(marked, "f.yaml::p[relax.op.take]", "crash:SIGSEGV", "0.27") is None  # same class
    fixed = baseline.check(marked, "f.yaml::p[relax.op.take]", "error", "0.27")
    assert fixed and "left the memory-unsafe class" in fixed


def test_an_update_keeps_every_label_a_memory_unsafe_cell_was_seen_with(tmp_path: Path) -> None:
    first = {"f.yaml::p[take]": "zero|garbage", "f.yaml::q[take]": "garbage", "f.yaml::r[take]": "zero|garbage",
             "f.yaml::s[put]": "crash:SIGABRT"}
    dims = {"f.yaml::p[take]": "oob-positive", "f.yaml::q[take]": "duplicates", "f.yaml::r[take]": "oob-positive",
            "f.yaml::s[put]": "oob-positive"}
    baseline.update(tmp_path, "tvm", "0.27", first, dims)
    baseline.update(tmp_path, "tvm", "0.27", {"f.yaml::p[take]": "zero", "f.yaml::q[take]": "wrong",
                                              "f.yaml::r[take]": "wrong", "f.yaml::s[put]": "crash:SIGSEGV"}, dims)
    labels = baseline.load(tmp_path, "tvm")["labels"]
    # q (LiteRT's duplicates, indices in range): garbage was deterministic (wrong), so it leaves the class. r (an
    # index past the end) keeps its garbage: one session's forks share a heap, another's differ.
    # the labels a cell had keep their places, new ones follow: an update that saw nothing new changes no line
    assert labels == {"f.yaml::p[take]": "zero|garbage", "f.yaml::q[take]": "wrong",
                      "f.yaml::r[take]": "zero|garbage|wrong", "f.yaml::s[put]": "crash:SIGABRT|crash:SIGSEGV"}
    baseline.update(tmp_path, "tvm", "0.28", {"f.yaml::p[take]": "error"})  # fixed: a real change replaces
    assert baseline.load(tmp_path, "tvm")["labels"]["f.yaml::p[take]"] == "error"


def test_gsc_baseline_folds_a_checker_s_proof_into_the_memory_unsafe_section(tmp_path: Path) -> None:
    from gather_scatter_conformance.harness.cli import main

    lines = [{"case": "cases/gather.yaml::g", "framework": "tvm", "variant": "relax.op.take", "verdict": "read",
              "reason": "memcheck: Invalid read of size 4; 4 bytes before a block of size 24"},
             {"case": "cases/probes/scatter_nd.yaml::p", "framework": "tvm", "variant": "relax.op.scatter_nd",
              "verdict": "unprovable", "reason": "memcheck ran 346.8 s, reported 0 errors"}]
    evidence = tmp_path / "memcheck.jsonl"
    evidence.write_text("".join(json.dumps(line) + "\n" for line in lines))
    assert main(["baseline", "--evidence", str(evidence), "--dir", str(tmp_path / "b")]) == 0
    section = baseline.load(tmp_path / "b", "tvm")["memory_unsafe"]
    assert section == {"cases/gather.yaml::g[relax.op.take]":
                       "read: memcheck: Invalid read of size 4; 4 bytes before a block of size 24"}


def test_an_update_reaches_the_range_that_holds_the_pinned_release(tmp_path: Path) -> None:
    # mxnet's file has ranges from release sweeps: a run on the pinned release is checked against the range's label.
    (tmp_path / "mxnet.yaml").write_text(yaml.safe_dump({
        "framework": "mxnet", "version": "1.9.1", "labels": {"f.yaml::p[np.setitem]": "alias"},
        "ranges": {"f.yaml::p[np.setitem]": [{"label": "error", "until": "1.8.0"},
                                             {"label": "alias", "since": "1.8.0"}]}}))
    baseline.update(tmp_path, "mxnet", "1.9.1", {"f.yaml::p[np.setitem]": "alias-write"})
    saved = baseline.load(tmp_path, "mxnet")
    assert baseline.label_at(saved, "f.yaml::p[np.setitem]", "1.9.1") == "alias-write"
    assert baseline.label_at(saved, "f.yaml::p[np.setitem]", "1.7.0") == "error"


def test_a_baseline_from_several_runs_keeps_every_label_they_saw(tmp_path: Path) -> None:
    # TVM's scatter_nd past the end: one session's forks abort, the next session's write lands elsewhere (skip).
    def rec(label: str) -> Record:
        return Record.read({"case": "cases/p.yaml::probe", "framework": "tvm", "framework_version": "0.27",
                            "variant": "nd", "outcome": "ok", "verdict": "deviates", "label": label,
                            "dimension": "oob-negative"})

    baseline.from_records(tmp_path, [rec("crash:SIGABRT"), rec("skip")])
    saved = baseline.load(tmp_path, "tvm")
    assert saved["labels"] == {"cases/p.yaml::probe[nd]": "crash:SIGABRT|skip"}
    assert baseline.check(saved, "cases/p.yaml::probe[nd]", "skip", "0.27") is None
    assert baseline.check(saved, "cases/p.yaml::probe[nd]", "crash:SIGSEGV", "0.27") is None


def test_a_case_whose_operator_is_not_mapped_gets_no_baseline_key(tmp_path: Path) -> None:
    # MNN maps no GatherElements: its probes are recorded as unsupported with no variant, and never checked, so a
    # baseline built from a results file must not hold `...[]` keys for them (mnn.yaml held 56).
    def rec(variant: str, label: str) -> Record:
        return Record.read({"case": "cases/probes/gather_elements.yaml::probe-data-dtype-bool", "framework": "mnn",
                            "framework_version": "3.6.1", "variant": variant, "outcome": "unsupported",
                            "verdict": "n/a", "label": label, "dimension": "data-dtype:bool"})

    baseline.from_records(tmp_path, [rec("", "unsupported"), rec("expr.gather_elements", "unsupported")])
    assert baseline.load(tmp_path, "mnn")["labels"] == {
        "cases/probes/gather_elements.yaml::probe-data-dtype-bool[expr.gather_elements]": "unsupported"}


def test_a_results_file_is_checked_offline_as_the_run_checks_it(tmp_path: Path,
                                                                 capsys: pytest.CaptureFixture[str]) -> None:
    # A nightly's results, judged against baselines updated since: the class compared, not the label.
    from gather_scatter_conformance.harness.cli import main

    def rec(case: str, label: str, distribution: dict | None = None) -> dict:
        out = {"case": f"cases/p.yaml::{case}", "framework": "tvm", "framework_version": "0.27", "variant": "take",
               "outcome": "ok", "verdict": "deviates", "label": label, "dimension": "oob-positive"}
        return {**out, "distribution": distribution} if distribution else out

    baseline.update(tmp_path, "tvm", "0.27", {"cases/p.yaml::a[take]": "garbage", "cases/p.yaml::b[take]": "clamp",
                                              "cases/p.yaml::c[take]": "wrap"}, None)
    results = tmp_path / "r.jsonl"
    records = [rec("a", "zero|garbage", {"zero": 3, "garbage": 2}), rec("b", "clamp"), rec("c", "wrap")]
    results.write_text("".join(json.dumps(r) + "\n" for r in records))
    assert main(["baseline", "--check", "--dir", str(tmp_path), str(results)]) == 0
    out = capsys.readouterr().out
    assert "note tvm: cases/p.yaml::a[take]: baseline says 'garbage'; new label(s) zero (same class)" in out
    assert "mixed tvm:take cases/p.yaml::a: zero 3/5, garbage 2/5" in out
    assert "3 record(s) checked" in out and "0 baseline failure(s), 1 note(s); 1 repeated, 1 with a mixed" in out

    records[2] = rec("c", "garbage")  # a checked wrap that reads out of bounds now: entered the class
    results.write_text("".join(json.dumps(r) + "\n" for r in records))
    assert main(["baseline", "--check", "--dir", str(tmp_path), str(results)]) == 1
    out = capsys.readouterr().out
    assert out.startswith("FAIL tvm: ") and "entered the memory-unsafe class" in out and "1 baseline failure(s)" in out
    assert baseline.load(tmp_path, "tvm")["labels"]["cases/p.yaml::c[take]"] == "wrap"  # --check writes nothing


def test_a_cell_that_writes_duplicates_in_no_fixed_order_may_show_any_order() -> None:
    # Keras's scatter_update on the torch backend, many duplicate targets: nondeterministic 4/5, mixed 1/5 in one
    # run; its baseline had seen nondeterministic and last-wins. Any order is that behaviour; a reduction is not.
    saved = {"framework": "keras", "version": "3.15.1",
             "labels": {"cases/p.yaml::dup[scatter_update/torch]": "nondeterministic|last-wins",
                        "cases/p.yaml::fixed[scatter_update/jax]": "last-wins"}}
    key = "cases/p.yaml::dup[scatter_update/torch]"
    for seen in ("nondeterministic|mixed", "first-wins", "mixed"):
        assert baseline.check(saved, key, seen, "3.15.1", "duplicates") is None, seen
    assert "new label(s) mixed" in baseline.note(saved, key, "nondeterministic|mixed", "3.15.1")
    assert baseline.merged("nondeterministic|last-wins", "mixed", "duplicates") == "nondeterministic|last-wins|mixed"
    assert baseline.check(saved, key, "accumulate", "3.15.1", "duplicates") is not None
    # a cell seen in one fixed order has no such latitude
    assert baseline.check(saved, "cases/p.yaml::fixed[scatter_update/jax]", "mixed", "3.15.1", "duplicates")


def _provenance_probe(op: str, dimension: str, variant: str, label: str, version: str = "2026.4.1",
                      device: str = "cpu") -> Record:
    """OpenVINO's probe on one variant: ``<api>`` takes the indices at run time, ``<api>/constant`` as a constant."""
    return Record.read({"case": f"cases/probes/{op.lower()}.yaml::probe-{dimension}", "op": op,
                        "framework": "openvino", "framework_version": version, "variant": variant,
                        "api": f"ov {variant}", "device": device, "dimension": dimension, "label": label,
                        "outcome": "ok", "verdict": "deviates"})


def test_index_provenance_lists_a_label_the_constant_indices_change() -> None:
    # Issue #40, OpenVINO 2026.4.1: empty Gather indices crash read_model with SIGFPE; as a constant, a wrong value.
    recs = [_provenance_probe("Gather", "empty-indices", "read_model", "crash:SIGFPE"),
            _provenance_probe("Gather", "empty-indices", "read_model/constant", "wrong"),
            _provenance_probe("GatherND", "empty-indices", "read_model", "ok"),
            _provenance_probe("GatherND", "empty-indices", "read_model/constant", "error"),
            # another release's, or another device's, run-time row is not the parent
            _provenance_probe("Take", "empty-indices", "read_model", "ok", version="2025.1"),
            _provenance_probe("Take", "empty-indices", "read_model/constant", "error"),
            _provenance_probe("Take", "oob-positive", "read_model", "error", device="GPU"),
            _provenance_probe("Take", "oob-positive", "read_model/constant", "zero")]
    changes = provenance_changes(table(recs, NO_CLAIMS))
    assert changes == [
        {"op": "Gather", "dimension": "empty-indices", "framework": "openvino", "framework_version": "2026.4.1",
         "device": "cpu", "variant": "read_model", "twin": "constant", "parent_label": "crash:SIGFPE",
         "twin_label": "wrong",
         "cases": ["cases/probes/gather.yaml::probe-empty-indices"]},
        {"op": "GatherND", "dimension": "empty-indices", "framework": "openvino", "framework_version": "2026.4.1",
         "device": "cpu", "variant": "read_model", "twin": "constant", "parent_label": "ok", "twin_label": "error",
         "cases": ["cases/probes/gathernd.yaml::probe-empty-indices"]}]


def test_a_dynamic_twin_s_change_is_listed_beside_the_constant_twin_s() -> None:
    """Dynamic shapes (#40): a ``<api>/<mode>_dynamic`` row is compared with its ``<api>/<mode>`` parent as a
    constant twin is; the text names the sides static and dynamic. (pytorch#169779: index_select with -1 raised
    under dynamic=False and ran under dynamic=True; made-up OpenVINO labels stand in for it here.)"""
    rows = table([_provenance_probe("Gather", "negative-indices", "index_select/compile", "error"),
                  _provenance_probe("Gather", "negative-indices", "index_select/compile_dynamic", "wrap"),
                  _provenance_probe("Gather", "negative-indices", "index_select/compile_constant", "error")],
                 NO_CLAIMS)
    (change,) = provenance_changes(rows)
    assert (change["variant"], change["twin"], change["parent_label"], change["twin_label"]) == (
        "index_select/compile", "dynamic", "error", "wrap")
    assert render_text(rows).splitlines()[-1] == ("  Gather negative-indices, openvino 2026.4.1:index_select/compile: "
                                                   "error (static) -> wrap (dynamic)")


def test_index_provenance_leaves_out_chance_flips_and_unsupported() -> None:
    recs = [
        # memory-unsafe: zero, then zero or garbage from run to run: a label in common
        _provenance_probe("Gather", "oob-positive", "Gather-8", "zero"),
        _provenance_probe("Gather", "oob-positive", "Gather-8/constant", "zero|garbage"),
        # duplicates written in no fixed order, then last-wins: a label in common
        _provenance_probe("ScatterND", "duplicates", "read_model", "last-wins|nondeterministic"),
        _provenance_probe("ScatterND", "duplicates", "read_model/constant", "last-wins"),
        # ov constant() refuses an empty array: unsupported is no behaviour, on either side
        _provenance_probe("GatherND", "empty-indices", "GatherND-8", "ok"),
        _provenance_probe("GatherND", "empty-indices", "GatherND-8/constant", "unsupported"),
        _provenance_probe("Gather", "empty-data", "Gather-8", "unsupported"),
        _provenance_probe("Gather", "empty-data", "Gather-8/constant", "wrong"),
        # a constant row without its parent
        _provenance_probe("Take", "empty-indices", "Gather-8/constant", "wrong")]
    rows = table(recs, NO_CLAIMS)
    assert provenance_changes(rows) == []
    # unsupported beside another label: the other label is the behaviour
    rows = table([*recs, _provenance_probe("GatherND", "empty-indices", "read_model", "unsupported|ok"),
                  _provenance_probe("GatherND", "empty-indices", "read_model/constant", "unsupported|error")],
                 NO_CLAIMS)
    assert [(c["op"], c["variant"], c["parent_label"], c["twin_label"]) for c in provenance_changes(rows)] == [
        ("GatherND", "read_model", "unsupported|ok", "unsupported|error")]


def test_gsc_behaviour_ends_with_the_index_provenance_section() -> None:
    heading = ("Index provenance, dynamic shapes and threads: labels that change when the indices are a constant, the "
               "shapes symbolic or the intra-op threads other")
    rows = table([_provenance_probe("Gather", "empty-indices", "read_model", "crash:SIGFPE"),
                  _provenance_probe("Gather", "empty-indices", "read_model/constant", "wrong")], NO_CLAIMS)
    lines = render_text(rows).splitlines()
    assert lines[-2:] == [heading, "  Gather empty-indices, openvino 2026.4.1:read_model: crash:SIGFPE (input) -> "
                                   "wrong (constant)"]
    # constant rows and no change
    rows = table([_provenance_probe("Gather", "oob-positive", "Gather-8", "zero"),
                  _provenance_probe("Gather", "oob-positive", "Gather-8/constant", "zero|garbage")], NO_CLAIMS)
    assert render_text(rows).splitlines()[-2:] == [heading, "  no change"]
    # no constant-mode row measured: no section
    rows = table([_provenance_probe("Gather", "oob-positive", "Gather-8", "zero")], NO_CLAIMS)
    assert heading not in render_text(rows)
    # a thread twin (issue #40 item 5): the plugin's default of a thread a core against one thread
    rows = table([_provenance_probe("ScatterND", "duplicates", "ScatterNDUpdate-15", "nondeterministic"),
                  _provenance_probe("ScatterND", "duplicates", "ScatterNDUpdate-15/one_thread", "last-wins")],
                 NO_CLAIMS)
    assert render_text(rows).splitlines()[-1] == ("  ScatterND duplicates, openvino 2026.4.1:ScatterNDUpdate-15: "
                                                  "nondeterministic (a thread a core) -> last-wins (one thread)")
