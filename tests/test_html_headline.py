"""report.html reads headline first: each protocol's figures with their CI and n, the largest disparity and
the outcome counts above the "Read first" box, the details after, the components collapsed at the end; long
tables show their top rows; quantities say what their scale is; a run shows only what it measured."""

from __future__ import annotations

import re

from faceedit_bench.plugin.manager import using_sections
from faceedit_bench.plugin.sections import ReportSection, ValueSpec, ViewSpec
from faceedit_bench.report.headline import headline, largest_disparity, scale_note
from faceedit_bench.report.html import render_html_report
from faceedit_bench.report.measures import fss_measured
from faceedit_bench.report.summary import format_summary
from faceedit_bench.report.templates import environment
from tests.test_html_report import v10_report, v11_report


def _position(page: str, needle: str) -> int:
    assert needle in page, needle
    return page.index(needle)


def test_the_headline_comes_first_with_every_figure_its_interval_and_n() -> None:
    page = render_html_report(v11_report())
    headline_html = page[_position(page, '<section id="headline"'):_position(page, "</section>")]
    for label, mean, ci, n in (("Drop_FSS", "12.35", "[9.877, 14.81]", "12"), ("SC", "61.25", "[54.9, 67.6]", "12"),
                               ("OER", "27.5", "[21.45, 33.55]", "11")):
        card = re.search(rf'<div class="label">{label} .*?</div>\n</div>', headline_html, re.S)
        assert card, label
        assert f">{mean}<" in card.group(0) and ci in card.group(0) and f"n = {n}<" in card.group(0)
    # the largest disparity: the flagged one, with its metric, contrast and worst group
    assert "Largest disparity (of 2 contrasts): Drop_FSS by gender" in headline_html and "BIAS" in headline_html
    assert "worst group male" in headline_html
    # the outcome counts: sessions, steps and judge answers
    assert "12 of 15 planned included, 3 excluded" in headline_html
    assert "Steps (60): ok: 51, skipped: 6, refused: 3" in headline_html
    assert "Judge answers (93): ok: 90, parse_error: 2, refused: 1" in headline_html
    # then "Read first", then the details; the components last, collapsed
    assert _position(page, '<section id="headline"') < _position(page, "Read first") < _position(page, 'id="metrics"')
    components = _position(page, '<details class="block" id="components">')
    assert components > _position(page, 'id="worst"') and '<details class="block" id="components" open' not in page


def test_a_skipped_metric_is_named_with_its_reason_in_the_headline() -> None:
    page = render_html_report(v10_report())
    headline_html = page[_position(page, '<section id="headline"'):_position(page, "</section>")]
    assert "SC not measured: semantic consistency needs an MLLM judge (judge=none)" in headline_html
    assert "Largest disparity" not in headline_html  # no disparity in this report: no line


def test_oer_says_its_scale_where_it_is_shown() -> None:
    page = render_html_report(v11_report())
    # in the headline card and in the metrics table: an open upper bound on a x100 scale
    assert page.count("values above 100 are legitimate") == 2
    assert scale_note({"unit": "x100", "bounds": [0, 100]}) == "scale 0–100"
    assert scale_note({"unit": "%", "bounds": None}) == ""


def test_a_largest_disparity_is_chosen_by_bias_then_p_never_by_raw_wd() -> None:
    rows = [{"metric": "sc", "contrast": "gender", "wd": 9.0, "p_value": 0.4, "bias": False, "threshold": 3.0},
            {"metric": "drop_fss", "contrast": "age", "wd": 0.5, "p_value": 0.01, "bias": False, "threshold": 3.0}]
    assert largest_disparity({"disparity": rows}, {})["metric"] == "drop_fss"  # the WDs are on different scales
    rows[0].update(bias=True, bias_status="yes")
    assert largest_disparity({"disparity": rows}, {})["metric"] == "sc"
    rows[0]["bias_status"] = "no"
    rows[1].update(bias=None, bias_status="not_tested", p_holm=None)
    assert largest_disparity({"disparity": rows}, {})["metric"] == "sc"  # a tested contrast before an untested one


def test_a_report_written_before_the_honest_flag_shows_its_flag_as_the_papers_rule_only() -> None:
    legacy = {"metric": "sc", "contrast": "gender", "wd": 9.0, "p_value": 0.001, "bias": True, "threshold": 3.0}
    d = largest_disparity({"disparity": [legacy]}, {})
    assert d["bias"] is False and d["status"] == "not tested" and "Re-report" in d["reason"]
    assert d["rule_flag"] is True


def _tally_section(**kw) -> ReportSection:
    return ReportSection(name="tally", title="Tally", schema={"type": "object"}, **kw)


