"""How SDK and transport failures map to the core's vocabulary, and Retry-After parsing. The
SDK's exceptions are the ones google-genai raises for answers of the fake server, never built
by hand (their constructors read the HTTP library's response, which changes between releases)."""

from __future__ import annotations

import email.utils
import json
import time

import pytest
from faceedit_bench_gemini.connection import PermanentAPIError, api_seed, classify, image_mime, retry_after_s
from gemini_helpers import KEY
from google import genai
from google.genai import errors, types

from faceedit_bench.api import RetryableError
from tests.fakes.gemini import GeminiServer, google_error


@pytest.fixture
def api_error(fake: GeminiServer):
    """The SDK's exception for an error answer with this status, headers and details."""

    def make(code, headers=None, details=None, message="boom"):
        answer = google_error(code, message, details)
        answer.headers.update(headers or {})
        fake.script([answer])
        options = types.HttpOptions(base_url=fake.url, retry_options=types.HttpRetryOptions(attempts=1))
        client = genai.Client(vertexai=False, api_key=KEY, http_options=options)
        with pytest.raises(errors.APIError) as caught:
            client.models.generate_content(model="gemini-2.5-flash", contents="hi")
        assert caught.value.code == code
        return caught.value

    return make


RETRY_INFO = {"@type": "type.googleapis.com/google.rpc.RetryInfo", "retryDelay": "17s"}


@pytest.mark.parametrize(("headers", "details", "expected"), [
    ({"Retry-After": "3"}, None, 3.0),
    ({"retry-after": "0.5"}, None, 0.5),
    ({}, [RETRY_INFO], 17.0),
    ({"Retry-After": "3"}, [RETRY_INFO], 17.0),  # the longer wait wins
    ({}, [{"@type": "type.googleapis.com/google.rpc.QuotaFailure"}], None),
    ({"Retry-After": "soon"}, None, None),
    ({}, None, None),
])
def test_retry_after_from_header_and_retry_info(api_error, headers, details, expected):
    assert retry_after_s(api_error(429, headers, details)) == expected


def test_retry_after_as_an_http_date(api_error):
    later = email.utils.formatdate(time.time() + 30, usegmt=True)
    assert 25 <= retry_after_s(api_error(429, {"Retry-After": later})) <= 30


@pytest.mark.parametrize(("code", "kind"), [(429, "rate_limited"), (408, "timeout"), (500, "server_error"),
                                            (502, "server_error"), (503, "server_error"), (504, "server_error")])
def test_transient_statuses(api_error, code, kind):
    mapped = classify(api_error(code, {"Retry-After": "2"}))
    assert isinstance(mapped, RetryableError) and mapped.kind == kind and mapped.status == code


@pytest.mark.parametrize("code", [400, 401, 403, 404, 413])
def test_other_client_errors_are_permanent_with_googles_message(api_error, code):
    mapped = classify(api_error(code, message="model not found"))
    assert isinstance(mapped, PermanentAPIError) and str(mapped) == f"HTTP {code}: model not found"


@pytest.mark.parametrize(("exc", "kind"), [
    (TimeoutError(), "timeout"),
    (json.JSONDecodeError("Expecting value", '{"candidates": [', 16), "malformed"),
    (ConnectionResetError(104, "Connection reset by peer"), "connection"),
])
def test_transport_failures(exc, kind):
    mapped = classify(exc)
    assert isinstance(mapped, RetryableError) and mapped.kind == kind


def test_unexpected_exceptions_are_left_alone():
    assert classify(KeyError("candidates")) is None


def test_seed_and_mime_helpers():
    assert api_seed(2**31 + 5) == 5 and api_seed(7) == 7
    assert image_mime(b"RIFF\0\0\0\0WEBPVP8 ") == "image/webp"
    with pytest.raises(ValueError, match="not PNG, JPEG or WEBP"):
        image_mime(b"GIF89a")
