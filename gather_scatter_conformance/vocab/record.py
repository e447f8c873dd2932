"""The result record: what a worker answers for one case (:class:`Result`, its value decoded once) and the line a
run writes for it (:class:`Record`, whose JSON Schema ships as ``schemas/record.schema.json``).

Both sit at the bottom of the data flow: the runner makes records, the judge fills their verdict fields, the report
and the commands read them. A record is written and read as a plain JSON object (one per line); :meth:`Record.dump`
gives that object with exactly the fields that apply (a field that does not apply is absent, not null), and
:meth:`Record.read` accepts the records of earlier harness versions, which lack ``schema_version`` and
``harness_version``.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from functools import cache
from typing import Any, Literal

import numpy as np
from pydantic import BaseModel, ConfigDict, field_validator

from gather_scatter_conformance.vocab import wire
from gather_scatter_conformance.vocab.safe import MAX_NAME, NAME_CHARS, is_safe_name

# 1: the first versioned records (harness 0.1): outcome harness-error, fields schema_version, harness_version, fault.
# Records without a schema_version are version 0, read as they are.
SCHEMA_VERSION = 1

Outcome = Literal["ok", "error", "unsupported", "crash", "timeout", "harness-error"]
# conversion-only: a converter path's model converted, its operators are recorded, and its target cannot run here
# (Core ML off macOS): what is known without a run (harness.judge.preservation).
Verdict = Literal["conforms", "deviates", "n/a", "conversion-only"]
Deviation = Literal["value", "output-dtype", "dtype", "error", "no-error", "crash", "timeout"]
OUTCOMES: tuple[str, ...] = Outcome.__args__  # type: ignore[attr-defined]
VERDICTS: tuple[str, ...] = Verdict.__args__  # type: ignore[attr-defined]
HARNESS_ERROR = "harness-error"  # the harness or an adapter failed, not the framework: verdict n/a
# Fault phases of a harness-error that say an event came from outside the case (harness.run.isolation charges them,
# the judge gives them no verdict): its process was killed from outside on its rerun too, or it passed the worker
# memory limit.
INTERRUPTED, TOO_LARGE = "interrupted", "too-large"


@cache
def harness_version() -> str:
    """This harness's version (``gather_scatter_conformance.__version__``), asked of the installed metadata once."""
    import gather_scatter_conformance

    return str(gather_scatter_conformance.__version__)


@dataclass(frozen=True)
class Result:
    """One worker answer (harness.run.worker.run_case), with its value decoded once, here, for every judge.

    ``raw`` is the answer as the worker sent it (builtins: api, device, facts, conversion, source...).
    """

    outcome: str
    observed: np.ndarray | None = None
    error_type: str | None = None
    error_message: str | None = None
    signal: str | None = None
    reason: str = ""
    distinct_outputs: int | None = None
    raw: Mapping[str, Any] = field(default_factory=dict, repr=False)

    @classmethod
    def of(cls, res: Mapping[str, Any] | Result) -> Result:
        """The typed form of a worker answer (a Result is returned as it is); its ``value`` is decoded here."""
        if isinstance(res, Result):
            return res
        value = res.get("value")
        return cls(
            outcome=res["outcome"],
            observed=wire.decode(value) if res["outcome"] == "ok" and value is not None else None,
            error_type=res.get("error_type"),
            error_message=res.get("error_message"),
            signal=res.get("signal"),
            reason=res.get("reason") or "",
            distinct_outputs=res.get("distinct_outputs"),
            raw=res,
        )

    def get(self, key: str, default: Any = None) -> Any:
        """A field of the worker's answer as it was sent (``value`` still encoded)."""
        return self.raw.get(key, default)


class Fault(BaseModel):
    """Where a harness fault happened (a record whose outcome is ``harness-error``)."""

    model_config = ConfigDict(extra="forbid", use_attribute_docstrings=True)

    phase: str
    """Where it failed: decode, lookup, prepare, run, to_numpy, encode, worker or judge (harness.run.faults)."""
    where: str = ""
    """file:line of the deepest frame."""
    traceback: str = ""
    """The traceback's last frames, for whoever fixes it."""


