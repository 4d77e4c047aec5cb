"""The pages in a real browser: Debian's headless Chromium, driven by Selenium through Debian's
chromedriver, against the real nginx on loopback. One screenshot per page lands in
test-output/screenshots/ for review.

The explorer is loaded from http://127.0.0.1:PORT and told to call the API at http://localhost:PORT:
another origin, so the browser sends a real CORS preflight before every keyed request."""
from __future__ import annotations

import json
import shutil
import tempfile

import pytest
from selenium import webdriver
from selenium.webdriver.chrome.service import Service
from selenium.webdriver.common.by import By
from selenium.webdriver.support.ui import Select, WebDriverWait

from generator.cli import command_table

from ..conftest import ROOT

SCREENSHOTS = ROOT / "test-output" / "screenshots"
CHROMIUM, CHROMEDRIVER = "/usr/bin/chromium", "/usr/bin/chromedriver"
WAIT_SECONDS = 15


@pytest.fixture(scope="module")
def browser():
    profile = tempfile.mkdtemp(prefix="riskapi-chromium-")
    options = webdriver.ChromeOptions()
    options.binary_location = CHROMIUM
    # No sandbox as root; no background traffic, which this machine's closed network refuses.
    for flag in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--disable-quic",
                 "--no-first-run", "--disable-background-networking", "--disable-component-update",
                 "--disable-sync", "--disable-extensions", f"--user-data-dir={profile}", "--window-size=1200,900"):
        options.add_argument(flag)
    options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    driver = webdriver.Chrome(options=options, service=Service(CHROMEDRIVER))
    yield driver
    driver.quit()
    shutil.rmtree(profile, ignore_errors=True)


def screenshot(driver, name: str, width: int = 1200) -> None:
    """Save the whole page as one PNG: the window grows to the page's height first."""
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    driver.set_window_size(width, 900)
    height = driver.execute_script("return document.documentElement.scrollHeight")
    driver.set_window_size(width, min(max(height, 600), 6000))
    driver.execute_script("window.scrollTo(0, 0)")
    assert driver.save_screenshot(str(SCREENSHOTS / f"{name}.png"))
    driver.set_window_size(1200, 900)


def wait_for(driver, condition, message: str):
    return WebDriverWait(driver, WAIT_SECONDS).until(lambda d: condition(d), message)


def text_of(driver, css: str) -> str:
    return driver.find_element(By.CSS_SELECTOR, css).text


def test_reference_page_documents_every_endpoint_and_command(live, browser):
    browser.get(f"http://127.0.0.1:{live.port}/")
    assert browser.title == "API reference · Country risk API"
    page = browser.find_element(By.TAG_NAME, "main").text
    for path in ("/api/v1/configuration/riskscoremodels/", "/api/v1/configuration/countries/",
                 "/api/v1/riskscores/{model}/", "/api/v1/riskscores/{model}/{country_code}/",
                 "/api/v1/riskscores/country/{code}/"):
        assert f"GET {path}" in page, path
    assert "also /api/v1/configuration/riskscoresmodels/" in page
    commands = [cell.text for cell in browser.find_elements(By.CSS_SELECTOR, "#cli ~ table td:first-child code")]
    assert commands == [name for name, _ in command_table()]
    assert "apikey USER:KEY" in page and "curl -u USER:KEY" in page
    screenshot(browser, "reference")
    screenshot(browser, "reference-phone", width=400)
    # readable on a phone: nothing but wide tables and code blocks scrolls sideways
    browser.set_window_size(400, 900)
    assert browser.execute_script("return document.documentElement.scrollWidth") <= 400
    browser.set_window_size(1200, 900)


def test_model_page_shows_sections_weights_and_tables(live, browser):
    browser.get(f"http://127.0.0.1:{live.port}/docs/models/sovereign/")
    page = browser.find_element(By.TAG_NAME, "main").text
    for text in ("Economy", "Institutions", "gdp_growth", "0 <= x < 2", "AAA … D"):
        assert text in page, text
    screenshot(browser, "model-sovereign")
    browser.get(f"http://127.0.0.1:{live.port}/docs/models/sdg/")
    screenshot(browser, "model-sdg")


def test_changes_page_shows_the_latest_release_diff(live, browser):
    browser.get(f"http://127.0.0.1:{live.port}/docs/changes/")
    changes = (live.site / "current" / "changes.txt").read_text()
    headline = text_of(browser, "#headline")
    assert headline and headline in changes  # the same summary `riskapi diff` prints
    screenshot(browser, "changes")


