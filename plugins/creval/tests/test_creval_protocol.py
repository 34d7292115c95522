"""CREval's protocol as published (issue 21.9-21.12): the answer requests a fake server receives follow CREval's
answer call (code/answer_with_gpt4o.py @ e56b549): its system message, the source then the edited image at detail
high, a text where only {Questions} is filled in with CREval's question list, max tokens 2000, no temperature;
each question's choices as an enum; answers outside the choices counted; CREval's failure rule as
experiment=creval's headline with the other rule beside it, never mixed."""

from __future__ import annotations

import base64
import csv
import io
import json
import shutil
from pathlib import Path

import numpy as np
import pytest
from faceedit_bench_creval.protocol import protocol
from faceedit_bench_creval.questions import CheckQuestion
from faceedit_bench_creval.scoring import score_metric
from PIL import Image

from faceedit_bench.api import JudgeAnswer, Outcome
from faceedit_bench.testing import run_cli
from tests.fakes.creval import answer_body
from tests.fakes.openai import openai_server

FIXTURE = Path(__file__).resolve().parents[3] / "tests" / "data" / "creval_bench"
KEY = "sk-creval-protocol-test"
# Transcribed from CREval's code/answer_with_gpt4o.py @ e56b549 for this test, independently of the data file.
SYSTEM = "You are an image quality evaluator. Please assess the edited image based on the given questions."
HEADER = "Please answer all questions regarding the edited image (second image) as follows:\n\n"


def test_the_protocol_file_names_its_sources_and_holds_the_published_strings():
    data = protocol()
    answer, writer = data["sources"]["answer"], data["sources"]["writer"]
    assert (answer["path"], answer["commit"]) == ("code/answer_with_gpt4o.py",
                                                  "e56b549aac7db7c41576d4889c2bb5681436b161")
    assert (writer["path"], writer["commit"]) == ("code/gen_question_with_qwen_api.py",
                                                  "93a0cf2b2ba8b495008f02199ca2800ecc01fa29")
    assert all(len(s["sha256"]) == 64 and s["repo"] == "github.com/ChonghuinanWang/CREval" for s in (answer, writer))
    published = data["published"]["answer"]
    assert (published["system"], published["questions_header"]) == (SYSTEM, HEADER)
    assert (published["model"], published["max_tokens"], published["temperature"]) == ("gpt-4o", 2000, None)
    assert data["published"]["writer"]["template_placeholder"] == "{Edit instructions}"
    # the unpublished template is ours, labelled, and fills only CREval's one placeholder
    assert data["reconstruction"]["answer_template"].count("{Questions}") == 1


def edited(folder: Path) -> Path:
    folder.mkdir()
    for src in sorted((FIXTURE / "bench" / "image").glob("*.png")):
        Image.fromarray(255 - np.asarray(Image.open(src).convert("RGB"))).save(folder / src.name)
    return folder


def pixels(data: bytes) -> np.ndarray:
    return np.asarray(Image.open(io.BytesIO(data)).convert("RGB"))


def data_url_bytes(url: str) -> bytes:
    return base64.b64decode(url.split(",", 1)[1])


