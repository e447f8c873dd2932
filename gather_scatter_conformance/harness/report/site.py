"""The report's site: a page and a JSON file per cell, operator, system and converter path, and the port planner.

A *cell* is one operator × one system's API variant (on one device) × one behaviour dimension: one row of
harness.report.behaviour. Its page lives at a stable, readable path, ``GatherND/openvino/GatherND-8/
negative-indices.html``, with its JSON (harness.report.site_model.Cell) beside it at the same path ending ``.json``.
The pages are plain HTML with a few lines of inline script (a copy button); nothing is fetched. docs/site.md lists
every file.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from packaging.version import Version

from gather_scatter_conformance import adapters
from gather_scatter_conformance.harness.history import store
from gather_scatter_conformance.harness.report import build, severity, site_model, upstream
from gather_scatter_conformance.harness.report.build import system_name
from gather_scatter_conformance.harness.report.claims import api_name
from gather_scatter_conformance.harness.report.drilldown import citation_url
from gather_scatter_conformance.harness.report.rows import Key, cell_key, dtype_groups, row_key
from gather_scatter_conformance.harness.report.severity import SEVERITY
from gather_scatter_conformance.vocab import safe
from gather_scatter_conformance.vocab.dimensions import DIMENSIONS, words

if TYPE_CHECKING:
    from gather_scatter_conformance.vocab.record import Record

_UNSAFE_CHARS = re.compile(r"[^A-Za-z0-9._~@-]+")
MAX_VALUE_CHARS = 2000  # an observed or expected value longer than this is cut on the page (the JSON keeps it)


def slug(text: str) -> str:
    """A path segment: every run of characters outside ``[A-Za-z0-9._~@-]`` becomes one ``-`` (``take/jit`` ->
    ``take-jit``, ``index-dtype:int8`` -> ``index-dtype-int8``), and leading dots go (``..`` -> ``-``): a segment
    made from a record's field is always a plain name (vocab.safe.plain_name), never ``.`` or ``..``."""
    return _UNSAFE_CHARS.sub("-", str(text)).strip("-").lstrip(".").strip("-") or "-"


def cell_url(op: str, system: str, variant: str, dimension: str) -> str:
    """A cell page's path below the site root."""
    return f"{slug(op)}/{slug(system)}/{slug(variant)}/{slug(dimension)}.html"


def under(out: Path, url: str) -> Path:
    """The file a site URL names below ``out``: the one way the site turns a URL into a path. Raises ValueError for
    a URL with a segment that is not a plain name (``..``, an absolute path, an empty segment), which a record's
    field could otherwise have made."""
    parts = url.split("/")
    if not all(safe.plain_name(part) for part in parts):
        raise ValueError(f"not a site path: {url!r}")
    return out.joinpath(*parts)


def _json_url(url: str) -> str:
    return url[: -len(".html")] + ".json"


def commit() -> str | None:
    """The commit that made the site: ``$GITHUB_SHA`` in CI, else the current directory's git HEAD, else None."""
    if os.environ.get("GITHUB_SHA"):
        return os.environ["GITHUB_SHA"]
    try:
        out = subprocess.run(["git", "rev-parse", "HEAD"], capture_output=True, text=True, timeout=10, check=False)
    except (OSError, subprocess.SubprocessError):
        return None
    return out.stdout.strip() or None if out.returncode == 0 else None


@dataclass
class Sources:
    """What the site is built from besides the records: claims, release sweeps and memory-checker evidence."""

    claims: list[Any] = field(default_factory=list)
    history: list[dict[str, Any]] = field(default_factory=list)
    evidence: dict[tuple[str, str, str], dict[str, Any]] = field(default_factory=dict)
    cases: Any = None  # harness.evidence.cells.Cases


def _claim(state: str, label: str | None, dimension: str, text: str | None,
           source: str | None) -> site_model.Claim:
    return site_model.Claim(state=state, label=label, words=words(label, dimension) or None, text=text,
                            source=source, url=citation_url(source))


