"""The compatibility report page: ``gsc report RESULTS... --out DIR [--baseline PREVIOUS...]``.

Writes ``DIR/index.html`` (the landing page: inline CSS and JS, nothing fetched from elsewhere), its evidence beside
it (``DIR/report-data.js``, loaded on the first drill-down), ``DIR/behaviour.json`` (the behaviour rows of
harness.report.behaviour.table), ``DIR/provenance.json`` (the labels a constant or dynamic-shapes twin changes:
harness.report.behaviour.provenance_changes), ``DIR/matrix.csv`` (case × framework:variant → status) and the site
(harness.report.site: a page and a JSON file per cell, operator, system and port). See docs/report.md and
docs/site.md.
"""

from __future__ import annotations

import datetime as _dt
import json
import platform
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import jinja2

from gather_scatter_conformance.harness.evidence.cells import Cases
from gather_scatter_conformance.harness.history import store
from gather_scatter_conformance.harness.report import (
    build,
    conversion,
    delegation,
    drilldown,
    faults,
    regressions,
    severity,
    unsafe,
)
from gather_scatter_conformance.harness.report.agreement import agreement
from gather_scatter_conformance.harness.report.behaviour import provenance_changes
from gather_scatter_conformance.harness.report.findings import findings
from gather_scatter_conformance.harness.report.history import section as history_section
from gather_scatter_conformance.harness.report.rows import Key

if TYPE_CHECKING:
    from gather_scatter_conformance.vocab.record import Record

TEMPLATES = Path(__file__).resolve().parent / "templates"
# The page's evidence (records, cases, behaviour cells), beside it: the page loads it on the first drill-down.
DATA_FILE = "report-data.js"


def _records(paths: Sequence[str | Path]) -> list[Record]:
    from gather_scatter_conformance.harness.run.records import read

    return build.dedupe(read(paths))


def _behaviour(records: list[Record], claims_dir: Path | None) -> list[dict[str, Any]]:
    from gather_scatter_conformance.harness.report.behaviour import table

    return table(records, claims_dir, with_documented=True)


def _claims(claims_dir: Path | None) -> list[Any]:
    from gather_scatter_conformance import resources
    from gather_scatter_conformance.harness.report.claims import load_claims

    directory = claims_dir or resources.claims_dir()
    return load_claims(directory) if directory.exists() else []  # as the behaviour table: no claims, no quotes


def _slug(text: str) -> str:
    from gather_scatter_conformance.harness.report.site import slug

    return slug(text)


def environment() -> jinja2.Environment:
    """The page's Jinja environment: autoescaping on for every template (framework text is never marked safe)."""
    env = jinja2.Environment(
        loader=jinja2.FileSystemLoader(str(TEMPLATES)),
        autoescape=jinja2.select_autoescape(default=True, default_for_string=True),
        trim_blocks=True,
        lstrip_blocks=True,
        undefined=jinja2.StrictUndefined,
    )
    env.filters["pct"] = lambda x: "" if x is None else f"{100 * x:.0f}%"
    env.filters["words"] = build.words
    env.filters["slug"] = _slug
    return env