def test_experiment_creval_sends_crevals_answer_call(plugins, compose, tmp_path, monkeypatch):
    from faceedit_bench.testing import build_run, run_built

    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    with openai_server(api_key=KEY, judge_answer=answer_body) as server:
        cfg = compose("experiment=creval", f"dataset.params.root={FIXTURE}", "editor=noise", "embedder=pixel",
                      "tracking=none", "run.workers=1", f"judge.params.base_url={server.url}/v1")
        run_built(build_run(cfg, plugins), plugins)
    chats = [r.fields for r in server.received if r.path.endswith("/chat/completions")
             and r.fields["response_format"]["json_schema"]["name"] == "creval_answer"]  # not the judge's anchors
    assert len(chats) == 9  # 3 items x IF, VC, VQ
    instructions = [e["instruction"] for e in json.loads((FIXTURE / "bench" / "instruction.json").read_text())]
    for body in chats:
        assert body["model"] == "gpt-4o-2024-11-20"
        assert body["max_completion_tokens"] == 2000 and "temperature" not in body  # CREval sends none
        system, user = body["messages"]
        assert system == {"role": "system", "content": [{"type": "text", "text": SYSTEM}]}
        assert [p["type"] for p in user["content"]] == ["image_url", "image_url", "text"]
        assert {p["image_url"]["detail"] for p in user["content"][:2]} == {"high"}
        text = user["content"][2]["text"]
        assert HEADER + "Q1: " in text and "\nChoices: Yes, No\n\n" in text
        assert not any(i in text for i in instructions)  # CREval fills in only {Questions}
        schema = body["response_format"]["json_schema"]["schema"]
        assert set(schema["required"]) == set(schema["properties"])
        assert all(q.startswith("Q") for q in schema["required"])
        assert all(p["properties"]["answer"]["enum"] == ["Yes", "No"] for p in schema["properties"].values())
    # the first image is the item's source image, the second its edit (the noise editor's output)
    sources = [pixels(p.read_bytes()) for p in sorted((FIXTURE / "bench" / "image").glob("*.png"))]
    for body in chats:
        first, second = (pixels(data_url_bytes(p["image_url"]["url"])) for p in body["messages"][1]["content"][:2])
        assert any(np.array_equal(first, s) for s in sources)
        assert not any(np.array_equal(second, s) for s in sources)


def test_a_writer_request_follows_crevals_question_call(tmp_path, monkeypatch):
    monkeypatch.setenv("CREVAL_KEY", KEY)
    with openai_server(api_key=KEY, judge_answer=answer_body) as server:
        assert run_cli(["questions", "generate", "--bench", str(FIXTURE), "--out", str(tmp_path / "qs.json"),
                     "--workspace", str(tmp_path / "ws"), "--judge", "openai", "-p", f"base_url={server.url}/v1",
                     "-p", "api_key_env=CREVAL_KEY", "-p", "model=Qwen/Qwen2.5-VL-72B-Instruct", "-p", "strict=false",
                     "-p", "temperature=null", "-p", "max_output_tokens=null"]) == 0
    bodies = [r.fields for r in server.received]
    for body in bodies:  # CREval's writer call: no system message, the source image then the text
        assert [m["role"] for m in body["messages"]] == ["user"]
        assert [p["type"] for p in body["messages"][0]["content"]] == ["image_url", "text"]
    weighted = [b for b in bodies if "weight" in json.dumps(b["response_format"])]
    assert len(weighted) == 3  # VC only: CREval's IF and VQ questions all weigh 1
    qset = json.loads((tmp_path / "qs.json").read_text())
    assert {q["weight"] for i in qset["items"] for m in ("IF", "VQ") for q in i["questions"][m]} == {1}


def test_fewer_than_five_written_questions_keep_the_item(tmp_path, monkeypatch):
    from tests.fakes.creval import written_questions

    def three(body):
        text = json.dumps(body)
        return written_questions(weighted="weight" in text, n=3) if "Write at least" in text else answer_body(body)

    monkeypatch.setenv("CREVAL_KEY", KEY)
    out = tmp_path / "qs.json"
    with openai_server(api_key=KEY, judge_answer=three) as server:
        assert run_cli(["questions", "generate", "--bench", str(FIXTURE), "--out", str(out), "--workspace",
                     str(tmp_path / "ws"), "--judge", "openai", "-p", f"base_url={server.url}/v1", "-p",
                     "api_key_env=CREVAL_KEY", "-p", "strict=false"]) == 0
    qset = json.loads(out.read_text())
    assert len(qset["items"]) == 3 and not qset["excluded"]  # CREval's parser keeps what it gets
    assert qset["provenance"]["below_minimum"] == {"minimum": 5, "items": {"IF": 3, "VC": 3, "VQ": 3}}


def answered(*pairs: tuple[str, str]) -> JudgeAnswer:
    value = {q: {"answer": a, "explanation": ""} for q, a in pairs}
    return JudgeAnswer(Outcome.OK, value, json.dumps(value), "", {}, "creval-answer@2", "h")


