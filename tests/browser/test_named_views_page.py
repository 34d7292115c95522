"""The leaderboard's named views (audit, creval), group tests and judge panel in a real headless Chromium:
each is a choice of the view selector with its own URL fragment, its columns sort best first in the
direction the submissions state, the ranking is the view's own, and the console stays clean."""

from __future__ import annotations

import functools
import threading
from http.server import ThreadingHTTPServer

import pytest

from faceedit_bench.leaderboard.build import build_leaderboard
from faceedit_bench.leaderboard.submit import submit
from tests.browser.support import severe_errors as _severe
from tests.browser.support import visible_view as _visible
from tests.browser.test_leaderboard_page import _column, _no_alert, _QuietHandler, _rows
from tests.leaderboard_named_support import write_named_run
from tests.module_runs import plugins_for_tests

HOSTILE = '<img src=x onerror="window.__pwned=3">'


@pytest.fixture(scope="module")
def named_server(tmp_path_factory):
    """The leaderboard of four submissions, served (built once: the tests only read it)."""
    tmp_path, plugins = tmp_path_factory.mktemp("named"), plugins_for_tests()
    out = tmp_path / "lb" / "submissions"
    for editor, kw in [("identity", {}),
                       ("often", {"soft_erasure": 0.40, "race_change": 0.10, "gap": 22.0, "creval": 52.0}),
                       ("rarely", {"soft_erasure": 0.05, "race_change": 0.30, "gap": 4.0, "creval": 38.0,
                                   "group_tests": True, "panel": True}),
                       ("middling", {"soft_erasure": 0.20, "race_change": 0.20, "gap": 9.0, "creval": 71.0})]:
        run = write_named_run(tmp_path / "ws", editor=editor, **kw)
        submit(str(run), out=out, plugins=plugins, notes=HOSTILE if editor == "middling" else "")
    result = build_leaderboard(tmp_path / "lb", plugins=plugins)
    assert not result.collection.rejected
    handler = functools.partial(_QuietHandler, directory=str(result.page.parent))
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{httpd.server_address[1]}/index.html"
    httpd.shutdown()
    httpd.server_close()


def _choose(driver, contrast: str):
    from selenium.webdriver.support.ui import Select

    Select(driver.find_element("id", "contrast")).select_by_value(contrast)
    shown = _visible(driver)
    assert shown.get_attribute("data-contrast") == contrast
    return shown


def test_audit_view_ranks_by_soft_erasure_and_sorts_gaps_smallest_first(browser, named_server):  # noqa: F811
    browser.get(named_server)
    options = [o.text for o in browser.find_elements("css selector", "#contrast option")]
    assert "audit: soft erasure and race change" in options and "CREval: overall, IF, VC, VQ" in options
    audit = _choose(browser, "audit")
    _, rank = _column(audit, "rank")
    assert [editor for editor, _ in _rows(audit, rank)] == ["rarely", "middling", "often"]
    assert "ranked by" in audit.text and "Soft erasure" in audit.text
    gap, col = _column(audit, "Race change max−min by race")
    gap.click()  # a gap between groups: the first click puts the smallest first
    assert gap.find_element("xpath", "..").get_attribute("aria-sort") == "ascending"
    assert [editor for editor, _ in _rows(audit, col)] == ["rarely", "middling", "often"]
    race, col = _column(audit, "Race change (%)")
    race.click()
    values = [float(v) for _, v in _rows(audit, col)]
    assert values == sorted(values) and _rows(audit, col)[0][0] == "often"
    assert browser.execute_script("return window.location.hash") == "#" + audit.get_attribute("id")
    link = browser.current_url
    browser.get("about:blank")
    browser.get(link)  # the audit view can be linked
    assert _visible(browser).get_attribute("data-contrast") == "audit"
    _no_alert(browser)
    assert browser.execute_script("return window.__pwned") is None
    assert _severe(browser) == []


def test_creval_view_ranks_highest_first_and_tests_and_panel_are_views(browser, named_server):  # noqa: F811
    browser.get(named_server)
    creval = _choose(browser, "creval")
    _, rank = _column(creval, "rank")
    assert [editor for editor, _ in _rows(creval, rank)] == ["middling", "often", "rarely"]
    vq, col = _column(creval, "CREval VQ")
    vq.click()  # higher is better: the first click puts the best first
    assert vq.find_element("xpath", "..").get_attribute("aria-sort") == "descending"
    values = [float(v) for _, v in _rows(creval, col)]
    assert values == sorted(values, reverse=True)

    tests = _choose(browser, "group tests")
    assert "H 5.6, df 2" in tests.text and "race=White" in tests.text
    panel = _choose(browser, "judge panel")
    assert "tolerance (primary gemini)" in panel.text and "gemini: ok 38; gpt: api_error 2, ok 36" in panel.text
    _choose(browser, "all")
    _no_alert(browser)
    assert browser.execute_script("return document.querySelectorAll('img, iframe, object, embed').length") == 0
    assert _severe(browser) == []
