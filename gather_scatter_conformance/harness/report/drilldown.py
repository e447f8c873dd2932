"""Evidence behind every report cell, packed once into a compact JSON blob that the page renders on click.

The page embeds one ``<script type="application/json">`` element; its text comes from :func:`embed_json`, which
escapes ``<``, ``>`` and ``&`` (and U+2028/U+2029) as JSON ``\\u`` escapes, so no string from a record — an error
message containing ``</script>`` — can end the element. The page's script inserts every value with
``textContent``. Shared text (cases' inputs and repro prefix, native calls, error messages) is stored once.
"""

from __future__ import annotations

import json
import math
from typing import TYPE_CHECKING, Any

from markupsafe import Markup

from gather_scatter_conformance.harness.cases.load import Case
from gather_scatter_conformance.harness.evidence.cells import Cases
from gather_scatter_conformance.harness.run.repro import baseline_label, script_body, script_head, snippet

if TYPE_CHECKING:
    from gather_scatter_conformance.vocab.record import Record

PAGE_SCRIPT_ELEMENTS = 20_000  # input elements of a case up to which the page carries its repro scripts' inputs
MAX_TEXT = 4000  # characters of an error message or reason kept in the page


def _finite(x: Any) -> Any:
    """JSON has no NaN or Infinity: spell them as strings (the page shows them as such)."""
    if isinstance(x, float) and not math.isfinite(x):
        return "NaN" if math.isnan(x) else ("Infinity" if x > 0 else "-Infinity")
    if isinstance(x, dict):
        return {k: _finite(v) for k, v in x.items()}
    if isinstance(x, list | tuple):
        return [_finite(v) for v in x]
    return x


def embed_json(obj: Any) -> Markup:
    """JSON text that is safe inside a ``<script type="application/json">`` element (no ``<``, ``>`` or ``&``)."""
    try:
        text = json.dumps(obj, ensure_ascii=False, separators=(",", ":"), default=str, allow_nan=False)
    except ValueError:  # a NaN or infinity somewhere
        text = json.dumps(_finite(obj), ensure_ascii=False, separators=(",", ":"), default=str)
    for ch, esc in (("&", "\\u0026"), ("<", "\\u003c"), (">", "\\u003e"), ("\u2028", "\\u2028"),
                    ("\u2029", "\\u2029")):
        text = text.replace(ch, esc)
    return Markup(text)  # safe by construction: the escaping above leaves no markup characters


def _script_body(case: Case | None, rec: Record) -> str | None:
    """The finding's own part of its repro script (harness.run.repro), or None: not a finding, or no call
    recorded."""
    if case is None or not rec.native:
        return None
    try:
        return script_body(case, rec, baseline_label(rec))
    except Exception:  # a case that no longer builds still shows its record
        return None


class Strings:
    """A string table: each distinct text stored once in the blob, referred to by index."""

    def __init__(self) -> None:
        self.items: list[str] = []
        self._index: dict[str, int] = {}

    def __call__(self, text: Any) -> int | None:
        if text is None or text == "":
            return None
        text = str(text)
        if len(text) > MAX_TEXT:
            text = text[:MAX_TEXT] + f"… ({len(text) - MAX_TEXT} more characters)"
        if text not in self._index:
            self._index[text] = len(self.items)
            self.items.append(text)
        return self._index[text]


def case_entry(nodeid: str, op: str, case: Case | None, first: Record,
               finding: bool = False) -> dict[str, Any]:
    """What every cell of one case shares: inputs, attributes, provenance, expected value, repro prefix; with
    ``finding`` (some record of the case is one) also the head of its repro scripts."""
    entry: dict[str, Any] = {"id": nodeid, "op": op, "exp": _finite(first.expected)}
    if case is None:
        entry["missing"] = "case file not found in this checkout: inputs and repro unavailable"
        return entry
    try:
        inputs = case.inputs()
        entry["inputs"] = [[k, str(v.dtype), list(v.shape)] for k, v in inputs.items()]
        entry["repro"] = snippet(case, "")  # the page appends the record's native call, as snippet(case, api) does
        if finding:  # a finding's repro script: this, then the record's own part
            entry["rhead"] = script_head(case, PAGE_SCRIPT_ELEMENTS)
    except Exception as exc:  # a case that no longer builds still shows its records
        entry["missing"] = f"inputs unavailable: {exc}"
    entry.update({
        "attrs": _finite(case.attrs), "source": case.spec.source, "desc": case.spec.description, "line": case.line,
        "tags": list(case.tags), "omit": list(case.spec.omit),
        "caveat": f"{case.spec.caveat.kind}: {case.spec.caveat.why}" if case.spec.caveat else None,
    })
    return entry


def placement_text(rec: Record) -> str | None:
    """Which execution provider ran each node (an onnxruntime record's ``providers``), and whether one fell back:
    ``Gather: CPUExecutionProvider (fallback)``; None for a record that does not say."""
    if not rec.providers:
        return None
    nodes = ", ".join(f"{op}: {provider}" for op, provider in rec.providers.items())
    return nodes + (" (fallback: not every node ran on the first provider asked for)" if rec.fallback else "")


