"""Loading case files into validated cases: every problem becomes a CaseFileError naming file, line and field.

A file that cannot be parsed yields one error; otherwise each case is validated on its own, so one bad case
leaves the rest of its file runnable.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
from pydantic import ValidationError

from harness import dtypes, ops, yamlsrc
from harness.errors import CaseFileError, InputValueError
from harness.generators import derived_updates_shape, generate_indices, random_array
from harness.schema import CaseFileSpec, CaseSpec, ErrorExpected, GeneratedIndices, RandomInput, ValueSpec
from harness.values import to_array


@dataclass
class ExpectedError:
    """The canonical semantics make this input an error; ``reason`` is the reference engine's message."""

    reason: str


@dataclass
class Case:
    """One validated case. Inputs are materialised on first use (generated inputs can be large)."""

    file: str
    index: int
    op: str
    spec: CaseSpec
    attrs: dict[str, Any]
    lines: dict[yamlsrc.Path, int]
    _inputs: dict[str, np.ndarray] | None = field(default=None, repr=False)

    @property
    def id(self) -> str:
        return self.spec.id

    @property
    def nodeid(self) -> str:
        return f"{self.file}::{self.spec.id}"

    @property
    def line(self) -> int:
        return self.lines.get(("cases", self.index), 0)

    def error(self, path: yamlsrc.Path, message: str) -> CaseFileError:
        """A CaseFileError located at ``path`` inside this case."""
        full = ("cases", self.index) + tuple(path)
        return CaseFileError(self.file, yamlsrc.line_of(self.lines, full), yamlsrc.format_path(full), message)

    def inputs(self) -> dict[str, np.ndarray]:
        """Return the inputs as arrays, generating the seeded ones; raises CaseFileError if one is invalid."""
        if self._inputs is None:
            self._inputs = _materialize(self)
        return self._inputs

    def reference(self) -> np.ndarray | Any:
        """The canonical result from the reference engine: an array, AllowedOutputs, or ExpectedError."""
        from harness.reference import CANONICAL, IndexOutOfRange, InvalidInput, compute

        try:
            return compute(self.op, self.inputs(), self.attrs, CANONICAL)
        except (IndexOutOfRange, InvalidInput) as exc:
            return ExpectedError(f"{type(exc).__name__}: {exc}")


def _input_dtype(name: str, spec: Any, data: np.ndarray | None) -> str:
    declared = getattr(spec, "dtype", None)
    if isinstance(spec, RandomInput):
        declared = spec.random.dtype
    elif isinstance(spec, GeneratedIndices):
        declared = spec.generate.dtype
    if declared:
        return declared
    if name == "indices":
        return dtypes.DEFAULT_INDEX_DTYPE
    if name == "updates" and data is not None:
        return dtypes.name_of(data.dtype)
    return dtypes.DEFAULT_DATA_DTYPE


def _one_input(case: Case, name: str, spec: Any, done: dict[str, np.ndarray]) -> np.ndarray:
    data = done.get("data")
    dtype_name = _input_dtype(name, spec, data)
    if isinstance(spec, ValueSpec):
        return to_array(spec.value, dtype_name, spec.shape)
    if isinstance(spec, RandomInput):
        r = spec.random
        shape = r.shape
        if shape is None:
            if name != "updates" or "indices" not in done or data is None:
                raise InputValueError("random needs a shape (only updates can derive theirs)", "random.shape")
            shape = list(derived_updates_shape(case.op, data.shape, done["indices"].shape))
        return random_array(shape, dtype_name, r.low, r.high, r.seed)
    if isinstance(spec, GeneratedIndices):
        if name != "indices" or data is None:
            raise InputValueError("generate makes indices only, after data", "generate")
        g = spec.generate
        return generate_indices(g.kind, g.shape, dtype_name, g.seed, case.op, case.attrs, data.shape)
    return to_array(spec, dtype_name)


def _materialize(case: Case) -> dict[str, np.ndarray]:
    done: dict[str, np.ndarray] = {}
    for name in ops.INPUTS[case.op]:
        spec = case.spec.inputs[name]
        try:
            done[name] = _one_input(case, name, spec, done)
        except InputValueError as exc:
            sub = tuple(exc.field.split(".")) if not isinstance(spec, list | int | float | bool | str) else ()
            raise case.error(("inputs", name) + sub, str(exc)) from None
    return done


def _check_attrs(case: Case) -> None:
    allowed = ops.ATTRS[case.op]
    for key, value in case.spec.attrs.items():
        if key not in allowed:
            raise case.error(("attrs", key), f"unknown attribute for {case.op}; expected one of {', '.join(allowed)}")
        if key == "reduction" and value not in ops.REDUCTIONS:
            raise case.error(("attrs", key), f"{value!r} is not one of {', '.join(ops.REDUCTIONS)}")
        if key == "mode" and value not in ops.TAKE_MODES:
            raise case.error(("attrs", key), f"{value!r} is not one of {', '.join(ops.TAKE_MODES)}")
        if key in ("axis", "batch_dims"):
            nullable = case.op == "Take" and key == "axis"
            if not (isinstance(value, int) and not isinstance(value, bool)) and not (nullable and value is None):
                raise case.error(("attrs", key), f"{value!r} is not an integer" + (" or null" if nullable else ""))


