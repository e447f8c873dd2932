"""Every shipped case file is valid, and every seed example conforms on numpy and onnx-reference (or says why not)."""

from __future__ import annotations

from pathlib import Path

import pytest

from gather_scatter_conformance.harness.cases.errors import CaseFileError
from gather_scatter_conformance.harness.cases.load import Case, load_file
from gather_scatter_conformance.harness.run.runner import InProcess, execute

ROOT = Path(__file__).resolve().parent.parent
FILES = sorted((ROOT / "cases").rglob("*.yaml"))
SEEDS = {p.name for p in (ROOT.parent / "shared" / "seeds").glob("*.txt")} or {
    "000_fd3808bc50c28a49.txt",
    "001_c4505a5cecef4816.txt",
    "002_0fc89e70f98fc85c.txt",
    "003_15be58bb1ab6011e.txt",
    "004_17f7ba8a51c3d1ca.txt",
}


def _cases() -> list[Case]:
    out = []
    for f in FILES:
        out += [e for e in load_file(f, f.relative_to(ROOT).as_posix()) if isinstance(e, Case)]
    return out


@pytest.mark.parametrize("path", FILES, ids=lambda p: p.relative_to(ROOT).as_posix())
def test_case_file_is_valid(path: Path) -> None:
    errors = [str(e) for e in load_file(path, path.name) if isinstance(e, CaseFileError)]
    assert not errors, "\n".join(errors)


def test_every_seed_file_has_cases() -> None:
    seeded = {c.spec.source.split(":")[0] for c in _cases() if "seed" in c.spec.tags}
    assert SEEDS <= seeded, f"seed files without cases: {sorted(SEEDS - seeded)}"


SEED_CASES = [c for c in _cases() if "seed" in c.spec.tags]


@pytest.mark.parametrize("framework", ["numpy", "onnx-reference"])
@pytest.mark.parametrize("case", SEED_CASES, ids=lambda c: c.nodeid)
def test_seed_conforms(case: Case, framework: str) -> None:
    from gather_scatter_conformance.adapters import get

    for variant in get(framework).variants(case.op):
        record = execute(case, framework, variant, InProcess())
        if record.verdict == "n/a":
            assert record.reason, "an unsupported result must say why"
            continue
        if record.verdict == "deviates":
            assert record.known_deviation, (
                f"{case.nodeid} deviates on {framework}:{variant} and the case does not say why: {record.reason}"
            )
