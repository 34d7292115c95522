"""Every hosted provider classifies an answer the same way, through the real SDKs against fakes that speak
each provider's wire protocol: a 200 whose body is not the API's format (binary, an HTML page, JSON cut short)
is one retryable kind, ``malformed``, whose message names the endpoint and quotes the answer; an error code of
an unexpected type (an integer) is read as text, never crashes a string test; and an endpoint that only ever
answers in the wrong format stops the run like one that never answers."""

from __future__ import annotations

import asyncio
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from faceedit_bench.api import EditRequest, Outcome, RetryableError
from faceedit_bench.api.testing import gradient_image
from faceedit_bench.execution.call_errors import EndpointUnreachable, GaveUp, UnexpectedAnswer
from faceedit_bench.execution.calls import Executor
from faceedit_bench.execution.hosted_errors import answer_failure, as_code, as_status
from faceedit_bench.execution.limits import CallLimits
from tests.fakes.base import FakeResponse, FakeServer

ROOT = Path(__file__).resolve().parent.parent
KEY_ENV = "FACEEDIT_TEST_HOSTED_KEY"
FAST = {"requests_per_minute": None, "tokens_per_minute": None, "backoff_initial_s": 0.01, "backoff_max_s": 0.05,
        "timeout_s": 10.0}

BINARY = FakeResponse(200, b"\xff\xd8\xff\xe0\x00\x10JFIF" + bytes(range(256)), content_type="image/jpeg")
BINARY_AS_JSON = FakeResponse(200, b"\xff\xd8\xff\xe0\x00\x10JFIF" + bytes(range(256)))
HTML = FakeResponse(200, b"<html><head><title>502 Bad Gateway</title></head><body>nginx</body></html>",
                    content_type="text/html")
CUT_JSON = FakeResponse(200, b'{"data": [{"b64_json": "iVBORw0KGgo')
BODIES = {"binary": BINARY, "binary_as_json": BINARY_AS_JSON, "html": HTML, "cut_json": CUT_JSON}
QUOTED = {"binary": "binary data", "binary_as_json": "binary data", "html": "502 Bad Gateway", "cut_json": "b64_json"}


def _gemini(url: str) -> Any:
    from faceedit_bench_gemini.editor import NanoBananaEditor

    return NanoBananaEditor(base_url=url, api_key_env=KEY_ENV, api_version="v1beta", limits=FAST)


def _openai(url: str) -> Any:
    from faceedit_bench_openai.editor import GptImageEditor

    return GptImageEditor(base_url=f"{url}/v1", api_key_env=KEY_ENV, limits=FAST)


def _byteplus(url: str) -> Any:
    from faceedit_bench_byteplus.editor import SeedEditEditor

    return SeedEditEditor(base_url=f"{url}/api/v3", api_key_env=KEY_ENV, limits=FAST)


def _replicate(url: str) -> Any:
    from faceedit_bench_replicate.editor import ReplicateEditor

    from tests.fakes.replicate import KONTEXT_VERSION

    return ReplicateEditor(model=KONTEXT_VERSION, base_url=url, api_key_env=KEY_ENV, poll_interval_s=0.02,
                           max_wait_s=2.0, limits=FAST)


def _bfl(url: str) -> Any:
    from faceedit_bench_bfl.editor import KontextProEditor

    return KontextProEditor(base_url=url, api_key_env=KEY_ENV, poll_interval_s=0.02, limits={**FAST, "timeout_s": 400})


def _servers() -> dict[str, tuple[Callable[[], FakeServer], Callable[[str], Any], str]]:
    """provider -> (its fake server, its editor on that server, the API path the first request goes to)."""
    from tests.fakes.bfl import bfl_server
    from tests.fakes.byteplus import ark_server
    from tests.fakes.gemini import gemini_server
    from tests.fakes.openai import openai_server
    from tests.fakes.replicate import KONTEXT_VERSION, replicate_server

    def replicate() -> FakeServer:
        server = replicate_server(token="k-0123456789")
        server.add_version(KONTEXT_VERSION)
        return server

    return {
        "gemini": (lambda: gemini_server(api_key="k-0123456789"), _gemini, ":generateContent"),
        "openai": (lambda: openai_server(api_key="k-0123456789"), _openai, "/v1/images/edits"),
        "byteplus": (lambda: ark_server(api_key="k-0123456789"), _byteplus, "/api/v3/images/generations"),
        "replicate": (replicate, _replicate, "/v1/predictions"),
        "bfl": (lambda: bfl_server(api_key="k-0123456789"), _bfl, "/v1/flux-kontext-pro"),
    }


