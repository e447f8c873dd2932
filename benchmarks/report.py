"""The report page's weight: size, elements and load time in headless Chromium, for the full run with every section.

Both pages are built from the same real run (tests/data/runs, with the previous run and history/): one by this
checkout, one by the code at ``--report-ref`` (default ``19be533``, the page before issue #17), checked out into a
temporary git worktree. Their loads alternate (A B, B A, ...) in one browser; the medians and their ratio are
printed. Target: the page loads in < 0.5 s (median of 5).
"""

from __future__ import annotations

import lzma
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

from benchmarks.common import ROOT, Row

CHROMIUM, CHROMEDRIVER = "/usr/bin/chromium", "/usr/bin/chromedriver"
RUNS = ROOT / "tests" / "data" / "runs"
TARGET_MS = 500.0


def _build(code: Path, out: Path, now: Path, previous: Path) -> Path:
    """The page as the code in ``code`` builds it (run in a subprocess with that code first on the path)."""
    env = dict(os.environ, PYTHONPATH=str(code))
    subprocess.run([sys.executable, "-m", "harness", "report", str(now), "--out", str(out), "--baseline",
                    str(previous), "--history", str(ROOT / "history")], cwd=code, env=env, check=True,
                   capture_output=True)
    return out / "index.html"


def _browser():
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    opts = webdriver.ChromeOptions()
    opts.binary_location = CHROMIUM
    for arg in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
                "--window-size=1600,1000"):
        opts.add_argument(arg)
    return webdriver.Chrome(service=Service(CHROMEDRIVER), options=opts)


def _load(driver, page: Path) -> tuple[float, int]:
    driver.get("about:blank")
    driver.get(page.resolve().as_uri())
    t, n = driver.execute_script("var n = performance.getEntriesByType('navigation')[0];"
                                 "return [n.loadEventEnd, document.getElementsByTagName('*').length]")
    return float(t), int(n)


def run(reps: int = 5, ref: str = "19be533") -> list[Row]:
    """Build both pages and time their loads alternately; rows for size, elements and load time."""
    if not (os.path.exists(CHROMIUM) and os.path.exists(CHROMEDRIVER)):
        return [Row("report", "skipped: needs /usr/bin/chromium and chromedriver", None)]
    with tempfile.TemporaryDirectory() as tmp:
        tmp_path = Path(tmp)
        now = tmp_path / "now.jsonl"
        previous = tmp_path / "previous.jsonl"
        now.write_bytes(lzma.decompress((RUNS / "2026-11-24T21-00.jsonl.xz").read_bytes()))
        previous.write_bytes(lzma.decompress((RUNS / "2026-11-24T19-49.jsonl.xz").read_bytes()))
        old_code = tmp_path / "ref"
        subprocess.run(["git", "-C", str(ROOT), "worktree", "add", "--detach", str(old_code), ref], check=True,
                       capture_output=True)
        try:
            pages = {"before": _build(old_code, tmp_path / "before", now, previous),
                     "now": _build(ROOT, tmp_path / "now-page", now, previous)}
        finally:
            subprocess.run(["git", "-C", str(ROOT), "worktree", "remove", "--force", str(old_code)],
                           capture_output=True)
        driver = _browser()
        try:
            times: dict[str, list[float]] = {"before": [], "now": []}
            elements: dict[str, int] = {}
            for name in pages:  # a warm-up load of each
                _load(driver, pages[name])
            for i in range(reps):
                for name in (("before", "now") if i % 2 == 0 else ("now", "before")):
                    t, elements[name] = _load(driver, pages[name])
                    times[name].append(t)
        finally:
            driver.quit()
        med = {k: statistics.median(v) for k, v in times.items()}
        size = {k: p.stat().st_size for k, p in pages.items()}
    detail = (f"before ({ref}): {size['before'] / 1e6:.2f} MB, {elements['before']} elements, {med['before']:.0f} ms;"
              f" now: {size['now'] / 1e6:.2f} MB, {elements['now']} elements, {med['now']:.0f} ms")
    return [
        Row("report", f"page load, now / before (median of {reps})", med["now"] / med["before"], detail=detail),
        Row("report", "page load now, ms (full run, every section)", med["now"], f"< {TARGET_MS:.0f} ms",
            med["now"] < TARGET_MS, unit="ms"),
        Row("report", "elements at load, now / before", elements["now"] / elements["before"]),
        Row("report", "page size, now / before", size["now"] / size["before"]),
    ]
