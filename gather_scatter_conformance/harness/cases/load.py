"""Loading case files into validated cases: every problem becomes a CaseFileError naming file, line and field.

A file that cannot be parsed yields one error; otherwise each case is validated on its own, so one bad case
leaves the rest of its file runnable. What a load produced is kept in a parse cache keyed by the file's bytes and
the harness's code (:mod:`harness.cases.cache`), so collecting an unchanged suite parses and validates nothing:
its cases carry their parsed mapping and are validated into :class:`~harness.cases.schema.CaseSpec` on first use.
YAML, pydantic and the schema are imported only when something has to be parsed or validated.
"""

from __future__ import annotations

import math
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from gather_scatter_conformance.harness.cases import cache as casecache
from gather_scatter_conformance.harness.cases.errors import CaseFileError, InputValueError
from gather_scatter_conformance.vocab import dimensions, dtypes, ops

if TYPE_CHECKING:
    from gather_scatter_conformance.harness.cases.schema import CaseSpec

LinePath = tuple[str | int, ...]
INT64_MIN, INT64_MAX = -(2**63), 2**63 - 1  # as harness.cases.schema's (which loading imports only when it parses)

# Bounds on what a case file may ask of the machine (issue #37: case files may come from anyone), in MiB, each
# raised (or lowered) by its environment variable. The largest shipped case file is 35 KB; a 50 MB one took 224 s
# and ended in a MemoryError at 5.7 GB. A fill of 16 GB stopped collection with no cause named.
FILE_LIMIT_ENV, FILE_LIMIT_MIB = "GSC_CASE_FILE_LIMIT", 4.0
MEMORY_ENV, MEMORY_MIB = "GSC_CASE_MEMORY", 256.0
_KEEP = 2**20  # inputs larger than this, in all, are validated at load and made again when the case runs


def _setting(env: str, default: float) -> float:
    """A size in MiB from ``env``; the default where it is unset, not a number, or not positive."""
    try:
        value = float(os.environ.get(env, ""))
    except ValueError:
        return default
    return value if value > 0 and math.isfinite(value) else default


def file_limit() -> int:
    """The largest case file that is read, in bytes (``$GSC_CASE_FILE_LIMIT`` MiB, default 4)."""
    return int(_setting(FILE_LIMIT_ENV, FILE_LIMIT_MIB) * 2**20)


def memory_budget() -> int:
    """The bytes a case's inputs may take, in all (``$GSC_CASE_MEMORY`` MiB, default 256)."""
    return int(_setting(MEMORY_ENV, MEMORY_MIB) * 2**20)


def _mib(n: float) -> str:
    return f"{n / 2**20:.1f}" if n < 10 * 2**20 else f"{n / 2**20:.0f}"


@dataclass
class ExpectedError:
    """The canonical semantics make this input an error; ``reason`` is the reference engine's message."""

    reason: str