def context(records: list[Record], rows: list[dict[str, Any]],
            baseline: tuple[list[Record], list[dict[str, Any]]] | None = None,
            history: list[dict[str, Any]] | None = None,
            conversions: list[Record] | None = None,
            evidence: dict[tuple[str, str, str], dict[str, Any]] | None = None,
            cell_urls: dict[Key, str] | None = None,
            generated: str | None = None, cases: Cases | None = None) -> dict[str, Any]:
    """Everything the template needs, from deduplicated records of the frameworks' own APIs, their behaviour rows,
    the previous run's records and rows (``baseline``), release-sweep records (``history``), converter paths'
    records (``conversions``, the Conversion section), memory-checker evidence (``evidence``, by case, framework
    and variant: harness.report.unsafe.load_evidence), the site's cell pages (``cell_urls``:
    harness.report.site.cell_urls), the time the report was made (``generated``, ISO; now when not given) and where
    cases are found (``cases``: the results' snapshot, harness.evidence.cells.Cases; default: on disk)."""
    cases = cases or Cases()
    df = build.frame(records)
    measured_cols = build.columns(df)
    doc_cols = build.documented_columns(rows)
    cols = measured_cols + doc_cols
    col_index = {c["col"]: i for i, c in enumerate(cols)}
    # The Frameworks filter lists the systems these results measured; a documented-only column's framework is not
    # one (its rows are folded under each behaviour table, and carry no framework class unless it was measured).
    fws = sorted({c["framework"] for c in measured_cols})
    agree = agreement(records, df)
    ops = [o for o in build.OPS if o in set(df["op"])]
    changes = build.changes(rows, baseline[1], records, baseline[0]) if baseline else None
    hist = history_section(history or [])
    sevs = build.severities(rows)
    scls = {s: f"sev-{v}" for s, v in severity.STATUS.items()}  # a result status's severity class
    delegated = delegation.table([*records, *(conversions or [])])
    conv = conversion.section(conversions or [], cases, cell_urls)
    behaviour = build.behaviour_tables(rows, col_index, sevs)
    data = drilldown.blob(records, [c["col"] for c in cols], rows, agree, cases, sevs=sevs)
    data["conv"] = conv["details"] if conv else []  # the Conversion cells' drill-downs
    return {
        "generated": generated or now(),
        "generator": {"python": platform.python_version(), "machine": platform.node(),
                      "platform": platform.platform(terse=True)},
        "head": build.header(records),
        "ops": ops,
        "all_ops": ", ".join(build.OPS[:-1]) + " and " + build.OPS[-1],  # the vocabulary's operators, in order
        "n_cases": int(df["case"].nunique()),
        "op_index": {o: i for i, o in enumerate(ops)},
        "fws": fws,
        "fw_index": {f: i for i, f in enumerate(fws)},
        "cols": cols,
        "measured_cols": len(measured_cols),
        "measured_fws": len(fws),
        "doc_cols": {c["framework"] + ("" if "@" not in c["variant"] else "@" + c["variant"].split("@")[1]):
                     c["doc_only"] for c in doc_cols},
        "behaviour": behaviour,
        "provenance": build.provenance(rows, cell_urls),
        "doc_rows": sum(len(t["doc_rows"]) for t in behaviour),
        "matrices": build.matrices(df, col_index),
        "counts": build.counts(df),
        "dtypes": build.dtype_matrix(rows),
        "agreement": agree,
        "changes": changes,
        "history": hist,
        "findings": findings(records, rows, sevs, changes, hist),
        "unsafe": unsafe.section(records, evidence or {}),
        "conversion": conv,
        "harness_faults": faults.listing([*records, *(conversions or [])]),
        "delegation": delegation.by_system(delegated),
        "delegated": delegated,
        "regressions": regressions.table([*records, *(conversions or [])], cases),
        "severity": severity.SEVERITY,
        "statuses": build.STATUSES,
        "glyph": build.GLYPH,
        "scls": scls,
        # The same tables for the page's script, which draws matrices and evidence (written once, here).
        "classes": drilldown.embed_json({"scls": scls, "glyph": build.GLYPH,
                                         "sev": {k: v[0] for k, v in severity.SEVERITY.items()},
                                         "conv": conversion.STATUS}),
        "blob": drilldown.embed_json(data),
        "data_src": DATA_FILE,
    }


def now() -> str:
    """The current UTC time as the report states it (ISO, seconds); ``$SOURCE_DATE_EPOCH`` where it is set, as
    reproducible builds set it (the same results then give the same bytes)."""
    import os

    epoch = os.environ.get("SOURCE_DATE_EPOCH", "")
    when = _dt.datetime.fromtimestamp(int(epoch), _dt.UTC) if epoch.isdigit() else _dt.datetime.now(_dt.UTC)
    return when.isoformat(timespec="seconds")


def render(ctx: dict[str, Any]) -> str:
    return environment().get_template("report.html.j2").render(**ctx)


def matrix_csv(records: list[Record], path: Path) -> None:
    """case × framework:variant[@device] → conforms | deviates | error | crash | timeout | n/a (empty: not run)."""
    df = build.frame(records)
    if df.empty:
        path.write_text("case,op\n")
        return
    cols = [c["col"] for c in build.columns(df)]
    wide = df.pivot_table(index=["case", "op"], columns="col", values="status", aggfunc="last")
    wide = wide.reindex(columns=cols).reindex(list(dict.fromkeys(zip(df["case"], df["op"], strict=True))))
    wide.columns.name = None
    wide.to_csv(path)


