"""Failure classification and Retry-After parsing, on the SDK's real exception classes."""

from __future__ import annotations

import email.utils
import time
from types import SimpleNamespace
from typing import Any

import openai
import pytest
from faceedit_bench_openai.failures import failure_outcome, retry_after_s

from faceedit_bench.execution.call_errors import RetryableError
from faceedit_bench.records import Outcome


def status_error(cls: type[openai.APIStatusError], status: int, code: str | None = None,
                 headers: dict[str, str] | None = None) -> openai.APIStatusError:
    # a stand-in for the HTTP library's response: the SDK reads only these attributes
    response: Any = SimpleNamespace(status_code=status, headers=headers or {}, request=None)
    body = {"message": f"message {status}", "type": "t", "param": None, "code": code}
    return cls(f"Error code: {status} - message {status}", response=response, body=body)


@pytest.mark.parametrize(("headers", "seconds"), [
    ({"retry-after-ms": "250"}, 0.25), ({"Retry-After": "7"}, 7.0), ({"retry-after": "1.5"}, 1.5),
    ({"retry-after-ms": "100", "retry-after": "9"}, 0.1), ({"retry-after": "soon"}, None), ({}, None),
    (None, None)])
def test_retry_after(headers: dict[str, str] | None, seconds: float | None) -> None:
    assert retry_after_s(headers) == seconds


def test_retry_after_as_http_date() -> None:
    when = email.utils.formatdate(time.time() + 30, usegmt=True)
    assert 25 <= retry_after_s({"retry-after": when}) <= 30


@pytest.mark.parametrize("code", ["content_policy_violation", "moderation_blocked", "content_filter"])
def test_safety_codes_are_refusals(code: str) -> None:
    outcome, reason = failure_outcome(status_error(openai.BadRequestError, 400, code))
    assert outcome is Outcome.REFUSED and reason == f"{code}: message 400"


@pytest.mark.parametrize(("status", "kind"), [(408, "timeout"), (409, "server_error"), (502, "server_error")])
def test_transient_statuses(status: int, kind: str) -> None:
    with pytest.raises(RetryableError) as caught:
        failure_outcome(status_error(openai.APIStatusError, status, headers={"retry-after": "4"}))
    assert (caught.value.kind, caught.value.status) == (kind, status)


def test_other_client_errors_name_status_message_and_code() -> None:
    outcome, reason = failure_outcome(status_error(openai.NotFoundError, 404, "model_not_found"))
    assert (outcome, reason) == (Outcome.API_ERROR, "HTTP 404: message 404 (code: model_not_found)")


def test_what_is_not_an_api_failure_is_raised_again() -> None:
    with pytest.raises(KeyError):
        failure_outcome(KeyError("a bug"))
