"""How SDK and transport failures map to the core's vocabulary, and Retry-After parsing."""

from __future__ import annotations

import email.utils
import json
import time

import pytest
from faceedit_bench_gemini.connection import PermanentAPIError, api_seed, classify, image_mime, retry_after_s
from google.genai import errors

from faceedit_bench.execution.call_errors import RetryableError


class _Response:
    def __init__(self, headers):
        self.headers = headers


def _api_error(code, headers=None, details=None, message="boom"):
    body = {"error": {"code": code, "message": message, "status": "X", **({"details": details} if details else {})}}
    cls = errors.ClientError if code < 500 else errors.ServerError
    return cls(code, body, _Response(headers or {}))


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
def test_retry_after_from_header_and_retry_info(headers, details, expected):
    assert retry_after_s(_api_error(429, headers, details)) == expected


def test_retry_after_as_an_http_date():
    later = email.utils.formatdate(time.time() + 30, usegmt=True)
    assert 25 <= retry_after_s(_api_error(429, {"Retry-After": later})) <= 30


@pytest.mark.parametrize(("code", "kind"), [(429, "rate_limited"), (408, "timeout"), (500, "server_error"),
                                            (502, "server_error"), (503, "server_error"), (504, "server_error")])
def test_transient_statuses(code, kind):
    mapped = classify(_api_error(code, {"Retry-After": "2"}))
    assert isinstance(mapped, RetryableError) and mapped.kind == kind and mapped.status == code


@pytest.mark.parametrize("code", [400, 401, 403, 404, 413])
def test_other_client_errors_are_permanent_with_googles_message(code):
    mapped = classify(_api_error(code, message="model not found"))
    assert isinstance(mapped, PermanentAPIError) and str(mapped) == f"HTTP {code}: model not found"


@pytest.mark.parametrize(("exc", "kind"), [
    (TimeoutError(), "timeout"),
    (json.JSONDecodeError("Expecting value", '{"candidates": [', 16), "truncated"),
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