def generate(results: Sequence[str | Path], out: str | Path, baseline: Sequence[str | Path] = (),
             claims_dir: Path | None = None, history_dir: Path | None = None,
             evidence: Sequence[str | Path] = (), with_site: bool = True) -> dict[str, Path]:
    """Build the report from results files into ``out``; returns the written paths by name.

    ``baseline``: earlier results to show changes against (files that do not exist are left out, and the page says
    when nothing is left to compare with). ``history_dir``: release sweeps (history/<framework>.jsonl) for the
    History section. ``evidence``: ``gsc memcheck`` output files (absent ones are left out), shown with the
    memory-unsafe findings. ``with_site``: also the site (harness.report.site): a page and a JSON file per cell,
    operator, system, converter path and port, and ``api/``.
    """
    from gather_scatter_conformance.harness.judge.verdict import is_finding
    from gather_scatter_conformance.harness.run.records import case_snapshot
    from gather_scatter_conformance.harness.run.repro import prefetch_sources

    every = _records(results)  # read (and checked) whole before anything is written
    # The cases as the runs saw them (their manifests' snapshot), so that the same results give the same pages in
    # any directory; results without one (an older harness's) look them up on disk.
    cases = Cases(snapshot=case_snapshot(results))
    # Every repro script's call is written by its framework's adapter, which imports the framework: ahead, beside
    # the tables and pages below (0.68x the report's time on the committed runs, 0.96x on a full run: docs/report.md).
    scripted = [(case, r) for r in every if (r.native or is_finding(r)) and (case := cases.get(r.case)) is not None]
    with prefetch_sources(scripted):
        return _generate(every, cases, results, Path(out), baseline, claims_dir, history_dir, evidence, with_site)


def _generate(every: list[Record], cases: Cases, results: Sequence[str | Path], out: Path,
              baseline: Sequence[str | Path], claims_dir: Path | None, history_dir: Path | None,
              evidence: Sequence[str | Path], with_site: bool) -> dict[str, Path]:
    # Converter paths have their own section; the frameworks' tables, matrices and agreement are of native APIs.
    conversions = [r for r in every if conversion.is_conversion(r)]
    records = [r for r in every if not conversion.is_conversion(r)]
    rows = _behaviour(records, claims_dir)
    base = None
    baseline = [b for b in baseline if Path(b).exists()]
    if baseline:
        base_records = [r for r in _records(baseline) if not conversion.is_conversion(r)]
        base = (base_records, _behaviour(base_records, claims_dir))
    out.mkdir(parents=True, exist_ok=True)
    paths: dict[str, Path] = {"index.html": out / "index.html", "behaviour.json": out / "behaviour.json",
             "provenance.json": out / "provenance.json", "matrix.csv": out / "matrix.csv"}
    history = store.read(history_dir) if history_dir and Path(history_dir).is_dir() else []
    ctx_evidence = unsafe.load_evidence(list(evidence))
    every_row = rows + [r for r in _behaviour(conversions, claims_dir) if r.get("preservation") is not None]
    generated, built = now(), None
    if with_site:
        from gather_scatter_conformance.harness.report import site

        built = site.build_site([*records, *conversions], every_row, site.Sources(
            claims=_claims(claims_dir), history=history, evidence=ctx_evidence, cases=cases), generated)
    ctx = context(records, rows, base, history, conversions, ctx_evidence,
                  site.cell_urls(built) if built is not None else None, generated, cases)
    ctx["site"] = None if built is None else site.summary(built, ctx["ops"])
    ctx["commit"] = None if built is None else built.index.commit
    from gather_scatter_conformance.harness.run.records import completeness

    ctx["completeness"] = completeness(results)
    paths["index.html"].write_text(render(ctx), encoding="utf-8")
    paths[DATA_FILE] = out / DATA_FILE
    paths[DATA_FILE].write_text(f"window.GSC_REPORT_DATA = {ctx['blob']};\n", encoding="utf-8")
    paths["behaviour.json"].write_text(json.dumps(every_row, indent=1, default=str) + "\n", encoding="utf-8")
    paths["provenance.json"].write_text(json.dumps(provenance_changes(every_row), indent=1) + "\n", encoding="utf-8")
    matrix_csv(records, paths["matrix.csv"])
    if built is not None:
        site.Pages(built, environment(), ctx["ops"], ctx["history"], ctx["delegated"]).write(out)
        site.write_json(built, out)
        paths["site"] = out / "api" / "index.json"
    return paths


def main(args: Any) -> int:
    """The ``report`` subcommand (see gather_scatter_conformance.harness.cli)."""
    paths = generate(args.files, args.out, args.baseline or (), Path(args.claims) if args.claims else None,
                     Path(args.history) if args.history else None, getattr(args, "evidence", None) or ())
    for name, path in paths.items():
        if name == "site":
            pages = sum(1 for _ in Path(args.out).rglob("*.html")) - 1
            print(f"wrote the site: {pages} pages, each with its JSON, and {path} (docs/site.md)")
        else:
            print(f"wrote {path} ({path.stat().st_size} bytes)")
    return 0
