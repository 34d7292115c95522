"""report.html in a real headless Chromium at 1280 x 800: the headline figures are on the first screen, no
table runs past the right edge (every collapsed block and hidden row opened), the long-table toggle shows the
hidden rows, and the lazily loaded contact sheets decode. On the default run (``python -m faceedit_bench``)
and on a judged report with every core section."""

from __future__ import annotations

import pytest

from tests.browser.support import assert_nothing_overflows, headline_above_the_fold, open_at_1280, severe_errors
from tests.test_html_report import v11_report
from tests.test_report_default_run import default_run_page  # noqa: F401 - the fixture


@pytest.mark.slow(seconds=10)  # the default run, about 10 s of CPU (once per test session: see the fixture)
def test_the_default_runs_page_opens_with_its_headline_and_fits_1280_px(browser, default_run_page):  # noqa: F811
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import WebDriverWait

    open_at_1280(browser, default_run_page)
    figures = headline_above_the_fold(browser)  # Drop_FSS first, then the image metrics' figures
    drop = figures[0]
    # the identity editor: every Drop_FSS is 0, an unbounded metric without spread, so no interval, and why
    assert drop.startswith("Drop_FSS") and "no CI" in drop and "no interval: every value is the same" in drop
    assert "n = 80 · 8 identities" in drop
    facts = browser.find_element(By.CSS_SELECTOR, "#headline ul.facts").text
    assert "SC not measured" in facts and "Largest disparity" in facts and "Sessions: 80 of 80" in facts
    components = browser.find_element(By.ID, "components")
    assert components.get_attribute("open") is None  # collapsed, after the details
    assert_nothing_overflows(browser)
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
    open_at_1280(browser, page)
    labels = [text.split("\n")[0] for text in headline_above_the_fold(browser)]
    assert labels == ["Drop_FSS (%)", "SC (x100)", "OER (x100)"]
    rows = browser.find_elements(By.CSS_SELECTOR, "#overedit-patterns tr")
    assert sum(r.is_displayed() for r in rows) == 1 + 10
    toggle = browser.find_element(By.CSS_SELECTOR, 'label[for="overedit-patterns-more"]')
    assert toggle.text == "show all 25 patterns (15 more)"
    browser.execute_script("arguments[0].scrollIntoView()", toggle)
    toggle.click()
    assert sum(r.is_displayed() for r in rows) == 1 + 25 and toggle.text == "show the top 10 only"
    assert_nothing_overflows(browser)
    assert severe_errors(browser) == []
