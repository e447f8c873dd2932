"""The report site's budget: every page < 2 MB, and loads in < 0.5 s in headless Chromium (median of 5).

The site is built from the results given (``--site-results``; default: the last ``make report``'s files in
results/, else the real runs in tests/data/runs) with the committed history, into a temporary folder. Every page's
weight is its file size plus every local file it loads at page load (the pages fetch nothing else). Load times are
measured for the landing page, each operator's page, the systems index, the port planner's index and the heaviest
page of each kind (system, cell, port), plus a cell of median weight: the loads go round-robin over these pages,
five rounds, and each page's median is compared with the budget.
"""

from __future__ import annotations

import lzma
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from benchmarks.common import ROOT, Row
from benchmarks.report import CHROMEDRIVER, CHROMIUM, _browser

LOAD_MS, WEIGHT_MB = 500.0, 2.0
_LOADED = re.compile(r'<(?:script|img|iframe)[^>]*\ssrc="([^"]+)"|<link[^>]*\shref="([^"]+)"[^>]*rel="stylesheet"')


def default_results(tmp: Path) -> list[Path]:
    """The last ``make report``'s results, else the committed real runs (unpacked into ``tmp``)."""
    made = [ROOT / "results" / n for n in ("results.jsonl", "onnxruntime-openvino.jsonl", "conversions.jsonl")]
    if (ROOT / "results" / "results.jsonl").exists():
        return [p for p in made if p.exists()]
    out = []
    for name in ("2026-11-24T21-00.jsonl.xz", "2026-11-27-probes-tflite.jsonl.xz"):
        path = tmp / name.removesuffix(".xz")
        path.write_bytes(lzma.decompress((ROOT / "tests" / "data" / "runs" / name).read_bytes()))
        out.append(path)
    return out


def weight(page: Path) -> int:
    """The page's bytes and those of every local file it loads at load time."""
    html = page.read_text(encoding="utf-8")
    extra = 0
    for src in (a or b for a, b in _LOADED.findall(html)):
        target = (page.parent / src).resolve()
        if not src.startswith(("http://", "https://", "data:")) and target.is_file():
            extra += target.stat().st_size
    return page.stat().st_size + extra


def _load_ms(driver, page: Path) -> float:
    driver.get("about:blank")
    driver.get(page.resolve().as_uri())
    return float(driver.execute_script("return performance.getEntriesByType('navigation')[0].loadEventEnd"))


def _sample(out: Path, sizes: dict[Path, int]) -> dict[str, Path]:
    """The pages whose load is timed, by role."""
    def heaviest(pattern: str) -> Path | None:
        found = [p for p in sizes if p.match(pattern)]
        return max(found, key=sizes.__getitem__) if found else None

    cells = sorted((p for p in sizes if len(p.relative_to(out).parts) == 4), key=sizes.__getitem__)
    pages = {"landing": out / "index.html", "systems index": out / "systems" / "index.html",
             "port index": out / "port" / "index.html", "heaviest system": heaviest("systems/*.html"),
             "heaviest port": heaviest("port/*/*.html"), "heaviest cell": cells[-1] if cells else None,
             "median cell": cells[len(cells) // 2] if cells else None}
    for op_page in sorted(out.glob("*/index.html")):
        if op_page.parent.name not in ("systems", "port"):
            pages[f"operator {op_page.parent.name}"] = op_page
    return {k: v for k, v in pages.items() if v is not None and v.exists()}


def run(results: list[str] | None = None, reps: int = 5) -> list[Row]:
    """Build the site, weigh every page, time the sampled pages' loads; rows against the budget."""
    with tempfile.TemporaryDirectory() as tmp:
        tmp_path = Path(tmp)
        files = [Path(r) for r in results] if results else default_results(tmp_path)
        out = tmp_path / "site"
        t0 = time.perf_counter()
        subprocess.run([sys.executable, "-m", "gather_scatter_conformance", "report", *map(str, files), "--out",
                        str(out), "--history", str(ROOT / "history")], check=True, capture_output=True)
        build_s = time.perf_counter() - t0
        n_records = sum(1 for f in files for line in open(f, encoding="utf-8") if line.strip())
        sizes = {p: weight(p) for p in out.rglob("*.html")}
        total = sum(p.stat().st_size for p in out.rglob("*") if p.is_file())
        heaviest = max(sizes, key=sizes.__getitem__)
        over = sorted((p for p, s in sizes.items() if s >= WEIGHT_MB * 1e6), key=sizes.__getitem__)
        rows = [
            Row("site", f"pages built: {len(sizes)} from {n_records} records, seconds", build_s, unit="s",
                detail=f"{total / 1e6:.0f} MB on disk with the JSON API"),
            Row("site", "heaviest page / 2 MB budget", sizes[heaviest] / (WEIGHT_MB * 1e6), "< 1",
                sizes[heaviest] < WEIGHT_MB * 1e6,
                detail=f"{heaviest.relative_to(out)}: {sizes[heaviest] / 1e6:.2f} MB; {len(over)} page(s) over "
                       f"the budget{': ' + ', '.join(str(p.relative_to(out)) for p in over[:5]) if over else ''}"),
        ]
        if not (os.path.exists(CHROMIUM) and os.path.exists(CHROMEDRIVER)):
            return [*rows, Row("site", "load: skipped, needs /usr/bin/chromium and chromedriver", None)]
        pages = _sample(out, sizes)
        driver = _browser()
        try:
            for page in pages.values():  # a warm-up load of each
                _load_ms(driver, page)
            times: dict[str, list[float]] = {k: [] for k in pages}
            for _ in range(reps):
                for name, page in pages.items():
                    times[name].append(_load_ms(driver, page))
        finally:
            driver.quit()
    med = {k: statistics.median(v) for k, v in times.items()}
    worst = max(med, key=med.__getitem__)
    rows.append(Row("site", f"slowest page load / 500 ms budget (median of {reps})", med[worst] / LOAD_MS, "< 1",
                    med[worst] < LOAD_MS, detail=f"{worst}: {med[worst]:.0f} ms"))
    for name in pages:
        rows.append(Row("site", f"load {name}, ms", med[name], f"< {LOAD_MS:.0f}", med[name] < LOAD_MS, unit="ms",
                        detail=f"{sizes[pages[name]] / 1e6:.2f} MB"))
    return rows
