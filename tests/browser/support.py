"""What the browser tests share: where Chromium and its driver are, and page helpers."""

from __future__ import annotations

import os
import shutil

import pytest

BROWSER = shutil.which("chromium") or shutil.which("chromium-browser") or shutil.which("google-chrome")
DRIVER = shutil.which("chromedriver")
try:
    import selenium  # noqa: F401

    HAVE_SELENIUM = True
except ImportError:
    HAVE_SELENIUM = False

MISSING = (None if BROWSER and DRIVER and HAVE_SELENIUM else
           "needs chromium + chromedriver on PATH (apt-get install chromium chromium-driver) and selenium "
           f"(found: browser={BROWSER}, driver={DRIVER}, selenium={HAVE_SELENIUM})")
#: CI sets this so that a missing browser fails the run instead of skipping the test.
REQUIRED = os.environ.get("FACEEDIT_BENCH_REQUIRE_BROWSER") == "1"


def severe_errors(driver) -> list[dict]:
    return [entry for entry in driver.get_log("browser") if entry["level"] == "SEVERE"]


def visible_view(driver):
    from selenium.webdriver.common.by import By

    sections = [s for s in driver.find_elements(By.CSS_SELECTOR, "section.view") if s.is_displayed()]
    assert len(sections) == 1, f"{len(sections)} views shown at once"
    return sections[0]


@pytest.fixture
def browser(tmp_path, monkeypatch):
    if MISSING:
        pytest.fail(f"FACEEDIT_BENCH_REQUIRE_BROWSER=1 but the browser test {MISSING}")
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    monkeypatch.setenv("SE_OFFLINE", "true")  # selenium-manager must not look anything up online
    options = webdriver.ChromeOptions()
    options.binary_location = BROWSER
    for arg in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
                "--disable-extensions", "--no-first-run", "--disable-background-networking",
                f"--user-data-dir={tmp_path / 'chrome-profile'}", "--window-size=1400,1000"):
        options.add_argument(arg)
    options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    driver = webdriver.Chrome(service=Service(DRIVER, log_output=os.devnull), options=options)
    driver.set_page_load_timeout(30)
    yield driver
    driver.quit()
