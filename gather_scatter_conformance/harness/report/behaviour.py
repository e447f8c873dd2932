"""The behaviour table: probe labels per operator × dimension × framework API, set beside documented claims.

This is the blog's Table 1 and Table 2 (seed 002) regenerated from measurement. Each row says what was measured
(``label``), what the framework's documentation says (``documented``, with its source) and what the blog said in
2020 (``blog_2020``); they are kept apart, and ``agrees_with_docs`` / ``agrees_with_blog`` say where they differ.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from gather_scatter_conformance import resources
from gather_scatter_conformance.harness.judge.dimensions import DIMENSIONS, conforms
from gather_scatter_conformance.harness.report.documented import rows as documented_rows
from gather_scatter_conformance.harness.report.rows import BehaviourRow, data_dtype, dtype_split_text
from gather_scatter_conformance.vocab import variants
from gather_scatter_conformance.vocab.dimensions import DATA_DTYPE

if TYPE_CHECKING:
    from gather_scatter_conformance.vocab.record import Record


def _claims(claims_dir: Path) -> Any:
    try:
        from gather_scatter_conformance.harness.report.claims import load_claims
    except ImportError:  # the registry is optional for this table
        return None
    return load_claims(claims_dir) if claims_dir.exists() else None


# Runtimes that implement a spec rather than document their own behaviour: their claims are the spec's.
_DOCS_OF = {"onnxruntime": "onnx", "onnx-reference": "onnx"}


def _documented(claims: Any, framework: str, op: str, dimension: str, api: str, device: str) -> Any:
    """The documented claim that applies to one measured cell, or None."""
    if not claims:
        return None
    from gather_scatter_conformance.harness.report.claims import lookup

    name = _DOCS_OF.get(framework, framework)
    # Else a claim about the framework's operator in general, never one about another version of it.
    return lookup(claims, name, op, dimension, api or None, device=device) or lookup(
        claims, name, op, dimension, device=device, unversioned=True
    )


def documentation_state(claim: Any, agrees: bool | None) -> str:
    """What the documentation says of a measured cell: agrees, contradicts, unspecified (a claim that states
    nothing definite) or undocumented (no claim at all), so that no mark never reads as agreement."""
    if claim is None:
        return "undocumented"
    return "unspecified" if agrees is None else "agrees" if agrees else "contradicts"


def _agrees(claim: Any, labels: list[str]) -> bool | None:
    if claim is None:
        return None
    from gather_scatter_conformance.harness.report.claims import agrees

    return agrees(claim, labels)


def _conversion_fields(recs: list[Record]) -> dict[str, str]:
    """A converter path's cell: the source's labels and the preservation summaries, each ``|``-joined when the
    cell's probes differ; nothing for a framework's own cell."""
    convs = [r.conversion for r in recs if r.conversion]
    if not convs:
        return {}
    sources = sorted({c.get("source_label") or "-" for c in convs})
    return {"source_label": "|".join(sources), "preservation": "|".join(sorted({c["summary"] for c in convs}))}


REFUSED = "refused"  # a data dtype the API refuses outright: its edge probes say nothing of the edge


def _refused(groups: dict[tuple[str, ...], list[Record]]) -> dict[tuple[str, ...], set[str]]:
    """(op, framework, version, variant, device) -> the data dtypes that API refuses: its in-range
    ``data-dtype:<dtype>`` probe raised (``error``) or could not be written (``unsupported``)."""
    out: dict[tuple[str, ...], set[str]] = defaultdict(set)
    for (op, dim, fw, version, variant, device), recs in groups.items():
        if dim.startswith(DATA_DTYPE) and recs and all(r.label in ("error", "unsupported") for r in recs):
            out[(op, fw, version, variant, device)].add(dim.removeprefix(DATA_DTYPE))
    return out


def _by_data_dtype(recs: list[Record], refused: set[str] | None = None) -> dict[str, str] | None:
    """Each data dtype's label (its labels ``|``-joined, as a row's are) where the cell's probes come from two or
    more data dtypes that do not all give the same labels; else None. A dtype in ``refused`` (the API refuses such
    data whatever the indices) is :data:`REFUSED`, and left out of the comparison: its ``error`` is the type's, not
    the edge's. A cell with a record that names no data dtype (older results files) is one family: no split."""
    refused = refused or set()
    labels: dict[str, set[str]] = defaultdict(set)
    for rec in recs:
        dtype = data_dtype(rec)
        if dtype is None:
            return None
        if rec.label:
            labels[dtype].add(REFUSED if dtype in refused else rec.label)
    measured = {frozenset(v) for d, v in labels.items() if d not in refused}
    if len(labels) < 2 or (len(measured) <= 1 and not refused & set(labels)):
        return None
    return {dtype: "|".join(sorted(v)) for dtype, v in labels.items()}


