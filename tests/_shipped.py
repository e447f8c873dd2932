"""The shipped conformance cases (cases/*.yaml, the imported ONNX node tests and the regression cases; not the
probes), as the adapter tests run them."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from pathlib import Path

from gather_scatter_conformance import adapters
from gather_scatter_conformance.harness.cases.load import Case, load_file
from gather_scatter_conformance.harness.judge import known
from gather_scatter_conformance.harness.run.runner import InProcess, Skipped, execute
from gather_scatter_conformance.vocab.record import Record

ROOT = Path(__file__).resolve().parent.parent

# cases/regression/gather.yaml cases whose index lies past the end of its axis (an error canonically) ...
REGRESSION_GATHER_OOB = (
    "tensorflow-57999-xla-gather-clamps", "tensorflow-61865-xla-gather-clamps",
    "tensorflow-115254-xla-gather-returns-value", "pytorch-44311-cuda-indexing-zeros",
    "pytorch-121251-compiled-index-select-reads-out-of-bounds", "pytorch-6472-indexing-negative-out-of-range",
    "onnxruntime-28311-gather-out-of-bounds-by-ep", "openvino-35687-onnx-gather-zero-fill", "jax-3774-take-clamps",
    "jax-14193-take-fill-int-min", "mxnet-15933-indexing-out-of-bounds",
)
# ... and those with an in-range negative index (which wraps canonically).
REGRESSION_GATHER_NEG = (
    "onnxruntime-1533-gather-negative-index", "jax-5766-take-negative-index", "jax-4795-take-negative-scalar-index",
)


def seed_cases() -> list[Case]:
    """The cases of cases/*.yaml (not probes, imported or regression ones), in file order."""
    cases = ROOT / "cases"
    return [c for path in sorted(cases.glob("*.yaml")) for c in load_file(path, path.relative_to(ROOT).as_posix())
            if isinstance(c, Case)]


def run_against_known(framework: str, cases: Iterable[Case],
                      skip: Callable[[Case, str], bool] = lambda case, variant: False
                      ) -> tuple[list[Record], list[str]]:
    """Run every case on every variant of ``framework`` in this process (bar the pairs ``skip`` names): the records
    of the calls the API could express, and one line per problem: a deviation known/<framework>.yaml does not
    list, a listed pair that did not deviate, an unsupported case without its reason."""
    listed = known.entries(framework)
    ran, problems = [], []
    for case in cases:
        for variant in adapters.get(framework).variants(case.op):
            if skip(case, variant):
                continue
            record = execute(case, framework, variant, InProcess())
            assert not isinstance(record, Skipped), record  # the CPU is always here
            key = f"{case.nodeid} [{variant}]"
            if record.verdict == "n/a":
                if not record.reason:
                    problems.append(f"{key}: {record.outcome} without a reason")
                continue
            ran.append(record)
            is_listed = (case.nodeid, variant) in listed
            if record.verdict == "deviates" and not is_listed:
                problems.append(f"{key}: deviates, not in known/{framework}.yaml: {record.reason} "
                                f"{record.error_message or ''}"[:300])
            elif record.verdict != "deviates" and is_listed:
                problems.append(f"{key}: listed in known/{framework}.yaml, but {record.verdict}")
    return ran, problems


def shipped_cases() -> list[Case]:
    """Every valid case in cases/*.yaml, cases/imported/ and cases/regression/, in file order, less those tagged
    ``crash`` or ``memory-unsafe`` (they kill or damage a process)."""
    out: list[Case] = []
    cases = ROOT / "cases"
    for path in [*sorted(cases.glob("*.yaml")), *sorted((cases / "imported").glob("*.yaml")),
                 *sorted((cases / "regression").glob("*.yaml"))]:
        for entry in load_file(path, path.relative_to(ROOT).as_posix()):
            if isinstance(entry, Case) and not {"crash", "memory-unsafe"} & set(entry.spec.tags):
                out.append(entry)
    return out