def _case_result(rec: Record, case: Any, evidence: dict[str, Any] | None) -> site_model.CaseResult:
    from gather_scatter_conformance.harness.evidence.cells import repro_script
    from gather_scatter_conformance.harness.judge.verdict import is_finding

    script = None
    if case is not None and is_finding(rec):
        try:
            script = repro_script(case, rec)
        except Exception:
            script = None
    error = ": ".join(x for x in (rec.error_type, rec.error_message) if x) or None
    if rec.outcome == "crash" and rec.signal:
        error = f"crash ({rec.signal})" + (f": {error}" if error else "")
    return site_model.CaseResult(
        case=rec.case, description=case.spec.description if case else None,
        provenance=case.spec.source if case else None, label=rec.label, verdict=rec.verdict,
        outcome=rec.outcome, status=build.status(rec), error=error, observed=rec.observed,
        expected=rec.expected, distribution=rec.distribution, cached=bool(rec.cached),
        evidence=(evidence or {}).get("reason"), repro=script)


def _history(labels: dict[str, str] | None) -> tuple[list[site_model.Release], str | None]:
    if not labels:
        return [], None
    ordered = sorted(labels, key=Version)
    out = [site_model.Release(release=r, label=labels[r], change=i > 0 and labels[r] != labels[ordered[i - 1]])
           for i, r in enumerate(ordered)]
    since = ordered[-1]
    for r in reversed(ordered):
        if labels[r] != labels[ordered[-1]]:
            break
        since = r
    return out, since


@dataclass
class Site:
    """Everything the site writes, as models: cells (by URL), systems, ports, findings and release histories."""

    cells: dict[str, site_model.Cell]
    systems: dict[str, site_model.System]
    ports: dict[str, site_model.Port]
    findings: list[site_model.Finding]
    histories: dict[str, site_model.History]
    index: site_model.Index


def _finding_of(recs: list[Record]) -> Record | None:
    from gather_scatter_conformance.harness.judge.verdict import is_finding

    for rec in recs:
        if is_finding(rec) or (rec.conversion or {}).get("preservation") == "changed":
            return rec
    return None


def _ref(cell: site_model.Cell) -> site_model.CellRef:
    return site_model.CellRef(url=cell.url, op=cell.op, dimension=cell.dimension, system=cell.system,
                              variant=cell.variant, label=cell.label, severity=cell.severity, conforms=cell.conforms,
                              documentation=cell.documentation.state)


