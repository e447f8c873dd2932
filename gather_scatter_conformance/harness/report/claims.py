"""Documented claims: what each framework's documentation says about an operator x behaviour dimension.

A claim is data for the report, shown next to what the harness measured. It is never an expectation: nothing that
decides whether a case passes (runner, comparison, classifier, reference engine, case files) may read it. The claim
files live in ``claims/<framework>.yaml``; ``docs/claims.md`` describes the format and how to add a claim.

Labels are the classifier's vocabulary (``harness.judge.dimensions``) for the claim's dimension, plus two that only
documentation can give:

* ``unspecified``: the documentation says nothing definite (it is silent, or it states a precondition such as "must be
  in [0, s)" without saying what happens when it is broken).
* ``undefined``: the documentation explicitly says the result is undefined / not guaranteed / unpredictable.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Iterable
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

from gather_scatter_conformance.harness.cases.errors import CaseFileError
from gather_scatter_conformance.harness.cases.yamlsrc import format_path, line_of
from gather_scatter_conformance.harness.cases.yamlsrc import load as load_yaml
from gather_scatter_conformance.harness.judge.dimensions import (
    AXIS_LABELS,
    DIMENSIONS,
    DUPLICATE_LABELS,
    INDEX_LABELS,
    SUPPORT_LABELS,
    UNCOVERED_LABELS,
    kind,
)
from gather_scatter_conformance.vocab.ops import OPS

if TYPE_CHECKING:
    from gather_scatter_conformance.harness.judge.known import ClaimRef

DOC_ONLY_LABELS = ("unspecified", "undefined")
LABELS_BY_KIND: dict[str, tuple[str, ...]] = {
    "index": INDEX_LABELS,
    "duplicates": DUPLICATE_LABELS,
    "uncovered": UNCOVERED_LABELS,
    "support": SUPPORT_LABELS,
    "axis": AXIS_LABELS,
}
SOURCE_KINDS = ("documentation", "secondary")

_URL = re.compile(r"^https?://\S+$")
# "owner/repo path/to/file @ ref", e.g. "apache/mxnet src/operator/tensor/indexing_op.cc @ 1.9.1"
_REPO_PATH = re.compile(r"^[\w.-]+/[\w.-]+ \S+ @ \S+$")
_TOKEN = re.compile(r"^[a-z0-9][a-z0-9._-]*$")


class ClaimFileError(CaseFileError):
    """A problem with a claim file, located by file, line and field (``claims/onnx.yaml:12: claims[3].label: ...``)."""


def labels_for(dimension: str) -> tuple[str, ...]:
    """The labels a claim about ``dimension`` may carry: the classifier's labels for its kind, then doc-only ones."""
    return LABELS_BY_KIND[kind(dimension)] + DOC_ONLY_LABELS


