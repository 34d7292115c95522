"""The fake Gemini API itself, spoken to without the SDK: what it checks and how it answers."""

from __future__ import annotations

import base64
import json
import urllib.error
import urllib.request

import pytest
from gemini_helpers import KEY

from faceedit_bench.api.testing import gradient_image
from tests.fakes.answers import fake_edit


def _post(url: str, body: dict, key: str | None = KEY) -> tuple[int, dict]:
    headers = {"Content-Type": "application/json", **({"x-goog-api-key": key} if key else {})}
    request = urllib.request.Request(url, json.dumps(body).encode(), headers, method="POST")
    try:
        with urllib.request.urlopen(request, timeout=5) as answer:
            return answer.status, json.loads(answer.read())
    except urllib.error.HTTPError as exc:
        return exc.code, json.loads(exc.read())


def _edit_body(image: bytes, **config) -> dict:
    data = base64.urlsafe_b64encode(image).decode()
    return {"contents": [{"role": "user", "parts": [{"inlineData": {"data": data, "mimeType": "image/png"}},
                                                    {"text": "red hair"}]}],
            "generationConfig": {"responseModalities": ["IMAGE"], **config}}


def test_answers_an_edit_on_v1beta_too(fake):
    image = gradient_image(4)
    status, body = _post(f"{fake.url}/v1beta/models/gemini-2.5-flash-image:generateContent", _edit_body(image))
    assert status == 200
    part = body["candidates"][0]["content"]["parts"][0]["inlineData"]
    assert base64.b64decode(part["data"]) == fake_edit(image, "red hair")
    assert body["modelVersion"] == "gemini-2.5-flash-image" and body["usageMetadata"]["totalTokenCount"] > 0
    assert fake.gemini_calls[0].api_version == "v1beta" and fake.gemini_calls[0].images == [image]


@pytest.mark.parametrize(("key", "status", "google_status"), [
    (None, 403, "PERMISSION_DENIED"), ("wrong", 400, "INVALID_ARGUMENT")])
def test_checks_the_api_key_like_google(fake, key, status, google_status):
    code, body = _post(f"{fake.url}/v1/models/m:generateContent", _edit_body(gradient_image(1)), key=key)
    assert code == status and body["error"]["code"] == status and body["error"]["status"] == google_status
    assert fake.gemini_calls == []


def test_refuses_a_seed_outside_int32_and_unknown_paths(fake):
    code, body = _post(f"{fake.url}/v1/models/m:generateContent", _edit_body(gradient_image(1), seed=2**31))
    assert code == 400 and "TYPE_INT32" in body["error"]["message"]
    code, body = _post(f"{fake.url}/v1/models/m:countTokens", {})
    assert code == 404 and body["error"]["status"] == "NOT_FOUND"


def test_rate_limit_answer_carries_retry_info(fake):
    fake.script(["429"])
    code, body = _post(f"{fake.url}/v1/models/m:generateContent", _edit_body(gradient_image(1)))
    assert code == 429 and body["error"]["status"] == "RESOURCE_EXHAUSTED"
    assert body["error"]["details"][0]["retryDelay"] == "0.05s"
