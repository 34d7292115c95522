"""report.html in a real headless Chromium at 1280 x 800: the headline figures are on the first screen, no
table runs past the right edge (every collapsed block and hidden row opened), the long-table toggle shows the
hidden rows, and the lazily loaded contact sheets decode. On the default run (``python -m faceedit_bench``)
and on a judged report with every core section."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.browser.support import severe_errors
from tests.test_audit_run import audit_report  # noqa: F401 - the fixture (a paper (b) run)
from tests.test_html_report import v11_report
from tests.test_report_default_run import default_run_page  # noqa: F401 - the fixture

WIDTH, HEIGHT = 1280, 800

OVERFLOWING = """
const width = document.documentElement.clientWidth;
return Array.from(document.querySelectorAll('table'))
  .filter(t => t.getBoundingClientRect().right > width + 0.5)
  .map(t => (t.id || t.className || t.rows[0].innerText.slice(0, 60)) + ': right edge at '
            + Math.round(t.getBoundingClientRect().right) + ' px');
"""


def _open(browser, page: Path) -> None:
    browser.execute_cdp_cmd("Emulation.setDeviceMetricsOverride",
                            {"width": WIDTH, "height": HEIGHT, "deviceScaleFactor": 1, "mobile": False})
    browser.get(page.as_uri())


def _assert_nothing_overflows(browser) -> None:
    assert browser.execute_script(OVERFLOWING) == []
    # with every collapsed block open and every hidden row shown
    browser.execute_script("document.querySelectorAll('details').forEach(d => d.open = true);"
                           "document.querySelectorAll('input.show-more').forEach(c => c.checked = true);")
    assert browser.execute_script(OVERFLOWING) == []
    assert browser.execute_script("return document.documentElement.scrollWidth") <= WIDTH


def _headline_above_the_fold(browser) -> list[str]:
    from selenium.webdriver.common.by import By

    figures = browser.find_elements(By.CSS_SELECTOR, "#headline .figure")
    assert figures
    for figure in figures:
        bottom = browser.execute_script("return arguments[0].getBoundingClientRect().bottom", figure)
        assert figure.is_displayed() and bottom <= HEIGHT, (figure.text, bottom)
    facts = browser.find_element(By.CSS_SELECTOR, "#headline ul.facts")
    assert browser.execute_script("return arguments[0].getBoundingClientRect().bottom", facts) <= HEIGHT
    return [f.text for f in figures]


@pytest.mark.slow  # the default run, about 45 s
def test_the_default_runs_page_opens_with_its_headline_and_fits_1280_px(browser, default_run_page):  # noqa: F811
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import WebDriverWait

    _open(browser, default_run_page)
    (drop,) = _headline_above_the_fold(browser)
    assert drop.startswith("Drop_FSS") and "95% CI [" in drop and "n = 80" in drop
    facts = browser.find_element(By.CSS_SELECTOR, "#headline ul.facts").text
    assert "SC not measured" in facts and "Largest disparity" in facts and "Sessions: 80 of 80" in facts
    components = browser.find_element(By.ID, "components")
    assert components.get_attribute("open") is None  # collapsed, after the details
    _assert_nothing_overflows(browser)
    # the contact sheets load lazily: scrolled into view, each one decodes
    sheets = browser.find_elements(By.CSS_SELECTOR, "img.sheet")
    assert len(sheets) == 6 and all(s.get_attribute("loading") == "lazy" for s in sheets)
    for sheet in sheets:
        browser.execute_script("arguments[0].scrollIntoView()", sheet)
        WebDriverWait(browser, 20).until(
            lambda _, s=sheet: browser.execute_script("return arguments[0].complete && arguments[0].naturalWidth", s))
    assert severe_errors(browser) == []


def test_a_judged_page_has_its_figures_on_the_first_screen_and_its_long_table_expands(browser, tmp_path):
    from selenium.webdriver.common.by import By

    from faceedit_bench.report.html import render_html_report

    report = v11_report()
    report["overediting"]["patterns"] = [
        {"attribute": f"a rather long intended attribute name {i}", "category": "facial hair", "count": 30 - i,
         "edits": 40, "share": (30 - i) / 40} for i in range(25)]
    page = tmp_path / "report.html"
    page.write_text(render_html_report(report), encoding="utf-8")
    _open(browser, page)
    labels = [text.split("\n")[0] for text in _headline_above_the_fold(browser)]
    assert labels == ["Drop_FSS (%)", "SC (x100)", "OER (x100)"]
    rows = browser.find_elements(By.CSS_SELECTOR, "#overedit-patterns tr")
    assert sum(r.is_displayed() for r in rows) == 1 + 10
    toggle = browser.find_element(By.CSS_SELECTOR, 'label[for="overedit-patterns-more"]')
    assert toggle.text == "show all 25 patterns (15 more)"
    browser.execute_script("arguments[0].scrollIntoView()", toggle)
    toggle.click()
    assert sum(r.is_displayed() for r in rows) == 1 + 25 and toggle.text == "show the top 10 only"
    _assert_nothing_overflows(browser)
    assert severe_errors(browser) == []


def test_a_paper_b_page_has_its_audit_rates_on_the_first_screen_and_fits_1280_px(browser, audit_report):  # noqa: F811
    """The audit's per-group tables once ran to 2026 px: a reason in a number's cell ("n/a: no items; ...")
    could not wrap."""
    _, _, workspace = audit_report
    (page,) = (workspace / "runs").glob("identity-*/report.html")
    _open(browser, page)
    labels = [text.split("\n")[0] for text in _headline_above_the_fold(browser)]
    # the audit section has no headline of its own: its leaderboard view's values, read from its record
    assert {"soft_erasure_rate (%)", "race_change_rate (%)"} <= set(labels)
    _assert_nothing_overflows(browser)
    assert severe_errors(browser) == []
