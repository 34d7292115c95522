"""The plots of ``compare --html`` and of the leaderboard in a real headless Chromium (issue 25, items 5 and 6):
every row is labelled by what tells it apart, whole and inside the picture, and every axis is honest: a metric
with a declared range is drawn on all of it, any other on an axis through 0, so 8.5 against 9 is no cliff and
the identity baseline's zeros are not drawn on an axis from -0.4 to 0.4."""

from __future__ import annotations

from pathlib import Path

import pytest

from faceedit_bench.compare.comparison import compare_runs
from faceedit_bench.compare.render import format_compare
from faceedit_bench.leaderboard.build import build_leaderboard
from faceedit_bench.leaderboard.submit import submit
from tests.browser.support import assert_nothing_overflows, open_at_1280
from tests.browser.support import severe_errors as _severe
from tests.browser.support import visible_view as _visible
from tests.test_compare import _run, _with_means
from tests.test_html_report import v11_report
from tests.test_leaderboard_support import write_fake_run

#: Every forest plot on the page that is shown: its axis, and each row's label as drawn (box in the svg).
FORESTS = """
return [...document.querySelectorAll('svg.forest')].filter(s => s.getClientRects().length).map(svg => ({
  title: svg.getAttribute('aria-label'),
  low: parseFloat(svg.dataset.axisLow), high: parseFloat(svg.dataset.axisHigh),
  width: svg.viewBox.baseVal.width,
  rows: [...svg.querySelectorAll('g.row')].map(g => {
    const text = g.querySelector('text.label'), box = text.getBBox();
    return {label: g.dataset.label, drawn: text.textContent, x: box.x, right: box.x + box.width};
  })
}));
"""


#: Every dot and whisker of the shown forest plots that reaches its axis' ends (the frame of its values) or past.
OUTSIDE = """
return [...document.querySelectorAll('svg.forest')].filter(s => s.getClientRects().length).flatMap(svg => {
  const axis = svg.querySelector('line.axis'), low = axis.x1.baseVal.value, high = axis.x2.baseVal.value;
  return [...svg.querySelectorAll('line.ci, circle.mean')].map(m => m.getBBox())
    .filter(b => b.x < low + 2 || b.x + b.width > high - 2)
    .map(b => `${svg.getAttribute('aria-label')}: ${b.x} to ${b.x + b.width} outside ${low} to ${high}`);
});
"""


def _check_labels(forest: dict) -> None:
    labels = [r["label"] for r in forest["rows"]]
    assert len(set(labels)) == len(labels), f"rows that read alike in {forest['title']}: {labels}"
    for row in forest["rows"]:
        assert row["drawn"].replace(" ", "") == row["label"].replace(" ", ""), row  # whole, only wrapped
        assert "…" not in row["drawn"] and row["x"] >= 0 and row["right"] <= forest["width"], row


@pytest.fixture
def compare_page(tmp_path: Path) -> tuple[Path, dict]:
    """Three runs of one editor that differ only in their judge's model and their limits."""
    a = v11_report("nano_banana")
    b = v11_report("nano_banana")
    b["components"]["judge"]["description"]["model_version"] = "gpt-5-mini-2025-08-07"
    runs = [_run(tmp_path, "a", _with_means(a, drop_fss=8.5, sc=29.0)),
            _run(tmp_path, "b", _with_means(b, drop_fss=9.0, sc=31.0)),
            _run(tmp_path, "c", _with_means(v11_report("nano_banana"), drop_fss=8.7, sc=30.0))]
    (runs[2] / "config.yaml").write_text("run:\n  max_faces: 10\n")
    result = compare_runs(runs)
    page = tmp_path / "compare.html"
    page.write_text(format_compare(result, "html"), encoding="utf-8")
    return page, result


def test_compare_plots_name_each_run_by_what_differs(browser, compare_page):
    page, result = compare_page
    browser.get(page.as_uri())
    forests = {f["title"].split(" ")[0]: f for f in browser.execute_script(FORESTS)}
    assert {"Drop_FSS", "SC", "OER"} <= set(forests)
    runs = [r["label"] for r in result["runs"]]
    assert len(set(runs)) == 3 and all("judge" in r and "limits" in r for r in runs)
    for forest in forests.values():
        assert [r["label"] for r in forest["rows"]] == runs  # not "Drop_FSS n=80" three times
        _check_labels(forest)
    assert (forests["SC"]["low"], forests["SC"]["high"]) == (0, 100)  # SC's declared range, whole
    assert forests["Drop_FSS"]["low"] <= 0 < 9 <= forests["Drop_FSS"]["high"]  # through 0, not 8.5 to 9
    assert browser.execute_script(OUTSIDE) == []
    open_at_1280(browser, page)
    assert_nothing_overflows(browser)
    assert _severe(browser) == []