def build_site(records: list[Record], rows: list[dict[str, Any]], sources: Sources,
               generated: str, details: bool = True) -> Site:
    """The site's models from deduplicated records (frameworks' and converter paths'), their measured behaviour rows
    (path rows carry ``preservation``) and the sources. Every cell's URL is unique: a second variant whose name
    slugs to the same segment gets ``-2``. Without ``details``, no repro script or issue text is written (labels
    only: ``gsc port``)."""
    from gather_scatter_conformance.harness.evidence.cells import Cases

    cases = sources.cases or Cases()
    by_key: dict[Key, list[Record]] = defaultdict(list)
    for rec in records:
        if rec.dimension:
            by_key[cell_key(rec)].append(rec)
    hist_by_fw: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for rec in sources.history:
        hist_by_fw[rec["framework"]].append(rec)
    hist_labels = {fw: store.labels(recs) for fw, recs in hist_by_fw.items()}
    measured = [r for r in rows if r.get("measured") is not False]
    sevs = build.severities(measured)
    cells: dict[str, site_model.Cell] = {}
    url_of: dict[Key, str] = {}
    taken: set[str] = set()
    for row in measured:
        key = row_key(row)
        url = cell_url(row["op"], system_name(row["framework"], row["device"]), row["variant"], row["dimension"])
        n = 2
        while url in taken:
            url = cell_url(row["op"], system_name(row["framework"], row["device"]), f"{row['variant']}-{n}",
                           row["dimension"])
            n += 1
        url_of[key] = url
        taken.add(url)
    path_rows: dict[tuple[str, str, str, str], list[dict[str, Any]]] = defaultdict(list)
    for row in measured:
        if row.get("preservation") is not None:
            source = row["framework"].split("~")[0]
            path_rows[(row["op"], row["dimension"], source, row["variant"])].append(row)
    findings = []
    for row, sev in zip(measured, sevs, strict=True):
        key = row_key(row)
        url, dim = url_of[key], row["dimension"]
        wanted = set(row.get("cases") or [])
        recs = [r for r in by_key.get(key, []) if not wanted or r.case in wanted]
        results = [_case_result(r, cases.get(r.case) if details else None,
                                sources.evidence.get((r.case, r.framework, r.variant)))
                   for r in recs]
        history, since = _history(hist_labels.get(row["framework"], {}).get((row["op"], row["variant"],
                                                                              row["device"], dim)))
        is_path = row.get("preservation") is not None
        effects = [] if is_path else [
            site_model.PathEffect(path=p["framework"], target=p["framework"].split("~")[-1],
                                  source_label=p.get("source_label") or "", target_label=p["label"],
                                  preservation=p["preservation"],
                                  url=url_of[row_key(p)])
            for p in path_rows.get((row["op"], dim, row["framework"], row["variant"]), [])]
        issue = None
        first = _finding_of(recs) if details else None
        if first is not None and cases.get(first.case) is not None:
            ev = sources.evidence.get((first.case, first.framework, first.variant))
            script = next((c.repro for c in results if c.case == first.case), None)
            fw_history = hist_by_fw.get(first.framework) or None
            issue = upstream.body(first, cases.get(first.case), script,
                                  upstream.Sources(sources.claims, fw_history, ev))
            doc = upstream.documented(first, sources.claims)
            findings.append(site_model.Finding(url=url, kind=upstream.kind(first, doc),
                                               title=upstream.title(first, doc, ev),
                                               system=system_name(row["framework"], row["device"]), op=row["op"],
                                               dimension=dim))
        cells[url] = site_model.Cell(
            url=url, op=row["op"], dimension=dim, question=row["question"],
            system=system_name(row["framework"], row["device"]), framework=row["framework"],
            version=row["framework_version"], variant=row["variant"], api=row["api"], device=row["device"],
            label=row["label"], words=words(row["label"], dim), canonical=row.get("canonical"),
            canonical_words=words(row.get("canonical"), dim) if row.get("canonical") else "Any single order",
            conforms=row.get("conforms"), severity=sev or "na",
            documentation=_claim(row.get("documentation") or "undocumented", row.get("documented"), dim,
                                 row.get("documented_text"), row.get("documented_source")),
            blog_2020=_claim("agrees" if row.get("agrees_with_blog") else "contradicts", row["blog_2020"], dim,
                             row.get("blog_2020_text"), row.get("blog_2020_source"))
            if row.get("blog_2020") else None,
            cases=results, history=history, since=since, paths=effects,
            source_api=next((r.conversion.get("source_api") for r in recs if r.conversion), None),
            source_label=row.get("source_label"),
            preservation=row.get("preservation"), by_data_dtype=row.get("by_data_dtype"), upstream=issue)
    systems = _systems(cells, hist_labels)
    ports = _ports(cells)
    histories = {fw: site_model.History(
        framework=fw, releases=store.releases(recs), failures=store.failures(recs),
        labels={url_of.get((k[0], k[3], fw, k[1], k[2]), f"{k[0]}/{fw}/{k[1]}/{k[3]}"): v
                for k, v in sorted(hist_labels[fw].items())})
        for fw, recs in sorted(hist_by_fw.items())}
    index = site_model.Index(generated=generated, commit=commit(), records=len(records),
                             cells=[_ref(c) for c in cells.values()], systems=[s.url for s in systems.values()],
                             ports=[p.url for p in ports.values()], findings=findings)
    return Site(cells, systems, ports, findings, histories, index)


def cell_urls(site: Site) -> dict[Key, str]:
    """Each cell page's address by (op, dimension, framework, variant, device)."""
    return {(c.op, c.dimension, c.framework, c.variant, c.device): url for url, c in site.cells.items()}


def _systems(cells: dict[str, site_model.Cell], hist_labels: dict[str, Any]) -> dict[str, site_model.System]:
    by_system: dict[str, list[site_model.Cell]] = defaultdict(list)
    for cell in cells.values():
        by_system[cell.system].append(cell)
    out = {}
    for name, group in sorted(by_system.items()):
        variants: dict[str, list[str]] = defaultdict(list)
        sev: dict[str, int] = defaultdict(int)
        for cell in group:
            if cell.variant not in variants[cell.op]:
                variants[cell.op].append(cell.variant)
            sev[cell.severity] += 1
        fw = group[0].framework
        out[name] = site_model.System(
            name=name, url=f"systems/{slug(name)}.html", kind="path" if adapters.is_path(fw) else "framework",
            versions=sorted({c.version for c in group}), devices=sorted({c.device for c in group}),
            variants=dict(variants), severities=dict(sev),
            history=f"api/history/{slug(fw)}.json" if fw in hist_labels else None,
            cells=[_ref(c) for c in group])
    return out


