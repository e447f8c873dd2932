"""One row of the behaviour tables: a framework API's label on one operator × dimension, beside what its
documentation and the 2020 blog say.

Measured rows (harness.report.behaviour) and documented-only rows (harness.report.documented) are both of this
shape; the report and ``behaviour.json`` read them as dicts with exactly these keys (:meth:`BehaviourRow.as_dict`).
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import TYPE_CHECKING, Any

from gather_scatter_conformance.harness.judge.dimensions import DIMENSIONS, canonical_label

if TYPE_CHECKING:
    from gather_scatter_conformance.vocab.record import Record

Key = tuple[str, str, str, str, str]  # a behaviour cell: (op, dimension, framework, variant, device)


def cell_key(rec: Record) -> Key:
    """The behaviour cell a record belongs to (its dimension '' when it is no probe's)."""
    return rec.op, rec.dimension or "", rec.framework, rec.variant, rec.device


def row_key(row: dict[str, Any]) -> Key:
    """The behaviour cell of a behaviour row (:meth:`BehaviourRow.as_dict`): the same key as its records'."""
    return row["op"], row["dimension"], row["framework"], row["variant"], row["device"]


@dataclass
class BehaviourRow:
    """What one column (framework, variant, device) does on one operator × behaviour dimension."""

    op: str
    dimension: str
    framework: str
    framework_version: str
    variant: str
    api: str
    device: str
    label: str  # the measured label ("a|b" when probes of one cell disagree), or the documented one
    conforms: bool | None  # None: nothing definite to judge (a documented "unspecified")
    documented: str | None = None  # the documentation's label for this cell
    documented_text: str | None = None
    documented_source: str | None = None
    agrees_with_docs: bool | None = None
    documentation: str | None = None  # agrees | contradicts | unspecified | undocumented (measured rows)
    blog_2020: str | None = None  # the blog's 2020 table cell for this framework
    blog_2020_text: str | None = None
    blog_2020_source: str | None = None
    agrees_with_blog: bool | None = None
    cases: list[str] = field(default_factory=list)  # the probe cases behind a measured label
    measured: bool = True
    documented_kind: str | None = None  # documented-only rows: documentation | secondary
    doc_only: str | None = None  # documented-only rows: why the column was not measured
    # Converter paths' rows (framework ``<source>~<converter>~<target>``): the source API's own label, and the
    # preservation verdicts of the cell's probes ("preserved", "changed: error -> wrap", "conversion-failed: ...").
    source_label: str | None = None
    preservation: str | None = None
    question: str = field(init=False)  # the dimension's question, as the tables print it
    canonical: str | None = field(init=False)  # what canonical ONNX semantics give (None: any single order)

    def __post_init__(self) -> None:
        self.question = DIMENSIONS[self.dimension][0]
        self.canonical = canonical_label(self.op, self.dimension)

    def as_dict(self) -> dict[str, Any]:
        """The row as the report and ``behaviour.json`` read it (measured rows carry no ``doc_only`` keys)."""
        out = asdict(self)
        if self.measured:
            del out["documented_kind"], out["doc_only"]
        if self.preservation is None:
            del out["source_label"], out["preservation"]
        return out
