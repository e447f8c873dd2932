"""Screenshots of the report for docs/report.md: the top of the page and one drill-down, at 1600 x 1000.

    .venv/bin/python scripts/report_screenshots.py   # -> docs/img/report-top.png, docs/img/report-drilldown.png

The page is built from the committed full run (tests/data/runs, the earlier run as the previous one) and history/.
"""

from __future__ import annotations

import lzma
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from gather_scatter_conformance.harness.report.page import generate  # noqa: E402


def main() -> int:
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import Select

    out_dir = ROOT / "docs" / "img"
    out_dir.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as tmp:
        runs = []
        for name in ("2026-11-24T21-00.jsonl.xz", "2026-11-24T19-49.jsonl.xz"):
            path = Path(tmp) / name.removesuffix(".xz")
            path.write_bytes(lzma.decompress((ROOT / "tests" / "data" / "runs" / name).read_bytes()))
            runs.append(path)
        page = generate([runs[0]], Path(tmp) / "out", [runs[1]], history_dir=ROOT / "history")["index.html"]
        opts = webdriver.ChromeOptions()
        opts.binary_location = "/usr/bin/chromium"
        for arg in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
                    "--window-size=1600,1000", "--hide-scrollbars"):
            opts.add_argument(arg)
        driver = webdriver.Chrome(service=Service("/usr/bin/chromedriver"), options=opts)
        try:
            driver.get(page.resolve().as_uri())
            driver.save_screenshot(str(out_dir / "report-top.png"))
            Select(driver.find_element(By.ID, "f-op")).select_by_visible_text("Gather")
            cell = driver.find_element(By.XPATH, "//table[@data-op='Gather']//tr[@data-fw='openvino']/td[5]")
            driver.execute_script("arguments[0].scrollIntoView({block: 'center'})", cell)
            cell.click()
            time.sleep(0.3)
            driver.save_screenshot(str(out_dir / "report-drilldown.png"))
        finally:
            driver.quit()
    for name in ("report-top.png", "report-drilldown.png"):
        print(f"wrote docs/img/{name}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
