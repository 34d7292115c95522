"""``faceedit-bench serve`` in a real headless Chromium at 1280 x 800, over two real offline runs: the printed
address (with its token) opens the runs table; from a run's headline figure to its sessions, worst first; a
session's images decode and the judge's reasoning is shown; no page scrolls sideways. With
``FACEEDIT_BENCH_SCREENSHOTS=1`` each page is saved into docs/images/ (the pictures of docs/serve.md)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from faceedit_bench.serve.app import create_app
from faceedit_bench.serve.security import new_token
from tests.browser.support import HEIGHT, WIDTH, assert_nothing_overflows, severe_errors
from tests.serve_workspace import REASONING, judged_workspace, serving  # noqa: F401 - the fixture

SCREENSHOTS = Path(__file__).resolve().parents[2] / "docs" / "images"


def shot(browser, name: str) -> None:
    if os.environ.get("FACEEDIT_BENCH_SCREENSHOTS") == "1":
        SCREENSHOTS.mkdir(parents=True, exist_ok=True)
        browser.save_screenshot(str(SCREENSHOTS / f"serve-{name}.png"))


@pytest.mark.slow(seconds=15)  # the shared workspace's two runs, once per test session
def test_from_the_runs_table_to_a_sessions_images_and_the_judges_reasoning(browser, judged_workspace):  # noqa: F811
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import WebDriverWait

    token = new_token()
    browser.execute_cdp_cmd("Emulation.setDeviceMetricsOverride",
                            {"width": WIDTH, "height": HEIGHT, "deviceScaleFactor": 1, "mobile": False})
    with serving(create_app(judged_workspace, token=token)) as base:
        browser.get(f"{base}/runs")
        assert "needs the access token" in browser.find_element(By.TAG_NAME, "body").text
        refused = f"{base}/runs - Failed to load resource: the server responded with a status of 401 (Unauthorized)"
        assert [e["message"] for e in severe_errors(browser)] == [refused]
        browser.get(f"{base}/runs?token={token}")  # the address `serve` prints
        assert browser.current_url == f"{base}/runs"  # the token traded for the cookie, gone from the address
        rows = browser.find_elements(By.CSS_SELECTOR, "#runs tbody tr")
        assert len(rows) == 2
        shot(browser, "runs")
        assert_nothing_overflows(browser)
        browser.find_element(By.PARTIAL_LINK_TEXT, "scripted@pose").click()
        assert browser.find_element(By.TAG_NAME, "h1").text.startswith("scripted@pose/synthetic/pixel")
        shot(browser, "run")
        assert_nothing_overflows(browser)  # (it opens the report's fold too)
        browser.switch_to.frame(browser.find_element(By.CSS_SELECTOR, "#report-sections iframe"))
        WebDriverWait(browser, 20).until(lambda _: browser.find_elements(By.CSS_SELECTOR, "#headline .figure"))
        browser.switch_to.default_content()
        browser.find_element(By.CSS_SELECTOR, "#figures a.figure-link").click()  # Drop_FSS: its sessions, worst first
        assert "sort=drop_fss" in browser.current_url
        listed = browser.find_elements(By.CSS_SELECTOR, "#session-list tbody tr a")
        assert listed
        browser.find_element(By.CSS_SELECTOR, "#session-list a[href*='session=pose-02']").click()
        assert browser.find_element(By.TAG_NAME, "h1").text.endswith("pose-02")
        images = browser.find_elements(By.CSS_SELECTOR, ".step img")
        assert len(images) == 5
        for image in images:
            browser.execute_script("arguments[0].scrollIntoView()", image)
            WebDriverWait(browser, 20).until(
                lambda _, i=image: browser.execute_script(
                    "return arguments[0].complete && arguments[0].naturalWidth", i))
        reasoning = [r.text for r in browser.find_elements(By.CSS_SELECTOR, ".reasoning") if r.is_displayed()]
        assert len(reasoning) == 4 and all(r.startswith(REASONING) for r in reasoning)
        browser.execute_script("window.scrollTo(0, 0)")
        shot(browser, "session")
        assert_nothing_overflows(browser)
        full = images[1].find_element(By.XPATH, "..").get_attribute("href")  # a click opens the stored image
        browser.find_element(By.XPATH, "//button[text()='Show side by side']").click()  # the identity run's face
        assert len(browser.find_elements(By.CSS_SELECTOR, "section.run-strip")) == 2
        assert len(browser.find_elements(By.CSS_SELECTOR, ".step img")) == 10
        assert_nothing_overflows(browser)
        browser.get(full)
        assert browser.execute_script("return document.images[0].naturalWidth") > 0
        assert severe_errors(browser) == []