def blob(records: list[Record], cols: list[str], behaviour: list[dict[str, Any]],
         agreement: dict[str, Any], cases: Cases | None = None,
         sevs: list[str | None] | None = None) -> dict[str, Any]:
    """The page's data: columns, cases, records (compact) and behaviour rows, with a shared string table, and the
    agreement tables (harness.report.agreement.agreement) as ``{"fws", "ops", "tables"}``, each table its rows'
    cell lists."""
    cases = cases or Cases()
    strings = Strings()
    col_index = {c: i for i, c in enumerate(cols)}
    case_ix: dict[str, int] = {}
    case_list: list[dict[str, Any]] = []
    recs = []
    from gather_scatter_conformance.harness.report.build import column, row_column, status

    with_findings = {r.case for r in records if r.native}
    for rec in records:
        nodeid = rec.case
        if nodeid not in case_ix:
            case_ix[nodeid] = len(case_list)
            case_list.append(case_entry(nodeid, rec.op, cases.get(nodeid), rec, nodeid in with_findings))
        item = {
            "c": case_ix[nodeid], "k": col_index.get(column(rec)), "s": status(rec), "o": rec.outcome,
            "v": rec.verdict, "ver": strings(rec.framework_version), "api": strings(rec.api),
            "r": strings(rec.reason), "et": strings(rec.error_type),
            "em": strings(rec.error_message), "sig": rec.signal, "obs": _finite(rec.observed),
            "od": rec.observed_dtype, "osh": rec.observed_shape, "mm": rec.mismatches,
            "mae": _finite(rec.max_abs_err), "fm": _finite(rec.first_mismatches) or None,
            "kd": strings(rec.known_deviation), "dim": rec.dimension, "lab": rec.label,
            "dur": rec.duration_s, "ext": rec.extension, "dk": rec.deviation,
            "scr": strings(_script_body(cases.get(nodeid), rec)),
            "pv": strings(placement_text(rec)),
            # Most records are inside the spec: the page says so by default, and stores only the exceptions.
            "sp": strings(rec.spec) if rec.spec != "inside" else None,
            "ca": 1 if rec.cached else None,  # reused from the result cache (harness.run.cache)
        }
        recs.append({k: v for k, v in item.items() if v is not None})
    rec_of = {(r.case, column(r)): i for i, r in enumerate(records)}
    if sevs is None:  # harness.report.page passes the severities it computed once for the whole page
        from gather_scatter_conformance.harness.report.build import severities

        sevs = severities(behaviour)
    beh = [_behaviour_entry(r, col_index.get(row_column(r)), strings,
                            [rec_of[(c, row_column(r))] for c in r.get("cases", []) if (c, row_column(r)) in rec_of],
                            sev)
           for r, sev in zip(behaviour, sevs, strict=True)]
    return {"cols": cols, "cases": case_list, "recs": recs, "beh": beh, "str": strings.items,
            "agree": {"fws": agreement["frameworks"], "ops": agreement["ops"],
                      "tables": [[row["cells"] for row in table["rows"]] for table in agreement["tables"]]}}


def _behaviour_entry(r: dict[str, Any], k: int | None, strings: Strings, recs: list[int],
                     sev: str | None) -> dict[str, Any]:
    """A behaviour cell's evidence: measured, canonical, documented and blog labels (with citations), its probes,
    its severity and documentation state. Texts shared by many cells go through the string table."""
    from gather_scatter_conformance.harness.report.build import words
    from gather_scatter_conformance.harness.report.severity import SEVERITY

    dim = r["dimension"]
    entry = {
        "op": r["op"], "dim": dim, "q": strings(r.get("question")), "k": k, "ver": strings(r.get("framework_version")),
        "api": strings(r.get("api")), "lab": r["label"], "w": words(r["label"], dim), "can": r.get("canonical"),
        "cw": words(r.get("canonical"), dim) if r.get("canonical") else "Any single order",
        "conf": r.get("conforms"), "sev": sev, "sevw": SEVERITY[sev][1] if sev else None,
        "ds": r.get("documentation"),
        "doc": r.get("documented"), "dw": words(r.get("documented"), dim), "dtext": strings(r.get("documented_text")),
        "dsrc": strings(r.get("documented_source")), "dhref": strings(citation_url(r.get("documented_source"))),
        "adoc": r.get("agrees_with_docs"),
        "blog": r.get("blog_2020"), "bw": words(r.get("blog_2020"), dim), "btext": strings(r.get("blog_2020_text")),
        "bsrc": strings(r.get("blog_2020_source")), "bhref": strings(citation_url(r.get("blog_2020_source"))),
        "ablog": r.get("agrees_with_blog"), "recs": recs,
        "only": r.get("doc_only") if r.get("measured") is False else None,
    }
    return {key: v for key, v in entry.items() if v is not None and v != ""}


def citation_url(source: str | None) -> str | None:
    """A link for a citation: a URL as is, ``owner/repo path @ ref`` as its GitHub blob URL, else None."""
    if not source:
        return None
    source = source.strip()
    if source.startswith(("https://", "http://")) and " " not in source:
        return source
    parts = source.split()
    if len(parts) == 4 and parts[2] == "@" and parts[0].count("/") == 1:
        return f"https://github.com/{parts[0]}/blob/{parts[3]}/{parts[1]}"
    return None
