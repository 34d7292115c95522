"""The built leaderboard page in a real headless Chromium: columns sort in the metric's
direction, views switch and have URL fragments, the identity baseline is a reference row,
injected markup stays text, and the console stays clean; and a run's report.html shows its plots.

Needs ``chromium`` and ``chromedriver`` (Debian: ``apt-get install chromium chromium-driver``;
``.ci/run`` installs them) and the ``selenium`` package; skipped with the reason otherwise,
except with ``FACEEDIT_BENCH_REQUIRE_BROWSER=1`` (CI), where a missing browser fails.
"""

from __future__ import annotations

import functools
import threading
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from faceedit_bench.leaderboard.build import build_leaderboard
from faceedit_bench.leaderboard.submit import submit
from tests.browser.support import severe_errors as _severe
from tests.browser.support import visible_view as _visible
from tests.module_runs import plugins_for_tests
from tests.test_leaderboard_support import rewrite_record, write_fake_run
from tests.test_report_default_run import default_run_page  # noqa: F401 - the fixture

HOSTILE = '<script>window.__pwned=1;alert(1)</script><img src=x onerror="window.__pwned=2">'


@pytest.fixture(scope="module")
def site(tmp_path_factory) -> Path:
    """Five submissions: three comparable ones (one with a hostile name and notes) and the identity baseline,
    one measured with another embedder version (a second measurement view). Built once: the tests only read it."""
    tmp_path, plugins = tmp_path_factory.mktemp("site"), plugins_for_tests()
    out = tmp_path / "lb" / "submissions"
    for editor, values, embedder in [("identity", (0.0, 0.0, 0.0, 0.0), "1"),
                                     ("alpha", (3.0, 3.4, 3.1, 3.6), "1"), ("beta", (1.0, 1.3, 1.2, 1.1), "1"),
                                     ("gamma", (2.0, 2.2, 2.4, 2.1), "1"), ("delta", (5.0, 5.1, 5.2, 5.3), "2")]:
        run = write_fake_run(tmp_path / "ws", editor=editor, values=values, embedder_version=embedder)
        submit(str(run), out=out, plugins=plugins, notes=HOSTILE if editor == "gamma" else "")
    gamma = next(out.glob("gamma-*"))
    rewrite_record(gamma, lambda r: r["editor"].update(name=HOSTILE[:100]))
    result = build_leaderboard(tmp_path / "lb", plugins=plugins)
    assert not result.collection.rejected
    return result.page.parent


@pytest.fixture(scope="module")
def server(site):
    handler = functools.partial(_QuietHandler, directory=str(site))
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{httpd.server_address[1]}/index.html"
    httpd.shutdown()
    httpd.server_close()


class _QuietHandler(SimpleHTTPRequestHandler):
    def log_message(self, format, *args):  # noqa: A002 - the stdlib's signature
        pass


def _column(section, title: str) -> tuple[object, tuple[object, int]]:
    """The sort button of the column ``title`` and where the column is: its table (a part of a split table) and
    its index there."""
    from selenium.webdriver.common.by import By

    buttons = section.find_elements(By.CSS_SELECTOR, "th button.sort")
    for button in buttons:
        if button.text.startswith(title):
            return button, (button.find_element(By.XPATH, "ancestor::table[1]"), int(button.get_attribute("data-col")))
    raise AssertionError(f"no column {title!r} in {[b.text for b in buttons]}")


def _rows(section, column: tuple[object, int] | int) -> list[tuple[str, str]]:
    """(editor cell text's first word, the column's data-value) of each ranked row, in page order; ``column`` as
    :func:`_column` gives it, or an index in the section's first table."""
    from selenium.webdriver.common.by import By

    table, index = column if isinstance(column, tuple) else (section.find_element(By.CSS_SELECTOR, "table"), column)
    out = []
    for row in table.find_elements(By.CSS_SELECTOR, "tbody.ranked tr"):
        cells = row.find_elements(By.TAG_NAME, "td")
        out.append((row.get_attribute("data-id").split("-")[0], cells[index].get_attribute("data-value")))
    return out


def _reference(section) -> list[tuple[str, str]]:
    """(editor, rank cell) of the reference rows, which sit above the ranked rows."""
    from selenium.webdriver.common.by import By

    rows = section.find_elements(By.CSS_SELECTOR, "tbody tr")
    marked = [r for r in rows if r.get_attribute("data-reference") == "true"]
    assert rows[: len(marked)] == marked, "reference rows are not above the ranked rows"
    return [(r.get_attribute("data-id").split("-")[0], r.find_elements(By.TAG_NAME, "td")[0].text) for r in marked]


