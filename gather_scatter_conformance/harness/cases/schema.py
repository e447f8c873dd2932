"""The case-file schema: pydantic models that are also published as JSON Schema (``cases/schema.json``).

A case file holds one operator's cases. Each case is validated on its own, so one malformed case does not
hide the others in its file.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, Strict, model_validator

from gather_scatter_conformance.vocab.dtypes import DTYPES
from gather_scatter_conformance.vocab.ops import OPS

DType = Literal[DTYPES]  # type: ignore[valid-type]
IndexKind = Literal["in-range", "with-negatives", "with-duplicates", "unique", "out-of-bounds"]

# Integers the harness encodes (ONNX attributes and opsets, framework arguments, shapes, seeds) are int64s, and
# integers: YAML's 2.0 or "2" is not one (pydantic would take both), nor is a 10**29 that onnx.helper refuses.
INT64_MIN, INT64_MAX = -(2**63), 2**63 - 1
Int64 = Annotated[int, Strict(), Field(ge=INT64_MIN, le=INT64_MAX)]
Seed = Annotated[int, Strict(), Field(ge=0, le=INT64_MAX)]
Shape = list[Int64]  # a negative extent is the loader's error, which names it
# What an attribute's value may be (the loader checks each against its operator: a name, a choice, an integer).
ATTR_VALUE_SCHEMA = {"anyOf": [{"type": "integer", "minimum": INT64_MIN, "maximum": INT64_MAX}, {"type": "string"},
                               {"type": "null"}]}


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid")


class ValueSpec(_Strict):
    """An inline value: nested lists (or a scalar) of the declared dtype, optionally reshaped to ``shape``."""

    value: Any
    dtype: DType | None = None
    shape: Shape | None = None


class RandomSpec(_Strict):
    """Random values from a seeded generator: uniform in [low, high) for numbers."""

    shape: Shape | None = Field(None, description="omit for `updates` to derive it from data and indices")
    dtype: DType | None = None
    low: float = 0
    high: float = 10
    seed: Seed = 0


class RandomInput(_Strict):
    random: RandomSpec


class FillSpec(_Strict):
    """A constant array: every element ``value`` (a scalar of the declared dtype), of ``shape``."""

    value: float | int | bool | str
    shape: Shape
    dtype: DType | None = None


class FillInput(_Strict):
    fill: FillSpec


class IndexSpec(_Strict):
    """Indices generated from the data's shape and the operator's axis (or batch_dims for the ND operators)."""

    kind: IndexKind
    shape: Shape
    dtype: DType | None = None
    seed: Seed = 0


class GeneratedIndices(_Strict):
    generate: IndexSpec


InputSpec = ValueSpec | RandomInput | FillInput | GeneratedIndices | list | int | float | bool | str


class ErrorExpected(_Strict):
    error: Literal[True]


class PolicySpec(_Strict):
    """An implementation-defined behaviour (see gather_scatter_conformance.harness.reference.Policy)."""

    out_of_bounds: Literal["error", "zero", "clamp", "wrap", "fill", "skip"] = "error"
    negative: Literal["wrap", "error", "oob"] = "wrap"
    duplicates: Literal["last", "first", "accumulate", "any-of"] = "any-of"


class PolicyExpected(_Strict):
    """A value a source states that holds only under an implementation-defined policy."""

    policy: PolicySpec
    value: Any
    source: str


class Caveat(_Strict):
    """The source's own example is wrong, ambiguous or incomplete; ``why`` says exactly how."""

    kind: Literal["wrong", "ambiguous", "reconstructed"]
    why: str


class Tolerance(_Strict):
    atol: float = 0.0
    rtol: float = 0.0


class Symptom(_Strict):
    """How a bug shows in one run of the case; the run reproduces the bug when every field given here holds."""

    outcome: Literal["ok", "error", "crash", "timeout"] | None = Field(
        None, description="ok: returned a value; error: raised; crash: the worker died; timeout: hung"
    )
    value: Any = Field(None, description="the returned output equals this exactly (the buggy value reported)")
    deviates: bool | None = Field(None, description="the verdict against canonical semantics is (not) deviates")
    nondeterministic: bool | None = Field(None, description="repeated runs (repeat: N) gave different outputs")
    error_contains: str | None = Field(None, description="the error message contains this text")
    differs_from: Any = Field(None, description="the run returned an output other than this one (the value the "
                              "framework's own spec gives, where the buggy values vary from run to run)")

    @model_validator(mode="after")
    def _something(self) -> Symptom:
        if all(v is None for v in self.__dict__.values()):
            raise ValueError("a symptom needs at least one of outcome, value, deviates, nondeterministic, "
                             "error_contains, differs_from")
        return self


class Measured(_Strict):
    """One measurement of a bug on an installed framework: did the symptom show, and what was observed."""

    installed: str = Field(pattern=r"^\S+ \S+ \S+$", description="'<framework> <version> <device>' measured")
    reproduces: bool
    observed: str = Field(description="what the run did, in one line (outcome, value or error)")