@dataclass
class Case:
    """One validated case. Inputs are materialised on first use (generated inputs can be large).

    ``raw`` is the case's mapping as parsed; ``spec`` is it validated (done on first access for a case read from
    the parse cache, which was validated when the cache entry was made). ``id``, ``tags`` and ``dimension`` are
    plain copies of the spec's, for collection, which must not need pydantic.
    """

    file: str
    index: int
    op: str
    raw: dict[str, Any]
    attrs: dict[str, Any]
    lines: dict[LinePath, int]
    id: str
    tags: list[str]
    dimension: str | None
    # Derived lazily, so not part of what makes two cases equal (arrays do not compare to one bool anyway).
    _spec: CaseSpec | None = field(default=None, repr=False, compare=False)
    _inputs: dict[str, np.ndarray] | None = field(default=None, repr=False, compare=False)
    _reference: Any = field(default=None, repr=False, compare=False)
    memo: dict[str, Any] = field(default_factory=dict, repr=False, compare=False)  # values derived by the runner

    @property
    def spec(self) -> CaseSpec:
        """The validated case (validated now if this case came from the parse cache)."""
        if self._spec is None:
            from gather_scatter_conformance.harness.cases.schema import CaseSpec

            self._spec = CaseSpec.model_validate(self.raw)
        return self._spec

    @property
    def nodeid(self) -> str:
        return f"{self.file}::{self.id}"

    @property
    def line(self) -> int:
        return self.lines.get(("cases", self.index), 0)

    def error(self, path: LinePath, message: str) -> CaseFileError:
        """A CaseFileError located at ``path`` inside this case."""
        from gather_scatter_conformance.harness.cases import yamlsrc

        full = ("cases", self.index) + tuple(path)
        return CaseFileError(self.file, yamlsrc.line_of(self.lines, full), yamlsrc.format_path(full), message)

    def inputs(self) -> dict[str, np.ndarray]:
        """Return the inputs as arrays, generating the seeded ones; raises CaseFileError if one is invalid."""
        if self._inputs is None:
            self._inputs = _materialize(self)
        return self._inputs

    def reference(self) -> np.ndarray | Any:
        """The canonical result from the reference engine: an array, AllowedOutputs, or ExpectedError.

        Computed once per case and kept: every framework and variant of a run is judged against the same result.
        Callers must treat it as read-only.
        """
        if self._reference is None:
            from gather_scatter_conformance.harness.reference import CANONICAL, IndexOutOfRange, InvalidInput, compute

            try:
                self._reference = compute(self.op, self.inputs(), self.attrs, CANONICAL)
            except (IndexOutOfRange, InvalidInput) as exc:
                self._reference = ExpectedError(f"{type(exc).__name__}: {exc}")
        return self._reference


def _input_dtype(name: str, spec: Any, data: np.ndarray | None) -> str:
    from gather_scatter_conformance.harness.cases.schema import FillInput, GeneratedIndices, RandomInput

    declared = getattr(spec, "dtype", None)
    if isinstance(spec, RandomInput):
        declared = spec.random.dtype
    elif isinstance(spec, FillInput):
        declared = spec.fill.dtype
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
    from gather_scatter_conformance.harness.cases.generators import (
        derived_updates_shape,
        generate_indices,
        random_array,
    )
    from gather_scatter_conformance.harness.cases.schema import FillInput, GeneratedIndices, RandomInput, ValueSpec
    from gather_scatter_conformance.harness.cases.values import to_array

    data = done.get("data")
    dtype_name = _input_dtype(name, spec, data)
    if isinstance(spec, ValueSpec):
        return to_array(spec.value, dtype_name, spec.shape)
    if isinstance(spec, FillInput):
        if any(d < 0 for d in spec.fill.shape):
            raise InputValueError(f"shape {spec.fill.shape} has a negative extent", "fill.shape")
        return np.full(tuple(spec.fill.shape), to_array(spec.fill.value, dtype_name)[()])
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


def _needs(case: Case, name: str, spec: Any, done: dict[str, np.ndarray]) -> tuple[int, int]:
    """The bytes an input will take and the scratch bytes making it takes beyond that, from its declared shape and
    dtype, before anything is made: (0, 0) for a value written in the file (the file's size bounds it)."""
    from gather_scatter_conformance.harness.cases.generators import derived_updates_shape, unique_scratch
    from gather_scatter_conformance.harness.cases.schema import FillInput, GeneratedIndices, RandomInput

    data = done.get("data")
    if isinstance(spec, FillInput):
        shape = spec.fill.shape
    elif isinstance(spec, RandomInput):
        shape = spec.random.shape
        if shape is None and name == "updates" and "indices" in done and data is not None:
            try:
                shape = list(derived_updates_shape(case.op, data.shape, done["indices"].shape))
            except InputValueError:
                return 0, 0  # making it says why
    elif isinstance(spec, GeneratedIndices):
        shape = spec.generate.shape
    else:
        return 0, 0
    if shape is None:
        return 0, 0
    itemsize = np.dtype(dtypes.to_numpy(_input_dtype(name, spec, data))).itemsize
    size = math.prod(max(int(d), 0) for d in shape) * itemsize
    scratch = 0
    if isinstance(spec, GeneratedIndices) and data is not None and spec.generate.kind == "unique":
        scratch = unique_scratch(case.op, case.attrs, data.shape, tuple(shape))
    return size, scratch