def _no_alert(driver) -> None:
    from selenium.common.exceptions import NoAlertPresentException

    try:
        text = driver.switch_to.alert.text
    except NoAlertPresentException:
        return
    raise AssertionError(f"an alert opened: {text!r}")


def test_page_sorts_switches_views_and_runs_no_injected_code(browser, server, site):
    from selenium.webdriver.support.ui import Select

    browser.get(server)
    overall = _visible(browser)
    assert overall.get_attribute("data-contrast") == "all"
    _, rank_col = _column(overall, "rank")
    assert [r[0] for r in _rows(overall, rank_col)] == ["beta", "gamma", "alpha"]  # ranked: drop_fss lower is better

    button, col = _column(overall, "drop_fss")
    button.click()  # first click: best first, i.e. ascending for a lower-is-better metric
    assert button.find_element("xpath", "..").get_attribute("aria-sort") == "ascending"
    values = [float(v) for _, v in _rows(overall, col)]
    assert values == sorted(values) and [r[0] for r in _rows(overall, col)] == ["beta", "gamma", "alpha"]
    button.click()
    values = [float(v) for _, v in _rows(overall, col)]
    assert values == sorted(values, reverse=True) and _rows(overall, col)[0][0] == "alpha"
    assert button.find_element("xpath", "..").get_attribute("aria-sort") == "descending"
    assert _reference(overall) == [("identity", "ref")]  # the baseline stays above, unranked, whatever the order
    editor, col = _column(overall, "editor")
    editor.click()
    names = [v for _, v in _rows(overall, col)]
    assert names == sorted(names)

    Select(browser.find_element("id", "contrast")).select_by_value("gender")
    by_gender = _visible(browser)
    assert by_gender.get_attribute("data-contrast") == "gender"
    assert by_gender.get_attribute("data-protocol") == overall.get_attribute("data-protocol")
    female, col = _column(by_gender, "drop_fss · female")
    female.click()
    values = [float(v) for _, v in _rows(by_gender, col)]
    assert values == sorted(values)

    protocol = Select(browser.find_element("id", "protocol"))
    assert len(protocol.options) == 2
    protocol.select_by_index(1)
    other = _visible(browser)
    assert other.get_attribute("data-protocol") != overall.get_attribute("data-protocol")
    assert [r[0] for r in _rows(other, 0)] == ["delta"]  # another embedder version: its own table
    Select(browser.find_element("id", "contrast")).select_by_value("all")
    assert _visible(browser).get_attribute("data-contrast") == "all"

    # The hostile editor name and notes are shown as text; nothing they contain ran or was created.
    _no_alert(browser)
    assert browser.execute_script("return window.__pwned") is None
    assert browser.execute_script("return document.scripts.length") == 1
    assert browser.execute_script("return document.querySelectorAll('img, iframe, object, embed').length") == 0
    protocol.select_by_index(0)
    assert "<script>window.__pwned=1;alert(1)</script>" in _visible(browser).text
    assert _severe(browser) == []


def test_page_from_a_local_file_has_no_console_errors(browser, site):
    browser.get(site.joinpath("index.html").as_uri())
    _visible(browser)
    _no_alert(browser)
    assert browser.execute_script("return window.__pwned") is None
    assert _severe(browser) == []


def test_the_reference_row_is_marked_and_not_ranked_first(browser, server):
    browser.get(server)
    overall = _visible(browser)
    assert _reference(overall) == [("identity", "ref")]
    _, rank_col = _column(overall, "rank")
    first = overall.find_elements("css selector", "tbody.ranked tr")[0]
    assert first.get_attribute("data-id").startswith("beta-") and first.find_elements("tag name", "td")[0].text.splitlines()[0] == "1"
    assert "reference" in overall.find_element("css selector", "tbody.reference tr").get_attribute("class")


