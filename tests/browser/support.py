"""What the browser tests share: where Chromium and its driver are, and page helpers."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

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


def _start_chromium(profile: Path):
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    options = webdriver.ChromeOptions()
    options.binary_location = BROWSER
    for arg in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
                "--disable-extensions", "--no-first-run", "--disable-background-networking",
                f"--user-data-dir={profile}", "--window-size=1400,1000"):
        options.add_argument(arg)
    options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    with pytest.MonkeyPatch.context() as env:
        env.setenv("SE_OFFLINE", "true")  # selenium-manager must not look anything up online
        driver = webdriver.Chrome(service=Service(DRIVER, log_output=os.devnull), options=options)
    driver.set_page_load_timeout(30)
    return driver


def _quit(driver) -> None:
    try:
        driver.quit()
    except Exception:  # noqa: BLE001, S110 - gone already
        pass


#: The test process's one Chromium (a start costs about 0.75 s of CPU, and 20 tests here and in the plugins used
#: to start one each): each test gets it back as a new browser would be, its own state reset (see ``browser``).
_shared: dict[str, object] = {}


def _alive(driver) -> bool:
    try:
        driver.window_handles  # noqa: B018 - asks the driver: raises when Chromium is gone
    except Exception:  # noqa: BLE001 - whatever broke it, a test gets a new one
        return False
    return True


@pytest.fixture
def browser(request, tmp_path_factory):
    """Headless Chromium at a blank page: no cookies, no console messages, no emulated screen size, no alert
    from an earlier test (the process's one browser, started anew if a test left it unusable)."""
    if MISSING:
        pytest.fail(f"FACEEDIT_BENCH_REQUIRE_BROWSER=1 but the browser test {MISSING}")
    driver = _shared.get("driver")
    if driver is None or not _alive(driver):
        driver = _shared["driver"] = _start_chromium(tmp_path_factory.mktemp("chrome-profile"))
        request.config.add_cleanup(lambda d=driver: _quit(d))
    yield driver
    try:
        driver.switch_to.alert.dismiss()
    except Exception:  # noqa: BLE001, S110 - no alert open: the usual case
        pass
    try:
        driver.switch_to.default_content()
        driver.get("about:blank")
        driver.execute_cdp_cmd("Emulation.clearDeviceMetricsOverride", {})
        driver.execute_cdp_cmd("Network.clearBrowserCookies", {})
        driver.get_log("browser")  # read, so the next test's severe_errors sees only its own
    except Exception:  # noqa: BLE001 - unusable: the next test starts a new one
        _shared.pop("driver", None)
        _quit(driver)


#: The window report pages are checked in: a laptop screen.
WIDTH, HEIGHT = 1280, 800

OVERFLOWING = """
const width = document.documentElement.clientWidth;
return Array.from(document.querySelectorAll('table'))
  .filter(t => t.getBoundingClientRect().right > width + 0.5)
  .map(t => (t.id || t.className || t.rows[0].innerText.slice(0, 60)) + ': right edge at '
            + Math.round(t.getBoundingClientRect().right) + ' px');
"""


def open_at_1280(browser, page: Path) -> None:
    browser.execute_cdp_cmd("Emulation.setDeviceMetricsOverride",
                            {"width": WIDTH, "height": HEIGHT, "deviceScaleFactor": 1, "mobile": False})
    browser.get(page.as_uri())


def assert_nothing_overflows(browser) -> None:
    assert browser.execute_script(OVERFLOWING) == []
    # with every collapsed block open and every hidden row shown
    browser.execute_script("document.querySelectorAll('details').forEach(d => d.open = true);"
                           "document.querySelectorAll('input.show-more').forEach(c => c.checked = true);")
    assert browser.execute_script(OVERFLOWING) == []
    assert browser.execute_script("return document.documentElement.scrollWidth") <= WIDTH


def headline_above_the_fold(browser) -> list[str]:
    from selenium.webdriver.common.by import By

    figures = browser.find_elements(By.CSS_SELECTOR, "#headline .figure")
    assert figures
    for figure in figures:
        bottom = browser.execute_script("return arguments[0].getBoundingClientRect().bottom", figure)
        assert figure.is_displayed() and bottom <= HEIGHT, (figure.text, bottom)
    facts = browser.find_element(By.CSS_SELECTOR, "#headline ul.facts")
    assert browser.execute_script("return arguments[0].getBoundingClientRect().bottom", facts) <= HEIGHT
    return [f.text for f in figures]