def forget_the_explorer(browser, live) -> None:
    """Open a fresh tab: nothing remembered. Cleared from a page of the same origin that runs no explorer,
    since an explorer page that reconnects from what it remembered saves it again when the key is checked."""
    browser.get(f"http://127.0.0.1:{live.port}/docs/changes/")
    browser.execute_script("sessionStorage.clear()")


def connect(browser, live, key: str) -> None:
    forget_the_explorer(browser, live)
    browser.get(f"http://127.0.0.1:{live.port}/docs/explorer/#model=sovereign&country=CIV")
    base = browser.find_element(By.ID, "base")
    assert base.get_attribute("value") == f"http://127.0.0.1:{live.port}"  # the page's own origin by default
    base.clear()
    base.send_keys(f"http://localhost:{live.port}")  # another origin: CORS for real
    browser.find_element(By.ID, "key").send_keys(key)
    browser.find_element(By.CSS_SELECTOR, "#connect button").click()


def api_document(live, path: str):
    answer = live.get(path)
    assert answer.status == 200
    return json.loads(answer.body)


def test_explorer_with_a_valid_key_draws_the_api_numbers(live, browser):
    connect(browser, live, f"alice:{live.keys['alice']}")
    wait_for(browser, lambda d: d.find_element(By.ID, "country-view").is_displayed()
             and d.find_elements(By.CSS_SELECTOR, "#ranking tbody tr"), "explorer did not load")
    document = api_document(live, "/api/v1/riskscores/sovereign/CIV/")

    # models this key may see, the custom one included (alice is granted acme_aml)
    models = [o.get_attribute("value") for o in Select(browser.find_element(By.ID, "model")).options]
    assert models == [m["code"] for m in api_document(live, "/api/v1/configuration/riskscoremodels/")]
    assert "acme_aml" in models
    assert text_of(browser, "#country-title") == "Côte d'Ivoire (CIV) · sovereign"

    # the chart: one point per scored result at the API's score; the fixture's hand-worked series
    # (tests/building/test_scoring.py) is 2023 history 100, 2024 current 50, 2025 projection 70
    points = [(p.get_attribute("data-year"), p.get_attribute("data-type"), float(p.get_attribute("data-score")))
              for p in browser.find_elements(By.CSS_SELECTOR, "#chart circle")]
    assert points == [(r["timestamp"][:4], r["type"], r["score"]) for r in document["results"]]
    assert points == [("2023", "history", 100.0), ("2024", "current", 50.0), ("2025", "projection", 70.0)]
    assert len(browser.find_elements(By.CSS_SELECTOR, "#chart polyline.projection")) == 1
    assert "Current score 50" in text_of(browser, "#current")

    # sections and indicators: one row each, with the API's current values
    sections = browser.find_elements(By.CSS_SELECTOR, "#sections tbody tr")
    assert [row.find_elements(By.TAG_NAME, "td")[0].text for row in sections] == [s["name"] for s in document["sections"]]
    indicators = {row.find_elements(By.TAG_NAME, "td")[0].text: row.find_elements(By.TAG_NAME, "td")
                  for row in browser.find_elements(By.CSS_SELECTOR, "#indicators tbody tr")}
    assert list(indicators) == [i["name"] for i in document["indicators"]]
    inflation = next(i for i in document["indicators"] if i["reference"] == "inflation")
    current = next(r for r in inflation["results"] if r["type"] == "current")
    cells = indicators[inflation["name"]]
    assert float(cells[2].text) == current["data"]["value"][0] == 8.0  # the fixture's raw value
    assert cells[5].text == f"{current['riskPoints']} / {current['riskPointsMax']}" == "25 / 50"

    # the ranking: every scored country, by rank; a click on a heading sorts, a second reverses
    ranking = api_document(live, "/api/v1/riskscores/sovereign/")["data"]
    def column(index):
        return [row.find_elements(By.TAG_NAME, "td")[index].text
                for row in browser.find_elements(By.CSS_SELECTOR, "#ranking tbody tr")]
    by_rank = sorted(ranking, key=lambda e: (e["results"][0]["countryRank"], e["entity"]["countryCode"]))
    assert column(1) == [e["entity"]["countryCode"] for e in by_rank]
    score_heading = browser.find_element(By.CSS_SELECTOR, "#ranking th[data-column=score] button")
    score_heading.click()
    scores = [float(s) for s in column(4)]
    assert scores == sorted(e["results"][0]["score"] for e in ranking)
    browser.find_element(By.CSS_SELECTOR, "#ranking th[data-column=score] button").click()
    assert [float(s) for s in column(4)] == sorted(scores, reverse=True)
    assert browser.find_element(By.CSS_SELECTOR, "#ranking th[data-column=score]").get_attribute("aria-sort") \
        == "descending"
    assert browser.find_element(By.CSS_SELECTOR, "#ranking tr.selected").get_attribute("data-code") == "CIV"
    screenshot(browser, "explorer")

    # a country without a current score says so, and its missing values read "missing"
    Select(browser.find_element(By.ID, "country")).select_by_value("NGA")
    wait_for(browser, lambda d: text_of(d, "#country-title") == "Nigeria (NGA) · sovereign", "country switch")
    assert text_of(browser, "#current").startswith("No current score")
    rows = {row.find_elements(By.TAG_NAME, "td")[0].text: row.find_elements(By.TAG_NAME, "td")[2].text
            for row in browser.find_elements(By.CSS_SELECTOR, "#indicators tbody tr")}
    assert rows["Real GDP growth"] == "missing" and float(rows["Consumer price inflation"]) == 20.0

    # another model and country from the pickers: the sdg series of Austria
    Select(browser.find_element(By.ID, "model")).select_by_value("sdg")
    wait_for(browser, lambda d: text_of(d, "#country-title") == "Nigeria (NGA) · sdg", "model switch")
    Select(browser.find_element(By.ID, "country")).select_by_value("AUT")
    wait_for(browser, lambda d: text_of(d, "#country-title") == "Austria (AUT) · sdg", "country switch")
    sdg = api_document(live, "/api/v1/riskscores/sdg/AUT/")
    drawn = [float(p.get_attribute("data-score")) for p in browser.find_elements(By.CSS_SELECTOR, "#chart circle")]
    assert drawn == [r["score"] for r in sdg["results"]] and len(drawn) == 3


