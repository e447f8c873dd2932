"""Known deviations: where a framework is expected to differ from canonical semantics, and why.

In the spirit of array-api-tests' per-library xfails files and PyTorch OpInfo's skips/xfails: data, not code. One
file per framework, ``known/<framework>.yaml`` (format: ``docs/known.md``), lists the (case, variant) pairs that
deviate, grouped by reason. A reason is a short measured ``why``, a reference to the documented claim
(``claims/*.yaml``) that explains it, or both. The runner annotates a deviating record with the reason
(``known_deviation``), which the pytest plugin turns into an xfail; the verdict itself never changes.
``tests/test_known_deviations.py`` checks the files against a run of the shipped cases, both ways, and that every
claim reference resolves (``harness.report.claims.referenced``). Loading a known file reads no claim file: a claim
is never an expectation, and claims are read by the report alone.
"""

from __future__ import annotations

import functools
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

from gather_scatter_conformance import resources
from gather_scatter_conformance.harness.cases.errors import CaseFileError
from gather_scatter_conformance.harness.cases.yamlsrc import format_path, line_of
from gather_scatter_conformance.harness.cases.yamlsrc import load as load_yaml

Key = tuple[str, str]  # (case nodeid, variant)


class KnownFileError(CaseFileError):
    """A problem with a known file, located by file, line and entry (``known/jax.yaml:9: deviations[2].cases: ...``)."""


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class ClaimRef(_Strict):
    """Points at the claims that document a deviation: every given field must equal the claim's."""

    file: str | None = Field(None, description="claims/<file>.yaml; default the known file's framework (onnx: models)")
    api: str | None = None
    op: str | None = None
    dimension: str
    mode: str | None = None
    device: str | None = None


class Deviation(_Strict):
    """One reason and the (case, variant) pairs that deviate for it."""

    why: str | None = Field(None, min_length=1, description="the measured behaviour, in one line")
    claim: ClaimRef | None = Field(None, description="the documented claim that explains it")
    variants: list[str] = Field(default_factory=list, description="the variants of every case given as a plain nodeid")
    cases: list[str | dict[str, list[str]]] = Field(
        min_length=1, description="case nodeids (file::id); a one-key mapping nodeid: [variants] overrides `variants`"
    )

    @field_validator("cases")
    @classmethod
    def _nodeids(cls, value: list[str | dict[str, list[str]]]) -> list[str | dict[str, list[str]]]:
        for item in value:
            if isinstance(item, dict) and len(item) != 1:
                raise ValueError(f"a case with its own variants is a one-key mapping, got {sorted(item)}")
            for nodeid in [item] if isinstance(item, str) else item:
                if "::" not in nodeid:
                    raise ValueError(f"{nodeid!r} is not a case nodeid (file::id)")
        return value

    @model_validator(mode="after")
    def _explained(self) -> Deviation:
        if self.why is None and self.claim is None:
            raise ValueError("say why: give `why`, `claim`, or both")
        if not self.variants and any(isinstance(c, str) for c in self.cases):
            raise ValueError("a case given as a plain nodeid needs the entry's `variants`")
        return self

    def pairs(self) -> list[Key]:
        """Every (case nodeid, variant) this entry lists, in file order."""
        out: list[Key] = []
        for item in self.cases:
            for nodeid, variants in ({item: self.variants} if isinstance(item, str) else item).items():
                out.extend((nodeid, v) for v in variants)
        return out


class KnownFile(_Strict):
    """A known-deviations file: ``framework``, the version it was ``measured`` on, and its ``deviations``."""

    framework: str
    measured: str = Field(min_length=1, description="the framework version (and device) the entries were measured on")
    deviations: list[Deviation]


def _error(file: str, lines: dict, path: tuple, message: str) -> KnownFileError:
    return KnownFileError(file, line_of(lines, path), format_path(path), message)


def reason(entry: Deviation, framework: str) -> str:
    """The entry's reason as a record carries it: its ``why``, and where the documentation says so."""
    if entry.claim is None:
        return entry.why or ""
    ref = entry.claim
    what = " ".join(p for p in (ref.api or ref.op, ref.mode, ref.device, ref.dimension) if p)
    cited = f"documented: claims/{ref.file or framework}.yaml, {what}"
    return f"{entry.why} ({cited})" if entry.why else cited


def parse_file(path: str | Path) -> KnownFile:
    """Load and validate one known file; raise KnownFileError naming the file, line and entry on the first problem."""
    path = Path(path)
    file = str(path)
    data, lines = load_yaml(path.read_text(encoding="utf-8"), file)
    if not isinstance(data, dict):
        raise KnownFileError(file, 1, "", "a known file is a mapping with keys framework, measured and deviations")
    try:
        parsed = KnownFile.model_validate(data)
    except ValidationError as exc:
        err = exc.errors(include_url=False)[0]
        # pydantic names the union member it tried ("str", "dict[str,list[str]]"); the user's path has no such step
        loc = tuple(p for p in err["loc"] if isinstance(p, (str, int)) and p not in ("str", "dict[str,list[str]]"))
        raise _error(file, lines, loc, err["msg"].removeprefix("Value error, ")) from None
    if parsed.framework != path.stem:
        raise _error(file, lines, ("framework",), f"framework {parsed.framework!r} must match the file name")
    for i, entry in enumerate(parsed.deviations):
        pairs = entry.pairs()
        twice = sorted({k for k in pairs if pairs.count(k) > 1})
        if twice:
            raise _error(file, lines, ("deviations", i, "cases"), f"{twice[0][0]} [{twice[0][1]}] is listed twice")
    return parsed


def load_file(path: str | Path) -> dict[Key, str]:
    """(case nodeid, variant) -> reason for one known file (see :func:`parse_file` for its errors). A pair listed
    under several reasons gets them joined."""
    parsed = parse_file(path)
    out: dict[Key, str] = {}
    for entry in parsed.deviations:
        text = reason(entry, parsed.framework)
        for key in entry.pairs():
            out[key] = f"{out[key]}; and {text}" if key in out else text
    return out


_directory: Path | None = None


def use_directory(directory: Path | None) -> None:
    """Read known files from ``directory`` from now on (a project's own ``known/``); None: the shipped ones."""
    global _directory
    _directory = directory


def directory() -> Path:
    """Where known files are read from: the one :func:`use_directory` set, else :func:`resources.known_dir`."""
    return _directory or resources.known_dir()


@functools.cache
def _load(directory: Path, framework: str) -> dict[Key, str]:
    path = directory / f"{framework}.yaml"
    return load_file(path) if path.exists() else {}


def entries(framework: str) -> dict[Key, str]:
    """Every expected deviation of ``framework``: (case nodeid, variant) -> reason (empty when it has no file)."""
    return _load(directory(), framework)


def lookup(framework: str, case_nodeid: str, variant: str) -> str | None:
    """Why ``framework``'s ``variant`` is expected to deviate on the case, or None when it is not (cached)."""
    return entries(framework).get((case_nodeid, variant))