def table(records: Iterable[Record], claims_dir: Path | None = None,
          with_documented: bool = False) -> list[dict[str, Any]]:
    """One row per (op, dimension, framework, version, variant, device), with labels combined across probes, as
    dicts with the keys of :class:`gather_scatter_conformance.harness.report.rows.BehaviourRow`.

    With ``with_documented``, rows for documented-only columns follow (harness.report.documented: Caffe2, and TensorRT,
    DirectML or a GPU where these results have none), marked ``measured: False``.
    """
    groups: dict[tuple[str, ...], list[Record]] = defaultdict(list)
    for rec in records:
        if rec.dimension and rec.label:
            key = (rec.op, rec.dimension, rec.framework, rec.framework_version, rec.variant, rec.device)
            groups[key].append(rec)
    claims = _claims(claims_dir or resources.claims_dir())
    refusals = _refused(groups)
    rows: list[BehaviourRow] = []
    for (op, dim, fw, version, variant, device), every in sorted(groups.items()):
        refused = set() if dim.startswith(DATA_DTYPE) else refusals.get((op, fw, version, variant, device), set())
        # A refused dtype's records say the API refuses the type: the cell's label is the other dtypes' (all of
        # them where every dtype is refused).
        recs = [r for r in every if data_dtype(r) not in refused] or every
        labels = sorted({r.label for r in recs if r.label})
        label = labels[0] if len(labels) == 1 else "|".join(labels)
        api = next((r.api for r in recs if r.api), "")
        # Without any call recorded (every probe unsupported), the variant names the API (OpenVINO's Gather-1).
        doc = _documented(claims, fw, op, dim, api or variant, device)
        blog = _documented(claims, f"blog-2020:{_DOCS_OF.get(fw, fw)}", op, dim, "", device)
        agrees_docs = _agrees(doc, labels)
        rows.append(BehaviourRow(
            op=op, dimension=dim, framework=fw, framework_version=version, variant=variant, api=api, device=device,
            label=label,
            # An API that cannot express a probe neither conforms nor deviates on it.
            conforms=all(conforms(op, dim, lab) for lab in labels if lab != "unsupported"),
            documented=doc.label if doc else None, documented_text=doc.text if doc else None,
            documented_source=doc.source if doc else None, agrees_with_docs=agrees_docs,
            documentation=documentation_state(doc, agrees_docs),
            blog_2020=blog.label if blog else None, blog_2020_text=blog.text if blog else None,
            blog_2020_source=blog.source if blog else None, agrees_with_blog=_agrees(blog, labels),
            cases=sorted({r.case for r in recs}),
            by_data_dtype=_by_data_dtype(every, refused),
            **_conversion_fields(recs),
        ))
    if with_documented and claims:
        rows += documented_rows(claims, rows)
    return [row.as_dict() for row in rows]


# What each side of a twin's pair is called: (the parent's, the twin's). Index provenance: the indices a run-time
# input, or a constant; dynamic shapes: compiled for the case's shapes, or for symbolic ones.
# Threads: the parent's intra-op thread count, or the twin's (vocab.variants.THREAD_MODES).
SIDES = {variants.CONSTANT_MODE: ("input", "constant"), variants.DYNAMIC_MODE: ("static", "dynamic"),
         variants.THREADS_MODE: ("one thread", "a thread a core"),
         variants.ONE_THREAD_MODE: ("a thread a core", "one thread")}


def twin_rows(rows: list[dict[str, Any]]) -> list[tuple[dict[str, Any], str, str]]:
    """The measured rows of a twin (``<api>/constant``, ``<api>/<mode>_dynamic``: vocab.variants.twin_of), each
    with its parent variant (``<api>``, ``<api>/<mode>``) and the twin's kind."""
    out = []
    for row in rows:
        if row.get("measured") is False:
            continue
        found = variants.twin_of(row["variant"])
        if found is not None:
            out.append((row, *found))
    return out


