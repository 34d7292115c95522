"""The nano_banana editor through the real google-genai SDK against the fake Gemini API."""

from __future__ import annotations

import asyncio
import json
import socket
import threading

import pytest
from faceedit_bench_gemini.editor import NanoBananaEditor
from gemini_helpers import FAST_LIMITS, INSTRUCTION, KEY, edit_request, run

from faceedit_bench.api import ConfigError, Outcome, RetryableError
from faceedit_bench.api.images import decode_rgb
from faceedit_bench.api.testing import gradient_image
from faceedit_bench.testing import Executor, GaveUp, MissingSecretError, cost_usd
from tests.fakes.answers import fake_edit
from tests.fakes.gemini import IMAGE_INPUT_TOKENS, IMAGE_OUTPUT_TOKENS, REFUSAL_TEXT


def test_ok_returns_the_edited_image_with_usage(make_editor, fake):
    editor = make_editor()
    request = edit_request()
    result = run(editor.aedit(request))
    assert result.outcome is Outcome.OK
    assert result.image == fake_edit(request.image, INSTRUCTION)
    assert decode_rgb(result.image).shape == (64, 64, 3)
    usage = result.usage
    assert usage["input_image_tokens"] == IMAGE_INPUT_TOKENS and usage["input_tokens"] > 0
    assert usage["output_image_tokens"] == IMAGE_OUTPUT_TOKENS and usage["output_tokens"] == 0
    assert usage["images_out"] == 1 and usage["model_version"] == "gemini-2.5-flash-image"
    expected = (usage["input_tokens"] + IMAGE_INPUT_TOKENS) * 0.30e-6 + IMAGE_OUTPUT_TOKENS * 30e-6
    assert cost_usd(usage, editor.prices) == pytest.approx(expected)


def test_request_carries_image_instruction_seed_and_settings(make_editor, fake):
    editor = make_editor(temperature=0.4, aspect_ratio="1:1", response_modalities=["TEXT", "IMAGE"])
    image = gradient_image(3)
    run(editor.aedit(edit_request(seed=11, image=image)))
    (call,) = fake.gemini_calls
    assert call.model == "gemini-2.5-flash-image" and call.api_version == editor.connection.api_version
    assert call.images == [image] and call.image_mime_types == ["image/png"]  # URL-safe base64 round trip
    assert call.text == INSTRUCTION
    config = call.generation_config
    assert config["seed"] == 11 and config["temperature"] == 0.4
    assert config["responseModalities"] == ["TEXT", "IMAGE"] and config["imageConfig"] == {"aspectRatio": "1:1"}
    assert fake.requests[0].headers["x-goog-api-key"] == KEY


def test_jpeg_input_is_sent_as_jpeg(make_editor, fake):
    import io

    from PIL import Image

    buf = io.BytesIO()
    Image.open(io.BytesIO(gradient_image(2))).convert("RGB").save(buf, format="JPEG")
    assert run(make_editor().aedit(edit_request(image=buf.getvalue()))).outcome is Outcome.OK
    assert fake.gemini_calls[0].image_mime_types == ["image/jpeg"]
    assert fake.gemini_calls[0].images == [buf.getvalue()]


def test_seeds_beyond_int32_are_folded_into_the_apis_range(make_editor, fake):
    result = run(make_editor().aedit(edit_request(seed=3_000_000_000)))
    assert result.outcome is Outcome.OK  # the fake, like Google, answers 400 to a seed outside int32
    assert fake.gemini_calls[0].generation_config["seed"] == 3_000_000_000 % 2**31


def test_api_version_is_selectable(make_editor, fake):
    editor = make_editor(api_version="v1beta")
    assert run(editor.aedit(edit_request())).outcome is Outcome.OK
    assert fake.gemini_calls[0].api_version == "v1beta" and editor.describe()["api_version"] == "v1beta"


def test_one_editor_serves_successive_event_loops(make_editor, fake, transport):
    editor = make_editor()  # the engine runs one loop per run; tests and notebooks run several
    for _ in range(2):
        assert run(editor.aedit(edit_request())).outcome is Outcome.OK
    assert fake.calls == 2


def test_unset_options_are_not_sent(make_editor, fake):
    run(make_editor().aedit(edit_request()))
    config = fake.gemini_calls[0].generation_config
    assert "temperature" not in config and "imageConfig" not in config
    assert config["responseModalities"] == ["IMAGE"]


@pytest.mark.parametrize(("fault", "outcome", "reason"), [
    ("block", Outcome.REFUSED, "prompt blocked: SAFETY"),
    ("image_safety", Outcome.REFUSED, "finish reason IMAGE_SAFETY"),
    ("text_only", Outcome.NO_IMAGE, REFUSAL_TEXT[:40]),
    ("garbage", Outcome.NO_IMAGE, "no image in the answer (finish reason STOP)"),
    ("bad_request", Outcome.API_ERROR, "HTTP 400: Request contains an invalid argument."),
])
def test_provider_answers_become_outcomes(make_editor, fake, fault, outcome, reason):
    fake.script([fault])
    result = run(make_editor().aedit(edit_request()))
    assert result.outcome is outcome
    assert reason in result.reason
    assert result.image is None


