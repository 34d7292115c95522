"""creval_face (an EXTENSION, METHODOLOGY §5.4): questions written from the taxonomy, deterministic
for the four frozen face test sets, answered by the gemini judge against the fake Gemini server."""

from __future__ import annotations

import json

import pytest
from faceedit_bench_creval.face import face_question_set, step_questions

from faceedit_bench.api.judging import Taxonomy, load_testset
from faceedit_bench.testing import build_run, run_built
from tests.fakes.gemini import gemini_server

KEY = "creval-face-gemini-key"
FAST = ["limits.max_attempts=2", "limits.backoff_initial_s=0.01", "limits.requests_per_minute=6000",
        "limits.tokens_per_minute=null"]


def test_questions_follow_the_taxonomy():
    session = load_testset("multi_axis").sessions[0]
    qs = step_questions(session, 3)  # a panama hat, after a mustache (k=1) and mutton chops (k=2)
    assert qs["IF"][0].question == ('Does the person now show the requested headwear, "summer panama hat" '
                                    "(a kind of panama hat)?")
    assert [q.weight for q in qs["VC"]] == [3] + [2] * 7  # identity, then the 7 other sub-axes
    # at least five IF questions per edit, as CREval asks, so that IF is not limited to 0, 50 or 100
    assert len(qs["IF"]) == 5 and all(q.weight == 1 for q in qs["IF"])
    assert qs["IF"][2].question == ("Is the person's headwear now of the kind \"panama hat\", rather than another kind "
                                    "of headwear?")
    assert any("still long mutton chops" in q.question for q in qs["VC"])
    assert len(qs["VQ"]) == 5 and all(q.weight == 1 for q in qs["VQ"])
    assert {q.answer for m in qs.values() for q in m} == {"Yes"}


def run(plugins, compose, synthetic, *overrides: str) -> dict:
    cfg = compose(*synthetic, "analysis.n_resamples=99", *overrides)
    return run_built(build_run(cfg, plugins), plugins)


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
#: (plugins/creval/faceedit_bench_creval/face.py) changes these: bump FACE_QUESTIONS_VERSION and re-pin.
FACE_QUESTION_HASHES = {
    "hair": "616b398acd1ae90107fbec0ed879d4f5c1901f72535292bcda6fdb9c4375aeff",
    "accessories": "10cdf3a3d27cb80319c8664a13f3a686f0b5b56cdd4573051b960e0fea31470c",
    "pose": "251e1e3ebde82ffeb7682be2481d9d7b975f54e764166cafbba8716fa1684f5b",
    "multi_axis": "02aff52e740dbf41f5ebf92712fc20b8f3fcd775d51bde9cb1b7a8e70ffbca5e",
}


@pytest.mark.parametrize("name", Taxonomy.TESTSETS)
def test_face_question_sets_are_deterministic(name):
    qset = face_question_set(load_testset(name))
    assert qset.content_hash == FACE_QUESTION_HASHES[name]
    assert qset.provenance["extension"] is True and qset.provenance["generator"] == "taxonomy"
    assert len(qset.items) == sum(len(s.steps) for s in load_testset(name).sessions)
    assert all(len(i.questions["IF"]) >= 5 for i in qset.items)  # CREval asks at least five per metric


def test_the_face_section_renders_in_report_html_and_is_tracked(plugins, compose, synthetic, monkeypatch, tmp_path):
    from faceedit_bench.testing import metrics_for_tracking
    from tests.fakes.creval import answer_body

    monkeypatch.setenv("GEMINI_API_KEY", KEY)
    with gemini_server(api_key=KEY, judge_answer=answer_body) as server:
        report = run(plugins, compose, synthetic, "editor=identity", "judge=gemini", "judge_metrics=[creval_face]",
                     "testset=hair", "run.max_sessions=2", "run.confidence=0.9", f"judge.params.base_url={server.url}",
                     *[f"judge.params.{s}" for s in FAST])
    section = report["creval_face"]
    assert section["extension"] is True and section["items"]["judged"] == 4 * 2 * 4  # faces x sessions x steps
    assert set(section["by_category"]) == {"Hair"} and section["by_dimension"]
    assert section["confidence"] == 0.9
    assert section["most_failed"][0]["metric"] == "IF"  # nothing changed, so the IF questions fail
    assert "creval_face_category_hair_if" in metrics_for_tracking(report)
    (page,) = (tmp_path / "ws" / "runs").glob("identity-*/report.html")
    html = page.read_text()
    assert "QA scores (creval_face): an extension" in html and "Most-failed questions" in html
    assert html.count('class="thumb-large"') >= 2  # an example's original and edited image
    assert report["groups"]["gender"]["female"]["metrics"]["creval_face"]["n"] > 0  # the usual group statistics


def test_the_issue_command_line_nano_banana_judged_by_gemini(plugins, compose, synthetic, monkeypatch):
    """python -m faceedit_bench editor=nano_banana judge=gemini testset=multi_axis metrics=[fss,creval_face]"""
    from tests.fakes.creval import answer_body

    monkeypatch.setenv("GEMINI_API_KEY", KEY)
    with gemini_server(api_key=KEY, judge_answer=answer_body) as server:
        report = run(plugins, compose, synthetic, "editor=nano_banana", "judge=gemini", "testset=multi_axis",
                     "metrics=[fss,creval_face]", "run.max_sessions=1", "run.max_faces=2",
                     f"editor.params.base_url={server.url}", f"judge.params.base_url={server.url}",
                     *[f"editor.params.{s}" for s in FAST], *[f"judge.params.{s}" for s in FAST])
    assert {"drop_fss", "creval_face", "creval_face_if", "creval_face_vc", "creval_face_vq"} <= set(report["metrics"])
    assert "sc" not in report["metrics"]  # metrics=[...] replaced judge_metrics
    assert report["metrics"]["creval_face"]["n"] == 2
    assert report["creval_face"]["items"]["outcomes"]["IF"] == {"ok": 8}  # 2 faces x 4 steps


