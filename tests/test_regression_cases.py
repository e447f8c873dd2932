"""Regression cases from upstream bug reports: well-formed, documented, and their recorded reproduce-status still
true of the installed frameworks (measured afresh here, each case in a worker process as a real run does)."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from gather_scatter_conformance import adapters
from gather_scatter_conformance.harness.cases.load import Case, load_file
from gather_scatter_conformance.harness.cases.schema import Measured
from gather_scatter_conformance.harness.importers import regression
from gather_scatter_conformance.harness.importers.regression_docs import render
from gather_scatter_conformance.harness.run.isolation import Isolated

pytestmark = pytest.mark.framework  # make check runs none of these (docs/development.md)

ROOT = Path(__file__).resolve().parents[1]
CASES = regression.regression_cases()
PYTHONS = adapters.venv_pythons(ROOT)
NO_ADAPTER = {"tflite", "directml", "tensorrt"}  # frameworks reports name that the harness has no adapter for


@pytest.fixture(scope="module")
def executor():
    isolated = Isolated(PYTHONS, timeout=180.0)
    yield isolated
    isolated.close()


def test_every_regression_case_names_its_bug() -> None:
    assert len(CASES) >= 30
    for case in CASES:
        bug = case.spec.bug
        assert bug is not None, f"{case.nodeid}: a regression case needs a bug block"
        assert "regression" in case.spec.tags, case.nodeid
        assert bug.issue in case.spec.source and bug.url in case.spec.source, f"{case.nodeid}: cite the issue"
        repo, number = bug.issue.split("#")
        assert bug.url.endswith(f"/{number}") and repo.lower() in bug.url.lower(), f"{case.nodeid}: {bug.url}"
        assert case.id.startswith(f"{repo.lower()}-{number}-"), f"{case.id}: ids start with the issue"
        if bug.framework in adapters.table():
            variants = adapters.get(bug.framework).variants(case.op)  # imports no framework
            assert bug.variant is None or bug.variant in variants, f"{case.nodeid}: {bug.variant} not in {variants}"
        else:
            assert bug.framework in NO_ADAPTER, f"{case.nodeid}: unknown framework {bug.framework!r}"


MEASURABLE = [c for c in CASES if c.spec.bug is not None and c.spec.bug.unmeasurable is None
              and c.spec.bug.framework in adapters.table()]


@pytest.mark.parametrize("case", MEASURABLE, ids=[c.id for c in MEASURABLE])
def test_recorded_status_still_holds(case: Case, executor: Isolated) -> None:
    bug = case.spec.bug
    assert bug is not None
    why_not = regression.runnable(bug, PYTHONS)
    if why_not:
        pytest.skip(why_not)
    m = regression.measure(case, executor, PYTHONS)
    assert m.installed is not None
    before = regression.recorded(bug, m.installed)
    hint = "run `python -m gather_scatter_conformance.harness.importers.regression --write` and review the diff"
    assert before is not None, f"{case.nodeid}: no status recorded for {m.installed}; {hint}"
    now = "reproduces" if m.reproduces else "no longer reproduces"
    assert before.reproduces == m.reproduces, (
        f"{bug.issue} {now} on {m.installed} (recorded {before.reproduces} on {before.installed}: "
        f"{before.observed}); now: {m.observed}; {hint}"
    )


def test_symptoms_both_reproduce_and_not() -> None:
    # The recorded answers must not all be one value: a symptom that can never (or always) match would be useless.
    answers = {m.reproduces for c in MEASURABLE for m in c.spec.bug.measured}
    assert answers == {True, False}


def test_docs_page_is_rendered_from_the_cases() -> None:
    page = (ROOT / "docs" / "regression.md").read_text(encoding="utf-8")
    assert page == render(CASES), ("docs/regression.md is stale: run "
                                   "`python -m gather_scatter_conformance.harness.importers.regression --docs`")
    for case in CASES:
        assert case.spec.bug.issue in page


def test_write_measured_changes_only_that_case(tmp_path: Path) -> None:
    src = ROOT / "cases" / "regression" / "gather.yaml"
    path = tmp_path / "gather.yaml"
    shutil.copy(src, path)
    before = [e for e in load_file(path, "gather.yaml") if isinstance(e, Case)]
    target = next(c for c in before if c.spec.bug and c.spec.bug.measured and c.index > 0)
    entries = [*target.spec.bug.measured,
               Measured(installed=f"{target.spec.bug.framework} 99.0 cpu", reproduces=False, observed='said "x"')]
    regression.write_measured(path, target, entries)
    after = load_file(path, "gather.yaml")
    assert all(isinstance(e, Case) for e in after), [str(e) for e in after if not isinstance(e, Case)]
    for old, new in zip(before, after, strict=True):
        if old.id == target.id:
            assert new.spec.bug.measured == entries
        else:
            assert new.spec == old.spec
    regression.write_measured(path, target, [])
    emptied = next(e for e in load_file(path, "gather.yaml") if isinstance(e, Case) and e.id == target.id)
    assert emptied.spec.bug.measured == []
    assert len(path.read_text().splitlines()) == len(src.read_text().splitlines()) - len(target.spec.bug.measured)


def test_recorded_falls_back_to_the_newest_measured_release() -> None:
    case = next(c for c in MEASURABLE if c.spec.bug.measured)
    bug = case.spec.bug
    framework, version, device = bug.measured[0].installed.split()
    older = Measured(installed=f"{framework} 0.0.1 {device}", reproduces=not bug.measured[0].reproduces, observed="")
    history = bug.model_copy(update={"measured": [older, *bug.measured]})
    assert regression.recorded(history, f"{framework} 999.0 {device}") == bug.measured[0]
    assert regression.recorded(history, f"{framework} 0.0.1 {device}") == older
    assert regression.recorded(history, f"{framework} {version} gpu") is None