def test_refusals_still_record_usage(make_editor, fake):
    fake.script(["block"])
    result = run(make_editor().aedit(edit_request()))
    assert result.usage["input_image_tokens"] == IMAGE_INPUT_TOKENS and result.usage["images_out"] == 0


@pytest.mark.parametrize(("fault", "kind", "status"), [
    ("429", "rate_limited", 429), ("500", "server_error", 500), ("503", "server_error", 503),
    ("timeout", "timeout", None), ("truncated", "truncated", None),
])
def test_transient_failures_raise_retryable_errors(make_editor, fake, transport, fault, kind, status):
    fake.script([fault])
    editor = make_editor(limits={"timeout_s": 0.2} if fault == "timeout" else {})
    with pytest.raises(RetryableError) as caught:
        run(editor.aedit(edit_request()))
    assert caught.value.kind == kind and caught.value.status == status
    if fault == "429":  # the fake sends Retry-After: 0.05 and RetryInfo retryDelay "0.05s"
        assert caught.value.retry_after == pytest.approx(0.05)
    assert fake.calls == 1  # the SDK did not retry by itself


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_refused_connection_is_a_connection_error(api_key, transport):
    editor = NanoBananaEditor(base_url=f"http://127.0.0.1:{_free_port()}", limits=FAST_LIMITS)
    with pytest.raises(RetryableError) as caught:
        run(editor.aedit(edit_request()))
    assert caught.value.kind == "connection"


def test_dropped_connection_is_not_retried_by_the_sdk(api_key, transport):
    """aiohttp's ServerDisconnectedError would trigger the SDK's hidden 1-10 s retry, unless
    retries are configured off: exactly one connection must arrive."""
    listener = socket.create_server(("127.0.0.1", 0))
    accepted = []

    def serve() -> None:
        while True:
            try:
                conn, _ = listener.accept()
            except OSError:
                return
            accepted.append(conn)
            conn.recv(65536)
            conn.close()

    threading.Thread(target=serve, daemon=True).start()
    try:
        editor = NanoBananaEditor(base_url=f"http://127.0.0.1:{listener.getsockname()[1]}", limits=FAST_LIMITS)
        with pytest.raises(RetryableError) as caught:
            run(editor.aedit(edit_request()))
    finally:
        listener.close()
    assert caught.value.kind in ("connection", "truncated")
    assert len(accepted) == 1


def test_wrong_key_is_a_permanent_api_error_without_the_key(monkeypatch, fake):
    monkeypatch.setenv("GEMINI_API_KEY", "not-the-right-key")
    editor = NanoBananaEditor(base_url=fake.url, limits=FAST_LIMITS)
    result = run(editor.aedit(edit_request()))
    assert result.outcome is Outcome.API_ERROR
    assert result.reason == "HTTP 400: API key not valid. Please pass a valid API key."
    assert "not-the-right-key" not in result.reason


def test_executor_retries_a_rate_limit_then_succeeds(make_editor, fake):
    editor = make_editor()
    fake.script(["429", None])

    async def call():
        executor = Executor(editor.limits)
        return await executor.call(lambda: editor.aedit(edit_request())), executor

    result, executor = run(call())
    assert result.outcome is Outcome.OK
    assert executor.stats.attempts == 2 and dict(executor.stats.retries) == {"rate_limited": 1}
    assert fake.faults_seen() == {"429": 1, "ok": 1}


def test_executor_gives_up_after_max_attempts(make_editor, fake):
    editor = make_editor(limits={"max_attempts": 2})
    fake.script(["503", "503"])

    async def call():
        return await Executor(editor.limits).call(lambda: editor.aedit(edit_request()))

    with pytest.raises(GaveUp, match="server_error"):
        run(call())
    assert fake.calls == 2


def test_missing_key_fails_at_construction_naming_the_variable(monkeypatch):
    monkeypatch.delenv("GEMINI_API_KEY", raising=False)
    monkeypatch.delenv("GOOGLE_API_KEY", raising=False)
    with pytest.raises(MissingSecretError, match="GEMINI_API_KEY"):
        NanoBananaEditor()
    with pytest.raises(MissingSecretError, match="MY_KEY"):
        NanoBananaEditor(api_key_env=["MY_KEY"])


def test_the_key_never_shows_in_describe_or_repr(make_editor, fake):
    editor = make_editor()
    text = json.dumps(editor.describe()) + repr(editor) + repr(editor.connection) + repr(editor.limits)
    assert KEY not in text


def test_describe_names_model_settings_and_endpoint(api_key, make_editor, fake):
    description = make_editor(model="gemini-3-pro-image-preview", image_size="2K").describe()
    assert description["provider"] == "gemini"
    assert description["model"] == description["version"] == "gemini-3-pro-image-preview"
    assert description["image_size"] == "2K" and description["base_url"] == fake.url
    assert description["api_version"] == "v1"  # google-genai 3.6's default, recorded explicitly
    assert json.loads(json.dumps(description)) == description
    assert "base_url" not in NanoBananaEditor().describe()


