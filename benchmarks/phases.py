"""The main command's time per phase, read from the results files a `make report` wrote (issue #38).

Each phase of `make report` is one `gsc run` writing one results file; its manifest says when the run started and
ended, on how many workers, and the peak memory of its processes; its records say how long each call took
(``duration_s``: the framework's own work, compiles and conversions included). The row per phase is its wall time;
the context gives the records, the workers, the peak, the summed call time and the systems that took longest. The
phases together are held against the issue's budget of 60 minutes (environments not included: build them first).
"""

from __future__ import annotations

from collections import Counter
from datetime import datetime
from pathlib import Path

from benchmarks.common import ROOT, Row

BUDGET_S = 60 * 60
DEFAULT = ("results/results.jsonl", "results/onnxruntime-openvino.jsonl", "results/conversions.jsonl")


def phase(path: Path) -> Row:
    """One results file's run: its wall time (from its manifest), with what it did as context."""
    from gather_scatter_conformance.harness.run.records import manifest, read

    found = manifest(path)
    if found is None or not found.ended:
        return Row("phases", path.name, None, "", None, "s", "no finished run manifest")
    try:
        wall = (datetime.fromisoformat(found.ended) - datetime.fromisoformat(found.started)).total_seconds()
    except (TypeError, ValueError):  # a results file from elsewhere: its times are data, and may be anything
        return Row("phases", path.name, None, "", None, "s",
                   f"its manifest's times do not read: started {found.started[:40]!r}, ended {found.ended[:40]!r}")
    calls: Counter[str] = Counter()
    records = 0
    for rec in read([path]):
        records += 1
        calls[rec.framework] += rec.duration_s or 0.0
    top = ", ".join(f"{name} {seconds:.0f} s" for name, seconds in calls.most_common(4))
    return Row("phases", path.name, wall, "", None, "s",
               f"{records} records, {found.workers or '?'} workers, peak {found.memory_peak_gib or '?'} GiB; calls "
               f"{sum(calls.values()):.0f} s in all, longest: {top}",
               extra={"records": records, "calls_s": round(sum(calls.values()), 1)})


def run(paths: list[str] | None = None) -> list[Row]:
    """A row per results file that exists (default: make report's three), then their sum against 60 minutes."""
    files = [p if p.is_absolute() else ROOT / p for p in map(Path, paths or DEFAULT)]
    rows = [phase(p) for p in files if p.exists()]
    if not rows:
        return [Row("phases", "make report", None, f"<= {BUDGET_S}", None, "s", "no results files: run make report")]
    total = sum(r.value or 0.0 for r in rows)
    complete = all(r.value is not None for r in rows)
    rows.append(Row("phases", "make report (phases summed)", total, f"<= {BUDGET_S}",
                    total <= BUDGET_S if complete else None, "s", f"{len(rows)} phase(s); environments not included"))
    return rows