def test_trivially_different_answers_are_normalised_and_out_of_choice_ones_counted():
    questions = tuple(CheckQuestion(f"Q{i}", f"q{i}?", "Yes") for i in range(1, 6))
    s = score_metric("IF", questions, answered(("Q1", "Yes."), ("Q2", ' "yes" '), ("Q3", "YES!"), ("Q4", "Maybe"),
                                               ("Q5", "No")))
    assert [r.correct for r in s.results] == [True, True, True, False, False]
    assert [r.in_choices for r in s.results] == [True, True, True, False, True]
    assert s.out_of_choice == 1 and s.normalised == 3  # CREval's own match would have scored those 3 wrong
    assert s.score == pytest.approx(3 / 5)


def test_out_of_choice_and_normalised_answers_reach_the_section_and_the_answer_table(tmp_path, monkeypatch):
    bench = tmp_path / "creval"
    shutil.copytree(FIXTURE, bench)
    path = bench / "bench" / "questiions_all" / "VQ" / "i2i_0004.json"
    data = json.loads(path.read_text())
    data["quality_check_questions"][0]["question"] += " [Yes.]"
    data["quality_check_questions"][1]["question"] += " [maybe]"
    path.write_text(json.dumps(data))
    monkeypatch.setenv("CREVAL_KEY", KEY)
    out = tmp_path / "scored.json"
    with openai_server(api_key=KEY, judge_answer=answer_body) as server:
        assert run_cli(["questions", "score", str(bench), "--originals", str(bench / "bench" / "image"), "--edited",
                     str(edited(tmp_path / "edited")), "--out", str(out), "--workspace", str(tmp_path / "ws"),
                     "--judge", "openai", "-p", f"base_url={server.url}/v1", "-p", "api_key_env=CREVAL_KEY"]) == 0
    section = json.loads(out.read_text())
    assert section["out_of_choice_answers"] == {"IF": 0, "VC": 0, "VQ": 1}
    assert section["normalised_answers"] == {"IF": 0, "VC": 0, "VQ": 1}
    rows = list(csv.DictReader((tmp_path / "scored_answers.csv").open()))
    (maybe,) = [r for r in rows if r["answer"] == "Maybe"]
    assert (maybe["correct"], maybe["in_choices"]) == ("false", "false")


def run_with_a_refused_edit(plugins, compose, monkeypatch, *overrides: str, judge_faults=()) -> dict:
    """experiment=creval on the 3-item fixture; the editor refuses i2i_0004 and changes the other two."""
    from faceedit_bench.testing import build_run, run_built

    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    with openai_server(api_key=KEY, judge_answer=answer_body) as server:
        server.script(list(judge_faults))
        cfg = compose("experiment=creval", f"dataset.params.root={FIXTURE}", "editor=scripted",
                      "+editor.params.script={i2i_0004/1: refused}", "+editor.params.noise=0.5", "embedder=pixel",
                      "tracking=none", "run.workers=1", f"judge.params.base_url={server.url}/v1",
                      "judge.params.limits.max_attempts=1", *overrides)
        return run_built(build_run(cfg, plugins), plugins)