def test_the_url_fragment_selects_a_view_and_follows_the_selection(browser, server):
    from selenium.webdriver.support.ui import Select

    browser.get(server)
    first = _visible(browser).get_attribute("id")
    Select(browser.find_element("id", "contrast")).select_by_value("gender")
    by_gender = _visible(browser).get_attribute("id")
    assert browser.execute_script("return window.location.hash") == "#" + by_gender

    protocol = Select(browser.find_element("id", "protocol"))
    protocol.select_by_index(1)
    Select(browser.find_element("id", "contrast")).select_by_value("all")
    other = _visible(browser).get_attribute("id")
    link = browser.current_url
    assert link.endswith("#" + other) and other != first

    browser.get("about:blank")
    browser.get(link)  # a fresh page opened from the link shows that view, with the controls set to it
    shown = _visible(browser)
    assert shown.get_attribute("id") == other
    assert Select(browser.find_element("id", "protocol")).first_selected_option.get_attribute("value") == \
        shown.get_attribute("data-protocol")
    assert Select(browser.find_element("id", "contrast")).first_selected_option.get_attribute("value") == "all"

    browser.execute_script("window.location.hash = arguments[0]", by_gender)
    assert _visible(browser).get_attribute("id") == by_gender  # following an in-page link
    browser.execute_script("window.location.hash = 'v-nothing-here'")
    assert _visible(browser).get_attribute("id") == by_gender  # an unknown fragment: no change
    assert _severe(browser) == []


def test_report_page_renders_its_plots(browser, tmp_path):
    """report.html in the browser: every plot (trajectories, per-group trajectories, the disparity forest, the
    overediting heatmap) is an image that decodes, and p-values below 0.001 read "< 0.001"."""
    from faceedit_bench.report.html_file import write_html_report
    from tests.test_html_report import v11_report

    report = v11_report()
    report["disparity"][0]["p_value"] = 0.00002
    run = tmp_path / "runs" / "r"
    run.mkdir(parents=True)
    page = write_html_report(run, report)
    browser.get(page.as_uri())
    plots = browser.execute_script(
        "return Array.from(document.querySelectorAll('img.plot')).map(i => [i.alt, i.complete, i.naturalWidth])")
    alts = [alt for alt, _, _ in plots]
    for wanted in ("per-step trajectories", "FSS trajectories per demographic group", "forest plot",
                   "overediting matrix"):
        assert any(alt.startswith(wanted) for alt in alts), (wanted, alts)
    assert all(complete and width > 300 for _, complete, width in plots), plots
    forest = browser.find_element("id", "disparity-forest")
    assert forest.is_displayed() and forest.size["width"] > 300
    assert "< 0.001" in browser.find_element("id", "disparity").find_element("xpath", "following-sibling::table").text
    assert _severe(browser) == []


@pytest.mark.slow(seconds=10)  # the default run (once per test session: see the fixture)
def test_a_leaderboard_of_the_default_run_fits_1280_px_and_its_split_table_sorts_as_one(
        browser, tmp_path, plugins, default_run_page):  # noqa: F811
    """The default run measures ten metrics: its board, 2,071 px wide in one table, is split into parts that fit,
    each repeating rank, editor and status; a sort in one part orders every part. Every view fits 1280 px."""
    import json
    import shutil

    from selenium.webdriver.support.ui import Select

    from tests.browser.support import assert_nothing_overflows, open_at_1280
    from tests.browser.test_plot_labels_and_axes import OUTSIDE

    out = tmp_path / "lb" / "submissions"
    target = submit(str(default_run_page.parent), out=out, plugins=plugins)
    for name in ("alpha", "beta"):  # two more editors with the same numbers
        copy = shutil.copytree(target, out / f"{name}-{target.name.split('-', 1)[1]}")
        record = json.loads((copy / "submission.json").read_text())
        record["editor"]["name"], record["id"] = name, copy.name
        (copy / "submission.json").write_text(json.dumps(record))
    result = build_leaderboard(tmp_path / "lb", plugins=plugins)
    assert len(result.collection.entries) == 3 and not result.collection.rejected
    open_at_1280(browser, result.page)
    protocol, contrast = (Select(browser.find_element("id", name)) for name in ("protocol", "contrast"))
    for i in range(len(protocol.options)):
        protocol.select_by_index(i)
        for j in range(len(contrast.options)):
            contrast.select_by_index(j)
            if not browser.find_element("id", "no-view").is_displayed():
                _visible(browser)
                assert_nothing_overflows(browser)
                assert browser.execute_script(OUTSIDE) == []
    protocol.select_by_index(0)
    contrast.select_by_value("all")
    parts = _visible(browser).find_elements("css selector", "table.board")
    assert len(parts) >= 2
    for part in parts:
        assert [b.text for b in part.find_elements("css selector", "th button.sort")][:3] == ["rank", "editor", "status"]

    def orders() -> list[list[str]]:
        return [[r.get_attribute("data-id").split("-")[0] for r in part.find_elements("css selector", "tbody.ranked tr")]
                for part in parts]

    editor = parts[-1].find_elements("css selector", "th button.sort")[1]
    for expected in (["alpha", "beta"], ["beta", "alpha"]):
        editor.click()
        assert orders() == [expected] * len(parts)
    assert _severe(browser) == []