def _differs(cell: site_model.Cell) -> bool:
    """A path cell whose target does something else than its source: a changed label, or a conversion that failed
    where the source ran (a source that raises fails to convert too, and nothing changes for the port)."""
    return (cell.preservation or "preserved") != "preserved" and cell.label != cell.source_label


def _ports(cells: dict[str, site_model.Cell]) -> dict[str, site_model.Port]:
    """One port per converter path × source API variant: every dimension whose behaviour the conversion did not
    preserve, with both labels and the path's verdict."""
    groups: dict[tuple[str, str], list[site_model.Cell]] = defaultdict(list)
    for cell in cells.values():
        if cell.preservation is not None:
            groups[(cell.framework, cell.variant)].append(cell)
    natives = {(c.framework, c.variant, c.op, c.dimension): c for c in cells.values() if c.preservation is None}
    out = {}
    for (path, variant), group in sorted(groups.items()):
        source, target = path.split("~")[0], path.split("~")[-1]
        url = f"port/{slug(path)}/{slug(variant)}.html"
        diffs = []
        for cell in sorted(group, key=lambda c: (build.OPS.index(c.op) if c.op in build.OPS else 99, c.dimension)):
            if not _differs(cell):
                continue
            native = natives.get((source, variant, cell.op, cell.dimension))
            diffs.append(site_model.Difference(
                op=cell.op, dimension=cell.dimension, question=cell.question,
                source_label=cell.source_label or "", target_label=cell.label,
                preservation="|".join(sorted({verdict(p) for p in (cell.preservation or "").split("|")})),
                cases=[c.case for c in cell.cases], source_url=native.url if native else None, target_url=cell.url))
        out[url] = site_model.Port(url=url, source=source, source_api=_api_name(group[0]), source_variant=variant,
                                   target=target, path=path, compared=len(group), differences=diffs)
    return out


def verdict(preservation: str) -> str:
    """A preservation verdict without the converter's message: ``conversion-failed: ConverterError: ...`` ->
    ``conversion-failed (ConverterError)``; ``changed: ok -> error`` stays."""
    if preservation.startswith("changed"):
        return preservation
    kind, _, rest = preservation.partition(": ")
    error = rest.split(":", 1)[0].strip()
    return f"{kind} ({error})" if error and " " not in error else kind


def _api_name(cell: site_model.Cell) -> str:
    """The source API as a porting engineer names it (``tf.gather``), from the path's recorded source call."""
    call = cell.source_api or cell.api
    if " return " in call:  # a helper written out in the call's comment: the API is what it returns
        call = call.rsplit(" return ", 1)[1]
    return api_name(call) or cell.variant


def port_api_name(api: str | None, fallback: str) -> str:
    """The source API a port is titled by: the callable the call names (``tf.gather``, ``Gather-7``), else
    ``fallback`` (the variant): an expression (numpy's ``data[np.arange(...), indices]``) names no callable, and a
    title cut at its first bracket named nothing (issue #39)."""
    name = api_name(api)
    return name if name and re.fullmatch(r"[A-Za-z_][\w.]*(-\d+)?", name) else fallback


def compare(cells: Iterable[site_model.Cell], source: str, target: str) -> site_model.Port:
    """A port between two systems' own APIs (``framework[:variant]`` each): every operator × dimension both measured
    where their labels differ. A side with several variants of one operator compares each of its labels."""
    src_fw, _, src_var = source.partition(":")
    dst_fw, _, dst_var = target.partition(":")
    cells = [c for c in cells if c.preservation is None]
    side_a = [c for c in cells if c.system == src_fw and (not src_var or c.variant == src_var)]
    side_b = [c for c in cells if c.system == dst_fw and (not dst_var or c.variant == dst_var)]
    by_b: dict[tuple[str, str], list[site_model.Cell]] = defaultdict(list)
    for c in side_b:
        by_b[(c.op, c.dimension)].append(c)
    diffs, compared = [], 0
    for a in side_a:
        for b in by_b.get((a.op, a.dimension), []):
            compared += 1
            if a.label != b.label:
                diffs.append(site_model.Difference(
                    op=a.op, dimension=a.dimension, question=a.question, source_label=f"{a.variant}: {a.label}",
                    target_label=f"{b.variant}: {b.label}", cases=sorted({c.case for c in a.cases + b.cases}),
                    source_url=a.url, target_url=b.url))
    name = port_api_name(side_a[0].api if side_a else None, src_var or (side_a[0].variant if side_a else source))
    # No page exists for a port between two systems' own APIs (the site makes one per converter path): no url.
    return site_model.Port(url="", source=src_fw, source_api=name, source_variant=src_var or "*", target=target,
                           compared=compared, differences=diffs)