def test_limits_provider_key_and_prices(api_key):
    editor = NanoBananaEditor(limits={"requests_per_minute": 10})
    assert editor.limits.requests_per_minute == 10 and editor.limits.timeout_s == 120.0  # the rest kept
    assert editor.limits.provider_key == "gemini:default:GEMINI_API_KEY:gemini-2.5-flash-image"
    assert editor.prices["output_image_tokens"] == pytest.approx(30e-6) and "as_of" in editor.prices
    assert NanoBananaEditor(model="gemini-3-pro-image-preview").prices["output_image_tokens"] == pytest.approx(120e-6)
    assert NanoBananaEditor(model="some-future-model").prices == {}  # unknown cost, not free
    assert NanoBananaEditor(prices={"images_out": 0.04, "as_of": "2026-01-01"}).prices["images_out"] == 0.04


@pytest.mark.parametrize(("params", "message"), [
    ({"limits": {"rpm": 5}}, "unknown limits key"),
    ({"limits": {"provider_key": "x"}}, "provider_key is derived"),
    ({"limits": {"max_attempts": 0}}, "at least 1"),
    ({"response_modalities": ["TEXT"]}, "must include IMAGE"),
    ({"temperature": 3}, "between 0 and 2"),
    ({"prices": {"per_image": 0.04}}, "unknown price key"),
    ({"prices": {"images_out": "cheap"}}, "non-negative number"),
    ({"api_key_env": []}, "api_key_env"),
    ({"model": ""}, "model must be"),
])
def test_bad_parameters_are_config_errors(api_key, params, message):
    with pytest.raises(ConfigError, match=message):
        NanoBananaEditor(**params)


def test_concurrent_calls_with_faults_all_end_ok(make_editor, fake):
    editor = make_editor(limits={"max_concurrency": 8})
    fake.script(["429", "500", "truncated", "503"])  # the first four attempts fail, in whatever order they land

    async def many():
        executor = Executor(editor.limits)
        results = await asyncio.gather(*(executor.call(lambda s=s: editor.aedit(edit_request(seed=s)))
                                         for s in range(12)))
        return results, executor

    results, executor = run(many())
    assert [r.outcome for r in results] == [Outcome.OK] * 12
    assert executor.stats.attempts == 16 and sum(executor.stats.retries.values()) == 4
    assert fake.faults_seen() == {"429": 1, "500": 1, "truncated": 1, "503": 1, "ok": 12}


def test_prepare_makes_the_client_the_first_call_uses(make_editor, fake, monkeypatch):
    from google import genai

    made = []
    real = genai.Client

    def counting(*args, **kwargs):
        made.append(threading.get_ident())
        return real(*args, **kwargs)

    monkeypatch.setattr(genai, "Client", counting)
    editor = make_editor()
    preparing = threading.Thread(target=editor.prepare)  # as the engine does: in a worker thread
    preparing.start()
    preparing.join()
    assert made == [preparing.ident]
    assert run(editor.aedit(edit_request())).outcome is Outcome.OK
    assert run(editor.aedit(edit_request())).outcome is Outcome.OK  # another event loop: a client of its own
    assert len(made) == 2 and len(fake.gemini_calls) == 2
    editor.prepare()  # a client is in use already: nothing more is made
    assert len(made) == 2


def test_the_sdks_default_api_version_is_kept_for_later_launches(tmp_path, monkeypatch):
    import subprocess
    import sys

    from faceedit_bench_gemini import connection
    from google.genai import _api_client

    monkeypatch.setattr(connection, "SDK_DEFAULTS_CACHE", tmp_path)
    assert connection.sdk_default_api_version() == _api_client.GOOGLE_AI_API_DEFAULT_VERSION
    (kept,) = tmp_path.iterdir()
    assert kept.read_text() == _api_client.GOOGLE_AI_API_DEFAULT_VERSION
    # A later launch reads it without importing the SDK.
    probe = ("import sys; from pathlib import Path; from faceedit_bench_gemini import connection; "
             f"connection.SDK_DEFAULTS_CACHE = Path({str(tmp_path)!r}); "
             "print(connection.sdk_default_api_version(), 'google.genai' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True).stdout.split()
    assert out == [_api_client.GOOGLE_AI_API_DEFAULT_VERSION, "False"]
    # A damaged file is read from the SDK again and written anew; an unwritable place still answers.
    kept.write_text("not a version\n")
    assert connection.sdk_default_api_version() == _api_client.GOOGLE_AI_API_DEFAULT_VERSION
    assert kept.read_text() == _api_client.GOOGLE_AI_API_DEFAULT_VERSION
    blocked = tmp_path / "a file"
    blocked.write_text("")
    monkeypatch.setattr(connection, "SDK_DEFAULTS_CACHE", blocked / "cache")
    assert connection.sdk_default_api_version() == _api_client.GOOGLE_AI_API_DEFAULT_VERSION
