"""The report page in a real browser: headless Chromium (Debian's chromium + chromium-driver) driven by selenium.

Opens the generated index.html via file://, checks the tables render (a matrix when its operator is opened), that a
click opens a cell's evidence (the native call and the repro), that filters hide columns, that injected markup stays
text, and saves a screenshot. tests/test_report_questions.py walks the users' questions on a real full run.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from _chromium import start  # first: it skips this module without chromium or selenium
from selenium.common.exceptions import NoAlertPresentException
from selenium.webdriver.common.by import By
from selenium.webdriver.common.keys import Keys
from selenium.webdriver.support import expected_conditions as ec
from selenium.webdriver.support.ui import Select, WebDriverWait
from test_report import (
    CAFFE2_CLAIMS,
    EVIL,
    GATHER6,
    NO_CLAIMS,
    TF_GPU_CLAIMS,
    _generate_with_claims,
    sample_records,
    write,
)

from gather_scatter_conformance.harness.report.page import generate

# A browser and a built site (a module fixture) for every test: slow, as docs/development.md counts one.
pytestmark = pytest.mark.slow


@pytest.fixture
def browser(tmp_path: Path):
    driver = start(tmp_path / "chromium-profile", 1400)
    yield driver
    driver.quit()
    shutil.rmtree(tmp_path / "chromium-profile", ignore_errors=True)


def click(browser, element) -> None:
    """A real click (through the page's event handling), on the element scrolled to the middle of the view."""
    browser.execute_script("arguments[0].scrollIntoView({block: 'center', inline: 'center'})", element)
    element.click()


@pytest.mark.slow
def test_report_in_chromium(browser, tmp_path: Path) -> None:
    out = generate([write(tmp_path / "results.jsonl", sample_records())], tmp_path / "out", claims_dir=NO_CLAIMS)
    browser.get(out["index.html"].resolve().as_uri())
    wait = WebDriverWait(browser, 10)
    panel = browser.find_element(By.ID, "panel")
    assert browser.find_elements(By.CSS_SELECTOR, "table.beh td[data-b]")
    assert not browser.find_elements(By.CSS_SELECTOR, "table.mx")  # drawn when its operator is opened
    assert not panel.is_displayed()
    click(browser, browser.find_element(By.CSS_SELECTOR, 'details.opmx[data-op="Gather"] > summary'))
    # The matrix is drawn on the details' toggle event, which the browser fires after the click returns.
    assert wait.until(lambda d: d.find_elements(By.CSS_SELECTOR, "table.mx td[data-r]"))

    # A deviating matrix cell opens its evidence: the native call and a repro that ends with it.
    click(browser, browser.find_element(By.CSS_SELECTOR, f'tr[data-case="{GATHER6}"] td.sev-wrong'))
    wait.until(ec.visibility_of(panel))
    api = browser.find_element(By.CSS_SELECTOR, "#panel pre.api").text
    repro = browser.find_element(By.CSS_SELECTOR, "#panel pre.repro").text
    assert api == "torch.index_select(data, indices)"
    assert repro.startswith("import numpy as np") and repro.endswith(api)
    assert "indices = np.array([0, -2, -1], dtype=np.int64)" in repro
    assert "2 of 3 element(s) differ" in panel.text
    browser.save_screenshot(str(tmp_path / "report-drilldown.png"))

    # The error cell whose message holds markup shows it as text; no script ran.
    browser.find_element(By.ID, "p-close").click()
    assert not panel.is_displayed()
    click(browser, browser.find_element(By.CSS_SELECTOR, f'tr[data-case="{GATHER6}"] td.sev-alt'))
    wait.until(ec.visibility_of(panel))
    assert EVIL in browser.find_element(By.CSS_SELECTOR, "#panel pre.err").text
    with pytest.raises(NoAlertPresentException):
        browser.switch_to.alert.text  # noqa: B018
    assert not browser.find_elements(By.CSS_SELECTOR, "#panel img, #panel script")

    # A behaviour cell: measured words, canonical, and its probe's evidence.
    browser.find_element(By.ID, "p-close").click()
    beh = browser.find_element(By.XPATH, "//table[contains(@class,'beh')]//td[contains(., 'Wrap (supported)')]")
    click(browser, beh)
    wait.until(ec.visibility_of(panel))
    assert "oob-positive" in panel.text and "torch.indexing(data, indices)" in panel.text
    browser.find_element(By.ID, "p-close").click()

    # Filters: a framework's columns disappear; an operator hides the other operators' matrices.
    torch_header = browser.find_element(By.XPATH, "//table[contains(@class,'mx')]//th[@title='torch:index_select']")
    assert torch_header.is_displayed()
    browser.find_element(By.XPATH, "//label[normalize-space()='torch']/input").click()
    assert not torch_header.is_displayed()
    assert browser.find_element(By.CSS_SELECTOR, f'tr[data-case="{GATHER6}"] td.sev-ok').is_displayed()  # numpy
    Select(browser.find_element(By.ID, "f-op")).select_by_visible_text("GatherND")
    assert not browser.find_element(By.CSS_SELECTOR, 'details.opmx[data-op="Gather"]').is_displayed()
    nd = browser.find_element(By.CSS_SELECTOR, 'details.opmx[data-op="GatherND"]')
    assert nd.is_displayed()
    click(browser, nd.find_element(By.TAG_NAME, "summary"))
    wait.until(lambda d: d.find_elements(By.CSS_SELECTOR, 'table.mx[data-op="GatherND"]'))
    Select(browser.find_element(By.ID, "f-op")).select_by_visible_text("all")
    browser.find_element(By.ID, "f-all").click()
    nd_row = browser.find_element(By.CSS_SELECTOR, 'tr[data-case="cases/gather_nd.yaml::blog-gathernd-example-1"]')
    browser.find_element(By.XPATH, "//label[normalize-space()='tensorflow']/input").click()
    browser.find_element(By.ID, "f-bad").click()  # failing only: GatherND failed only on (hidden) tensorflow
    assert not nd_row.is_displayed()
    assert browser.find_element(By.CSS_SELECTOR, f'tr[data-case="{GATHER6}"]').is_displayed()
    browser.find_element(By.ID, "f-bad").click()
    assert nd_row.is_displayed()
    browser.find_element(By.ID, "f-all").click()
    Select(browser.find_element(By.ID, "f-op")).select_by_visible_text("all")
    assert torch_header.is_displayed()

    browser.save_screenshot(str(tmp_path / "report.png"))
    assert (tmp_path / "report.png").stat().st_size > 10_000
    errors = [e for e in browser.get_log("browser") if e["level"] == "SEVERE"]
    assert errors == []


def test_documented_only_rows_open_from_their_fold(browser, tmp_path: Path) -> None:
    """Issue #39: documented-only rows are hidden until their table's fold is opened (by click or keyboard), the
    Frameworks filter offers only measured systems, and hiding tensorflow hides its documented-only GPU row."""
    out = _generate_with_claims(tmp_path, {"caffe2.yaml": CAFFE2_CLAIMS, "tensorflow.yaml": TF_GPU_CLAIMS})
    browser.get(out["index.html"].resolve().as_uri())
    boxes = browser.find_elements(By.CSS_SELECTOR, "#fwbox label")
    assert [b.text.strip() for b in boxes] == ["numpy", "tensorflow", "torch"]
    doc = browser.find_elements(By.CSS_SELECTOR, "table.beh tr.doconly")
    measured = browser.find_elements(By.CSS_SELECTOR, "table.beh tbody tr[data-fw]:not(.doconly)")
    assert len(doc) == 2 and measured and all(r.is_displayed() for r in measured)
    assert not any(r.is_displayed() for r in doc)
    summary = browser.find_element(By.CSS_SELECTOR, "details.docfold > summary")
    assert summary.text.strip().startswith("2 documented-only rows (not measured in these results): show")
    browser.execute_script("arguments[0].scrollIntoView({block: 'center'})", summary)
    summary.send_keys(Keys.ENTER)  # a summary is a button: the keyboard opens it
    assert all(r.is_displayed() for r in doc) and "hide" in summary.text and "show" not in summary.text
    tf_gpu = browser.find_element(By.CSS_SELECTOR, 'tr.doconly[data-fw="tensorflow"]')
    caffe2 = browser.find_element(By.CSS_SELECTOR, 'tr.doconly[data-fw="caffe2"]')
    browser.find_element(By.XPATH, "//label[normalize-space()='tensorflow']/input").click()
    assert not tf_gpu.is_displayed() and caffe2.is_displayed()
    click(browser, summary)
    assert not any(r.is_displayed() for r in doc)
    assert [e for e in browser.get_log("browser") if e["level"] == "SEVERE"] == []


@pytest.mark.slow
def test_the_conversion_tables_header_hides_no_row(browser, tmp_path: Path) -> None:
    """#28: the conversion table's sticky header hid its first three rows at every scroll position (it stuck below
    the toolbar inside the table's own scroll box). Every row is visible, whatever the scroll; records from a real
    converter path (onnx~mnnconvert~mnn on the Gather probes)."""
    import subprocess
    import sys

    from gather_scatter_conformance import resources

    pytest.importorskip("MNN")
    probes = resources.corpus_file("cases/probes/gather.yaml")
    run = subprocess.run([sys.executable, "-m", "gather_scatter_conformance", "run", "--framework",
                          "onnx~mnnconvert~mnn", "--results", "paths.jsonl", str(probes)],
                         cwd=tmp_path, capture_output=True, text=True, timeout=600)
    assert (tmp_path / "paths.jsonl").exists(), run.stdout[-2000:] + run.stderr[-2000:]
    out = generate([tmp_path / "paths.jsonl"], tmp_path / "out", claims_dir=NO_CLAIMS)
    browser.get(out["index.html"].resolve().as_uri())
    table = browser.find_element(By.CSS_SELECTOR, "table.conv")
    rows = table.find_elements(By.CSS_SELECTOR, "tbody tr")
    assert len(rows) >= 3
    for shift in (0, -150):  # the table's top just below the toolbar, then lower in the window
        browser.execute_script("arguments[0].scrollIntoView(); window.scrollBy(0, -document.getElementById("
                               "'toolbar').getBoundingClientRect().height + arguments[1])", table, shift)
        for row in rows[:3]:
            covered = browser.execute_script(
                "var r = arguments[0].cells[0].getBoundingClientRect(), y = r.top + r.height / 2;"
                "if (y < 0 || y > innerHeight) { return null; }"
                "var e = document.elementFromPoint(r.left + 5, y); return e && !arguments[0].contains(e);", row)
            assert not covered, (shift, row.text)
    assert browser.execute_script("return document.documentElement.scrollWidth <= innerWidth")
