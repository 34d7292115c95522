"""The gemini judge through the real google-genai SDK against the fake Gemini API, alone and
behind the core's JudgeService (which parses, validates and retries unparsable answers)."""

from __future__ import annotations

import json

import pytest
from faceedit_bench_gemini.judge import GeminiJudge
from gemini_helpers import KEY, run

from faceedit_bench.api import JudgeAnswer, JudgeRequest, Outcome, RetryableError
from faceedit_bench.api.testing import JudgeContract, gradient_image
from faceedit_bench.testing import SC_TEMPLATE, STATE_TEMPLATE, Executor, JudgeService, MissingSecretError, parse_answer
from tests.fakes.answers import example_from_schema
from tests.fakes.gemini import GARBAGE_TEXT, IMAGE_INPUT_TOKENS

IMAGES = (gradient_image(1), gradient_image(2))


def judge_request(template=SC_TEMPLATE, seed: int = 3) -> JudgeRequest:
    prompt = template.render(instruction="make the hair red") if template is SC_TEMPLATE else template.text
    return JudgeRequest(prompt, IMAGES, template.json_schema, template.name, seed)


@pytest.mark.parametrize("template", [SC_TEMPLATE, STATE_TEMPLATE], ids=["sc", "state"])
def test_ok_returns_the_raw_json_text(make_judge, fake, template):
    reply = run(make_judge().ajudge(judge_request(template)))
    assert reply.outcome is Outcome.OK
    assert json.loads(reply.text) == example_from_schema(template.json_schema)
    assert parse_answer(reply.text, template.schema)  # the schema sent is one the core can validate against
    assert reply.usage["input_image_tokens"] == 2 * IMAGE_INPUT_TOKENS and reply.usage["output_tokens"] > 0
    assert reply.usage["model_version"] == "gemini-2.5-flash"


def test_request_carries_images_in_order_prompt_schema_seed_and_temperature(make_judge, fake):
    request = judge_request(seed=9)
    run(make_judge().ajudge(request))
    (call,) = fake.gemini_calls
    assert call.model == "gemini-2.5-flash"
    assert call.images == list(IMAGES) and call.image_mime_types == ["image/png", "image/png"]
    assert call.text == request.prompt
    parts = call.body["contents"][0]["parts"]
    assert [("text" in p) for p in parts] == [False, False, True]  # images first, then the prompt
    config = call.generation_config
    assert config["temperature"] == 0.0 and config["seed"] == 9
    assert config["responseMimeType"] == "application/json"
    assert config["responseJsonSchema"] == SC_TEMPLATE.json_schema
    assert "thinkingConfig" not in config and "maxOutputTokens" not in config


def test_thinking_budget_and_max_tokens_are_sent_when_set(make_judge, fake):
    run(make_judge(thinking_budget=0, max_output_tokens=512).ajudge(judge_request()))
    config = fake.gemini_calls[0].generation_config
    # google-genai 3.6 sends the nested key in snake case; Google's proto-JSON parser accepts both spellings
    assert config["thinkingConfig"] in ({"thinkingBudget": 0}, {"thinking_budget": 0})
    assert config["maxOutputTokens"] == 512


@pytest.mark.parametrize(("fault", "outcome", "reason"), [
    ("block", Outcome.REFUSED, "prompt blocked: SAFETY"),
    ("image_safety", Outcome.REFUSED, "finish reason SAFETY"),
    ("bad_request", Outcome.API_ERROR, "HTTP 400: Request contains an invalid argument."),
])
def test_refusals_and_permanent_errors(make_judge, fake, fault, outcome, reason):
    fake.script([fault])
    reply = run(make_judge().ajudge(judge_request()))
    assert reply.outcome is outcome and reply.reason == reason


def test_garbage_comes_back_unparsed(make_judge, fake):
    fake.script(["garbage"])
    reply = run(make_judge().ajudge(judge_request()))
    assert reply.outcome is Outcome.OK and reply.text == GARBAGE_TEXT