class Record(BaseModel):
    """One result: a case run on one framework variant on one device, judged.

    Fields without a default are in every record; the others are present only where they apply (``observed`` for
    a value, ``label`` for a probe, ``conversion`` for a converter path, ``fault`` for a harness fault...).
    Unknown fields are kept (a newer harness's records read as they are).
    """

    model_config = ConfigDict(extra="allow", validate_assignment=True, use_attribute_docstrings=True,
                              json_schema_extra={"$schema": "https://json-schema.org/draft/2020-12/schema"})

    schema_version: int
    """The record format's version (SCHEMA_VERSION); records without one are version 0."""
    harness_version: str
    """The version of the harness that wrote the record."""
    case: str
    """file::id, the file relative to where the run was made (or to the shipped corpus)."""
    case_file: str
    case_id: str
    op: str
    tags: list[str]
    framework: str
    """An adapter's registered name; a converter path is <source>~<converter>~<target>."""
    framework_version: str
    variant: str
    api: str
    """The native call, as the adapter names it ('' where none was made)."""
    device: str
    device_name: str | None
    outcome: Outcome
    error_type: str | None
    error_message: str | None
    signal: str | None
    """The signal that killed the process of a crash (SIGSEGV), else null."""
    duration_s: float
    distinct_outputs: int | None
    """The distinct results of a repeated run (a case's `repeat`), else 1 or null."""
    expected: Any
    """'error', the expected array when small (nested lists), else null."""
    python: str
    host: str
    time: str
    """UTC, ISO 8601."""
    spec: str
    """inside, or outside (<why>): the case's types break the operator's type constraints."""
    verdict: Verdict
    reason: str
    ops: list[str] | None = None
    """The executed graph's operators, where the adapter compiles or converts a model."""
    providers: dict[str, str] | None = None
    """Delegation: the backend that executed each operator, as the runtime reports it after the run (ONNX Runtime's
    execution provider per node, ExecuTorch's delegate or portable kernels, IREE's dispatch, MNN's backend)."""
    fallback: bool | None = None
    """True where an operator ran elsewhere than on the backend the variant asked for (e.g. a CPU fallback)."""
    delegate: str | None = None
    """The backend the variant asked to run the operators (``providers`` says which did)."""
    mutates_inputs: list[str] | None = None
    """The inputs whose caller-side arrays the call wrote into (compared before and after it), where any: the
    operators are functions of their inputs, so a framework that overwrites the caller's data is a finding whatever
    the output (Keras's NumPy backend: scatter_update and slice_update assign into ``inputs``)."""
    deviation: Deviation | None = None
    """The kind of a deviation."""
    extension: str | None = None
    """Outside the spec: what the framework computes as the reference does."""
    observed: Any = None
    """The value returned (nested lists), when small; present for every ok outcome."""
    observed_dtype: str | None = None
    observed_shape: list[int] | None = None
    max_abs_err: float | None = None
    mismatches: int | None = None
    first_mismatches: list[dict[str, Any]] | None = None
    dimension: str | None = None
    """A probe's behaviour dimension."""
    label: str | None = None
    """Its behaviour label (harness.judge.dimensions); ``a|b`` (most frequent first) when repeated runs disagreed."""
    baseline: str | None = None
    """A probe's label in its framework's baseline for this release (null where the baseline has none; a converter
    path's is ``changed: a -> b``), as the run that judged it read it: the report needs no baselines directory of
    its own."""
    distribution: dict[str, int] | None = None
    """A repeated cell (memory-unsafe, or flipping in its baseline): label -> how many of its runs, each in a fresh
    process, gave it (``{"garbage": 3, "zero": 2}``)."""
    cached: bool | None = None
    """True when the record was reused from the result cache instead of measured (harness.run.cache)."""
    conversion: dict[str, Any] | None = None
    """A converter path's account (harness.judge.preservation)."""
    known_change: str | None = None
    known_deviation: str | None = None
    """The known/<framework>.yaml entry that explains a deviation."""
    native: str | None = None
    """A finding's native call as statements: its repro script's body."""
    fault: Fault | None = None
    """A harness fault's phase and traceback."""

    # The fields that later become a path, a URL, markup or code (site addresses, repro scripts, issue texts) are
    # checked here, where a record is read, so that a results file from another machine cannot smuggle `../` into a
    # page's path or `os.system(...)` into a script. Everything the harness writes passes (every value of the
    # 2026-11-24 runs does); what fails names the field.
    @field_validator("op")
    @classmethod
    def _known_op(cls, value: str) -> str:
        from gather_scatter_conformance.vocab.ops import OPS

        if value and value not in OPS:
            raise ValueError(f"not an operator of the harness ({', '.join(OPS)})")
        return value

    @field_validator("dimension")
    @classmethod
    def _known_dimension(cls, value: str | None) -> str | None:
        from gather_scatter_conformance.vocab.dimensions import DIMENSIONS

        if value is not None and value not in DIMENSIONS:
            raise ValueError("not a behaviour dimension of the harness (vocab/dimensions.py)")
        return value

    @field_validator("framework", "variant", "device", "label", "error_type", "signal", "observed_dtype")
    @classmethod
    def _name(cls, value: str | None) -> str | None:
        if value and not is_safe_name(value):
            raise ValueError(f"not a name (at most {MAX_NAME} of {NAME_CHARS}, no '..')")
        return value

    @field_validator("case", "case_file")
    @classmethod
    def _case_name(cls, value: str) -> str:
        # A case is named as its run named it (relative to pytest's rootdir, or a caller's own path): no file is
        # ever read by that name (the report reads the run's snapshot: harness.evidence.cells.Cases), so only what
        # would break a line of text is refused here.
        if len(value) > MAX_CASE or any(ord(c) < 32 or c == "\x7f" for c in value):
            raise ValueError(f"not a case name (at most {MAX_CASE} characters, no control character)")
        return value

    @field_validator("observed_shape", mode="before")
    @classmethod
    def _shape(cls, value: Any) -> Any:
        # Before pydantic's own check, which would turn "3" into 3: the reader yields the file's object as it is.
        if value is not None and (not isinstance(value, list) or len(value) > MAX_RANK or any(
                type(d) is not int or d < 0 for d in value)):
            raise ValueError(f"not a shape (at most {MAX_RANK} non-negative sizes)")
        return value

    @property
    def key(self) -> tuple[str, str, str, str]:
        """What makes a record unique within a results set: case, framework, variant and device."""
        return (self.case, self.framework, self.variant, self.device)

    @property
    def system(self) -> str:
        """The system that ran it as the summary, the manifest and the pages name it: the framework, with
        ``@device`` off the CPU."""
        return self.framework if self.device == "cpu" else f"{self.framework}@{self.device}"

    def unset(self, name: str) -> None:
        """Leave out an optional field that no longer applies (it is then absent from :meth:`dump`)."""
        setattr(self, name, None)
        self.__pydantic_fields_set__.discard(name)

    def dump(self) -> dict[str, Any]:
        """The record as its JSON line holds it: every field that applies (set when the record was made)."""
        return self.model_dump(exclude_unset=True)

    @classmethod
    def read(cls, obj: Mapping[str, Any]) -> Record:
        """A record from a JSON line, this version's or an earlier one's (fields added since get their old
        meaning: ``schema_version`` 0, an empty ``harness_version``). Raises pydantic.ValidationError for an
        object that is not a result record."""
        return cls.model_validate({**_LEGACY, **obj})

MAX_CASE = 1000
MAX_RANK = 64  # ONNX allows more than any framework here; a longer list is not a shape the harness recorded


# What an earlier harness's (or a hand-written) record means by leaving a field out: every field but the result's
# identity (case, framework) and its outcome and verdict.
_LEGACY: dict[str, Any] = {
    "schema_version": 0, "harness_version": "", "case_file": "", "case_id": "", "op": "", "tags": [],
    "framework_version": "",
    "variant": "", "api": "", "device": "cpu", "device_name": None, "error_type": None, "error_message": None,
    "signal": None, "duration_s": 0.0, "distinct_outputs": None, "expected": None, "python": "", "host": "",
    "time": "", "spec": "inside", "reason": "",
}


def json_schema() -> dict[str, Any]:
    """The JSON Schema of result records (what ``gsc schema --records`` prints and the package ships)."""
    return Record.model_json_schema()
