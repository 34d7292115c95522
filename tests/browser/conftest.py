"""The ``browser`` fixture (headless Debian Chromium driven by selenium) for every test in this folder.

Without ``chromium``, ``chromedriver`` or ``selenium`` the tests here are skipped with the reason, except with
``FACEEDIT_BENCH_REQUIRE_BROWSER=1`` (CI), where a missing browser fails them.
"""

from __future__ import annotations

import os

import pytest

from tests.browser.support import BROWSER, DRIVER, MISSING, REQUIRED


def pytest_collection_modifyitems(config, items):
    if MISSING is None or REQUIRED:
        return
    here = os.path.dirname(__file__)
    for item in items:
        if str(item.fspath).startswith(here):
            item.add_marker(pytest.mark.skip(reason=str(MISSING)))


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