@pytest.fixture
def leaderboard(tmp_path, plugins) -> Path:
    """Editors with long names and close Drop_FSS (8.5 to 9), the identity baseline, and a baseline measured
    alone (another embedder version: a table of its own)."""
    out = tmp_path / "lb" / "submissions"
    for editor, values, embedder in [
            ("identity", (0.0, 0.0, 0.0, 0.0), "1"),
            ("nano_banana_through_a_company_gateway_with_a_long_name", (8.5, 8.6, 8.7, 8.6), "1"),
            ("nano_banana_through_a_company_gateway_with_a_longer_name", (8.9, 9.0, 8.8, 9.0), "1"),
            ("identity", (0.0, 0.0, 0.0, 0.0), "2")]:
        submit(str(write_fake_run(tmp_path / "ws", editor=editor, values=values, embedder_version=embedder)),
               out=out, plugins=plugins)
    build_leaderboard(tmp_path / "lb", plugins=plugins)
    return tmp_path / "lb" / "index.html"


def test_leaderboard_plots_have_whole_labels_and_axes_through_zero(browser, leaderboard):
    from selenium.webdriver.support.ui import Select

    open_at_1280(browser, leaderboard)
    protocol, contrast = (Select(browser.find_element("id", name)) for name in ("protocol", "contrast"))
    seen = {}
    for i in range(len(protocol.options)):
        protocol.select_by_index(i)
        for j in range(len(contrast.options)):
            contrast.select_by_index(j)
            if not browser.find_element("id", "no-view").is_displayed():
                _check_view(browser)
        contrast.select_by_index(0)
        _visible(browser)
        for forest in browser.execute_script(FORESTS):
            _check_labels(forest)
            seen.setdefault(protocol.first_selected_option.text, []).append(forest)
    editors = next(fs for label, fs in seen.items() if "pixel 1 " in label and not label.startswith("all"))
    (drop,) = [f for f in editors if f["title"].startswith("Drop_FSS")]
    assert [r["label"].split(" v1")[0] for r in drop["rows"]] == [
        "[reference] identity", "nano_banana_through_a_company_gateway_with_a_long_name",
        "nano_banana_through_a_company_gateway_with_a_longer_name"]
    assert drop["low"] == 0 and drop["high"] >= 9  # not zoomed to 8.5-9
    (alone,) = next(fs for label, fs in seen.items() if "pixel 2 " in label)
    assert (alone["low"], alone["high"]) == (0, 1)  # the baseline's zeros on a unit axis through 0
    assert _severe(browser) == []


def _check_view(browser) -> None:
    """The shown view at 1280 px: nothing runs past the right edge, every whisker is inside its axis, and each plot
    lists the editors in the order of the view's table (the gender plot as the table, not reversed)."""
    assert_nothing_overflows(browser)
    assert browser.execute_script(OUTSIDE) == []
    view = _visible(browser)
    table = [r.get_attribute("data-id") for r in view.find_elements("css selector", "table.board tbody tr")]
    for forest in browser.execute_script(FORESTS):
        labels = [r["label"] for r in forest["rows"]]
        assert len(labels) == len(dict.fromkeys(table)), (forest["title"], labels, table)
        editors = [next(i for i in table if i.startswith(label.removeprefix("[reference] ").split(" v1")[0] + "-"))
                   for label in labels]
        assert editors == list(dict.fromkeys(table)), (forest["title"], labels, table)


def test_the_results_plot_page_has_the_shared_look_fits_1280_px_and_keeps_whiskers_inside(browser, tmp_path):
    """`results --plot` on runs whose intervals reach past 0 and past the metric's range: the axis takes them in,
    with room at its ends; the page has the report's stylesheet and no horizontal scroll."""
    import pyarrow as pa

    from faceedit_bench.report.results_plot import plot_page

    rows = [{"run_key": key, "editor": editor, "editor_version": "v1", "testset": testset, "dataset": "sample",
             "embedder": "dlib", "embedder_version": "1", "judge": None, "judge_version": None, "excluded": False,
             "drop_fss": value} for key, editor in (("k1", "identity"), ("k2", "a_rather_long_editor_name_" * 3))
            for testset in ("hair", "pose") for value in (-4.0, 0.0, 9.0 if key == "k2" else 0.0, 30.0)]
    page = tmp_path / "plots.html"
    page.write_text(plot_page(pa.Table.from_pylist(rows), []), encoding="utf-8")
    open_at_1280(browser, page)
    assert browser.execute_script("return getComputedStyle(document.body).maxWidth") == "1200px"  # style.css
    (forest,) = browser.execute_script(FORESTS)
    _check_labels(forest)
    assert browser.execute_script(OUTSIDE) == []
    assert_nothing_overflows(browser)
    assert _severe(browser) == []
