"""The site's JSON API: what each ``*.json`` file beside a page holds, as pydantic models.

The models are the schema (``gsc schema --site`` writes ``schemas/site.schema.json``; every site also carries it as
``api/schema.json``) and the validation: harness.report.site builds every file through them, so a file that does
not match its model is never written. Paths inside the files are relative to the site's root, as its pages link.
docs/site.md describes each file.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field

API_VERSION = 1  # bumped when a field is removed or changes meaning; new fields do not bump it


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid")


class Claim(_Model):
    """What a document says of a cell: the framework's documentation, ONNX's specification or the 2020 blog."""

    state: str = Field(description="agrees | contradicts | unspecified | undocumented (no claim found)")
    label: str | None = None
    words: str | None = None
    text: str | None = Field(None, description="the quoted sentence")
    source: str | None = Field(None, description="the citation as the claim file gives it")
    url: str | None = None


class CaseResult(_Model):
    """One probe case of a cell as this run measured it."""

    case: str = Field(description="file::id")
    description: str | None = None
    provenance: str | None = None
    label: str | None = None
    verdict: str
    outcome: str
    status: str = Field(description="conforms | deviates | error | dtype | crash | timeout | n/a")
    error: str | None = None
    observed: Any = None
    expected: Any = None
    distribution: dict[str, int] | None = Field(None, description="label -> fresh processes that gave it")
    cached: bool = False
    evidence: str | None = Field(None, description="the memory checker's account (gsc memcheck)")
    repro: str | None = Field(None, description="the standalone repro script, for a finding")


class Release(_Model):
    """The cell's label on one release of the framework (history/<framework>.jsonl)."""

    release: str
    label: str
    change: bool = Field(description="the label differs from the previous measured release's")


class PathEffect(_Model):
    """A converter path whose source is this cell's API, on this cell's operator and dimension."""

    path: str
    target: str
    source_label: str
    target_label: str
    preservation: str = Field(description="preserved | changed | conversion-failed | ...")
    url: str = Field(description="the path's cell page")


class Cell(_Model):
    """One cell: an operator × a system's API variant (on a device) × a behaviour dimension."""

    api_version: int = API_VERSION
    url: str = Field(description="this cell's page, relative to the site root; its JSON is the same path .json")
    op: str
    dimension: str
    question: str
    system: str = Field(description="framework, or framework@device off the CPU, or a converter path")
    framework: str
    version: str
    variant: str
    api: str
    device: str
    label: str = Field(description="the measured label (a|b where the cell's probes disagree)")
    words: str
    canonical: str | None = Field(description="what ONNX's semantics give (None: any single order)")
    canonical_words: str
    conforms: bool | None
    severity: str = Field(description="ok | alt | wrong | unsafe | na (harness.report.severity)")
    documentation: Claim
    blog_2020: Claim | None = None
    cases: list[CaseResult]
    history: list[Release] = Field(description="oldest release first; empty where no sweep exists")
    since: str | None = Field(None, description="the oldest release of the newest unbroken run of this label")
    paths: list[PathEffect] = Field(description="converter paths from this API (path cells: empty)")
    source_api: str | None = Field(None, description="a converter path's cell: the source API's native call")
    source_label: str | None = Field(None, description="a converter path's cell: the source API's own label")
    preservation: str | None = None
    by_data_dtype: dict[str, str] | None = Field(
        None, description="data dtype -> its label (a|b as label joins them), only where the cell's probes come "
        "from two or more data dtypes that do not all give the same labels")
    upstream: str | None = Field(None, description="the markdown issue of the cell's first finding (gsc issue)")


class CellRef(_Model):
    """A cell as the index lists it."""

    url: str
    op: str
    dimension: str
    system: str
    variant: str
    label: str
    severity: str
    conforms: bool | None
    documentation: str


class System(_Model):
    """A framework, runtime or converter path, and its cells."""

    api_version: int = API_VERSION
    name: str
    url: str
    kind: str = Field(description="framework | path")
    versions: list[str]
    devices: list[str]
    variants: dict[str, list[str]] = Field(description="operator -> API variants measured")
    severities: dict[str, int] = Field(description="cells per severity")
    history: str | None = Field(None, description="the framework's release history file, api/history/<name>.json")
    cells: list[CellRef]


class Difference(_Model):
    """One dimension where a port's source and target behave differently."""

    op: str
    dimension: str
    question: str
    source_label: str
    target_label: str
    preservation: str | None = Field(None, description="the path's verdict, where a converter path measured it")
    cases: list[str]
    source_url: str | None = None
    target_url: str | None = None


class Port(_Model):
    """What changes when a model moves from a source API to a target: a converter path, or another system."""

    api_version: int = API_VERSION
    url: str = Field(description="its page in the site; empty for a port between two systems' own APIs, which has "
                     "none (gsc port)")
    source: str = Field(description="framework")
    source_api: str = Field(description="the callable, e.g. tf.gather")
    source_variant: str
    target: str
    path: str | None = Field(None, description="the converter path, where one was measured")
    compared: int = Field(description="dimensions both sides measured")
    differences: list[Difference]


class Finding(_Model):
    """A cell whose first finding has an upstream issue text on its page."""

    url: str
    kind: str
    title: str
    system: str
    op: str
    dimension: str


class History(_Model):
    """A framework's labels per release: ``labels[cell url] = {release: label}``."""

    api_version: int = API_VERSION
    framework: str
    releases: list[str]
    failures: dict[str, str]
    labels: dict[str, dict[str, str]]


class Index(_Model):
    """``api/index.json``: the run, and every cell, system, port and finding with its URL."""

    api_version: int = API_VERSION
    generated: str
    commit: str | None = None
    records: int
    cells: list[CellRef]
    systems: list[str]
    ports: list[str]
    findings: list[Finding]


MODELS: dict[str, type[BaseModel]] = {"Index": Index, "Cell": Cell, "System": System, "Port": Port,
                                      "History": History}


def schema() -> dict[str, Any]:
    """One JSON Schema with a definition per file kind (``$defs``), each file validating against its own."""
    from pydantic.json_schema import models_json_schema

    _, top = models_json_schema([(m, "validation") for m in MODELS.values()],
                                title="gather-scatter-conformance site API",
                                description="The JSON files of a gsc report site (docs/site.md).")
    top["$schema"] = "https://json-schema.org/draft/2020-12/schema"
    top["properties"] = {}  # no document is of this top shape: each file is one of $defs' models
    top["version"] = API_VERSION
    return top