def _check_source(value: str) -> str:
    value = value.strip()
    if not (_URL.match(value) or _REPO_PATH.match(value)):
        raise ValueError(
            f"{value!r} is not a citation: give a URL (https://...) or 'owner/repo path @ ref' (a tag or commit)"
        )
    return value


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class Claim(_Strict):
    """One documented statement: for ``framework``'s ``api`` implementing ``op``, ``dimension`` is ``label``."""

    framework: str = Field(description="the claim file's framework (filled in by the loader)")
    op: Literal[OPS]  # type: ignore[valid-type]
    dimension: str = Field(description="a dimension of gather_scatter_conformance.harness.judge.dimensions.DIMENSIONS")
    label: str = Field(description="the documented behaviour in the dimension's label vocabulary, or a doc-only label")
    text: str = Field(min_length=1, description="a short verbatim quote (or, for a signature, the signature)")
    source: str = Field(description="URL, or 'owner/repo path @ ref'")
    api: str | None = Field(None, description="the API the documentation describes, e.g. tf.gather or Gather-13")
    device: str | None = Field(None, description="when the docs distinguish devices: cpu, gpu, tpu, ...")
    mode: str | None = Field(None, description="the API's index mode the claim is about (numpy/jax/mxnet modes)")
    version: str | None = Field(None, description="documentation version / opset / feature level the quote is from")
    locator: str | None = Field(None, description="where in the source: section, example, table row and column")
    note: str | None = Field(None, description="our reading of the text: how the label follows, caveats")
    about: str | None = Field(None, description="for secondary sources: the framework the statement is about")
    source_kind: Literal["documentation", "secondary"] = "documentation"
    reported: list[str] = Field(
        default_factory=list, description="issue/PR URLs reporting behaviour (NOT documentation)"
    )

    @field_validator("dimension")
    @classmethod
    def _known_dimension(cls, value: str) -> str:
        if value not in DIMENSIONS:
            raise ValueError(f"unknown dimension {value!r}; expected one of {', '.join(DIMENSIONS)}")
        return value

    @field_validator("source")
    @classmethod
    def _citation(cls, value: str) -> str:
        return _check_source(value)

    @field_validator("reported")
    @classmethod
    def _reported_urls(cls, value: list[str]) -> list[str]:
        for url in value:
            if not _URL.match(url):
                raise ValueError(f"reported entries must be URLs of issues or pull requests, got {url!r}")
        return value

    @field_validator("device", "mode")
    @classmethod
    def _token(cls, value: str | None) -> str | None:
        if value is not None and not _TOKEN.match(value):
            raise ValueError(f"{value!r} must be a lower-case token such as 'cpu' or 'clip'")
        return value

    @field_validator("text")
    @classmethod
    def _text(cls, value: str) -> str:
        if not value.strip():
            raise ValueError("text must quote the documentation")
        return value.strip()

    @model_validator(mode="after")
    def _label_fits_dimension(self) -> Claim:
        allowed = labels_for(self.dimension)
        if self.label not in allowed:
            raise ValueError(
                f"label {self.label!r} is not a label of dimension {self.dimension!r} "
                f"(kind {kind(self.dimension)!r}); expected one of {', '.join(allowed)}"
            )
        return self

    def key(self) -> tuple[Any, ...]:
        """What makes two claims the same statement (used to reject exact duplicates)."""
        return (self.op, self.api, self.dimension, self.device, self.mode, self.version, self.source, self.about)


class Unmapped(_Strict):
    """A statement of a source that no dimension expresses (kept so the source is recorded completely)."""

    text: str = Field(min_length=1)
    reason: str = Field(min_length=1)
    locator: str | None = None
    about: str | None = None
    source: str | None = None

    @field_validator("source")
    @classmethod
    def _citation(cls, value: str | None) -> str | None:
        return None if value is None else _check_source(value)


class ClaimFile(_Strict):
    """A claim file: ``framework``, optional ``defaults`` merged into every claim, ``claims`` and ``unmapped``."""

    framework: str
    title: str | None = None
    defaults: dict[str, Any] = Field(default_factory=dict)
    claims: list[dict[str, Any]]
    unmapped: list[Unmapped] = Field(default_factory=list)

    @field_validator("framework")
    @classmethod
    def _framework(cls, value: str) -> str:
        if not _TOKEN.match(value):
            raise ValueError(f"framework {value!r} must be a lower-case token such as 'tensorflow'")
        return value

    @field_validator("defaults")
    @classmethod
    def _defaults(cls, value: dict[str, Any]) -> dict[str, Any]:
        unknown = set(value) - (set(Claim.model_fields) - {"framework", "op", "dimension", "label", "text"})
        if unknown:
            raise ValueError(f"defaults cannot set {', '.join(sorted(unknown))}")
        return value


def _error(file: str, lines: dict, path: tuple, message: str) -> ClaimFileError:
    return ClaimFileError(file, line_of(lines, path), format_path(path), message)


def _first_error(exc: ValidationError) -> tuple[tuple, str]:
    err = exc.errors(include_url=False)[0]
    loc = tuple(p for p in err["loc"] if isinstance(p, (str, int)))
    msg = err["msg"].removeprefix("Value error, ")
    if err["type"] == "literal_error" and loc and loc[-1] == "op":
        msg = f"unknown op {err.get('input')!r}; expected one of {', '.join(OPS)}"
    return loc, msg


