"""The gpt_image editor against the fake OpenAI server, through the real openai SDK."""

from __future__ import annotations

import asyncio
import io
import json
import socket
from collections.abc import Callable
from typing import Any

import pytest
from faceedit_bench_openai.editor import GptImageEditor
from PIL import Image

from faceedit_bench.api import AsyncEditor, ConfigError, EditRequest, EditResult, Outcome, RetryableError
from faceedit_bench.api.testing import EditorContract, gradient_image
from faceedit_bench.testing import Executor, MissingSecretError, cost_usd
from tests.fakes.answers import fake_edit
from tests.fakes.openai import DEFAULT_KEY, SAFETY_MESSAGE, OpenAIFakeServer, openai_error, openai_server

EDITS = "/v1/images/edits"


def request(image: bytes | None = None, instruction: str = "make the hair red") -> EditRequest:
    return EditRequest(image or gradient_image(3), instruction, "face-1", "hair-01", 1, 11)


def edit(editor: GptImageEditor, req: EditRequest | None = None) -> EditResult:
    return asyncio.run(editor.aedit(req or request()))


def retryable(editor: GptImageEditor) -> RetryableError:
    with pytest.raises(RetryableError) as caught:
        edit(editor)
    return caught.value


class TestGptImageContract(EditorContract):
    @pytest.fixture
    def editor(self, make_editor: Callable[..., GptImageEditor]) -> GptImageEditor:
        return make_editor()


def test_ok_sends_the_image_as_png_with_input_fidelity(make_editor: Callable[..., GptImageEditor],
                                                       server: OpenAIFakeServer) -> None:
    req = request()
    result = edit(make_editor(), req)
    assert result.outcome is Outcome.OK
    assert result.image == fake_edit(req.image, req.instruction)
    sent = server.last(EDITS)
    assert sent.files == [("image", "image.png", "image/png", req.image)]
    assert sent.fields == {"model": "gpt-image-1", "prompt": req.instruction, "n": "1", "size": "auto",
                           "quality": "high", "input_fidelity": "high", "output_format": "png"}