def test_metrics_naming_a_judge_metric_without_a_judge_is_refused(plugins, compose, synthetic):
    from faceedit_bench.api import ConfigError

    with pytest.raises(ConfigError, match="need a judge"):
        build_run(compose(*synthetic, "metrics=[fss,creval_face]"), plugins)


def test_creval_answers_mllm_written_questions_per_face_and_scores_two_editors(plugins, compose, synthetic,
                                                                                 monkeypatch, tmp_path):
    """Stage 2 on a dataset's faces (one item per face x single edit, bound to the base image's hash),
    then stage 3 through the engine with analysis.creval.questions=[file] for two editors."""
    from faceedit_bench_creval.generate import SourceItem, generate_question_set

    from tests.fake_plugin import SyntheticDataset
    from tests.fakes.creval import answer_body

    monkeypatch.setenv("GEMINI_API_KEY", KEY)
    testset = tmp_path / "k1.json"
    testset.write_text(json.dumps({"format": 2, "name": "k1", "version": "1", "sessions": [
        {"session_id": "O-01", "steps": [{"instruction": "Present the person as a senior executive",
                                         "prompt_category": "Occupational/Authority"}]}]}))
    faces = list(SyntheticDataset(str(tmp_path / "faces")).faces())
    items = [SourceItem(f"{f.face_id}|O-01", "O-01", 1, "Present the person as a senior executive", f.image,
                        "Occupational", "Authority") for f in faces]
    with gemini_server(api_key=KEY, judge_answer=answer_body) as server:
        judge = plugins.registry.create("judges", "gemini", {"base_url": server.url})
        qset, calls = generate_question_set(items, judge, "gemini", tmp_path / "ws", name="k1-questions")
        assert calls == 12 and len(qset.items) == 4 and all(i.source_image for i in qset.items)
        path = tmp_path / "k1-questions.json"
        path.write_text(qset.to_json())
        common = ["testset=file", f"testset.params.path={testset}", "judge=gemini", "judge_metrics=[creval]",
                  f"analysis.creval.questions=[{path}]", f"judge.params.base_url={server.url}", *[f"judge.params.{s}" for s in FAST]]
        moved = run(plugins, compose, synthetic, "editor=noise", *common)
        still = run(plugins, compose, synthetic, "editor=identity", *common)
    # Q1 of every written list ("... now visible?") fails for the editor that changes nothing: weight 1 of 5 in IF
    # and VQ (written without weights: CREval's IF and VQ questions weigh 1), weight 2 of 11 in VC
    assert moved["metrics"]["creval"]["n"] == still["metrics"]["creval"]["n"] == 4
    assert moved["metrics"]["creval"]["mean"] == pytest.approx(100.0)
    assert still["metrics"]["creval"]["mean"] == pytest.approx(100 * (0.4 * 4 / 5 + 0.4 * 9 / 11 + 0.2 * 4 / 5))
    assert still["metrics"]["creval_vc"]["mean"] == pytest.approx(100 * 9 / 11)
    assert still["creval"]["most_failed"][0]["question"] == "Is the requested change now visible?"
    assert moved["creval"]["items"]["outcomes"]["IF"] == {"ok": 4}
    assert moved["creval"]["question_sets"][0]["content_hash"] == qset.content_hash


def test_the_hashes_do_not_depend_on_the_process(tmp_path):
    import os
    import subprocess
    import sys

    code = ("from faceedit_bench_creval.face import face_question_set as f; "
            "from faceedit_bench.testsets import load_testset as l; print(f(l('multi_axis')).content_hash)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=tmp_path,
                         env={**os.environ, "PYTHONHASHSEED": "12345"}).stdout.strip()
    assert out == FACE_QUESTION_HASHES["multi_axis"]


def test_questions_cli_freezes_shows_and_checks_the_taxonomy_questions(tmp_path, capsys):
    from faceedit_bench.testing import run_cli

    out = tmp_path / "multi_axis_qa.json"
    assert run_cli(["questions", "generate", "--testset", "multi_axis", "--taxonomy", "--out", str(out)]) == 0
    assert FACE_QUESTION_HASHES["multi_axis"] in capsys.readouterr().out
    assert run_cli(["questions", "check", str(out)]) == 0 and "matches the taxonomy generator" in capsys.readouterr().out
    assert run_cli(["questions", "generate", "--testset", "multi_axis", "--taxonomy", "--out", str(out)]) == 2
    assert "never overwritten" in capsys.readouterr().err
    assert run_cli(["questions", "show", "multi_axis", "--item", "multi_axis-01/3"]) == 0
    shown = capsys.readouterr().out
    assert "VC Q1 w3 [Yes] Is the person in the second image recognisably the same person" in shown
    data = json.loads(out.read_text())
    data["items"][0]["questions"]["VC"][0]["weight"] = 1  # tampered after freezing
    out.write_text(json.dumps(data))
    assert run_cli(["questions", "check", str(out)]) == 2 and "changed after it was frozen" in capsys.readouterr().err
