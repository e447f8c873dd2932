"""Memory-unsafe and flipping cells measured as distributions (harness.judge.repeats, issue #27)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from _cases import records_of

from gather_scatter_conformance.harness.judge.repeats import combine, distribution_text, needs_repeats, suspect
from gather_scatter_conformance.vocab import wire
from gather_scatter_conformance.vocab.record import Record


def _answer(values: list[float]) -> dict:
    return {"outcome": "ok", "value": wire.encode(np.array(values, np.float32))}


def _probe(label: str, outcome: str = "ok", **extra: object) -> Record:
    return Record.read({"case": "f.yaml::p", "framework": "fw", "outcome": outcome, "verdict": "deviates",
                        "label": label, **extra})


def _digest(answer: dict) -> str | None:
    from gather_scatter_conformance.harness.judge.repeats import value_digest

    return value_digest(answer)


def test_a_value_no_policy_gives_that_every_fresh_process_repeats_is_wrong_not_garbage() -> None:
    # LiteRT's SCATTER_ND with duplicate targets: -17 every time, deterministic, no evidence of an unowned read.
    same = _digest(_answer([-17.0, 2.0]))
    out = combine([(_probe("garbage"), same)] * 5)
    assert out.label == "wrong" and out.distribution == {"wrong": 5}


def test_values_that_differ_between_processes_stay_garbage_with_their_distribution() -> None:
    # TVM's unchecked take: zeros in some processes, whatever lay before the buffer in others.
    zero, other = _digest(_answer([0.0, 0.0])), _digest(_answer([3.5e-38, 0.0]))
    runs = [(_probe("zero"), zero), (_probe("garbage"), other), (_probe("garbage"), _digest(_answer([1.0, 9.0]))),
            (_probe("zero"), zero), (_probe("garbage"), other)]
    out = combine(runs)
    assert out.label == "garbage|zero" and out.distribution == {"garbage": 3, "zero": 2}
    assert distribution_text(out.distribution) == "garbage 3/5, zero 2/5"
    assert out.verdict == "deviates"  # the first run's record is kept


def test_a_process_whose_own_repeated_calls_disagreed_is_not_deterministic() -> None:
    # TVM's take past the end (a case with repeat: 5): each process's first value is the same, its later calls
    # read other bytes (distinct_outputs 2): garbage, not wrong.
    same = _digest(_answer([1e-44, 20.0]))
    runs = [(_probe("garbage", distinct_outputs=2), same)] * 4 + [(_probe("zero"), same)]
    assert combine(runs).distribution == {"garbage": 4, "zero": 1}


def test_a_crash_in_some_runs_joins_the_distribution_and_keeps_garbage() -> None:
    # One run died: not every run returned the same value, so garbage is not relabelled.
    same = _digest(_answer([1.0]))
    runs = [(_probe("garbage"), same), (_probe("crash:SIGSEGV", outcome="crash", signal="SIGSEGV"), None),
            (_probe("garbage"), same)]
    out = combine(runs)
    assert out.distribution == {"garbage": 2, "crash:SIGSEGV": 1}


def test_a_case_without_a_dimension_counts_outcomes_and_gets_no_label() -> None:
    crash = Record.read({"case": "f.yaml::c", "framework": "fw", "outcome": "crash", "signal": "SIGABRT",
                         "verdict": "deviates"})
    fine = Record.read({"case": "f.yaml::c", "framework": "fw", "outcome": "ok", "verdict": "conforms"})
    out = combine([(crash, None), (fine, "x"), (crash, None)])
    assert out.label is None and out.distribution == {"crash:SIGABRT": 2, "conforms": 1}


def test_repeats_stop_after_two_hung_tries() -> None:
    from gather_scatter_conformance.harness.judge.repeats import hangs_in, hung_enough

    # A timeout whose second try, in a fresh process, hung too is two hangs (harness.run.isolation says so); one
    # whose first try was the hang (an earlier witness spared the second) is one; a crash or a value is none.
    assert hangs_in({"outcome": "timeout", "hangs": 2}) == 2 and hangs_in({"outcome": "timeout"}) == 1
    assert hangs_in({"outcome": "crash"}) == 0 and hangs_in({"outcome": "ok", "hangs": 2}) == 0
    assert hangs_in({"outcome": "timeout", "hangs": "2"}) == 1  # what the executor did not count is one
    assert not hung_enough(1) and hung_enough(2)


def test_a_baseline_label_holds_a_hang() -> None:
    from gather_scatter_conformance.harness.judge.repeats import hung_in

    assert hung_in("timeout") and hung_in("crash:SIGABRT|timeout") and hung_in("changed: error -> timeout|skip")
    assert hung_in("conversion-failed (timeout)") and not hung_in("conversion-failed")  # a converter that hung
    assert not hung_in("crash:SIGABRT") and not hung_in(None) and not hung_in("changed: timeout -> error")


def test_which_cells_repeat() -> None:
    assert needs_repeats(_probe("alias-write")) and needs_repeats(_probe("crash:SIGABRT", outcome="crash"))
    assert needs_repeats(Record.read({"case": "f.yaml::c", "framework": "fw", "outcome": "timeout",
                                      "verdict": "deviates"}))
    assert needs_repeats(_probe("last-wins", distinct_outputs=2))
    assert not needs_repeats(_probe("clamp")) and not needs_repeats(_probe("wrong"))
    assert suspect("zero|garbage") and suspect("crash:SIGFPE") and suspect("wrap|error")
    assert not suspect("clamp") and not suspect(None)


@pytest.mark.slow
def test_a_run_repeats_litert_s_duplicate_scatter_and_finds_it_deterministic(tmp_path: Path) -> None:
    # A real run: LiteRT's SCATTER_ND with duplicate targets, five fresh processes, one value: `wrong`.
    pytest.importorskip("ai_edge_litert")
    results = tmp_path / "r.jsonl"
    from gather_scatter_conformance import resources

    cases = resources.cases_dir() / "probes" / "scatter_nd.yaml"
    subprocess.run([sys.executable, "-m", "gather_scatter_conformance", "run", "--framework", "litert", "--results",
                    str(results), "-p", "no:xdist", "--repeats", "3", "-k", "probe-duplicates-slices", str(cases),
                    "--baseline-dir", str(tmp_path / "none")], cwd=tmp_path, capture_output=True, text=True,
                   timeout=600)
    records = records_of(results)
    ran = [r for r in records if r["variant"] == "SCATTER_ND"]
    assert ran and ran[0]["label"] == "wrong" and ran[0]["distribution"] == {"wrong": 3}


@pytest.mark.slow
def test_unsafe_only_collects_the_cells_whose_baseline_is_memory_unsafe_or_flipped(tmp_path: Path) -> None:
    from gather_scatter_conformance import resources

    cases = resources.cases_dir() / "probes" / "take.yaml"
    base = tmp_path / "baselines"
    base.mkdir()
    (base / "numpy.yaml").write_text(
        "framework: numpy\nversion: '2.0'\nlabels:\n"
        "  cases/probes/take.yaml::probe-oob-positive[take]: crash:SIGSEGV\n"
        "  cases/probes/take.yaml::probe-oob-negative[take]: wrap|error\n"
        "  cases/probes/take.yaml::probe-negative-indices[take]: wrap\n")
    proc = subprocess.run([sys.executable, "-m", "pytest", str(cases), "--gsc-framework", "numpy", "--unsafe-only",
                           "--baseline-dir", str(base), "--collect-only", "-q", "-p", "no:cacheprovider"],
                          cwd=tmp_path, capture_output=True, text=True, timeout=300)
    ids = sorted(line.split("::")[-1] for line in proc.stdout.splitlines() if "::" in line)
    assert ids == ["probe-oob-negative[numpy]", "probe-oob-positive[numpy]"], proc.stdout[-2000:]


def test_a_converter_paths_preservation_lists_every_run_s_verdict() -> None:
    # IREE's imported GatherND past the end read zeros 4/5 and garbage 1/5 on one run: the path's summary said only
    # the first run's `changed: error -> garbage`, so its baseline lost `zero` and the next run left the class.
    from gather_scatter_conformance.harness.judge.baseline import record_label

    def path(label: str, kind: str = "changed") -> Record:
        summary = f"changed: error -> {label}" if kind == "changed" else kind
        return _probe(label, conversion={"preservation": kind, "summary": summary, "source_label": "error"})

    zero, other = _digest(_answer([0.0, 0.0])), _digest(_answer([3.5e-38, 0.0]))
    out = combine([(path("garbage"), other), (path("zero"), zero), (path("zero"), zero), (path("zero"), zero),
                   (path("zero"), zero)])
    assert out.label == "zero|garbage"
    assert out.conversion is not None
    assert out.conversion["summary"] == "changed: error -> zero|changed: error -> garbage"
    assert record_label(out) == "changed: error -> zero|changed: error -> garbage"
    assert out.conversion["source_label"] == "error"  # the first run's account otherwise
    # runs that disagree on the kind: the cell changed in some, so it is `changed`, each run's verdict listed
    mixed = combine([(path("error", "preserved"), zero), (path("garbage"), other)])
    assert mixed.conversion is not None and mixed.conversion["preservation"] == "changed"
    assert record_label(mixed) == "changed: error -> garbage|preserved"
    one = combine([(path("zero"), zero)] * 3)
    assert one.conversion is not None and one.conversion["summary"] == "changed: error -> zero"
