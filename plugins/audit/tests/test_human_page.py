"""A run's report.html with the WinoBias and human-evaluation sections, and the standalone human page, in a
real headless Chromium: the sections show, a hostile file name stays text, and the console stays clean."""

from __future__ import annotations

from test_human_ratings import paper_like_ratings

from tests.browser.support import severe_errors as _severe
from tests.browser.test_leaderboard_page import HOSTILE


def test_report_page_shows_winobias_and_human_sections(browser, tmp_path):  # noqa: F811
    from faceedit_bench_audit.human.agreement import human_agreement
    from faceedit_bench_audit.human.ratings import parse_ratings
    from faceedit_bench_audit.human.report import render_human_html
    from faceedit_bench_audit.winobias.adherence import WinoBiasCollector

    from faceedit_bench.testing import write_html_report
    from tests.test_html_report import v11_report

    winobias = WinoBiasCollector()
    winobias.answers["male"].update(stereotyped=8, anti_stereotyped=2, ambiguous=1)
    winobias.answers["female"].update(stereotyped=6, anti_stereotyped=4)
    winobias.unjudged["female"]["step_unsupported"] = 3
    ratings = parse_ratings(paper_like_ratings(), source=HOSTILE)  # the file name is shown on the page
    vlm = {(u[0], u[1], u[2], "edit_success"): 4.5 for u in {r.unit for r in ratings.rows}}
    report = {**v11_report(), "winobias": winobias.finish(), "human_agreement": human_agreement(ratings, vlm)}
    run = tmp_path / "runs" / "r"
    run.mkdir(parents=True)
    browser.get(write_html_report(run, report).as_uri())
    section = browser.find_element("id", "winobias")
    table = section.find_element("xpath", "following-sibling::table")
    assert section.is_displayed() and "Stereotype followed" in table.text and "80.0%" in table.text
    assert "3 unsupported" in table.text
    human = browser.find_element("id", "human-agreement")
    assert human.is_displayed() and "Krippendorff" in browser.page_source and "<script>" in human.find_element(
        "xpath", "following-sibling::p").text
    assert browser.execute_script("return window.__pwned") is None and _severe(browser) == []
    page = tmp_path / "human_agreement.html"
    page.write_text(render_human_html(report["human_agreement"]))
    browser.get(page.as_uri())
    assert "VLM judge vs people" in browser.find_element("tag name", "body").text and _severe(browser) == []