class BugSpec(_Strict):
    """The upstream bug a regression case pins: where it was reported, which call shows it, and whether it still
    reproduces on the installed releases (``measured``, written by
    ``python -m gather_scatter_conformance.harness.importers.regression``)."""

    issue: str = Field(pattern=r"^[A-Za-z0-9_.-]+#[0-9]+$", description="repository#number, e.g. tensorflow#61865")
    url: str = Field(pattern=r"^https://github\.com/[^/\s]+/[^/\s]+/(issues|pull)/[0-9]+$")
    framework: str = Field(description="the adapter the bug is about (or a framework with no adapter: tensorrt, ...)")
    variant: str | None = Field(None, description="the adapter variant making the buggy call; default when omitted")
    api: str = Field(min_length=1, description="the call as the report makes it")
    devices: list[str] = Field(["cpu"], min_length=1, description="where the report saw the bug (cpu, cuda, ...)")
    reported: str = Field(min_length=1, description="the version(s) and the buggy behaviour, as reported")
    symptom: Symptom | None = None
    unmeasurable: str | None = Field(None, description="why no run of this case can show the bug (instead of symptom)")
    measured: list[Measured] = []

    @model_validator(mode="after")
    def _symptom_or_why_not(self) -> BugSpec:
        if (self.symptom is None) == (self.unmeasurable is None):
            raise ValueError("give exactly one of symptom (how a run shows the bug) and unmeasurable (why none can)")
        if self.unmeasurable is not None and self.measured:
            raise ValueError("an unmeasurable bug has no measured entries")
        seen: set[str] = set()
        for m in self.measured:
            if m.installed.split()[0] != self.framework:
                raise ValueError(f"measured on {m.installed!r}: the framework must be {self.framework!r}")
            if m.installed in seen:
                raise ValueError(f"measured twice on {m.installed!r}")
            seen.add(m.installed)
        return self


# The finding kinds of harness/fuzz/triage.py.
FindingKind = Annotated[str, Field(pattern=r"^(wrong-value(:nonfinite)?|wrong-shape|wrong-dtype|value-not-error|"
                                   r"raised:\S+|crash:\S+|timeout)$")]


class FindingSpec(_Strict):
    """What differential fuzzing found on a case (``cases/found/``): the command that generated and shrank it, the
    disagreements no baseline label explains (why the case exists), and every API's answer that differed from the
    reference engine, as ``harness/fuzz/describe.py`` words it. Written by ``gsc fuzz``."""

    by: str = Field(pattern=r"^gsc fuzz ", description="the command that found and shrank the case "
                    "(the same seed writes the same case again)")
    kinds: dict[str, FindingKind] = Field(min_length=1, description="framework:variant -> finding kind (wrong-value, "
                                  "wrong-value:nonfinite, wrong-shape, wrong-dtype, value-not-error, raised:<type>, "
                                  "crash:<signal>, timeout): the APIs whose answer no baseline label explains")
    apis: dict[str, str] = Field(description="framework:variant -> what it did, for every API that did not agree "
                                 "with the reference (the kinds' APIs first, then deviations the baselines label)")
    agree: list[str] = Field([], description="the APIs that agreed with the reference engine")

    @model_validator(mode="after")
    def _kinds_answered(self) -> FindingSpec:
        missing = [api for api in self.kinds if api not in self.apis]
        if missing:
            raise ValueError(f"kinds names {', '.join(missing)}, which apis does not answer for")
        return self


class CaseSpec(_Strict):
    """One named case: inputs, attributes, provenance and (optionally) the expected value."""

    id: str = Field(pattern=r"^[a-z0-9][a-z0-9._-]*$")
    source: str = Field(min_length=1, description="where the case and its expected value come from")
    description: str = ""
    tags: list[str] = Field([], description="free labels; a probe's `probe` and dimension tags are derived")
    inputs: dict[str, InputSpec]
    attrs: dict[str, Any] = Field({}, json_schema_extra={"additionalProperties": ATTR_VALUE_SCHEMA},
                                  description="the operator's attributes: integers are int64s")
    opset: Annotated[int, Strict(), Field(ge=1, le=INT64_MAX)] | None = Field(
        None, description="ONNX opset version the case belongs to; newest when omitted")
    expected: ErrorExpected | list | int | float | bool | str | None = None
    policy_expected: list[PolicyExpected] = []
    tolerance: Tolerance | None = None
    caveat: Caveat | None = None
    dimension: str | None = Field(
        None, description="probe cases: the behaviour dimension measured (vocab/dimensions.py)"
    )
    omit: list[str] = Field(
        [], description="attributes left to each framework's own default (e.g. [axis] for the default-axis probe)"
    )
    data_dtypes: list[DType] = Field(
        [], max_length=len(DTYPES), description="the case again with its data (and updates) of each of these dtypes: "
        "one case per dtype, id `<id>-<dtype>`, the same values, which must fit the dtype (docs/writing-cases.md)")
    repeat: Annotated[int, Strict()] = Field(1, ge=1, le=100,
                                             description="run this many times and compare bitwise (nondeterminism)")
    bug: BugSpec | None = Field(None, description="regression cases: the upstream bug report the case pins")
    finding: FindingSpec | None = Field(None, description="found cases: what differential fuzzing found")


class CaseFileSpec(_Strict):
    """A case file: one operator and its cases (each validated separately)."""

    op: Literal[OPS]  # type: ignore[valid-type]
    cases: list[dict[str, Any]]


def json_schema() -> dict[str, Any]:
    """Return the JSON Schema of a case file, with each case described by :class:`CaseSpec`."""
    schema = CaseFileSpec.model_json_schema()
    case = CaseSpec.model_json_schema()
    defs = schema.setdefault("$defs", {})
    defs.update(case.pop("$defs", {}))
    defs["CaseSpec"] = case
    schema["properties"]["cases"] = {"type": "array", "items": {"$ref": "#/$defs/CaseSpec"}}
    schema["$schema"] = "https://json-schema.org/draft/2020-12/schema"
    schema["title"] = "gather-scatter-conformance case file"
    return schema