def port_between(files: list[str], source: str, target: str) -> site_model.Port:
    """``gsc port``: the port from ``source`` (``framework[:variant]``) to ``target`` (``framework[:variant]``, or a
    converter path ``a~b~c``, whose measured verdicts it reads) in the results files. ValueError where a side has no
    cell."""
    from gather_scatter_conformance.harness.report.behaviour import table
    from gather_scatter_conformance.harness.run.records import read

    records = build.dedupe(read(files))
    rows = [r for r in table(records) if r.get("measured") is not False]
    built = build_site(records, rows, Sources(), "", details=False)
    src_fw, _, src_var = source.partition(":")
    if adapters.is_path(target):
        if not target.startswith(f"{src_fw}~"):
            raise ValueError(f"{target} converts from {target.split('~')[0]}, not {src_fw}")
        ports = [p for p in built.ports.values() if p.path == target and (not src_var or p.source_variant == src_var)]
        if not ports:
            raise ValueError(f"no record of {target}{' from ' + src_var if src_var else ''} in {', '.join(files)}")
        if len(ports) == 1:
            return ports[0]
        merged = ports[0].model_copy(update={
            "source_variant": "*", "compared": sum(p.compared for p in ports),
            "differences": [d for p in ports for d in p.differences]})
        return merged
    systems = {c.system for c in built.cells.values()}
    for side in (source, target):
        if side.partition(":")[0] not in systems:
            raise ValueError(f"no cell of {side.partition(':')[0]} in {', '.join(files)} (systems: "
                             f"{', '.join(sorted(systems))})")
    return compare(built.cells.values(), source, target)


def port_text(port: site_model.Port) -> str:
    """A port as a markdown table, as ``gsc port`` prints it."""
    via = f" via {port.path.split('~')[1]}" if port.path else ""
    lines = [f"# Porting {port.source_api} ({port.source} {port.source_variant}) to {port.target}{via}", "",
             f"{len(port.differences)} of {port.compared} behaviour dimensions measured on both sides differ.", ""]
    if port.differences:
        lines += ["| operator | dimension | source | target |" + (" verdict |" if port.path else ""),
                  "|---|---|---|---|" + ("---|" if port.path else "")]
        for d in port.differences:
            lines.append(f"| {d.op} | {d.dimension} | {d.source_label} | {d.target_label} |"
                         + (f" {d.preservation} |" if port.path else ""))
        lines.append("")
    return "\n".join(lines) + "\n"


def _dump(model: Any, out: Path, url: str) -> Path:
    path = under(out, url)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(model.model_dump_json(exclude_none=False) + "\n", encoding="utf-8")
    return path


def write_json(site: Site, out: Path) -> list[Path]:
    """The JSON API: a file beside each page, ``api/index.json``, ``api/history/<framework>.json`` and
    ``api/schema.json``."""
    written = [_dump(cell, out, _json_url(url)) for url, cell in site.cells.items()]
    written += [_dump(model, out, _json_url(model.url)) for model in [*site.systems.values(), *site.ports.values()]]
    written += [_dump(hist, out, f"api/history/{slug(fw)}.json") for fw, hist in site.histories.items()]
    written.append(_dump(site.index, out, "api/index.json"))
    written.append(out / "api" / "schema.json")
    written[-1].write_text(json.dumps(site_model.schema(), indent=1) + "\n", encoding="utf-8")
    return written


def label_severity(op: str, dimension: str, label: str) -> str:
    """The severity of a label on an operator's dimension, as the behaviour tables colour it."""
    from gather_scatter_conformance.harness.judge.dimensions import conforms

    shown = build.shown_label(label)
    return severity.of_label(shown, all(conforms(op, dimension, p) for p in shown.split("|")), op, dimension)


