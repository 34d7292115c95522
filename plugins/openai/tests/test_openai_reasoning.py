"""GPT-5 mini and other reasoning models as the openai judge: no temperature sent, the reasoning
effort as a parameter of both APIs, reasoning tokens recorded and priced as output tokens."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
import yaml
from faceedit_bench_openai.judge import OpenAIJudge

from faceedit_bench.api import ConfigError, JudgeRequest, Outcome
from faceedit_bench.api.testing import gradient_image
from faceedit_bench.testing import cost_usd
from tests.fakes.openai import REASONING_TOKENS

CONF = Path(__file__).resolve().parents[1] / "faceedit_bench_openai" / "conf" / "judge"
SCHEMA = {"type": "object", "properties": {"score": {"type": "integer", "minimum": 0, "maximum": 10}},
          "required": ["score"]}


def gpt5_mini_params() -> dict:
    entry = yaml.safe_load((CONF / "gpt5_mini.yaml").read_text())
    base = yaml.safe_load((CONF / "openai.yaml").read_text())
    assert entry["defaults"] == ["openai", "_self_"]
    params = {**base["params"], **entry["params"]}
    params["limits"] = {**base["params"]["limits"], **entry["params"]["limits"]}
    return params


def ask(judge: OpenAIJudge):
    return asyncio.run(judge.ajudge(JudgeRequest("Score it.", (gradient_image(1),), SCHEMA, "s", 3)))


@pytest.mark.parametrize(("api", "path"), [("chat", "/v1/chat/completions"), ("responses", "/v1/responses")])
def test_gpt5_mini_entry_sends_effort_not_temperature_and_counts_reasoning(make_judge, server, api, path):
    params = {k: v for k, v in gpt5_mini_params().items() if k not in ("base_url", "api_key_env", "limits")}
    judge = make_judge(**{**params, "api": api})
    reply = ask(judge)
    assert reply.outcome is Outcome.OK, reply.reason
    sent = server.last(path).fields
    assert sent["model"] == "gpt-5-mini-2025-08-07" and "temperature" not in sent
    if api == "chat":
        assert sent["reasoning_effort"] == "low" and sent["max_completion_tokens"] == 4096
    else:
        assert sent["reasoning"] == {"effort": "low"} and sent["max_output_tokens"] == 4096
    # Reasoning tokens are inside output_tokens (as OpenAI bills them), recorded apart for the report.
    assert reply.usage["reasoning_tokens"] == REASONING_TOKENS["low"]
    assert reply.usage["output_tokens"] > REASONING_TOKENS["low"]
    expected = reply.usage["input_tokens"] * 0.25e-6 + reply.usage["output_tokens"] * 2e-6
    assert cost_usd(reply.usage, judge.prices) == pytest.approx(expected)
    assert judge.prices["as_of"] and judge.describe()["reasoning_effort"] == "low"


def test_a_temperature_for_a_reasoning_model_is_refused_before_any_call(make_judge, server):
    with pytest.raises(ConfigError, match="temperature=null"):
        make_judge(model="gpt-5-mini", temperature=0.0)
    assert server.calls == 0


def test_the_fake_rejects_what_openai_rejects(make_judge, server):
    # The checks above are only worth something if the fake answers as OpenAI does.
    judge = make_judge(model="gpt-4.1-2025-04-14", reasoning_effort="low")
    reply = ask(judge)
    assert reply.outcome is Outcome.API_ERROR and "reasoning_effort" in reply.reason


def test_judges_without_an_effort_keep_their_identity(make_judge):
    description = make_judge().describe()
    assert "reasoning_effort" not in description, "a new key would change every existing judge's cache key"


def test_an_unknown_effort_is_a_clear_error(make_judge):
    with pytest.raises(ConfigError, match="reasoning_effort"):
        make_judge(model="gpt-5-mini", temperature=None, reasoning_effort="extreme")


@pytest.mark.parametrize(("api", "path"), [("chat", "/v1/chat/completions"), ("responses", "/v1/responses")])
def test_labelled_images_verbosity_and_no_schema_go_out_as_paper_b_sends_them(make_judge, server, api, path):
    """paper (b)'s GPT-5 mini call: one user turn of 'SOURCE IMAGE:', the image, 'EDITED IMAGE:', the image, the
    prompt; effort low, verbosity medium, no temperature, no output cap, no schema (JSON parsed from the text)."""
    params = {k: v for k, v in gpt5_mini_params().items() if k not in ("base_url", "api_key_env", "limits")}
    judge = make_judge(**{**params, "api": api, "verbosity": "medium", "max_output_tokens": None,
                          "structured_output": False})
    images = (gradient_image(1), gradient_image(2))
    reply = asyncio.run(judge.ajudge(JudgeRequest("Rate the edit.", images, SCHEMA, "s", 3,
                                                  image_labels=("SOURCE IMAGE:", "EDITED IMAGE:"))))
    assert reply.outcome is Outcome.OK, reply.reason
    received = server.last(path)
    assert [(k, v if k == "text" else None) for k, v in received.parts] == [
        ("text", "SOURCE IMAGE:"), ("image", None), ("text", "EDITED IMAGE:"), ("image", None),
        ("text", "Rate the edit.")]
    assert received.schema is None and "temperature" not in received.fields
    if api == "chat":
        assert received.fields["verbosity"] == "medium" and "max_completion_tokens" not in received.fields
        assert received.fields["reasoning_effort"] == "low"
    else:
        assert received.fields["text"] == {"verbosity": "medium"} and "max_output_tokens" not in received.fields
        assert received.fields["reasoning"] == {"effort": "low"} and received.fields["store"] is False
    description = judge.describe()
    assert description["verbosity"] == "medium" and description["structured_output"] == "none (JSON asked in the prompt)"


def test_verbosity_is_checked_and_only_gpt5_takes_it(make_judge, server):
    with pytest.raises(ConfigError, match="verbosity must be one of low, medium, high"):
        make_judge(verbosity="loud")
    judge = make_judge(model="gpt-4.1-2025-04-14", verbosity="low")  # the fake answers as OpenAI does
    assert ask(judge).outcome is Outcome.API_ERROR
    assert "verbosity" not in make_judge().describe()  # unset: the identity (and the cache) stays as it was
