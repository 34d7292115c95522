"""Failure classification and Retry-After parsing, on the exceptions the real openai SDK raises
for answers of the fake server (never built by hand: their constructors change between releases)."""

from __future__ import annotations

import email.utils
import time

import openai
import pytest
from faceedit_bench_openai.failures import failure_outcome

from faceedit_bench.api import HostedConnection, Outcome, RetryableError
from tests.fakes.openai import DEFAULT_KEY, OpenAIFakeServer, openai_error


def status_error(server: OpenAIFakeServer, status: int, code: str | None = None,
                 headers: dict[str, str] | None = None) -> openai.APIStatusError:
    """The SDK's exception for an error answer with this status, code and headers."""
    answer = openai_error(status, f"message {status}", code=code)
    answer.headers.update(headers or {})
    server.script([answer])
    client = openai.OpenAI(api_key=DEFAULT_KEY, base_url=f"{server.url}/v1", max_retries=0)
    with pytest.raises(openai.APIStatusError) as caught:
        client.chat.completions.create(model="gpt-4.1", messages=[{"role": "user", "content": "hi"}])
    assert caught.value.status_code == status
    return caught.value


@pytest.mark.parametrize(("headers", "seconds"), [
    ({"retry-after-ms": "250"}, 0.25), ({"Retry-After": "7"}, 7.0), ({"retry-after": "1.5"}, 1.5),
    ({"retry-after-ms": "100", "retry-after": "9"}, 0.1), ({"retry-after": "soon"}, None), ({}, None),
    (None, None)])
def test_retry_after(headers: dict[str, str] | None, seconds: float | None) -> None:
    assert HostedConnection.retry_after_s(headers) == seconds


def test_retry_after_as_http_date() -> None:
    when = email.utils.formatdate(time.time() + 30, usegmt=True)
    assert 25 <= HostedConnection.retry_after_s({"retry-after": when}) <= 30


@pytest.mark.parametrize("code", ["content_policy_violation", "moderation_blocked", "content_filter"])
def test_safety_codes_are_refusals(server: OpenAIFakeServer, code: str) -> None:
    outcome, reason = failure_outcome(status_error(server, 400, code))
    assert outcome is Outcome.REFUSED and reason == f"{code}: message 400"


@pytest.mark.parametrize(("status", "kind"), [(408, "timeout"), (409, "server_error"), (502, "server_error")])
def test_transient_statuses(server: OpenAIFakeServer, status: int, kind: str) -> None:
    with pytest.raises(RetryableError) as caught:
        failure_outcome(status_error(server, status, headers={"retry-after": "4"}))
    assert (caught.value.kind, caught.value.status) == (kind, status)
    assert caught.value.retry_after == (4.0 if kind == "server_error" else None)


def test_rate_limits_wait_what_the_answer_asks(server: OpenAIFakeServer) -> None:
    with pytest.raises(RetryableError) as caught:
        failure_outcome(status_error(server, 429, "rate_limit_exceeded", headers={"retry-after-ms": "1500"}))
    assert (caught.value.kind, caught.value.retry_after) == ("rate_limited", 1.5)


def test_exhausted_quota_is_not_retried(server: OpenAIFakeServer) -> None:
    outcome, reason = failure_outcome(status_error(server, 429, "insufficient_quota"))
    assert (outcome, reason) == (Outcome.API_ERROR, "HTTP 429: message 429 (code: insufficient_quota)")


def test_other_client_errors_name_status_message_and_code(server: OpenAIFakeServer) -> None:
    outcome, reason = failure_outcome(status_error(server, 404, "model_not_found"))
    assert (outcome, reason) == (Outcome.API_ERROR, "HTTP 404: message 404 (code: model_not_found)")


def test_what_is_not_an_api_failure_is_raised_again() -> None:
    with pytest.raises(KeyError):
        failure_outcome(KeyError("a bug"))