def summary(site: Site, ops: list[str]) -> dict[str, Any]:
    """The landing page's operator × system table: per system (converter paths after frameworks) and operator, the
    cells by severity, the worst first, each linking to the system page's table of that operator."""
    order = ("unsafe", "wrong", "alt", "ok", "na")
    systems = sorted(site.systems.values(), key=lambda s: (s.kind != "framework", s.name))
    rows = []
    for system in systems:
        cells = []
        for op in ops:
            counts = {sev: 0 for sev in order}
            for ref in system.cells:
                if ref.op == op:
                    counts[ref.severity] += 1
            n = sum(counts.values())
            cells.append(None if not n else {
                "worst": next(s for s in order if counts[s]), "n": n,
                "parts": [(s, counts[s]) for s in order[:3] if counts[s]],
                "href": f"{system.url}#{slug(op)}"})
        rows.append({"name": system.name, "kind": system.kind, "href": system.url, "cells": cells})
    return {"ops": ops, "rows": rows, "names": [s.name for s in systems]}


def _short(value: Any) -> str:
    text = json.dumps(value) if value is not None else "—"
    return text if len(text) <= MAX_VALUE_CHARS else text[:MAX_VALUE_CHARS] + f"… ({len(text)} characters)"


def _dims(op: str, cells: Iterable[site_model.Cell]) -> list[dict[str, Any]]:
    order = list(DIMENSIONS)
    present = {c.dimension: c for c in cells if c.op == op}
    return [{"dim": d, "question": present[d].question, "canonical": present[d].canonical or "any order"}
            for d in sorted(present, key=lambda d: order.index(d) if d in order else len(order))]


def grid(op: str, cells: list[site_model.Cell], title: str, head: str, link_systems: bool = True) -> dict[str, Any]:
    """One operator's table of cells: a row per (system, variant), a column per dimension."""
    dims = _dims(op, cells)
    col = {d["dim"]: i for i, d in enumerate(dims)}
    rows: dict[tuple[str, str], dict[str, Any]] = {}
    for c in cells:
        if c.op != op:
            continue
        row = rows.setdefault((c.system, c.variant), {
            "system": c.system, "variant": c.variant, "cells": [None] * len(dims),
            "href": f"systems/{slug(c.system)}.html" if link_systems else None})
        row["cells"][col[c.dimension]] = c
    return {"id": slug(title), "title": title, "head": head, "dims": dims,
            "rows": [rows[k] for k in sorted(rows)]}