@pytest.mark.parametrize(("fault", "kind"), [("429", "rate_limited"), ("500", "server_error"),
                                             ("truncated", "truncated")])
def test_transient_failures_raise_retryable_errors(make_judge, fake, fault, kind):
    fake.script([fault])
    with pytest.raises(RetryableError) as caught:
        run(make_judge().ajudge(judge_request()))
    assert caught.value.kind == kind


def test_custom_judge_answer(api_key):
    from tests.fakes.gemini import gemini_server

    seen = []

    def answer(body):
        seen.append(body)
        return '{"editing_success": 9, "overediting": 8, "reasoning": "custom"}'

    with gemini_server(api_key=KEY, judge_answer=answer) as server:
        reply = run(GeminiJudge(base_url=server.url).ajudge(judge_request()))
    assert json.loads(reply.text)["reasoning"] == "custom" and len(seen) == 1


# -- behind the core's JudgeService -------------------------------------------------------


class _Ledger:
    def __init__(self):
        self.rows: dict[str, JudgeAnswer] = {}

    def get_judgment(self, key):
        return self.rows.get(key)

    def put_judgment(self, key, *, judge_fp, image_hashes, answer):
        self.rows[key] = answer


class _Store:
    def get(self, image_hash):
        return IMAGES[int(image_hash)]


def _ask(judge: GeminiJudge) -> tuple[JudgeAnswer, JudgeService]:
    async def ask():
        service = JudgeService(judge, "judge-fp", Executor(judge.limits), _Ledger(), _Store())
        return await service.ask(SC_TEMPLATE, ["0", "1"], instruction="make the hair red"), service

    return run(ask())


def test_service_parses_a_valid_answer(make_judge, fake):
    answer, service = _ask(make_judge())
    assert answer.outcome is Outcome.OK
    assert answer.value == {"editing_success": 5, "overediting": 5, "reasoning": "fake answer"}
    assert answer.usage["cost_usd"] > 0 and service.calls_made == 1
    assert answer.usage["model_version"] == "gemini-2.5-flash"  # the served version is kept with the answer


def test_service_records_parse_error_after_garbage_twice(make_judge, fake):
    fake.script(["garbage", "garbage"])
    answer, service = _ask(make_judge())
    assert answer.outcome is Outcome.PARSE_ERROR and answer.value is None
    assert answer.raw == GARBAGE_TEXT and "no JSON object" in answer.reason
    assert [c.generation_config["seed"] for c in fake.gemini_calls] == [0, 1]  # a new seed per parse retry


def test_service_retries_a_server_error_then_parses(make_judge, fake):
    fake.script(["503", None])
    answer, service = _ask(make_judge())
    assert answer.outcome is Outcome.OK and service.executor.stats.attempts == 2


def test_service_records_a_refusal(make_judge, fake):
    fake.script(["block"])
    answer, _ = _ask(make_judge())
    assert answer.outcome is Outcome.REFUSED and answer.reason == "prompt blocked: SAFETY"


def test_describe_and_missing_key(make_judge, fake, monkeypatch):
    description = make_judge().describe()
    assert description["provider"] == "gemini" and description["version"] == "gemini-2.5-flash"
    assert description["temperature"] == 0.0 and description["structured_output"] == "responseJsonSchema"
    assert KEY not in json.dumps(description)
    monkeypatch.delenv("GEMINI_API_KEY")
    with pytest.raises(MissingSecretError, match="judge gemini needs an API key .*GEMINI_API_KEY"):
        GeminiJudge()
    monkeypatch.setenv("GOOGLE_API_KEY", KEY)
    assert GeminiJudge().limits.provider_key == "gemini:default:GOOGLE_API_KEY:gemini-2.5-flash"


class TestGeminiJudgeContract(JudgeContract):
    @pytest.fixture
    def judge(self, make_judge):
        return make_judge()

    @pytest.fixture
    def judge_calls(self, fake):
        return lambda: len(fake.gemini_calls)