@pytest.fixture(autouse=True)
def _key(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(KEY_ENV, "k-0123456789")
    for name in ("OPENAI_BASE_URL", "GOOGLE_GEMINI_BASE_URL", "REPLICATE_BASE_URL"):
        monkeypatch.delenv(name, raising=False)


@pytest.fixture(params=["gemini", "openai", "byteplus", "replicate", "bfl"])
def provider(request: pytest.FixtureRequest) -> Iterator[tuple[FakeServer, Any, str]]:
    sys.path.insert(0, str(ROOT))
    make_server, make_editor, path = _servers()[request.param]
    with make_server() as server:
        yield server, make_editor(server.url), path


def edit(editor: Any) -> Any:
    return asyncio.run(editor.aedit(EditRequest(gradient_image(3), "make the hair red", "f", "s", 1, 7)))


@pytest.mark.parametrize("body", list(BODIES))
def test_a_200_not_in_the_api_format_is_malformed_naming_endpoint_and_answer(provider, body):
    server, editor, path = provider
    server.script([BODIES[body]])
    with pytest.raises(RetryableError) as caught:
        edit(editor)
    error = caught.value
    assert isinstance(error, UnexpectedAnswer) and error.kind == "malformed", repr(error)
    assert server.url in str(error) and path in str(error), str(error)
    assert "answered HTTP 200 with" in str(error) and QUOTED[body] in str(error), str(error)
    assert "codec can't decode" not in str(error)
    assert server.calls == 1, "one attempt: the core retries, by one rule for every provider"


@pytest.mark.parametrize("judge", ["gemini", "openai_chat", "openai_responses"])
@pytest.mark.parametrize("body", ["binary_as_json", "html", "cut_json"])
def test_the_judges_classify_such_answers_the_same_way(judge, body):
    from faceedit_bench.api import JudgeRequest

    sys.path.insert(0, str(ROOT))
    request = JudgeRequest("Rate it.", (gradient_image(1), gradient_image(2)),
                           {"type": "object", "properties": {"score": {"type": "integer"}}}, "score", 3)
    if judge == "gemini":
        from faceedit_bench_gemini.judge import GeminiJudge

        from tests.fakes.gemini import gemini_server as make_server

        def make(url: str) -> Any:
            return GeminiJudge(base_url=url, api_key_env=KEY_ENV, api_version="v1beta", limits=FAST)
    else:
        from faceedit_bench_openai.judge import OpenAIJudge

        from tests.fakes.openai import openai_server as make_server

        def make(url: str) -> Any:
            return OpenAIJudge(base_url=f"{url}/v1", api_key_env=KEY_ENV, api=judge.split("_")[1], limits=FAST)
    with make_server(api_key="k-0123456789") as server:
        server.script([BODIES[body]])
        with pytest.raises(UnexpectedAnswer) as caught:
            asyncio.run(make(server.url).ajudge(request))
    assert server.url in str(caught.value) and QUOTED[body] in str(caught.value), str(caught.value)


def test_the_core_takes_an_endpoint_that_only_answers_malformed_for_the_wrong_one():
    limits = CallLimits("p", max_attempts=6, backoff_initial_s=0.001, backoff_max_s=0.001,
                        endpoint="http://127.0.0.1:9/v1", endpoint_source="from editor.params.base_url")

    async def html() -> None:
        raise UnexpectedAnswer("POST http://127.0.0.1:9/v1/images/edits", b"<html>Welcome to nginx</html>")

    with pytest.raises(EndpointUnreachable) as caught:
        asyncio.run(Executor(limits).call(html))
    message = str(caught.value)
    assert "http://127.0.0.1:9/v1 (from editor.params.base_url) answers, but not in its API's format" in message
    assert "Welcome to nginx" in message and "3 answers" in message and "run the same command again" in message


def test_after_a_good_answer_malformed_ones_are_retried_then_given_up():
    limits = CallLimits("p", max_attempts=3, backoff_initial_s=0.001, backoff_max_s=0.001)
    answers = iter(["ok"])

    async def call() -> str:
        for answer in answers:
            return answer
        raise UnexpectedAnswer("POST http://x/v1/a", b"\x00\x01binary")

    executor = Executor(limits)

    async def twice() -> None:
        assert await executor.call(call) == "ok"
        await executor.call(call)

    with pytest.raises(GaveUp, match=r"malformed \(HTTP 200\) after 3 attempt.*binary data"):
        asyncio.run(twice())
    assert executor.stats.retries["malformed"] == 2 and executor.stats.gave_up["malformed"] == 1


def test_an_integer_error_code_is_text_for_every_test_on_it():
    """BytePlus behind a base URL without /api/v3 answered {"code": 404}: ``"X" in code`` raised TypeError."""
    assert as_code(404) == "404" and as_code("QuotaExceeded") == "QuotaExceeded" and as_code(None) is None
    assert as_code({"nested": 1}) is None and as_status("429") == 429 and as_status(True) is None
    assert answer_failure("404", "not found", code=404, refusal=lambda c: "Sensitive" in c) == \
        (Outcome.API_ERROR, "HTTP 404: not found (code: 404)")
    with pytest.raises(RetryableError) as caught:
        answer_failure(503, "busy", code=503, headers={"Retry-After": "3"})
    assert (caught.value.kind, caught.value.retry_after) == ("server_error", 3.0)


@pytest.mark.parametrize("answer", [
    {"error": {"code": 404, "message": "The requested URL was not found"}},  # an integer code, as a gateway gives
    {"error": {"code": ["NotFound"], "message": "odd"}},
    {"code": 404, "message": "flat"},
])
def test_byteplus_reads_error_codes_of_any_type(answer):
    sys.path.insert(0, str(ROOT))
    from tests.fakes.byteplus import ark_server

    with ark_server(api_key="k-0123456789") as server:
        server.script([FakeResponse.json(404, answer)])
        result = edit(_byteplus(server.url))
    assert result.outcome is Outcome.API_ERROR and result.reason.startswith("HTTP 404"), result.reason


def test_bfl_reads_validation_errors_of_any_shape():
    from faceedit_bench_bfl.connection import detail

    assert detail(b'{"detail": [{"loc": 5, "msg": "bad"}, "plain", {"loc": ["body", "seed"], "msg": "int"}]}') == \
        "5: bad; plain; body.seed: int"
