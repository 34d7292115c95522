"""The QA-scores section of report.html in a real headless Chromium: the Table 2 layout and the
examples are shown, the examples' images decode, and a judge's explanation carrying markup stays text."""

from __future__ import annotations

import json

from faceedit_bench.run.experiment import build_experiment, run_experiment
from tests.browser.support import severe_errors as _severe
from tests.browser.test_leaderboard_page import HOSTILE
from tests.fakes.creval import answer_body
from tests.fakes.gemini import gemini_server

KEY = "creval-page-key"


def hostile_answers(body: dict) -> str:
    answer = json.loads(answer_body(body))
    for entry in answer.values():  # one entry per question ID
        entry["explanation"] = HOSTILE
    return json.dumps(answer)


def test_the_qa_section_shows_tables_examples_and_images(browser, plugins, compose, synthetic, tmp_path, monkeypatch):  # noqa: F811
    monkeypatch.setenv("GEMINI_API_KEY", KEY)
    with gemini_server(api_key=KEY, judge_answer=hostile_answers) as server:
        cfg = compose(*synthetic, "editor=identity", "judge=gemini", "judge_metrics=[creval_face]", "testset=pose",
                      "run.max_sessions=1", "analysis.n_resamples=99", f"judge.params.base_url={server.url}",
                      "judge.params.limits.max_attempts=2", "judge.params.limits.requests_per_minute=6000")
        run_experiment(build_experiment(cfg, plugins), plugins)
    (page,) = (tmp_path / "ws" / "runs").glob("identity-*/report.html")
    browser.get(page.as_uri())
    section = browser.find_element("id", "creval_face")
    assert section.is_displayed() and "an extension" in section.text
    text = browser.find_element("tag name", "body").text
    assert "Most-failed questions" in text and "Examples with their answered questions" in text
    assert "Failures: on_failure=exclude" in text and "beside it: on_failure=zero" in text
    thumbs = browser.execute_script(
        "return Array.from(document.querySelectorAll('img.thumb-large')).map(i => [i.complete, i.naturalWidth])")
    assert thumbs and all(complete and width > 0 for complete, width in thumbs), thumbs
    assert HOSTILE in text  # shown as text ...
    assert browser.execute_script("return window.__pwned === undefined")  # ... never run
    assert _severe(browser) == []
