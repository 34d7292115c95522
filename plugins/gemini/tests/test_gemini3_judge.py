"""Gemini 3 Flash as the gemini judge: the thinking level sent, the dated price entry used."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml
from faceedit_bench_gemini.judge import GeminiJudge
from faceedit_bench_gemini.prices import PRICES
from gemini_helpers import run

from faceedit_bench.api import ConfigError, JudgeRequest, Outcome
from faceedit_bench.api.testing import gradient_image
from faceedit_bench.testing import cost_usd

CONF = Path(__file__).resolve().parents[1] / "faceedit_bench_gemini" / "conf" / "judge"
SCHEMA = {"type": "object", "properties": {"score": {"type": "integer"}}, "required": ["score"]}


def test_gemini3_flash_entry_sends_its_model_thinking_level_and_temperature(make_judge, fake):
    entry = yaml.safe_load((CONF / "gemini3_flash.yaml").read_text())
    assert entry["defaults"] == ["gemini", "_self_"]
    judge = make_judge(**entry["params"])
    reply = run(judge.ajudge(JudgeRequest("Score it.", (gradient_image(1),), SCHEMA, "s", 3)))
    assert reply.outcome is Outcome.OK
    call = fake.gemini_calls[0]
    assert call.model == "gemini-3-flash-preview"
    config = call.generation_config
    assert config["temperature"] == 1.0
    assert config["thinkingConfig"] in ({"thinkingLevel": "LOW"}, {"thinking_level": "LOW"})
    assert judge.prices == dict(PRICES["gemini-3-flash-preview"]) and judge.prices["as_of"] == "2026-12-01"
    expected = (reply.usage["input_tokens"] + reply.usage["input_image_tokens"]) * 0.5e-6 + \
        reply.usage["output_tokens"] * 3e-6
    assert cost_usd(reply.usage, judge.prices) == pytest.approx(expected)
    assert judge.describe()["thinking_level"] == "LOW"


def test_judges_without_a_thinking_level_keep_their_identity(make_judge):
    assert "thinking_level" not in make_judge().describe()


@pytest.mark.parametrize(("params", "message"), [({"thinking_level": "max"}, "thinking_level"),
                                                 ({"thinking_level": "low", "thinking_budget": 0}, "not both")])
def test_thinking_mistakes_are_clear_errors(make_judge, params, message):
    with pytest.raises(ConfigError, match=message):
        make_judge(**params)


def test_the_factory_takes_every_parameter_of_the_entry():
    import dataclasses

    entry = yaml.safe_load((CONF / "gemini3_flash.yaml").read_text())
    assert set(entry["params"]) <= {f.name for f in dataclasses.fields(GeminiJudge.params_type)}


def test_labelled_images_and_no_schema_go_out_as_paper_b_sends_them(api_key):
    """One user turn: each label, its image, then the prompt; with structured_output false, no schema (the prompt
    asks for JSON, as paper (b)'s judge code does), through the real SDK."""
    from tests.fakes.gemini import gemini_server

    with gemini_server(api_key=api_key, judge_answer=lambda body: '{"score": 7}') as fake:
        judge = GeminiJudge(model="gemini-3-flash-preview", base_url=fake.url, temperature=0.1,
                            max_output_tokens=3000, structured_output=False, limits={"max_attempts": 1})
        images = (gradient_image(1), gradient_image(2))
        request = JudgeRequest("Rate the edit.", images, SCHEMA, "s", 3,
                               image_labels=("SOURCE IMAGE:", "EDITED IMAGE:"))
        reply = run(judge.ajudge(request))
        assert reply.outcome is Outcome.OK and reply.text == '{"score": 7}'
        (call,) = fake.gemini_calls
    assert [(k, v if k == "text" else None) for k, v in call.parts] == [
        ("text", "SOURCE IMAGE:"), ("image", None), ("text", "EDITED IMAGE:"), ("image", None),
        ("text", "Rate the edit.")]
    assert [v for k, v in call.parts if k == "image"] == list(images)
    assert call.body["contents"][0].get("role") == "user" and len(call.body["contents"]) == 1
    config = call.generation_config
    assert config["temperature"] == 0.1 and config["maxOutputTokens"] == 3000 and "thinkingConfig" not in config
    assert "responseMimeType" not in config and "responseJsonSchema" not in config
    assert judge.describe()["structured_output"] == "none (JSON asked in the prompt)"
    with pytest.raises(ValueError, match="2 image"):
        JudgeRequest("x", images, SCHEMA, "s", 3, image_labels=("only one",))
