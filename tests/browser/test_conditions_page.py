"""report.html of a run with prompt conditions in a real headless Chromium: the conditions section, its
paper (b)-style table of Δ per group and the plot of Δ per group render, with a clean console."""

from __future__ import annotations

from tests.browser.support import severe_errors as _severe
from tests.test_conditions import FEATURES, setup  # noqa: F401 (a fixture)


def test_conditions_section_renders_its_table_and_plot(browser, setup):  # noqa: F811
    report, out = setup(f"conditions=[baseline,{FEATURES}]", "run.max_sessions=1")
    assert report["conditions"]["comparisons"]["features"]["overall"]["metrics"]["sc"]["n_pairs"] >= 1
    browser.get((out / "report.html").as_uri())
    section = browser.find_element("id", "conditions")
    assert section.is_displayed() and section.text == "Prompt conditions"
    plots = browser.execute_script(
        "return Array.from(document.querySelectorAll('img.plot')).filter(i => i.alt.startsWith('mean delta'))"
        ".map(i => [i.complete, i.naturalWidth])")
    assert plots and all(complete and width > 300 for complete, width in plots), plots
    table = browser.find_element("css selector", "table.conditions-by-group")
    header = table.find_element("css selector", "tr").text
    assert header.startswith("gender") and "Δ SC" in header, header
    rows = [r.text for r in table.find_elements("css selector", "tr")[1:]]
    assert [r.split()[0] for r in rows] == ["female", "male"]
    heading = browser.find_element("xpath", "//h3[starts-with(., 'features vs baseline')]").text
    assert heading == "features vs baseline: all 8 items", heading
    assert _severe(browser) == []