def _materialize(case: Case) -> dict[str, np.ndarray]:
    done: dict[str, np.ndarray] = {}
    budget, used = memory_budget(), 0
    for name in ops.INPUTS[case.op]:
        if name not in case.spec.inputs:  # an optional input the case leaves out: the operator's spec says what then
            continue
        spec = case.spec.inputs[name]
        size, scratch = _needs(case, name, spec, done)
        if used + size + scratch > budget:
            extra = f" ({_mib(scratch)} MiB of it to generate them)" if scratch else ""
            raise case.error(("inputs", name), f"too large: needs {_mib(used + size + scratch)} MiB of inputs{extra}, "
                             f"budget {_setting(MEMORY_ENV, MEMORY_MIB):g} MiB (raise with {MEMORY_ENV}=MiB)")
        try:
            done[name] = _one_input(case, name, spec, done)
        except InputValueError as exc:
            sub = tuple(exc.field.split(".")) if not isinstance(spec, list | int | float | bool | str) else ()
            raise case.error(("inputs", name) + sub, str(exc)) from None
        used += done[name].nbytes
    return done


def derived_tags(tags: list[str], dimension: str | None, data_dtype: str | None = None) -> list[str]:
    """A case's tags: a probe (a case with a ``dimension``) is tagged ``probe``, with its dimension and with its
    data's dtype (``data:int32``), first; the file need not repeat them."""
    derived = ["probe", dimension, *([dimensions.DATA_TAG + data_dtype] if data_dtype else [])] if dimension else []
    return list(dict.fromkeys([*derived, *tags]))


def _with_dtype(spec: Any, dtype: str) -> Any:
    """An input's raw spec with its dtype replaced (a bare literal becomes an inline value of ``dtype``)."""
    if isinstance(spec, dict):
        for form in ("random", "fill"):
            if isinstance(spec.get(form), dict):
                return {**spec, form: {**spec[form], "dtype": dtype}}
        return {**spec, "dtype": dtype}
    return {"value": spec, "dtype": dtype}


def expand_dtypes(raw: Any) -> list[Any]:
    """A raw case and, when it lists ``data_dtypes``, a copy per dtype: id ``<id>-<dtype>``, ``data`` and
    ``updates`` of that dtype, the same values (the loader then checks they fit). A malformed list is left to the
    schema's error on the case itself."""
    listed = raw.get("data_dtypes") if isinstance(raw, dict) else None
    if not (isinstance(listed, list) and isinstance(raw.get("id"), str) and isinstance(raw.get("inputs"), dict)
            and all(d in dtypes.DTYPES for d in listed)):  # an unknown name: the schema's one error, no copies
        return [raw]
    base = {k: v for k, v in raw.items() if k != "data_dtypes"}
    copies = []
    for dtype in listed:
        inputs = {name: _with_dtype(spec, dtype) if name in ("data", "updates") else spec
                  for name, spec in raw["inputs"].items()}
        tags = base.get("tags") if isinstance(base.get("tags"), list) else []
        copies.append({**base, "id": f"{raw['id']}-{dtype}", "inputs": inputs,
                       "tags": [*tags, dimensions.DTYPE_COPY_TAG],
                       "description": f"{raw.get('description', '')} [data as {dtype}]".strip()})
    return [raw, *copies]


def _check_attrs(case: Case) -> None:
    allowed = ops.ATTRS[case.op]
    for key, value in case.spec.attrs.items():
        if key not in allowed:
            raise case.error(("attrs", key), f"unknown attribute for {case.op}; expected one of {', '.join(allowed)}")
        choices = ops.SPECS[case.op].choices.get(key)
        if choices is not None and value not in choices:
            raise case.error(("attrs", key), f"{value!r} is not one of {', '.join(choices)}")
        if key in ("axis", "batch_dims"):
            nullable = case.op == "Take" and key == "axis"
            if not (isinstance(value, int) and not isinstance(value, bool)) and not (nullable and value is None):
                raise case.error(("attrs", key), f"{value!r} is not an integer" + (" or null" if nullable else ""))
        if isinstance(value, int) and not isinstance(value, bool) and not INT64_MIN <= value <= INT64_MAX:
            # An ONNX attribute and every framework's axis is an int64: a wider one is the case's error, not theirs.
            raise case.error(("attrs", key), f"{value} is out of range for int64 [{INT64_MIN}, {INT64_MAX}]")


