"""Differential fuzzing (harness/fuzz): deterministic generation, valid cases, triage against the baselines, and a
real disagreement shrunk and written as a case file. Real frameworks only (onnxruntime, torch, OpenVINO)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from gather_scatter_conformance.harness.cases.load import Case, ExpectedError, load_file
from gather_scatter_conformance.harness.fuzz import triage
from gather_scatter_conformance.harness.fuzz.differ import Differ
from gather_scatter_conformance.harness.fuzz.run import fuzz_op
from gather_scatter_conformance.harness.fuzz.strategies import STRATEGIES, GenCase, generate
from gather_scatter_conformance.harness.fuzz.summary import REFERENCE, agreement
from gather_scatter_conformance.harness.fuzz.writer import to_case, write_found
from gather_scatter_conformance.harness.reference import AllowedOutputs
from gather_scatter_conformance.vocab.ops import with_defaults

ROOT = Path(__file__).resolve().parent.parent


@pytest.fixture(scope="module")
def differ():
    d = Differ(pythons={}, jobs=1)
    yield d
    d.close()


def _gen(op: str, attrs: dict, **inputs: np.ndarray) -> GenCase:
    return GenCase(op, {k: np.asarray(v) for k, v in inputs.items()}, with_defaults(op, attrs))


@pytest.mark.parametrize("op", STRATEGIES)
def test_generation_is_deterministic_per_seed(op: str) -> None:
    first = [c.key for c in generate(op, 25, seed_value=7)]
    assert first == [c.key for c in generate(op, 25, seed_value=7)]
    assert len(first) == 25 and len(set(first)) == 25
    assert first != [c.key for c in generate(op, 25, seed_value=8)]


@pytest.mark.parametrize("op", STRATEGIES)
def test_generated_cases_are_valid_and_their_reference_is_computable(op: str) -> None:
    seen_error = seen_value = False
    for gc in generate(op, 40, seed_value=3):
        case = to_case(gc)
        assert isinstance(case, Case)
        for name, arr in gc.inputs.items():  # what is written reads back exactly (NaN, -0.0, bfloat16 included)
            back = case.inputs()[name]
            assert back.dtype == arr.dtype and back.shape == arr.shape
            assert back.tobytes() == np.ascontiguousarray(arr).tobytes()
        ref = case.reference()
        if isinstance(ref, ExpectedError):
            # Shapes and attributes are always valid: only out-of-range index values may make it an error.
            assert ref.reason.startswith("IndexOutOfRange"), ref.reason
            assert triage.index_features(gc) & {"oob-positive", "oob-negative"}
            seen_error = True
        else:
            assert isinstance(ref, np.ndarray | AllowedOutputs)
            seen_value = True
        assert gc.inputs["data"].size <= 64 and gc.inputs["data"].ndim <= 6
    assert seen_value and (seen_error or op == "Take")


def test_touched_dimensions() -> None:
    gc = _gen("ScatterElements", {"axis": -1, "reduction": "add"}, data=np.zeros(4, np.float16),
              indices=np.array([1, 1, -1], np.int32), updates=np.ones(3, np.float16))
    assert triage.touched(gc) == ["negative-indices", "duplicates-add", "uncovered", "negative-axis",
                                  "data-dtype:float16", "index-dtype:int32"]
    oob = _gen("GatherND", {"batch_dims": 0}, data=np.zeros((2, 3)), indices=np.array([[1, 3], [-3, 0]]))
    assert triage.index_features(oob) == {"oob-positive", "oob-negative"}


@pytest.mark.parametrize(("labels", "zeros_allowed"), [
    (frozenset({"zero-fill"}), True),  # a data-less API (tf.scatter_nd): its uncovered places are its own zeros
    (frozenset({"zero"}), True),
    (frozenset({"keep-data"}), False),
])
def test_uncovered_zeros_only_where_the_baseline_allows(labels: frozenset, zeros_allowed: bool) -> None:
    gc = _gen("ScatterND", {"reduction": "none"}, data=np.array([5.0, 6.0, 7.0], np.float32),
              indices=np.array([[1]]), updates=np.array([9.0], np.float32))
    outputs = [np.asarray(c).tolist() for c in triage._candidates(gc, {"uncovered": labels}, ["uncovered"])]
    assert [5.0, 9.0, 7.0] in outputs
    assert ([0.0, 9.0, 0.0] in outputs) is zeros_allowed


@pytest.mark.framework
def test_labelled_differences_are_not_findings(differ: Differ) -> None:
    pytest.importorskip("torch")
    pytest.importorskip("openvino")
    neg = _gen("Gather", {"axis": 0}, data=np.array([10.0, 20.0, 30.0], np.float32), indices=np.array([-1]))
    # torch.index_select raises on a negative index; baselines/torch.yaml labels negative-indices `error` there.
    run = differ.run(neg, [("torch", "index_select"), ("torch", "indexing")])
    select, indexing = run.runs
    assert select.record.verdict == "deviates" and select.outcome() == "error"
    assert select.verdict.status == "labelled" and "negative-indices" in select.verdict.note
    assert indexing.verdict.status == "agree"
    # OpenVINO's Gather-8 writes 0 for an index past the end (label `zero`), where canonical semantics raise.
    oob = _gen("Gather", {"axis": 0}, data=np.array([10.0, 20.0, 30.0], np.float32), indices=np.array([2, 5]))
    (ov,) = differ.run(oob, [("openvino", "Gather-8")]).runs
    assert ov.outcome() == "ok" and ov.observed.tolist() == [30.0, 0.0]
    assert ov.verdict.status == "labelled"
    # A duplicate scatter target: onnxruntime's choice is one of those the reference allows, so it agrees.
    dup = _gen("ScatterElements", {"axis": 0}, data=np.zeros(3, np.float32), indices=np.array([1, 1]),
               updates=np.array([5.0, 6.0], np.float32))
    (ort,) = differ.run(dup, [("onnxruntime", "ScatterElements-18")]).runs
    assert ort.verdict.status == "agree"


@pytest.mark.framework
def test_a_real_disagreement_is_a_finding_with_its_kind(differ: Differ) -> None:
    # onnxruntime's CPU ScatterElements has no float16 kernel for reduction='add': it raises on a valid case,
    # and no baseline label (data-dtype:float16 is `ok`, measured without a reduction) explains that.
    gc = _gen("ScatterElements", {"axis": 0, "reduction": "add"}, data=np.zeros(2, np.float16),
              indices=np.array([0]), updates=np.ones(1, np.float16))
    (ort,) = differ.run(gc, [("onnxruntime", "ScatterElements-18")]).runs
    assert ort.verdict == triage.Verdict("finding", "raised:RuntimeException", ort.verdict.note)
    assert "data-dtype:float16=ok" in ort.verdict.note


@pytest.mark.framework
def test_fuzzing_finds_shrinks_and_writes_deterministically(differ: Differ, tmp_path: Path) -> None:
    apis = [("numpy", "put_along_axis"), ("onnxruntime", "ScatterElements-18")]
    runs = [fuzz_op("ScatterElements", 40, 5, differ, apis, shrink_budget=80) for _ in range(2)]
    first, second = runs
    target = ("onnxruntime:ScatterElements-18", "raised:RuntimeException")
    assert target in first.findings, f"no onnxruntime reduction-dtype finding in {list(first.findings)}"
    minimal = first.findings[target]
    original = min(cr.gen.size() for cr in first.runs if target in cr.findings())
    assert minimal.size() <= original and minimal.size() <= 6
    assert minimal.attrs["reduction"] != "none" and minimal.inputs["data"].dtype.name in ("float16", "bool")
    assert first.specs == second.specs  # same seed -> same cases, same shrinking, same files
    a, b = tmp_path / "cases" / "found", tmp_path / "b"
    write_found(a, "ScatterElements", first.specs)
    write_found(b, "ScatterElements", second.specs)
    text = (a / "scatter_elements.yaml").read_text()
    assert text == (b / "scatter_elements.yaml").read_text()
    _, added = write_found(a, "ScatterElements", first.specs)  # rerunning the same seed adds nothing
    assert added == 0 and (a / "scatter_elements.yaml").read_text() == text
    loaded = load_file(a / "scatter_elements.yaml", "cases/found/scatter_elements.yaml")
    assert loaded and all(isinstance(c, Case) for c in loaded), loaded
    case = next(c for c in loaded if "onnxruntime:ScatterElements-18" in c.spec.description)
    assert case.spec.finding is not None
    assert case.spec.finding.by == "gsc fuzz --op ScatterElements --n 40 --seed 5"
    assert case.spec.finding.kinds["onnxruntime:ScatterElements-18"] == "raised:RuntimeException"
    assert "\n  # onnxruntime:ScatterElements-18" in text and "data-dtype:float16=ok" in text  # the why comment
    assert case.spec.tags[:2] == ["found", "fuzz"] and case.spec.expected is not None
    # The written case, run the normal way, still shows the disagreement.
    (again,) = differ.run(GenCase(case.op, case.inputs(), case.attrs), [("onnxruntime", "ScatterElements-18")]).runs
    assert (again.api, again.verdict.kind) == target
    # ... and the conformance run collects it like any case file: it fails there with the repro.
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "cases/found/scatter_elements.yaml",
         "-p", "no:cacheprovider", "--framework", "onnxruntime", "--isolation", "none", "-q", "-k", case.id],
        cwd=tmp_path, capture_output=True, text=True, env={**os.environ, "PYTHONPATH": str(ROOT)}, timeout=300,
    )
    assert f"cases/found/scatter_elements.yaml::{case.id}[onnxruntime]" in done.stdout, done.stdout[-2000:]
    assert " failed" in done.stdout.splitlines()[-1], done.stdout[-2000:]
    agree = agreement(first.runs)
    numpy = agree[REFERENCE]["numpy:put_along_axis"]
    assert numpy["agree"] == numpy["n"] > 0
    ort = agree[REFERENCE]["onnxruntime:ScatterElements-18"]
    assert 0 < ort["agree"] < ort["n"] <= 40


def test_cli_prints_the_agreement_table_and_writes_json(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from gather_scatter_conformance.harness.cli import main

    out = tmp_path / "summary.json"
    code = main(["fuzz", "--op", "Take", "--n", "12", "--seed", "1", "--frameworks", "numpy,onnx-reference",
                 "--out", str(tmp_path / "found"), "--json", str(out), "--isolation", "none"])
    assert code == 0
    printed = capsys.readouterr().out
    assert "Take: % of cases with identical outcome" in printed and "numpy:take" in printed
    data = json.loads(out.read_text())
    take = data["ops"]["Take"]
    assert take["cases"] == 12 and take["agreement"][REFERENCE][REFERENCE]["agree"] == 12
    assert set(take["timings_s"]) >= {"generate_s", "run_s", "shrink_s", "total_s"}


def test_an_operator_without_a_strategy_is_named_not_fuzzed() -> None:
    from gather_scatter_conformance.harness.fuzz.strategies import case_strategy
    from gather_scatter_conformance.vocab.ops import OPS

    assert set(STRATEGIES) < set(OPS)  # TensorScatter has none yet
    with pytest.raises(ValueError, match="no fuzzing strategy for operator 'TensorScatter'"):
        case_strategy("TensorScatter")
