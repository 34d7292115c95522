"""SeedEdit and Seedream against a fake ModelArk server through the real Ark runtime: the
request fields pinned, every answer mapped to its outcome, one attempt per call."""

from __future__ import annotations

import asyncio
import base64
from pathlib import Path

import pytest

from faceedit_bench.api import ConfigError, EditRequest, Outcome, RetryableError
from faceedit_bench.api.testing import EditorContract, gradient_image
from faceedit_bench.testing import MissingSecretError
from tests.fakes.answers import fake_edit

PLANTED = "ark-PLANTED-key-4f9e2a"


def request(seed: int = 7, k: int = 1) -> EditRequest:
    return EditRequest(gradient_image(3), "make the hair red", "face/1", "s1", k, seed)


def edit(editor, req: EditRequest | None = None):
    return asyncio.run(editor.aedit(req or request()))


class TestSeedEditContract(EditorContract):
    @pytest.fixture
    def editor(self, make_seededit):
        return make_seededit()


class TestSeedreamContract(EditorContract):
    @pytest.fixture
    def editor(self, make_seedream):
        return make_seedream()


def test_seededit_sends_the_documented_fields_and_returns_the_image(make_seededit, server):
    result = edit(make_seededit(), request(seed=2**31 + 5))
    assert result.outcome is Outcome.OK
    assert result.image == fake_edit(gradient_image(3), "make the hair red")
    (call,) = server.received
    body = call.body
    assert {k: body[k] for k in ("model", "prompt", "size", "guidance_scale", "watermark", "response_format",
                                 "seed")} == {
        "model": "seededit-3-0-i2i-250628", "prompt": "make the hair red", "size": "adaptive",
        "guidance_scale": 5.5, "watermark": False, "response_format": "b64_json", "seed": 5}
    assert body["image"].startswith("data:image/png;base64,") and call.images == [gradient_image(3)]
    assert result.usage == {"images_out": 1, "model_version": "seededit-3-0-i2i-250628"}
    assert server.requests[0].path == "/api/v3/images/generations"


def test_seedream_sends_the_input_then_the_reference_images(make_seedream, server, tmp_path: Path):
    ref = tmp_path / "ref.png"
    ref.write_bytes(gradient_image(9))
    editor = make_seedream(reference_images=[str(ref)])
    assert edit(editor).outcome is Outcome.OK
    (call,) = server.received
    assert call.images == [gradient_image(3), gradient_image(9)]
    assert call.body["sequential_image_generation"] == "disabled" and call.body["size"] == "2K"
    assert "guidance_scale" not in call.body or call.body["guidance_scale"] is None
    assert editor.describe()["model"] == "seedream-4-0-250828"
    # The reference images are part of the editor's identity: another reference, another cache key.
    ref.write_bytes(gradient_image(10))
    assert make_seedream(reference_images=[str(ref)]).describe() != editor.describe()


@pytest.mark.parametrize(("fault", "outcome", "reason"), [
    ("moderation_input", Outcome.REFUSED, "InputImageSensitiveContentDetected"),
    ("moderation_text", Outcome.REFUSED, "InputTextSensitiveContentDetected"),
    ("moderation_output", Outcome.REFUSED, "OutputImageSensitiveContentDetected"),
    ("moderation_partial", Outcome.REFUSED, "OutputImageSensitiveContentDetected"),
    ("no_image", Outcome.NO_IMAGE, "empty data list"),
    ("bad_request", Outcome.API_ERROR, "HTTP 400"),
    ("quota", Outcome.API_ERROR, "QuotaExceeded"),
])
def test_answers_map_to_outcomes(make_seedream, server, fault, outcome, reason):
    server.script([fault])
    result = edit(make_seedream())
    assert result.outcome is outcome and reason in result.reason
    assert server.calls == 1, "one attempt per call: the SDK must not retry"


@pytest.mark.parametrize(("fault", "kind"), [("429", "rate_limited"), ("500", "server_error"),
                                             ("503", "server_error"), ("truncated", "truncated"),
                                             ("bad_b64", "malformed")])
def test_transient_failures_are_retryable_and_not_retried_by_the_sdk(make_seededit, server, fault, kind):
    server.script([fault])
    with pytest.raises(RetryableError) as caught:
        edit(make_seededit())
    assert caught.value.kind == kind
    assert server.calls == 1
    if fault == "429":
        assert caught.value.retry_after == 2.5 and "RateLimitExceeded" in str(caught.value)


def test_a_client_timeout_is_retryable(make_seededit, server):
    server.script(["timeout"])
    with pytest.raises(RetryableError) as caught:
        edit(make_seededit(limits={"timeout_s": 0.2}))
    assert caught.value.kind == "timeout"


def test_a_wrong_key_is_an_api_error_that_does_not_show_the_key(make_seededit, server, monkeypatch):
    monkeypatch.setenv("FACEEDIT_TEST_ARK_KEY", PLANTED)
    result = edit(make_seededit())
    assert result.outcome is Outcome.API_ERROR and "HTTP 401" in result.reason
    editor = make_seededit()
    assert PLANTED not in repr(editor.connection) + str(editor.describe()) + result.reason


def test_a_missing_key_fails_at_creation_and_names_the_variable(make_seededit, monkeypatch):
    monkeypatch.delenv("FACEEDIT_TEST_ARK_KEY")
    with pytest.raises(MissingSecretError, match="FACEEDIT_TEST_ARK_KEY"):
        make_seededit()


@pytest.mark.parametrize(("params", "message"), [
    ({"size": "huge"}, "size"), ({"guidance_scale": 11}, "guidance_scale"), ({"watermark": "no"}, "watermark"),
    ({"base_url": "ark.example.com"}, "base_url"), ({"reference_images": ["/nope.png"]}, "does not exist"),
    ({"reference_images": ["x"] * 10}, "at most 9"), ({"limits": {"provider_key": "x"}}, "provider_key"),
    ({"prices": {"per_image": 1}}, "price"),
])
def test_configuration_mistakes_are_clear_errors(make_seedream, params, message):
    with pytest.raises(ConfigError, match=message):
        make_seedream(**params)


def test_images_in_other_formats_are_sent_as_png(make_seededit, server):
    import io

    from PIL import Image

    buf = io.BytesIO()
    Image.open(io.BytesIO(gradient_image(3))).save(buf, format="BMP")
    assert edit(make_seededit(), EditRequest(buf.getvalue(), "x", "f", "s", 1, 1)).outcome is Outcome.OK
    (call,) = server.received
    assert base64.b64decode(call.body["image"].split(",", 1)[1]).startswith(b"\x89PNG")
