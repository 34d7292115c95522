"""The openai judge against the fake OpenAI server, through the real openai SDK, both APIs."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable

import pytest
from faceedit_bench_openai.judge import OpenAIJudge
from faceedit_bench_openai.strict_schema import to_strict_schema
from pydantic import BaseModel, ConfigDict, Field

from faceedit_bench.api import Judge, JudgeReply, JudgeRequest, Outcome, RetryableError
from faceedit_bench.api.testing import JudgeContract, gradient_image
from faceedit_bench.testing import MissingSecretError, ParseFailure, parse_answer
from tests.fakes.answers import example_from_schema
from tests.fakes.openai import DEFAULT_KEY, GARBAGE, REFUSAL, SYSTEM_FINGERPRINT, OpenAIFakeServer

CHAT, RESPONSES = "/v1/chat/completions", "/v1/responses"
PATHS = {"chat": CHAT, "responses": RESPONSES}


class Verdict(BaseModel):
    model_config = ConfigDict(extra="forbid")

    editing_success: int = Field(ge=0, le=10)
    reasoning: str = Field(min_length=1)
    note: str | None = None


SCHEMA = Verdict.model_json_schema()
IMAGES = (gradient_image(1), gradient_image(2))


def judge_request(seed: int = 42) -> JudgeRequest:
    return JudgeRequest("Compare the first image with the second.", IMAGES, SCHEMA, "sc_tie", seed)


def ask(judge: OpenAIJudge, request: JudgeRequest | None = None) -> JudgeReply:
    return asyncio.run(judge.ajudge(request or judge_request()))


def test_is_a_judge(make_judge: Callable[..., OpenAIJudge]) -> None:
    judge = make_judge()
    assert isinstance(judge, Judge)
    assert json.loads(json.dumps(judge.describe())) == judge.describe()


def test_chat_sends_images_first_seed_temperature_and_strict_schema(make_judge: Callable[..., OpenAIJudge],
                                                                     server: OpenAIFakeServer) -> None:
    reply = ask(make_judge())
    assert reply.outcome is Outcome.OK
    assert parse_answer(reply.text, Verdict) == {"editing_success": 5, "reasoning": "fake answer",
                                                  "note": "fake answer"}
    sent = server.last(CHAT)
    assert sent.fields["model"] == "gpt-4.1-2025-04-14"
    assert sent.fields["temperature"] == 0 and sent.fields["seed"] == 42
    assert sent.fields["max_completion_tokens"] == 1024
    assert sent.fields["response_format"] == {
        "type": "json_schema", "json_schema": {"name": "sc_tie", "schema": to_strict_schema(SCHEMA), "strict": True}}
    (message,) = sent.fields["messages"]
    assert [part["type"] for part in message["content"]] == ["image_url", "image_url", "text"]
    assert message["content"][0]["image_url"]["detail"] == "high"
    assert message["content"][2]["text"] == "Compare the first image with the second."
    assert sent.images == list(IMAGES)


def test_chat_usage_records_served_model_and_fingerprint(make_judge: Callable[..., OpenAIJudge]) -> None:
    usage = dict(ask(make_judge()).usage)
    assert usage["model_version"] == "gpt-4.1-2025-04-14" and usage["system_fingerprint"] == SYSTEM_FINGERPRINT
    assert usage["input_tokens"] > 2 * 765 and usage["output_tokens"] > 0  # two images at detail high


def test_responses_sends_text_format_and_no_seed(make_judge: Callable[..., OpenAIJudge],
                                                 server: OpenAIFakeServer) -> None:
    reply = ask(make_judge(api="responses"))
    assert reply.outcome is Outcome.OK
    assert parse_answer(reply.text, Verdict)["editing_success"] == 5
    sent = server.last(RESPONSES)
    assert sent.fields["text"] == {"format": {"type": "json_schema", "name": "sc_tie",
                                              "schema": to_strict_schema(SCHEMA), "strict": True}}
    assert "seed" not in sent.fields and sent.fields["temperature"] == 0 and sent.fields["store"] is False
    assert sent.fields["max_output_tokens"] == 1024
    (item,) = sent.fields["input"]
    assert [part["type"] for part in item["content"]] == ["input_image", "input_image", "input_text"]
    assert sent.images == list(IMAGES)
    assert reply.usage["model_version"] == "gpt-4.1-2025-04-14" and "system_fingerprint" not in reply.usage


def test_not_strict_sends_the_schema_unchanged(make_judge: Callable[..., OpenAIJudge],
                                               server: OpenAIFakeServer) -> None:
    ask(make_judge(strict=False))
    assert server.last(CHAT).schema == {"name": "sc_tie", "schema": SCHEMA, "strict": False}


def test_null_temperature_and_max_tokens_are_not_sent(make_judge: Callable[..., OpenAIJudge],
                                                      server: OpenAIFakeServer) -> None:
    ask(make_judge(temperature=None, max_output_tokens=None))
    assert not {"temperature", "max_completion_tokens"} & set(server.last(CHAT).fields)


@pytest.mark.parametrize("api", ["chat", "responses"])
@pytest.mark.parametrize(("fault", "reason"), [("refusal", f"model refusal: {REFUSAL}"),
                                               ("content_filter", "content_filter: ")])
def test_refusals_and_content_filter_are_refused(make_judge: Callable[..., OpenAIJudge], server: OpenAIFakeServer,
                                                 api: str, fault: str, reason: str) -> None:
    server.script([fault])
    reply = ask(make_judge(api=api))
    assert reply.outcome is Outcome.REFUSED and reply.text is None
    assert reply.reason.startswith(reason)


@pytest.mark.parametrize("api", ["chat", "responses"])
def test_garbage_is_returned_raw_for_the_core_to_judge(make_judge: Callable[..., OpenAIJudge],
                                                       server: OpenAIFakeServer, api: str) -> None:
    server.script(["garbage"])
    reply = ask(make_judge(api=api))
    assert (reply.outcome, reply.text) == (Outcome.OK, GARBAGE)
    with pytest.raises(ParseFailure):
        parse_answer(reply.text, Verdict)


def test_custom_judge_answer_is_passed_through(make_judge: Callable[..., OpenAIJudge],
                                               server: OpenAIFakeServer) -> None:
    server.judge_answer = lambda body: json.dumps({"editing_success": 11, "reasoning": "x"})
    reply = ask(make_judge())
    assert reply.outcome is Outcome.OK  # out of range: the core, not the plugin, finds it invalid
    with pytest.raises(ParseFailure, match="editing_success"):
        parse_answer(reply.text, Verdict)


@pytest.mark.parametrize("api", ["chat", "responses"])
@pytest.mark.parametrize(("fault", "kind"), [("429", "rate_limited"), ("500", "server_error"),
                                             ("truncated", "truncated"), ("bad_json", "malformed")])
def test_transient_failures_raise_retryable(make_judge: Callable[..., OpenAIJudge], server: OpenAIFakeServer,
                                            api: str, fault: str, kind: str) -> None:
    server.script([fault])
    with pytest.raises(RetryableError) as caught:
        ask(make_judge(api=api))
    assert caught.value.kind == kind


def test_bad_request_and_wrong_key_are_api_errors(make_judge: Callable[..., OpenAIJudge], server: OpenAIFakeServer,
                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    server.script(["bad_request"])
    reply = ask(make_judge())
    assert reply.outcome is Outcome.API_ERROR and reply.reason.startswith("HTTP 400: ")
    monkeypatch.setenv("FACEEDIT_TEST_OPENAI_KEY", "sk-wrong")
    reply = ask(make_judge(api="responses"))
    assert reply.outcome is Outcome.API_ERROR and reply.reason.startswith("HTTP 401: Incorrect API key")


def test_schema_name_is_made_acceptable(make_judge: Callable[..., OpenAIJudge], server: OpenAIFakeServer) -> None:
    ask(make_judge(), JudgeRequest("p", IMAGES[:1], SCHEMA, "state tracker/v1.2", 0))
    assert server.last(CHAT).schema["name"] == "state_tracker_v1_2"


def test_describe_names_version_and_flavour_never_the_key(make_judge: Callable[..., OpenAIJudge]) -> None:
    description = make_judge(api="responses").describe()
    assert description["version"] == "gpt-4.1-2025-04-14" and description["api"] == "responses"
    assert description["temperature"] == 0 and "not supported" in description["seed"]
    assert DEFAULT_KEY not in json.dumps(description)


def test_missing_key_names_the_variable(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("MY_JUDGE_KEY", raising=False)
    with pytest.raises(MissingSecretError, match="MY_JUDGE_KEY"):
        OpenAIJudge(api_key_env="MY_JUDGE_KEY")


def test_keyless_server_gets_a_placeholder_token() -> None:
    from tests.fakes.openai import openai_server

    with openai_server(api_key="EMPTY") as fake:
        judge = OpenAIJudge(model="Qwen/Qwen2.5-VL-7B-Instruct", base_url=f"{fake.url}/v1", api_key_env=None)
        assert ask(judge).outcome is Outcome.OK
    assert judge.limits.provider_key == f"openai:{fake.url}/v1:None:Qwen/Qwen2.5-VL-7B-Instruct"


def test_expected_answer_fits_the_strict_schema() -> None:
    # what a strict-mode model must produce also validates against the full pydantic schema
    answer = example_from_schema(to_strict_schema(SCHEMA))
    assert set(answer) == {"editing_success", "reasoning", "note"}
    Verdict.model_validate(answer)


class TestOpenAIJudgeContract(JudgeContract):
    @pytest.fixture(params=["chat", "responses"])
    def judge(self, request: pytest.FixtureRequest, make_judge: Callable[..., OpenAIJudge]) -> OpenAIJudge:
        return make_judge(api=request.param)

    @pytest.fixture
    def judge_calls(self, server: OpenAIFakeServer) -> Callable[[], int]:
        return lambda: len(server.received)