def _check_probe(case: Case) -> None:
    from harness.dimensions import DIMENSIONS

    if case.spec.dimension is not None and case.spec.dimension not in DIMENSIONS:
        raise case.error(("dimension",), f"unknown dimension {case.spec.dimension!r}; see harness/dimensions.py")
    for i, name in enumerate(case.spec.omit):
        if name not in ops.ATTRS[case.op]:
            raise case.error(("omit", i), f"{name!r} is not an attribute of {case.op}")


def _check_inputs(case: Case) -> None:
    needed = ops.INPUTS[case.op]
    for name in needed:
        if name not in case.spec.inputs:
            raise case.error(("inputs",), f"missing input {name!r} ({case.op} needs {', '.join(needed)})")
    for name in case.spec.inputs:
        if name not in needed:
            raise case.error(("inputs", name), f"unknown input for {case.op}; expected {', '.join(needed)}")


def _check_expected(case: Case) -> None:
    """A declared expected value (and each policy_expected value) must equal the reference engine's result."""
    from harness.compare import compare
    from harness.reference import IndexOutOfRange, InvalidInput, Policy, compute

    spec = case.spec
    checks: list[tuple[yamlsrc.Path, Any, Any]] = []
    if spec.expected is not None:
        checks.append((("expected",), spec.expected, None))
    for i, pe in enumerate(spec.policy_expected):
        checks.append((("policy_expected", i, "value"), pe.value, Policy.from_dict(pe.policy.model_dump())))
    for path, declared, policy in checks:
        try:
            ref = compute(case.op, case.inputs(), case.attrs, policy) if policy else case.reference()
        except (IndexOutOfRange, InvalidInput) as exc:
            ref = ExpectedError(str(exc))
        if isinstance(declared, ErrorExpected):
            if not isinstance(ref, ExpectedError):
                raise case.error(path, "says error: true, but the reference engine computes a value")
            continue
        if isinstance(ref, ExpectedError):
            raise case.error(path, f"gives a value, but the reference engine raises: {ref.reason}")
        out_dtype = dtypes.name_of(ref.dtype)
        try:
            want = to_array(declared, out_dtype)
        except InputValueError as exc:
            raise case.error(path, str(exc)) from None
        result = compare(want, ref, atol=(spec.tolerance.atol if spec.tolerance else 0.0))
        if not result.equal:
            detail = result.reason
            if result.first_mismatches:
                m = result.first_mismatches[0]
                detail += f"; first at {m['index']}: declared {m['observed']}, reference {m['expected']}"
            raise case.error(path, f"disagrees with the reference engine: {detail}")


def _build(file: str, op: str, index: int, raw: Any, lines: dict[yamlsrc.Path, int]) -> Case:
    base = ("cases", index)
    try:
        spec = CaseSpec.model_validate(raw)
    except ValidationError as exc:
        err = exc.errors()[0]
        loc = tuple(p for p in err["loc"] if not ((isinstance(p, str) and p[:1].isupper()) or "[" in str(p)))
        more = f" (and {exc.error_count() - 1} more)" if exc.error_count() > 1 else ""
        path = base + loc
        raise CaseFileError(file, yamlsrc.line_of(lines, path), yamlsrc.format_path(path), err["msg"] + more) from None
    case = Case(file, index, op, spec, ops.with_defaults(op, spec.attrs), lines)
    _check_attrs(case)
    _check_probe(case)
    _check_inputs(case)
    case.inputs()
    if spec.expected is not None or spec.policy_expected:
        _check_expected(case)
    return case


def load_file(path: Path, display: str | None = None) -> list[Case | CaseFileError]:
    """Load one case file: each entry is a valid Case or the CaseFileError that stopped that case (or the file)."""
    file = display or str(path)
    try:
        data, lines = yamlsrc.load(path.read_text(encoding="utf-8"), file)
    except CaseFileError as exc:
        return [exc]
    except (OSError, UnicodeDecodeError) as exc:
        return [CaseFileError(file, None, "", f"cannot read: {exc}")]
    try:
        head = CaseFileSpec.model_validate(data)
    except ValidationError as exc:
        err = exc.errors()[0]
        path = tuple(p for p in err["loc"] if isinstance(p, str | int))
        return [CaseFileError(file, yamlsrc.line_of(lines, path), yamlsrc.format_path(path), err["msg"])]
    out: list[Case | CaseFileError] = []
    seen: dict[str, int] = {}
    for i, raw in enumerate(head.cases):
        try:
            case = _build(file, head.op, i, raw, lines)
        except CaseFileError as exc:
            out.append(exc)
            continue
        if case.id in seen:
            out.append(case.error(("id",), f"duplicate id {case.id!r} (first at line {seen[case.id]})"))
            continue
        seen[case.id] = case.line
        out.append(case)
    return out