class Pages:
    """Renders the site's pages with the report's Jinja environment (autoescaped). A framework's page also shows
    its release history (``history``: harness.report.history.section) and each system's page its delegation rows
    (``delegation``: harness.report.delegation.table)."""

    def __init__(self, site: Site, env: Any, ops: list[str], history: dict[str, Any] | None = None,
                 delegation: list[dict[str, Any]] | None = None) -> None:
        self.site, self.env, self.ops = site, env, ops
        self.history = {f["framework"]: f for f in (history or {}).get("frameworks", [])}
        self.delegation: dict[str, list[dict[str, Any]]] = defaultdict(list)
        for row in delegation or []:
            self.delegation[row["system"]].append(row)

    def _render(self, out: Path, url: str, template: str, crumbs: list[tuple[str, str | None]],
                **ctx: Any) -> Path:
        depth = url.count("/")
        path = under(out, url)
        path.parent.mkdir(parents=True, exist_ok=True)
        json_url = url.rsplit("/", 1)[-1][: -len(".html")] + ".json" if ctx.pop("with_json", True) else None
        path.write_text(self.env.get_template(template).render(
            root="../" * depth, ops=self.ops, sym=SEVERITY, crumbs=crumbs, json_url=json_url, **ctx),
            encoding="utf-8")
        return path

    def write(self, out: Path) -> list[Path]:
        """Every page: cells, operators, systems (paths among them), ports and their indexes."""
        site, written = self.site, []
        natives = [c for c in site.cells.values() if c.preservation is None]
        for url, c in site.cells.items():
            dist: dict[str, int] = defaultdict(int)
            for r in c.cases:
                for label, n in (r.distribution or {}).items():
                    dist[label] += n
            h_sev = [label_severity(c.op, c.dimension, h.label) for h in c.history]
            written.append(self._render(
                out, url, "site/cell.html.j2",
                [(c.op, f"{slug(c.op)}/index.html"), (c.system, f"systems/{slug(c.system)}.html"), (c.variant, None),
                 (c.dimension, None)],
                title=f"{c.op} {c.system} {c.variant} {c.dimension}", c=c, h_sev=h_sev,
                by_dtype=dtype_groups(c.by_data_dtype) if c.by_data_dtype else [],
                distribution=", ".join(f"{k} {v}" for k, v in sorted(dist.items(), key=lambda kv: -kv[1])),
                values=[(_short(r.observed), _short(r.expected)) for r in c.cases]))
        for op in self.ops:
            cells = [c for c in natives if c.op == op]
            if not cells:
                continue
            written.append(self._render(
                out, f"{slug(op)}/index.html", "site/table.html.j2", [(op, None)], with_json=False, title=op,
                heading=f"{op}: every system's behaviour",
                intro="A row per API variant, a column per behaviour dimension; each cell links to its page: the "
                      "label, its cases with evidence and repro, the documentation, the history and the converter "
                      "paths.",
                facts=[], grids=[grid(op, cells, op, "API")], links=[], links_title=""))
        for name, system in site.systems.items():
            cells = [site.cells[r.url] for r in system.cells]
            ports = [p for p in site.ports.values() if p.path == name]
            facts = [("kind", system.kind), ("versions", ", ".join(system.versions)),
                     ("devices", ", ".join(system.devices)),
                     ("cells", ", ".join(f"{n} {SEVERITY[s][1].split(':')[0]}" for s, n in
                                         sorted(system.severities.items())))]
            written.append(self._render(
                out, system.url, "site/table.html.j2", [("Systems", "systems/index.html"), (name, None)],
                title=name, heading=name, intro="", facts=facts,
                grids=[grid(op, cells, op, "API variant", link_systems=False) for op in self.ops
                       if any(c.op == op for c in cells)],
                links=[(f"Port {p.source_api} ({p.source_variant}) to {p.target}", p.url,
                        f"{len(p.differences)} of {p.compared} change") for p in ports],
                links_title="Port planner", delegated=self.delegation.get(name),
                releases=self.history.get(name) if system.kind == "framework" else None))
        for name in sorted(set(self.history) - set(site.systems)):  # swept releases, not in this run
            written.append(self._render(
                out, f"systems/{slug(name)}.html", "site/table.html.j2", [("Systems", "systems/index.html"),
                                                                          (name, None)],
                with_json=False, title=name, heading=name, intro="Not in this run: its release history only.",
                facts=[], grids=[], links=[], links_title="", releases=self.history[name]))
        written.append(self._render(
            out, "systems/index.html", "site/table.html.j2", [("Systems", None)], with_json=False, title="Systems",
            heading="Systems: frameworks, runtimes and converter paths", intro="", facts=[], grids=[],
            links=[(s.name, s.url, f"{s.kind}; {', '.join(s.versions)}; {len(s.cells)} cells")
                   for s in site.systems.values()], links_title="Systems"))
        for url, port in site.ports.items():
            written.append(self._render(out, url, "site/port.html.j2", [("Port planner", "port/index.html"),
                                                                        (port.path or port.target, None)],
                                        title=f"Port {port.source_api} to {port.target}", port=port))
        written.append(self._render(
            out, "port/index.html", "site/table.html.j2", [("Port planner", None)], with_json=False,
            title="Port planner", heading="Port planner: what changes if I move from X to Y?",
            intro="One page per converter path and source API: every behaviour dimension the conversion did not "
                  "preserve, with both labels and the cases. For two systems' own APIs, run gsc port RESULTS --from "
                  "SYSTEM[:VARIANT] --to SYSTEM[:VARIANT].",
            facts=[], grids=[],
            links=[(f"{p.source_api} ({p.source}, {p.source_variant}) → {p.target} via {(p.path or '').split('~')[1]}",
                    url, f"{len(p.differences)} of {p.compared} dimensions change")
                   for url, p in sorted(site.ports.items(), key=lambda kv: (kv[1].source_api, kv[1].target))],
            links_title="Ports measured"))
        return written
