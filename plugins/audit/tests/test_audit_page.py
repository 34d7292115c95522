"""report.html's audit section (paper (b)) in a real headless Chromium, from a run of the rubric through
the Gemini + GPT panel against the fake servers (``tests/test_audit_run.py``): the section is reachable
from the navigation, every table has its rows, the per-race rate plot and the example thumbnails decode,
a skipped reason reads as text, and the console stays clean."""

from __future__ import annotations

import pytest

from tests.browser.support import assert_nothing_overflows, headline_above_the_fold, open_at_1280
from tests.browser.support import severe_errors as _severe


@pytest.mark.slow(seconds=7)
def test_audit_section_renders_tables_plot_and_example_grid(browser, audit_report):
    from selenium.webdriver.common.by import By

    _, _, workspace = audit_report
    (page,) = (workspace / "runs").glob("identity-*/report.html")
    browser.get(page.as_uri())
    browser.find_element(By.CSS_SELECTOR, 'nav a[href="#audit"]').click()
    section = browser.find_element(By.ID, "audit")
    assert section.is_displayed() and "Demographic audit" in section.text
    rates = browser.find_element(By.ID, "audit-rates").find_elements(By.TAG_NAME, "tr")
    assert len(rates) == 1 + 6 and "37.5%" in browser.find_element(By.ID, "audit-rates").text  # race change 3/8
    axes = browser.find_element(By.ID, "audit-axes").text
    assert "edit success" in axes and "4.25" in axes
    groups = browser.find_elements(By.CSS_SELECTOR, "table.audit-groups")
    assert len(groups) == 3  # race, gender, age bin
    race = groups[0].text
    assert all(label in race for label in ("Indian", "White", "Black", "East Asian")) and "max − min (pp)" in race
    assert "100.0" in race and "Indian − " in race  # the race-change disparity, Indian highest
    plot = browser.execute_script(
        "const i = document.getElementById('audit-plot'); return [i.complete, i.naturalWidth, i.alt];")
    assert plot[0] and plot[1] > 300 and "per race" in plot[2]
    thumbs = browser.execute_script(
        "return Array.from(document.querySelectorAll('td.audit-example img.thumb')).map(i => i.complete && "
        "i.naturalWidth > 0);")
    assert len(thumbs) >= 6 and all(thumbs)  # a source and an edit per example, three races scored
    assert "age bin '10-19' has no approximate source age" in section.find_element(
        By.XPATH, "following-sibling::p[contains(@class, 'skipped')]").text
    assert _severe(browser) == []


def test_a_paper_b_page_has_its_audit_rates_on_the_first_screen_and_fits_1280_px(browser, audit_report):
    """The audit's per-group tables once ran to 2026 px: a reason in a number's cell ("n/a: no items; ...")
    could not wrap."""
    _, _, workspace = audit_report
    (page,) = (workspace / "runs").glob("identity-*/report.html")
    open_at_1280(browser, page)
    labels = [text.split("\n")[0] for text in headline_above_the_fold(browser)]
    # the audit section has no headline of its own: its leaderboard view's values, read from its record
    assert {"soft_erasure_rate (%)", "race_change_rate (%)"} <= set(labels)
    assert_nothing_overflows(browser)
    assert _severe(browser) == []