def _check_probe(case: Case) -> None:
    if case.spec.dimension is not None and case.spec.dimension not in dimensions.DIMENSIONS:
        raise case.error(("dimension",), f"unknown dimension {case.spec.dimension!r}; see "
                                         "gather_scatter_conformance/vocab/dimensions.py")
    for i, name in enumerate(case.spec.omit):
        if name not in ops.ATTRS[case.op]:
            raise case.error(("omit", i), f"{name!r} is not an attribute of {case.op}")


def _check_inputs(case: Case) -> None:
    needed, known = ops.required_inputs(case.op), ops.INPUTS[case.op]
    for name in needed:
        if name not in case.spec.inputs:
            raise case.error(("inputs",), f"missing input {name!r} ({case.op} needs {', '.join(needed)})")
    for name in case.spec.inputs:
        if name not in known:
            raise case.error(("inputs", name), f"unknown input for {case.op}; expected {', '.join(known)}")


def _check_expected(case: Case) -> None:
    """A declared expected value (and each policy_expected value) must equal the reference engine's result."""
    from gather_scatter_conformance.harness.cases.schema import ErrorExpected
    from gather_scatter_conformance.harness.cases.values import to_array
    from gather_scatter_conformance.harness.reference import IndexOutOfRange, InvalidInput, Policy, compute
    from gather_scatter_conformance.harness.reference.compare import compare

    spec = case.spec
    checks: list[tuple[LinePath, Any, Any]] = []
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


def _build(file: str, op: str, index: int, raw: Any, lines: dict[LinePath, int]) -> Case:
    from pydantic import ValidationError

    from gather_scatter_conformance.harness.cases import yamlsrc
    from gather_scatter_conformance.harness.cases.schema import CaseSpec

    base = ("cases", index)
    try:
        spec = CaseSpec.model_validate(raw)
    except ValidationError as exc:
        def where(err: Any) -> LinePath:
            loc = err["loc"]
            return base + tuple(p for p in loc if not ((isinstance(p, str) and p[:1].isupper()) or "[" in str(p)))

        # An input is a union (inline value, random, fill, generate): the error that names a field the file has,
        # deepest first, is the member the case meant (`random.seed`, not the inline value's missing `value`).
        err = max(exc.errors(), key=lambda e: (where(e) in lines, len(where(e))))
        more = f" (and {exc.error_count() - 1} more)" if exc.error_count() > 1 else ""
        path = where(err)
        raise CaseFileError(file, yamlsrc.line_of(lines, path), yamlsrc.format_path(path), err["msg"] + more) from None
    attrs = ops.with_defaults(op, spec.attrs)
    case = Case(file, index, op, raw, attrs, lines, spec.id, derived_tags(spec.tags, spec.dimension), spec.dimension,
                _spec=spec)
    _check_attrs(case)
    _check_probe(case)
    _check_inputs(case)
    inputs = case.inputs()
    if case.dimension and "data" in inputs:
        case.tags = derived_tags(spec.tags, spec.dimension, dtypes.name_of(inputs["data"].dtype))
    if spec.expected is not None or spec.policy_expected:
        _check_expected(case)
    if sum(a.nbytes for a in inputs.values()) > _KEEP:  # collection (and xdist's controller) need not hold them
        case._inputs = case._reference = None
    return case