def test_a_section_declares_its_headline_figures() -> None:
    section = _tally_section(headline=lambda part: [
        {"label": "Tally rate", "mean": part["rate"], "ci_low": 10.0, "ci_high": 30.0, "n": 40, "unit": "%",
         "higher_is_better": False, "bounds": [0, 100], "sub": "counted by the tally"}])
    report = v10_report(tally={"rate": 20.0})
    figures = headline(report, [section])["figures"]
    assert [f["label"] for f in figures] == ["Drop_FSS", "Tally rate"]
    expected = {"mean": 20.0, "n": 40, "unit": "%", "direction": "lower is better", "scale": "scale 0–100",
                "sub": "counted by the tally"}
    assert {key: figures[1][key] for key in expected} == expected
    with using_sections([section]):
        page = render_html_report(report)
    assert '<div class="label">Tally rate <span class="unit">(%)</span></div>' in page
    assert '95% CI <span class="nowrap">[10, 30]</span> &middot; <span class="nowrap">n = 40</span>' in page


def test_without_a_headline_a_section_shows_what_its_first_view_reads_from_its_record() -> None:
    def read(record):
        return {"mean": 100 * record["share"], "ci_low": None, "ci_high": None, "n": record["n"]}

    view = ViewSpec("tally", "tally", "the tally", (ValueSpec("tally_share", "tally", read, unit="%",
                                                              label="{label} of items"),
                                                    ValueSpec("drop_fss")), rank_by="tally_share")
    section = _tally_section(record=lambda part: {"share": part["share"], "n": part["n"]}, views=(view,))
    report = v10_report(tally={"share": 0.25, "n": 8})
    (figure,) = headline(report, [section])["figures"][1:]  # drop_fss is a session metric: shown once
    assert figure["label"] == "tally_share of items" and figure["mean"] == 25.0 and figure["n"] == 8
    assert headline(report, [_tally_section()])["figures"][1:] == []  # no headline, no record: nothing


def _creval_like_report() -> dict:
    report = v11_report()
    report["metrics"] = {"creval": {**report["metrics"]["sc"], "description": "QA score."}}
    report["skipped_metrics"] = {"drop_fss": "not asked (metrics=[creval])"}
    report["trajectory"] = {"fss": report["trajectory"]["fss"]}
    report["measures"] = {"creval": {"label": "CREval", "unit": "x100", "requires": ["judge"]},
                          "drop_fss": {"label": "Drop_FSS", "unit": "%", "requires": ["embedder"]}}
    return report


def test_a_run_that_did_not_measure_identity_shows_no_fss_sections() -> None:
    """A CREval run embeds (FSS_k has points) but skips Drop_FSS: no FSS scale, trajectory or FSS rows."""
    report = _creval_like_report()
    assert not fss_measured(report) and fss_measured(v11_report())
    page = render_html_report(report)
    for absent in ('id="trajectory"', "FSS scale", "FSS_k by demographic group", "edited images without a face"):
        assert absent not in page, absent
    assert "Drop_FSS not measured: not asked (metrics=[creval])" in page
    assert 'id="trajectory"' in render_html_report(v11_report())


def test_the_rate_limit_wait_says_it_is_summed_over_calls() -> None:
    page = render_html_report(v11_report())
    assert "rate-limit wait, summed over calls (s)" in page
    assert "0.26 calls waiting at a time, on average" in page  # 3.25 s of waits in a 12.5 s run


def test_a_long_table_shows_its_top_rows_and_the_rest_behind_a_toggle() -> None:
    report = v11_report()
    report["overediting"]["patterns"] = [
        {"attribute": f"attribute {i}", "category": "hair", "count": 30 - i, "edits": 40, "share": (30 - i) / 40}
        for i in range(25)]
    page = render_html_report(report)
    table = page[_position(page, '<table id="overedit-patterns"'):]
    table = table[:table.index("</table>")]
    assert table.count("<tr>") == 1 + 10 and table.count('<tr class="more">') == 15
    assert 'for="overedit-patterns-more"' in page and "show all 25 patterns (15 more)" in page
    short = render_html_report(v11_report())  # one pattern: no toggle
    assert "overedit-patterns-more" not in short


def test_empty_rows_collapse_into_one_line_that_names_them() -> None:
    template = environment().from_string(
        '{% from "macros.html.j2" import empty_rows %}<table>{{ empty_rows(labels, 4, "no scored items") }}</table>')
    assert template.render(labels=["Indian", "<b>Black</b>"]) == (
        '<table><tr class="empty-rows"><td colspan="4">n/a (no scored items) for 2: Indian, &lt;b&gt;Black&lt;/b&gt;'
        "</td></tr></table>")
    assert template.render(labels=[]) == "<table></table>"


def test_the_console_summary_of_a_run_without_identity_prints_no_fss(tmp_path) -> None:
    text = format_summary(_creval_like_report(), tmp_path, 100)
    assert "FSS scale" not in text and "FSS_k" not in text and "trajectory" not in text
    assert "CREval" in text or "creval" in text  # its metric is still there
    full = format_summary(v11_report(), tmp_path, 100)
    assert "FSS scale: 1 - L2 distance" in full and "FSS_k gender=male" in full
