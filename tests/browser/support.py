"""What the browser tests share: where Chromium and its driver are, and page helpers."""

from __future__ import annotations

import os
import shutil

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