def test_usage_is_in_cost_keys_and_priced_once(make_editor: Callable[..., GptImageEditor],
                                               server: OpenAIFakeServer) -> None:
    editor = make_editor()
    result = edit(editor)
    usage = dict(result.usage)
    # the fake's gpt-image usage block: input_tokens = image + text, output all image tokens
    raw = {"text": len("make the hair red") // 4, "image": 323 + 4160, "out": 4160}
    assert usage == {"images_out": 1, "input_tokens": raw["text"], "input_image_tokens": raw["image"],
                     "output_image_tokens": raw["out"], "output_tokens": 0}
    expected = raw["text"] * 5e-6 + raw["image"] * 1e-5 + raw["out"] * 4e-5
    assert cost_usd(usage, editor.prices) == pytest.approx(expected)


@pytest.mark.parametrize(("fmt", "mime", "filename"), [("JPEG", "image/jpeg", "image.jpg"),
                                                        ("WEBP", "image/webp", "image.webp")])
def test_accepted_formats_go_unchanged(make_editor: Callable[..., GptImageEditor], server: OpenAIFakeServer,
                                       fmt: str, mime: str, filename: str) -> None:
    buf = io.BytesIO()
    Image.open(io.BytesIO(gradient_image(4))).save(buf, format=fmt)
    assert edit(make_editor(), request(buf.getvalue())).outcome is Outcome.OK
    assert server.last(EDITS).files == [("image", filename, mime, buf.getvalue())]


def test_other_formats_are_reencoded_as_png(make_editor: Callable[..., GptImageEditor],
                                            server: OpenAIFakeServer) -> None:
    buf = io.BytesIO()
    Image.open(io.BytesIO(gradient_image(5))).save(buf, format="BMP")
    assert edit(make_editor(), request(buf.getvalue())).outcome is Outcome.OK
    (name, filename, mime, data), = server.last(EDITS).files
    assert (name, filename, mime) == ("image", "image.png", "image/png")
    assert Image.open(io.BytesIO(data)).tobytes() == Image.open(buf).convert("RGB").tobytes()


def test_null_params_are_not_sent(make_editor: Callable[..., GptImageEditor], server: OpenAIFakeServer) -> None:
    edit(make_editor(size=None, quality=None, input_fidelity=None))
    assert set(server.last(EDITS).fields) == {"model", "prompt", "n", "output_format"}


def test_is_an_async_editor_for_the_engine(make_editor: Callable[..., GptImageEditor]) -> None:
    assert isinstance(make_editor(), AsyncEditor)


def test_one_client_per_event_loop(make_editor: Callable[..., GptImageEditor]) -> None:
    editor = make_editor()
    assert edit(editor).outcome is Outcome.OK
    assert edit(editor).outcome is Outcome.OK  # a second asyncio.run: a new loop, a new client


# -- failures ------------------------------------------------------------------------------


def test_rate_limit_carries_status_and_retry_after(make_editor: Callable[..., GptImageEditor],
                                                    server: OpenAIFakeServer) -> None:
    server.script(["429"])
    error = retryable(make_editor())
    assert (error.kind, error.status, error.retry_after) == ("rate_limited", 429, 2.5)


def test_retry_after_ms_wins_over_retry_after() -> None:
    def error_body(status: int, message: str) -> Any:
        response = openai_error(status, message)
        response.headers["retry-after-ms"] = "1500"
        return response

    with openai_server(error_body=error_body, retry_after=9) as fake:
        fake.script(["429"])
        editor = GptImageEditor(base_url=f"{fake.url}/v1", api_key_env="FACEEDIT_TEST_OPENAI_KEY")
        assert retryable(editor).retry_after == 1.5


def test_insufficient_quota_is_not_retried() -> None:
    def error_body(status: int, message: str) -> Any:
        if status == 429:
            return openai_error(429, "You exceeded your current quota, please check your plan and billing details.",
                                type_="insufficient_quota", code="insufficient_quota")
        return openai_error(status, message)

    with openai_server(error_body=error_body) as fake:
        fake.script(["429"])
        result = edit(GptImageEditor(base_url=f"{fake.url}/v1", api_key_env="FACEEDIT_TEST_OPENAI_KEY"))
    assert result.outcome is Outcome.API_ERROR
    assert result.reason.startswith("HTTP 429: You exceeded your current quota")
    assert result.reason.endswith("(code: insufficient_quota)")


@pytest.mark.parametrize(("fault", "kind", "status"), [
    ("500", "server_error", 500), ("503", "server_error", 503), ("truncated", "truncated", None),
    ("bad_json", "malformed", 200), ("bad_b64", "malformed", 200)])
def test_transient_failures_raise_retryable(make_editor: Callable[..., GptImageEditor], server: OpenAIFakeServer,
                                            fault: str, kind: str, status: int | None) -> None:
    server.script([fault])
    error = retryable(make_editor())
    assert (error.kind, error.status) == (kind, status)


def test_client_timeout_is_retryable(make_editor: Callable[..., GptImageEditor], server: OpenAIFakeServer) -> None:
    server.script(["timeout"])  # the fake answers after 1 s
    assert retryable(make_editor(limits={"timeout_s": 0.2})).kind == "timeout"


def test_refused_connection_is_retryable() -> None:
    with socket.socket() as sock:  # a port nobody listens on
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    editor = GptImageEditor(base_url=f"http://127.0.0.1:{port}/v1", api_key_env="FACEEDIT_TEST_OPENAI_KEY")
    assert retryable(editor).kind == "connection"


def test_moderation_block_is_refused(make_editor: Callable[..., GptImageEditor], server: OpenAIFakeServer) -> None:
    server.script(["moderation"])
    result = edit(make_editor())
    assert result.outcome is Outcome.REFUSED and result.image is None
    assert result.reason == f"moderation_blocked: {SAFETY_MESSAGE}"


@pytest.mark.parametrize(("fault", "shape"), [("no_image", "no b64_json"), ("no_data", "empty data")])
def test_answer_without_image_is_no_image(make_editor: Callable[..., GptImageEditor], server: OpenAIFakeServer,
                                          fault: str, shape: str) -> None:
    server.script([fault])
    result = edit(make_editor())
    assert result.outcome is Outcome.NO_IMAGE and shape in result.reason
    assert result.usage["images_out"] == 0 and result.usage["output_image_tokens"] > 0  # billed all the same


def test_bad_request_is_api_error_with_status(make_editor: Callable[..., GptImageEditor],
                                              server: OpenAIFakeServer) -> None:
    server.script(["bad_request"])
    result = edit(make_editor())
    assert result.outcome is Outcome.API_ERROR
    assert result.reason.startswith("HTTP 400: Invalid value for 'size'")


def test_wrong_key_is_api_error(make_editor: Callable[..., GptImageEditor], monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("FACEEDIT_TEST_OPENAI_KEY", "sk-wrong-key-0000")
    result = edit(make_editor())
    assert result.outcome is Outcome.API_ERROR and result.reason.startswith("HTTP 401: Incorrect API key")
    assert "sk-wrong-key-0000" not in result.reason


def test_executor_retries_a_rate_limit_then_succeeds(make_editor: Callable[..., GptImageEditor],
                                                     server: OpenAIFakeServer) -> None:
    editor = make_editor()
    server.script(["429", None])

    async def run() -> tuple[EditResult, Executor]:
        executor = Executor(editor.limits)
        return await executor.call(lambda: editor.aedit(request())), executor

    result, executor = asyncio.run(run())
    assert result.outcome is Outcome.OK
    assert executor.stats.attempts == 2 and dict(executor.stats.retries) == {"rate_limited": 1}
    assert server.faults_seen() == {"429": 1, "ok": 1}


# -- configuration and secrets ---------------------------------------------------------------


def test_missing_key_names_the_variable(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    with pytest.raises(MissingSecretError, match="OPENAI_API_KEY") as caught:
        GptImageEditor()
    assert "editor gpt_image" in str(caught.value)


def test_key_is_nowhere_in_describe_or_provider_key(make_editor: Callable[..., GptImageEditor],
                                                     server: OpenAIFakeServer) -> None:
    editor = make_editor()
    text = json.dumps(editor.describe()) + editor.limits.provider_key + repr(editor.connection)
    assert DEFAULT_KEY not in text
    assert editor.describe()["version"] == "gpt-image-1" and editor.describe()["base_url"] == f"{server.url}/v1"
    assert editor.limits.provider_key == f"openai:{server.url}/v1:FACEEDIT_TEST_OPENAI_KEY:gpt-image-1"


def test_default_endpoint_is_not_in_describe(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", DEFAULT_KEY)
    editor = GptImageEditor()
    assert "base_url" not in editor.describe()
    assert editor.limits.provider_key == "openai:default:OPENAI_API_KEY:gpt-image-1"
    assert editor.limits.requests_per_minute == 5  # tier-1 default kept


@pytest.mark.parametrize(("params", "message"), [
    ({"input_fidelity": "max"}, "input_fidelity must be high, low or null"),
    ({"size": "big"}, "size 'big' must be auto or WIDTHxHEIGHT"),
    ({"output_format": "gif"}, "output_format must be one of png, jpeg, webp"),
    ({"limits": {"rpm": 5}}, "unknown limits key.*rpm.*Accepted: max_concurrency"),
    ({"limits": {"max_attempts": 0}}, "invalid limits"),
    ({"prices": {"per_image": 0.1}}, "unknown price key.*per_image"),
    ({"prices": {"input_tokens": "cheap"}}, "must be a non-negative number"),
    ({"base_url": "api.example.com"}, "must start with http"),
    ({"base_url": None, "api_key_env": None}, "only a server of your own"),
])
def test_bad_config_fails_with_how_to_fix(params: dict[str, Any], message: str) -> None:
    params.setdefault("api_key_env", "FACEEDIT_TEST_OPENAI_KEY")
    with pytest.raises(ConfigError, match=message):
        GptImageEditor(**params)
