"""One row of the behaviour tables: a framework API's label on one operator × dimension, beside what its
documentation and the 2020 blog say.

Measured rows (harness.report.behaviour) and documented-only rows (harness.report.documented) are both of this
shape; the report and ``behaviour.json`` read them as dicts with exactly these keys (:meth:`BehaviourRow.as_dict`).
"""

from __future__ import annotations

from dataclasses import dataclass, field, fields
from typing import TYPE_CHECKING, Any

from gather_scatter_conformance.harness.judge.dimensions import DIMENSIONS, canonical_label
from gather_scatter_conformance.vocab.dimensions import DATA_TAG
from gather_scatter_conformance.vocab.dtypes import DTYPES

if TYPE_CHECKING:
    from gather_scatter_conformance.vocab.record import Record

Key = tuple[str, str, str, str, str]  # a behaviour cell: (op, dimension, framework, variant, device)


def cell_key(rec: Record) -> Key:
    """The behaviour cell a record belongs to (its dimension '' when it is no probe's)."""
    return rec.op, rec.dimension or "", rec.framework, rec.variant, rec.device


def data_dtype(rec: Record) -> str | None:
    """The dtype of a probe record's ``data`` input, from its ``data:<dtype>`` tag; None for a record without one
    (older results files), whose cell is then one family with no name."""
    return next((tag[len(DATA_TAG):] for tag in rec.tags if tag.startswith(DATA_TAG)), None)


def dtype_groups(by_data_dtype: dict[str, str]) -> list[tuple[str, list[str]]]:
    """A row's ``by_data_dtype`` grouped by label: ``[(label, [dtypes])]``, the dtypes in vocab.dtypes order (names
    it does not know after, alphabetically), the groups in the order of their first dtype."""
    def rank(dtype: str) -> tuple[int, str]:
        return (DTYPES.index(dtype) if dtype in DTYPES else len(DTYPES), dtype)

    groups: dict[str, list[str]] = {}
    for dtype in sorted(by_data_dtype, key=rank):
        groups.setdefault(by_data_dtype[dtype], []).append(dtype)
    return list(groups.items())


def dtype_split_text(by_data_dtype: dict[str, str] | None) -> str:
    """``zero: float16, float32 · garbage: int16, int32``: which data dtypes gave which label ('' for no split)."""
    if not by_data_dtype:
        return ""
    return " · ".join(f"{label}: {', '.join(dtypes)}" for label, dtypes in dtype_groups(by_data_dtype))


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
    # Present only where the cell's probes come from two or more data dtypes (their ``data:<dtype>`` tags) and these
    # do not all give the same labels: data dtype -> that dtype's label (``a|b`` as ``label`` joins them). OpenVINO's
    # Gather-8 past the end: zero on float and 8-bit data, garbage on int16/int32/int64.
    by_data_dtype: dict[str, str] | None = None
    question: str = field(init=False)  # the dimension's question, as the tables print it
    canonical: str | None = field(init=False)  # what canonical ONNX semantics give (None: any single order)

    def __post_init__(self) -> None:
        self.question = DIMENSIONS[self.dimension][0]
        self.canonical = canonical_label(self.op, self.dimension)

    def as_dict(self) -> dict[str, Any]:
        """The row as the report and ``behaviour.json`` read it (measured rows carry no ``doc_only`` keys, a
        framework's own rows no ``source_label``/``preservation``, a cell whose data dtypes agree no
        ``by_data_dtype``)."""
        # Not dataclasses.asdict: its deep copy took half of the behaviour table's time; cases and by_data_dtype
        # are the only containers, flat ones.
        out = {f.name: getattr(self, f.name) for f in fields(self)}
        out["cases"] = list(self.cases)
        if self.by_data_dtype is not None:
            out["by_data_dtype"] = dict(self.by_data_dtype)
        if self.measured:
            del out["documented_kind"], out["doc_only"]
        if self.preservation is None:
            del out["source_label"], out["preservation"]
        if self.by_data_dtype is None:
            del out["by_data_dtype"]
        return out
