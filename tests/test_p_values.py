"""p-values below 0.001 read "< 0.001" in the run report, in compare (all formats) and on the leaderboard."""

from __future__ import annotations

import re

import pytest

from faceedit_bench.compare.comparison import compare_runs
from faceedit_bench.compare.render import format_compare
from faceedit_bench.leaderboard.build import build_leaderboard
from faceedit_bench.leaderboard.submit import submit
from faceedit_bench.leaderboard.views import build_views
from faceedit_bench.report.html import render_html_report
from faceedit_bench.report.templates import fmt_p, fmt_p_equation
from tests.test_compare import _run
from tests.test_html_report import v11_report
from tests.test_leaderboard_support import rewrite_record, write_fake_run


@pytest.mark.parametrize(("p", "text"), [(None, "n/a"), (0.0, "< 0.001"), (0.00099, "< 0.001"), (1e-5, "< 0.001"),
                                         (0.001, "0.001"), (0.01234, "0.012"), (0.61, "0.610"), (1.0, "1.000")])
def test_p_format(p, text) -> None:
    assert fmt_p(p) == text
    assert fmt_p_equation(0.00002) == "p < 0.001" and fmt_p_equation(0.05) == "p = 0.050"


def test_report_shows_small_p_as_below_the_floor() -> None:
    report = v11_report()
    report["disparity"][0]["p_value"] = 2e-5
    report["disparity"][0]["clustered"]["p_value"] = 0.0004
    page = render_html_report(report)
    assert page.count("&lt; 0.001") >= 2
    assert "2e-05" not in page and "0.0004" not in page


def test_compare_shows_small_p_as_below_the_floor(tmp_path) -> None:
    # one face per session: the paired difference is clustered by face, and these are 30 people
    rows_a = [(f"f{i}", f"s{i}", "", {"drop_fss": 10 + 0.01 * i}) for i in range(30)]
    rows_b = [(f"f{i}", f"s{i}", "", {"drop_fss": 40 + 0.02 * i}) for i in range(30)]
    result = compare_runs([_run(tmp_path, "a", v11_report("alpha"), rows_a),
                           _run(tmp_path, "b", v11_report("beta"), rows_b)])
    (drop,) = [m for m in result["paired"][0]["metrics"] if m["metric"] == "drop_fss"]
    assert drop["p_value"] < 1e-10
    assert "p < 0.001" in format_compare(result, "text")
    assert "p < 0.001" in format_compare(result, "markdown")  # a "<" that cannot open a tag stays readable
    assert "&lt; 0.001" in format_compare(result, "html")
    assert not re.search(r"\de-\d", format_compare(result, "text").split("Paired differences")[1])


def test_leaderboard_shows_small_p_as_below_the_floor(tmp_path, plugins) -> None:
    run = write_fake_run(tmp_path / "ws", editor="biased", values=(1.0, 9.0, 1.2, 9.5))
    sub = submit(str(run), out=tmp_path / "lb" / "submissions", plugins=plugins)
    rewrite_record(sub, lambda r: r["disparity"][0].update(p_value=0.00003))
    result = build_leaderboard(tmp_path / "lb", plugins=plugins)
    (view,) = build_views(result.collection.entries, {})
    gender = view.sections[1]
    cells = {c.title: cell for c, cell in zip(gender.columns, gender.rows[0].cells)}
    assert "(p < 0.001)" in cells["bias · drop_fss"].sub  # the paper's rule's session-level p
    assert "p &lt; 0.001" in result.page.read_text() and "p &lt; 0.001" in result.table.read_text()