def test_explorer_with_a_wrong_key_says_so(live, browser):
    connect(browser, live, "alice:" + "0" * 32)
    wait_for(browser, lambda d: "403" in text_of(d, "#status"), "no error shown")
    status = browser.find_element(By.ID, "status")
    assert status.text.startswith("The API answered 403: Invalid API key.")
    assert status.get_attribute("class") == "error"
    assert not browser.find_element(By.ID, "country-view").is_displayed()
    assert not browser.find_element(By.ID, "choose").is_displayed()
    screenshot(browser, "explorer-wrong-key")


def test_explorer_without_a_grant_does_not_offer_the_custom_model(live, browser):
    connect(browser, live, live.keys["bob"])  # the bare-key form
    wait_for(browser, lambda d: d.find_elements(By.CSS_SELECTOR, "#ranking tbody tr"), "explorer did not load")
    models = [o.get_attribute("value") for o in Select(browser.find_element(By.ID, "model")).options]
    assert "acme_aml" not in models and "sovereign" in models


def test_pages_load_no_outside_resource_and_log_no_errors(live, browser):
    forget_the_explorer(browser, live)
    browser.get_log("browser")  # drop what earlier tests logged (the wrong key's 403s)
    for path in ("/", "/docs/models/sovereign/", "/docs/explorer/", "/docs/changes/"):
        browser.get(f"http://127.0.0.1:{live.port}{path}")
        resources = browser.execute_script("return performance.getEntriesByType('resource').map(e => e.name)")
        assert all(r.startswith(f"http://127.0.0.1:{live.port}/") for r in resources), resources
        severe = [e for e in browser.get_log("browser") if e["level"] == "SEVERE"]
        assert severe == [], severe


def test_explorer_proves_the_answer_it_shows_against_the_signed_log(live, browser):
    # the page checks what it drew with the log's verifier key from the API root: the answer's bytes in its
    # release's tree (tiles fetched with the key), the release in the log at the signed checkpoint
    connect(browser, live, f"alice:{live.keys['alice']}")
    wait_for(browser, lambda d: d.find_element(By.ID, "proof").get_attribute("data-verified") is not None,
             "the explorer did not check the answer")
    proof = browser.find_element(By.ID, "proof")
    release = (live.site / "current").resolve().name
    assert proof.get_attribute("data-verified") == release, proof.text
    assert proof.text.startswith("Verified: this answer is document ") and f"of release {release}" in proof.text
    assert live.log_vkey in proof.text and "until now" in proof.text
    screenshot(browser, "explorer-verified")
