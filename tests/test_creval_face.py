"""creval_face (an EXTENSION, METHODOLOGY §5.4): questions written from the taxonomy, deterministic
for the four frozen face test sets, answered by the gemini judge against the fake Gemini server."""

from __future__ import annotations

import json

import pytest

from faceedit_bench.run.experiment import build_experiment, run_experiment
from faceedit_bench.scoring.creval.face import face_question_set, step_questions
from faceedit_bench.testsets import TESTSET_NAMES, load_testset
from tests.fakes.gemini import gemini_server

KEY = "creval-face-gemini-key"
FAST = ["limits.max_attempts=2", "limits.backoff_initial_s=0.01", "limits.requests_per_minute=6000",
        "limits.tokens_per_minute=null"]


def test_questions_follow_the_taxonomy():
    session = load_testset("multi_axis").sessions[0]
    qs = step_questions(session, 3)  # a panama hat, after a mustache (k=1) and mutton chops (k=2)
    assert "summer panama hat" in qs["IF"][0].question
    assert [q.weight for q in qs["VC"]] == [3] + [2] * 7  # identity, then the 7 other sub-axes
    assert any("still long mutton chops" in q.question for q in qs["VC"])
    assert len(qs["VQ"]) == 5 and all(q.weight == 1 for q in qs["VQ"])
    assert {q.answer for m in qs.values() for q in m} == {"Yes"}


def run(plugins, compose, synthetic, *overrides: str) -> dict:
    cfg = compose(*synthetic, "analysis.n_resamples=99", *overrides)
    return run_experiment(build_experiment(cfg, plugins), plugins)


def test_creval_face_with_the_gemini_judge_scores_two_editors(plugins, compose, synthetic, monkeypatch):
    from tests.fakes.creval import answer_body

    monkeypatch.setenv("GEMINI_API_KEY", KEY)
    judged = ["judge=gemini", "judge_metrics=[sc,creval_face]", "testset=pose", "run.max_sessions=1"]
    with gemini_server(api_key=KEY, judge_answer=answer_body) as server:
        common = [*judged, f"judge.params.base_url={server.url}", *[f"judge.params.{s}" for s in FAST]]
        moved = run(plugins, compose, synthetic, "editor=noise", *common)
        calls = server.calls
        still = run(plugins, compose, synthetic, "editor=identity", *common)
    print(json.dumps(moved["creval_face"]["table"], indent=1))
    assert calls > 0
    assert moved["metrics"]["creval_face"]["mean"] == pytest.approx(100.0)
    assert still["metrics"]["creval_face_if"]["mean"] == pytest.approx(0.0)
    assert still["metrics"]["creval_face"]["mean"] == pytest.approx(60.0)


#: The creval_face question sets of the four frozen face test sets. A change to the taxonomy questions
#: (faceedit_bench/scoring/creval/face.py) changes these: bump FACE_QUESTIONS_VERSION and re-pin.
FACE_QUESTION_HASHES = {
    "hair": "707514d90f20857dee14bd7c1a2475d266fab847d473f581ea1029b68ba9a94d",
    "accessories": "0d871cba106afed08970265290416619cebf52ea6bec0486c1895672c9f74fd1",
    "pose": "3ac412a48f6e30e38f4e1e56e8ff788e73f9feefc35cf2543f82955f22ae98e9",
    "multi_axis": "11181068d83b0bf9dbe69c6d07129b5a4da7214b2cddfac3c0a055d7ed93f05e",
}


@pytest.mark.parametrize("name", TESTSET_NAMES)
def test_face_question_sets_are_deterministic(name):
    qset = face_question_set(load_testset(name))
    assert qset.content_hash == FACE_QUESTION_HASHES[name]
    assert qset.provenance["extension"] is True and qset.provenance["generator"] == "taxonomy"
    assert len(qset.items) == sum(len(s.steps) for s in load_testset(name).sessions)


def test_the_face_section_renders_in_report_html_and_is_tracked(plugins, compose, synthetic, monkeypatch, tmp_path):
    from faceedit_bench.report.run_report import metrics_for_tracking
    from tests.fakes.creval import answer_body

    monkeypatch.setenv("GEMINI_API_KEY", KEY)
    with gemini_server(api_key=KEY, judge_answer=answer_body) as server:
        report = run(plugins, compose, synthetic, "editor=identity", "judge=gemini", "judge_metrics=[creval_face]",
                     "testset=hair", "run.max_sessions=2", f"judge.params.base_url={server.url}",
                     *[f"judge.params.{s}" for s in FAST])
    section = report["creval_face"]
    assert section["extension"] is True and section["items"]["judged"] == 4 * 2 * 4  # faces x sessions x steps
    assert set(section["by_category"]) == {"Hair"} and section["by_dimension"]
    assert section["most_failed"][0]["metric"] == "IF"  # nothing changed, so the IF questions fail
    assert "creval_face_category_hair_if" in metrics_for_tracking(report)
    (page,) = (tmp_path / "ws" / "runs").glob("identity-*/report.html")
    html = page.read_text()
    assert "QA scores (creval_face): an extension" in html and "Most-failed questions" in html
    assert html.count('class="thumb"') >= 2  # an example's original and edited image
    assert report["groups"]["gender"]["female"]["metrics"]["creval_face"]["n"] > 0  # the usual group statistics
