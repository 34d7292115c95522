"""Gemini 3 Flash as the gemini judge: the thinking level sent, the dated price entry used."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml
from faceedit_bench_gemini.judge import GeminiJudge
from faceedit_bench_gemini.prices import PRICES
from gemini_helpers import run

from faceedit_bench.api import ConfigError, JudgeRequest, Outcome, cost_usd, gradient_image

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
    import inspect

    entry = yaml.safe_load((CONF / "gemini3_flash.yaml").read_text())
    assert set(entry["params"]) <= set(inspect.signature(GeminiJudge).parameters)