def load_claim_file(path: str | Path) -> tuple[list[Claim], list[Unmapped]]:
    """Load and validate one claim file; raise ClaimFileError naming file, line and field on the first problem."""
    path = Path(path)
    file = str(path)
    try:
        data, lines = load_yaml(path.read_text(encoding="utf-8"), file)
    except CaseFileError as exc:  # YAML syntax errors and duplicate keys, already located
        raise ClaimFileError(exc.file, exc.line, exc.field, exc.message) from None
    if not isinstance(data, dict):
        raise ClaimFileError(file, 1, "", "a claim file is a mapping with keys framework and claims")
    try:
        parsed = ClaimFile.model_validate(data)
    except ValidationError as exc:
        loc, msg = _first_error(exc)
        raise _error(file, lines, loc, msg) from None
    if parsed.framework != path.stem:
        raise _error(
            file, lines, ("framework",), f"framework {parsed.framework!r} must match the file name {path.stem!r}"
        )
    claims: list[Claim] = []
    seen: dict[tuple, int] = {}
    for i, raw in enumerate(parsed.claims):
        if not isinstance(raw, dict):
            raise _error(file, lines, ("claims", i), "each claim is a mapping")
        if "framework" in raw:
            raise _error(file, lines, ("claims", i, "framework"), "set framework once, at the top of the file")
        try:
            claim = Claim.model_validate({**parsed.defaults, **raw, "framework": parsed.framework})
        except ValidationError as exc:
            loc, msg = _first_error(exc)
            if not loc:  # a model-level check (label vs dimension): point at the label
                loc = ("label",)
            raise _error(file, lines, ("claims", i, *loc), msg) from None
        if claim.key() in seen:
            raise _error(file, lines, ("claims", i), f"duplicate of claims[{seen[claim.key()]}]")
        seen[claim.key()] = i
        claims.append(claim)
    return claims, list(parsed.unmapped)


class Claims(list[Claim]):
    """Claims in file order, looked up by (framework, op, dimension) through an index built on the first lookup: a
    report looks up every measured cell (12,809 lookups over the committed runs took 1.6 s as list scans). Not to be
    changed after that lookup."""

    _index: dict[tuple[str, str, str], list[Claim]] | None = None

    def about(self, framework: str, op: str, dimension: str) -> list[Claim]:
        """The claims of ``framework`` on ``op`` and ``dimension``, in file order."""
        if self._index is None:
            self._index = {}
            for c in self:
                self._index.setdefault((c.framework, c.op, c.dimension), []).append(c)
        return list(self._index.get((framework, op, dimension), ()))


@functools.lru_cache(maxsize=8)
def _load_claims(directory: Path, stamp: tuple[tuple[str, int, int], ...]) -> Claims:
    out = Claims()
    for name, _, _ in stamp:
        out.extend(load_claim_file(directory / name)[0])
    return out


def load_claims(directory: str | Path) -> Claims:
    """Load every ``*.yaml`` claim file in ``directory`` (sorted by name), in file order within each file. Loaded
    once per process while the files stay as they were (name, size and modification time): the report's table, its
    site and its advisories each ask. The result is shared: not to be changed."""
    directory = Path(directory)
    files = sorted(directory.glob("*.yaml"))
    if not files:
        raise ClaimFileError(str(directory), None, "", "no claim files (*.yaml) found")
    stamp = tuple((f.name, (st := f.stat()).st_mtime_ns, st.st_size) for f in files)
    return _load_claims(directory.absolute(), stamp)


_OP_VERSION = re.compile(r"\b([A-Z][A-Za-z]+)-(\d+)\b")
_LAMBDA_BODY = re.compile(r"lambda [^:]*:\s*(.*)")


def api_name(api: str | None) -> str | None:
    """The callable's name: an API string as records show it (``tf.gather(data, indices, axis=0)``) -> ``tf.gather``.

    A wrapped call (``tf.function(lambda data, indices: tf.gather(...))(...)``) is named by what the innermost lambda
    calls; a call through an operator version (``InferenceSession(model: Gather-11(...))``, ``ov.opset7.gather(...)  #
    Gather-7``) by that version, ``Gather-11``: claims about one version of an operator say nothing of another.
    """
    if api is None:
        return None
    version = _OP_VERSION.search(api)
    if version:
        return version.group(0)
    # The innermost lambda's call: jax.jit(lambda ...: jax.vmap(lambda c, u, w: lax.f(...))) is named lax.f.
    body = _LAMBDA_BODY.search(api[api.rfind("lambda "):]) if "lambda " in api else None
    return (body.group(1) if body else api).split("(", 1)[0].strip()