def provenance_changes(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Where a twin changes the label (issue #40): each measured twin's row (the case's indices a compile-time
    constant, or its shapes left symbolic) whose label shares no label with its parent ``<api>``'s row (the indices
    a run-time input, the shapes the case's) of the same op, dimension, framework, release and device.

    Labels are compared as sets (a row's label is its probes' labels ``|``-joined), and a change is only a
    disjoint pair: a memory-unsafe cell flips between ``zero`` and ``zero|garbage`` by chance, a duplicate-indices
    cell between ``last-wins|nondeterministic`` and ``last-wins``, and such pairs share a label; a pair with no
    label in common did something else. ``unsupported`` (the API cannot express the case, e.g. an empty constant)
    is no behaviour and is left out of both sets: a row with no other label gives no change. A twin's row without
    its parent gives none either.

    One dict per change, in the rows' order: op, dimension, framework, framework_version, device, variant (the
    parent), twin (its kind: ``constant`` or ``dynamic``), parent_label, twin_label, cases (the probe cases behind
    both rows).
    """
    def cell(row: dict[str, Any], variant: str) -> tuple[str, ...]:
        return row["op"], row["dimension"], row["framework"], row["framework_version"], variant, row["device"]

    by_cell = {cell(r, r["variant"]): r for r in rows if r.get("measured") is not False}
    changes = []
    for row, parent_variant, kind in twin_rows(rows):
        parent = by_cell.get(cell(row, parent_variant))
        if parent is None:
            continue
        given = set(parent["label"].split("|")) - {"unsupported"}
        twin = set(row["label"].split("|")) - {"unsupported"}
        if not given or not twin or given & twin:
            continue
        changes.append({
            "op": row["op"], "dimension": row["dimension"], "framework": row["framework"],
            "framework_version": row["framework_version"], "device": row["device"], "variant": parent_variant,
            "twin": kind, "parent_label": parent["label"], "twin_label": row["label"],
            "cases": sorted({*(parent.get("cases") or []), *(row.get("cases") or [])}),
        })
    return changes


HEADING = "Index provenance, dynamic shapes and threads: labels that change when the indices are a constant, the " \
          "shapes symbolic or the intra-op threads other"


def provenance_text(rows: list[dict[str, Any]]) -> list[str]:
    """The text section of :func:`provenance_changes`: nothing where no twin was measured."""
    if not twin_rows(rows):
        return []
    out = [f"\n{HEADING}"]
    for change in provenance_changes(rows):
        at = "" if change["device"] == "cpu" else f"@{change['device']}"
        given, twin = SIDES[change["twin"]]
        out.append(f"  {change['op']} {change['dimension']}, {change['framework']} {change['framework_version']}:"
                   f"{change['variant']}{at}: {change['parent_label']} ({given}) -> {change['twin_label']} ({twin})")
    if len(out) == 1:
        out.append("  no change")
    return out


def render_text(rows: list[dict[str, Any]]) -> str:
    """Blog-style text tables, one per operator: dimensions down, framework APIs across.

    ``*`` marks a cell that contradicts the framework's documentation, ``?`` one the documentation says nothing
    about, ``†`` one that contradicts the blog's 2020 statement, ``!`` one that differs from the canonical (ONNX)
    behaviour, ``‡`` one whose data dtypes gave different labels (listed under the operator's table). Where
    twins were measured, a last section lists the labels index provenance or dynamic shapes change
    (:func:`provenance_changes`).
    """
    out = []
    by_op: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for row in rows:
        by_op[row["op"]].append(row)
    for op, op_rows in sorted(by_op.items()):
        cols = sorted({(r["framework"], r["variant"], r["device"]) for r in op_rows})
        dims = [d for d in DIMENSIONS if any(r["dimension"] == d for r in op_rows)]
        cell = {(r["dimension"], r["framework"], r["variant"], r["device"]): r for r in op_rows}
        doc_only = {(r["framework"], r["variant"], r["device"]) for r in op_rows if r.get("measured") is False}
        names = [f"{fw}:{v}" + (f"@{dev}" if dev != "cpu" else "") + (" (doc)" if (fw, v, dev) in doc_only else "")
                 for fw, v, dev in cols]
        width = max(12, *(len(n) for n in names)) if names else 12
        out.append(f"\n{op}\n" + f"{'dimension':<22}" + "".join(f"{n[:width]:>{width + 1}}" for n in names))
        splits = []
        for dim in dims:
            line = f"{dim:<22}"
            for fw, v, dev in cols:
                r = cell.get((dim, fw, v, dev))
                text = "-" if r is None else r["label"] + ("!" if r["conforms"] is False else "") + (
                    "*" if r["agrees_with_docs"] is False else "") + (
                    "?" if r.get("documentation") == "undocumented" else "") + (
                    "†" if r["agrees_with_blog"] is False else "") + ("‡" if r.get("by_data_dtype") else "")
                line += f"{text[:width]:>{width + 1}}"
                if r is not None and r.get("by_data_dtype"):
                    splits.append(f"  ‡ {dim}, {names[cols.index((fw, v, dev))]}: "
                                  f"{dtype_split_text(r['by_data_dtype'])}")
            out.append(line)
        out += splits
    out.append("\n! differs from canonical ONNX semantics   * contradicts the framework's documentation   "
               "? undocumented   † contradicts the blog's 2020 table   ‡ labels differ by data dtype   "
               "(doc) documented only, not measured")
    out += provenance_text(rows)
    return "\n".join(out)
