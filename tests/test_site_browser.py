"""The site answers #28's two new questions in at most two actions from a fresh load of the report, in headless
Chromium: "link me to the cell for OpenVINO GatherND-8 negative indices" and "what changes if I port from
tf.gather to LiteRT?". Built from a real run (tests/data/runs/2026-11-27-probes-tflite.jsonl.xz); the expected
contents are read from the behaviour rows the site is built from.
"""

from __future__ import annotations

import json
import shutil
from typing import Any

import pytest
from _chromium import start  # first: it skips this module without chromium or selenium
from selenium.webdriver.common.by import By
from selenium.webdriver.support import expected_conditions as ec
from selenium.webdriver.support.ui import WebDriverWait

from gather_scatter_conformance.harness.report.site import slug
from tests.test_site import PATH, build

# A browser and a built site (a module fixture) for every test: slow, as docs/development.md counts one.
pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    built = build(tmp_path_factory.mktemp("site-browser"))
    return {**built, "index": (built["out"] / "index.html").resolve().as_uri()}


@pytest.fixture(scope="module")
def browser(tmp_path_factory: pytest.TempPathFactory):
    profile = tmp_path_factory.mktemp("chromium-profile")
    driver = start(profile, 1600)
    yield driver
    driver.quit()
    shutil.rmtree(profile, ignore_errors=True)


def _fresh(browser, uri: str) -> None:
    browser.get("about:blank")
    browser.get(uri)


def _errors(browser) -> list[str]:
    return [e["message"] for e in browser.get_log("browser") if e["level"] == "SEVERE"]


@pytest.mark.slow
def test_link_me_to_the_cell_for_openvino_gathernd8_negative_indices(browser, site: dict[str, Any]) -> None:
    row = next(r for r in site["rows"] if (r["op"], r["framework"], r["variant"], r["dimension"]) ==
               ("GatherND", "openvino", "GatherND-8", "negative-indices"))
    _fresh(browser, site["index"])
    browser.find_element(By.CSS_SELECTOR, "#site-nav a[href='GatherND/index.html']").click()  # action 1
    browser.find_element(By.CSS_SELECTOR, "a[title^='openvino GatherND-8, negative-indices:']").click()  # action 2
    assert browser.current_url.endswith("/GatherND/openvino/GatherND-8/negative-indices.html")
    assert browser.find_element(By.TAG_NAME, "h1").text == "GatherND · openvino GatherND-8 · negative-indices"
    assert browser.find_element(By.CSS_SELECTOR, "#label + code").text == row["label"]
    strip = browser.find_elements(By.CSS_SELECTOR, "ol.strip li")
    assert len(strip) > 5 and strip[-1].text.endswith(row["label"])  # the newest release swept is this one
    assert not _errors(browser)


def test_what_changes_if_i_port_from_tf_gather_to_litert(browser, site: dict[str, Any]) -> None:
    expected = {(r["op"], r["dimension"], r["source_label"], r["label"]) for r in site["rows"]
                if r["framework"] == PATH and r["variant"] == "gather/function" and r["preservation"] != "preserved"
                and r["label"] != r["source_label"]}
    _fresh(browser, site["index"])
    browser.find_element(By.CSS_SELECTOR, "#site-nav a[href='port/index.html']").click()  # action 1
    browser.find_element(By.PARTIAL_LINK_TEXT, "tf.gather (tensorflow, gather/function) → litert").click()  # 2
    assert browser.current_url.endswith(f"/port/{PATH}/gather-function.html")
    shown = set()
    for tr in browser.find_elements(By.CSS_SELECTOR, "main table.grid tbody tr"):
        op, dim, source, target = (td.text for td in tr.find_elements(By.TAG_NAME, "td")[:4])
        shown.add((op, dim.splitlines()[0], source, target))
    assert expected and shown == expected
    assert f"{len(expected)} of" in browser.find_element(By.TAG_NAME, "main").text
    assert not _errors(browser)


def test_the_copy_button_copies_the_upstream_issue(browser, site: dict[str, Any]) -> None:
    index = json.loads((site["out"] / "api" / "index.json").read_text())
    finding = index["findings"][0]
    _fresh(browser, (site["out"] / finding["url"]).resolve().as_uri())
    button = browser.find_element(By.CSS_SELECTOR, "button.copy[data-copy='issue']")
    text = browser.find_element(By.ID, "issue").get_property("value")
    from gather_scatter_conformance.vocab.safe import md

    assert text.startswith(f"# {md(finding['title'])}")  # the heading is markdown: the title's markup escaped
    # What the clipboard received: the page's copy handler is watched through the document's copy event.
    browser.execute_script("window.__copied = null; document.addEventListener('copy', () => "
                           "{ window.__copied = document.getSelection().toString(); });")
    button.click()
    assert button.text == "Copied"
    copied = browser.execute_script("return window.__copied;")
    assert copied == text
    assert not _errors(browser)


def test_a_conversion_cell_opens_its_cases_and_links_each_to_its_cell_page(browser, site: dict[str, Any]) -> None:
    """#28: the Conversion section wrote every changed case, its converted graph and a repro script into the
    landing page (1.55 MB of it on the full run). A cell now opens them in the evidence panel, from the evidence
    file, each case linking to its cell page."""
    changed = {(r["op"], r["dimension"], r["variant"]) for r in site["rows"]
               if r["framework"] == PATH and r["preservation"] != "preserved"}
    _fresh(browser, site["index"])
    cells = browser.find_elements(By.CSS_SELECTOR, "table.conv td[data-cv]")
    assert cells and len(cells) <= len(changed)
    td = cells[0]
    browser.execute_script("arguments[0].scrollIntoView({block: 'center'})", td)
    dimension = td.find_element(By.XPATH, "./ancestor::tr/th").text
    td.click()  # action 1
    panel = browser.find_element(By.ID, "panel")
    WebDriverWait(browser, 10).until(ec.visibility_of(panel))  # once report-data.js has loaded
    assert browser.find_element(By.CSS_SELECTOR, "#panel h2").text == f"{PATH} · {dimension}"
    boxes = browser.find_elements(By.CSS_SELECTOR, "#panel .ev")
    assert boxes and all("converted" in b.text and "target" in b.text for b in boxes)
    links = browser.find_elements(By.CSS_SELECTOR, "#panel .ev a[href$='.html']")
    assert len(links) == len(boxes)  # every probe case has a cell page
    href = links[0].get_attribute("href")
    assert f"/{PATH}/" in href and href.endswith(f"/{slug(dimension)}.html")
    links[0].click()  # action 2
    assert browser.find_element(By.TAG_NAME, "h1").text.endswith(f" · {dimension}")
    assert not _errors(browser)