def _load_text(text: str, file: str) -> tuple[list[Case | CaseFileError], dict[LinePath, int]]:
    """Parse and validate a case file's text: (entries, line map)."""
    from pydantic import ValidationError

    from gather_scatter_conformance.harness.cases import yamlsrc
    from gather_scatter_conformance.harness.cases.schema import CaseFileSpec

    try:
        data, lines = yamlsrc.load(text, file)
    except CaseFileError as exc:
        return [exc], {}
    try:
        head = CaseFileSpec.model_validate(data)
    except ValidationError as exc:
        err = exc.errors()[0]
        path = tuple(p for p in err["loc"] if isinstance(p, str | int))
        return [CaseFileError(file, yamlsrc.line_of(lines, path), yamlsrc.format_path(path), err["msg"])], lines
    out: list[Case | CaseFileError] = []
    seen: dict[str, int] = {}
    for i, written in enumerate(head.cases):
        for raw in expand_dtypes(written):
            try:
                case = _build(file, head.op, i, raw, lines)
            except CaseFileError as exc:
                copy = raw is not written and isinstance(raw, dict)
                out.append(CaseFileError(exc.file, exc.line, exc.field, f"{exc.message} (in {raw['id']}, the copy "
                                         "data_dtypes makes)") if copy else exc)
                continue
            if case.id in seen:
                out.append(case.error(("id",), f"duplicate id {case.id!r} (first at line {seen[case.id]})"))
                continue
            seen[case.id] = case.line
            out.append(case)
    return out, lines


def _to_cache(entries: list[Case | CaseFileError], lines: dict[LinePath, int]) -> dict[str, Any]:
    """Builtins that rebuild ``entries`` (see :func:`_from_cache`); the line map is stored once per file."""
    stored: list[tuple[str, tuple[Any, ...]]] = []
    for e in entries:
        if isinstance(e, CaseFileError):
            stored.append(("error", (e.file, e.line, e.field, e.message)))
        else:
            stored.append(("case", (e.index, e.op, e.raw, e.attrs, e.id, e.tags, e.dimension)))
    return {"lines": lines, "entries": stored}


def _from_cache(value: dict[str, Any], file: str) -> list[Case | CaseFileError]:
    lines = value["lines"]
    out: list[Case | CaseFileError] = []
    for kind, fields in value["entries"]:
        if kind == "error":
            out.append(CaseFileError(*fields))
        else:
            index, op, raw, attrs, case_id, tags, dimension = fields
            out.append(Case(file, index, op, raw, attrs, lines, case_id, tags, dimension))
    return out


def load_file(path: Path, display: str | None = None) -> list[Case | CaseFileError]:
    """Load one case file: each entry is a valid Case or the CaseFileError that stopped that case (or the file).

    An unchanged file under unchanged code is answered from the parse cache (:mod:`harness.cases.cache`) with the
    same entries a fresh load would give; cases read from it are validated again only when their spec is used.
    """
    file = display or str(path)
    limit = file_limit()
    try:
        size = path.stat().st_size
        if size <= limit:  # read no more than the limit: a file may grow, or be a device that never ends
            with path.open("rb") as fh:
                content = fh.read(limit + 1)
            size = len(content)
        if size > limit:
            have = f"{size / 2**20:.1f} MiB" if size >= 2**20 else f"{size} bytes"
            mib = _setting(FILE_LIMIT_ENV, FILE_LIMIT_MIB)
            return [CaseFileError(file, None, "", f"too large: {have}, more than the {mib:g} MiB a case file may "
                                  f"have (raise with {FILE_LIMIT_ENV}=MiB)")]
    except OSError as exc:
        return [CaseFileError(file, None, "", f"cannot read: {exc}")]
    return load_bytes(content, file)


def load_bytes(content: bytes, file: str) -> list[Case | CaseFileError]:
    """Load a case file's content (as :func:`load_file` does, ``file`` naming it in errors and case ids): a run's
    snapshot of its case files is loaded so (harness.run.records.Manifest.cases)."""
    limit = file_limit()
    if len(content) > limit:
        return [CaseFileError(file, None, "", f"too large: more than the {limit / 2**20:g} MiB a case file may have "
                              f"(raise with {FILE_LIMIT_ENV}=MiB)")]
    try:
        text = content.decode("utf-8")
    except UnicodeDecodeError as exc:
        return [CaseFileError(file, None, "", f"cannot read: {exc}")]
    # What a load gives depends on the memory budget too (a case over it is an error).
    entry_key = casecache.key(content, f"{file}\0{MEMORY_ENV}={memory_budget()}")
    hit = casecache.get(entry_key)
    if hit is not None:
        try:
            return _from_cache(hit, file)
        except (KeyError, TypeError, ValueError):
            pass  # an entry of an unexpected shape is a miss
    entries, lines = _load_text(text, file)
    casecache.put(entry_key, _to_cache(entries, lines))
    return entries
