"""The shipped conformance cases (cases/*.yaml, the imported ONNX node tests and the regression cases; not the
probes), as the tests run them; the seed cases (cases/*.yaml) among them."""

from __future__ import annotations

from pathlib import Path

from gather_scatter_conformance.harness.cases.load import Case, load_file

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


def is_seed(case: Case) -> bool:
    """True for a case of cases/*.yaml (a seed case), not one of cases/imported/ or cases/regression/."""
    return case.file.startswith("cases/") and case.file.count("/") == 1


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