def test_experiment_creval_headline_follows_crevals_failure_rule_with_the_other_beside(plugins, compose, tmp_path,
                                                                                    monkeypatch):
    """3 items; the editor refuses one, and the judge refuses the first answer call of another."""
    report = run_with_a_refused_edit(plugins, compose, monkeypatch, judge_faults=["refusal"])
    section = report["creval"]
    assert section["on_failure"] == "zero" and section["items"]["total"] == 3
    assert section["items"]["edit_failed"] == {"step_refused": 1} and section["items"]["failed"] == 2
    assert section["items"]["scored"] == 3 and section["overall"]["overall"]["n"] == 3
    (refused_metric,) = [m for m, why in section["items"]["failures"].items() if why.get("refused")]
    # headline: CREval's rule, every figure over the same 3 items: one item answered in full (every answer
    # "yes": 1.0), one with the refused call's metric at 0, the refused edit at 0
    partly = 1 - {"IF": 0.4, "VC": 0.4, "VQ": 0.2}[refused_metric]
    expected = 100 * (1.0 + partly + 0.0) / 3
    assert section["overall"]["overall"]["mean"] == pytest.approx(expected)
    assert {section["overall"][c]["n"] for c in ("IF", "VC", "VQ", "overall")} == {3}
    assert section["table"][-1]["n"] == 3 and section["table"][-1]["avg"] == pytest.approx(expected)
    # beside it: the other rule, labelled, with its counts
    beside = section["other_rule"]
    assert beside["on_failure"] == "exclude" and beside["left_out"] == 2 and beside["scored"] == 1
    assert beside["overall"]["overall"]["mean"] == pytest.approx(100.0)
    # never mixed: the session values, the metrics block and the sessions table use the same rule
    assert report["metrics"]["creval"]["n"] == 3
    assert report["metrics"]["creval"]["mean"] == pytest.approx(expected)
    (table,) = (tmp_path / "ws" / "runs").glob("scripted-*/sessions.csv")
    values = {r["session_id"]: r["creval"] for r in csv.DictReader(table.open())}
    assert float(values["i2i_0004"]) == 0.0


def test_the_same_run_under_exclude_leaves_the_failures_out_of_every_figure(plugins, compose, monkeypatch):
    report = run_with_a_refused_edit(plugins, compose, monkeypatch, "analysis.creval.on_failure=exclude")
    section = report["creval"]
    assert section["on_failure"] == "exclude" and section["overall"]["overall"]["n"] == 2
    assert report["metrics"]["creval"]["n"] == 2 and section["other_rule"]["overall"]["overall"]["n"] == 3
    assert section["other_rule"]["overall"]["overall"]["mean"] == pytest.approx(100 * 2 / 3)


def test_a_bad_failure_rule_is_refused_before_anything_runs(plugins, compose, tmp_path, monkeypatch):
    from faceedit_bench.api import ConfigError
    from faceedit_bench.testing import build_run

    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    with pytest.raises(ConfigError, match=r"analysis\.creval\.on_failure=zeroes is not allowed"):
        build_run(compose("experiment=creval", f"dataset.params.root={FIXTURE}", "editor=noise",
                                 "embedder=pixel", "tracking=none", "analysis.creval.on_failure=zeroes"), plugins)


@pytest.mark.parametrize("judge", ["gemini", "openai_responses"])
def test_other_judges_send_crevals_system_message_in_their_own_form(judge, tmp_path, monkeypatch):
    """Gemini takes it as its system instruction, the Responses API as its instructions."""
    from tests.fakes.gemini import gemini_server

    monkeypatch.setenv("CREVAL_KEY", KEY)
    common = ["questions", "score", str(FIXTURE), "--originals", str(FIXTURE / "bench" / "image"), "--edited",
              str(edited(tmp_path / "edited")), "--workspace", str(tmp_path / "ws"), "-p", "api_key_env=CREVAL_KEY"]
    if judge == "gemini":
        with gemini_server(api_key=KEY, judge_answer=answer_body) as server:
            assert run_cli([*common, "--judge", "gemini", "-p", f"base_url={server.url}"]) == 0
        sent = [c.body["systemInstruction"] for c in server.gemini_calls]
        assert sent and all(s["parts"] == [{"text": SYSTEM}] for s in sent)
        assert all(c.body["generationConfig"]["responseJsonSchema"]["properties"]["Q1"]["properties"]["answer"]["enum"]
                   == ["Yes", "No"] for c in server.gemini_calls)
    else:
        with openai_server(api_key=KEY, judge_answer=answer_body) as server:
            assert run_cli([*common, "--judge", "openai", "-p", f"base_url={server.url}/v1", "-p", "api=responses"]) == 0
        assert {r.fields["instructions"] for r in server.received} == {SYSTEM}