def op_version(api: str | None) -> tuple[str, int] | None:
    """``("Gather", 8)`` for a claim or column API that names an operator version (``Gather-8``), else None."""
    m = _OP_VERSION.fullmatch(api or "")
    return (m.group(1), int(m.group(2))) if m else None


def _prefer(candidates: list[Claim], attr: str, wanted: str | None) -> list[Claim]:
    if wanted is not None:
        exact = [c for c in candidates if getattr(c, attr) == wanted]
        return exact or [c for c in candidates if getattr(c, attr) is None]
    unqualified = [c for c in candidates if getattr(c, attr) is None]
    return unqualified or candidates


def lookup_all(
    claims: Iterable[Claim],
    framework: str,
    op: str,
    dimension: str,
    api: str | None = None,
    *,
    device: str | None = None,
    mode: str | None = None,
    about: str | None = None,
    unversioned: bool = False,
) -> list[Claim]:
    """Every claim that answers (framework, op, dimension), best first; see :func:`lookup` for the rules."""
    if dimension not in DIMENSIONS:
        raise ValueError(f"unknown dimension {dimension!r}")
    if ":" in framework and about is None:  # "blog-2020:tensorflow" = the blog's statement about TensorFlow
        framework, about = framework.split(":", 1)
    found = (claims.about(framework, op, dimension) if isinstance(claims, Claims)
             else [c for c in claims if c.framework == framework and c.op == op and c.dimension == dimension])
    if about is not None:
        found = [c for c in found if c.about == about]
    if api is not None:
        name = api_name(api)
        found = [c for c in found if c.api is None or api_name(c.api) == name]
    elif unversioned:
        found = [c for c in found if op_version(c.api) is None]
    found = _prefer(found, "device", device)
    found = _prefer(found, "mode", mode)
    return found


def lookup(claims: Iterable[Claim], framework: str, op: str, dimension: str, api: str | None = None,
           **where: Any) -> Claim | None:
    """The documented claim for (framework, op, dimension), or None when the documentation has none.

    * ``api``: only claims about that API (or about no particular API). A record's API string such as
      ``tf.gather(data, indices, axis=0)`` matches claims whose ``api`` is ``tf.gather``. Without ``api``, the first
      claim in file order wins; claim files list each operator's default API (and default opset/version) first.
    * ``device`` / ``mode``: an exact match, else a claim that names no device / mode. Without them, claims that name
      none are preferred, else the first (files list the default mode first).
    * ``about``: for secondary sources (blog-2020), the framework the statement is about; ``framework`` may also be
      written ``"blog-2020:tensorflow"``.
    * ``unversioned`` (without ``api``): only claims that name no operator version (a claim about ``Gather-8`` must
      not stand for ``Gather-1``).

    ``where`` takes :func:`lookup_all`'s keywords (``device``, ``mode``, ``about``, ``unversioned``).
    """
    found = lookup_all(claims, framework, op, dimension, api, **where)
    return found[0] if found else None


def referenced(ref: ClaimRef, framework: str, claims_dir: Path) -> list[Claim]:
    """The claims in ``claims_dir/<file>.yaml`` that a known deviation's claim reference points at: those with
    every field the reference names (empty when none: a dangling reference)."""
    path = claims_dir / f"{ref.file or framework}.yaml"
    wanted = ref.model_dump(exclude={"file"}, exclude_none=True)
    found = load_claim_file(path)[0] if path.exists() else []
    return [c for c in found if all(getattr(c, name) == value for name, value in wanted.items())]


def agrees(claim: Claim | None, measured: Iterable[str]) -> bool | None:
    """Whether measured labels agree with a documented claim: None when there is no claim or it states nothing
    definite (``unspecified``, ``undefined``: any outcome is consistent with it), else whether the documented label
    is among the measured ones. For the report only; never a test verdict."""
    if claim is None or claim.label in DOC_ONLY_LABELS:
        return None
    return claim.label in set(measured)
