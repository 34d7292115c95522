"""What a failed OpenAI call means: retry it, or record it as an outcome.

Transient failures raise :class:`~faceedit_bench.execution.call_errors.RetryableError` for the core's
execution layer; permanent ones become ``refused`` (a safety block) or ``api_error`` with
``HTTP <status>: <message>``. Behaviour of the openai SDK (3.x) this relies on:

* a body cut short by the server (fewer bytes than Content-Length) raises
  ``APIConnectionError`` whose ``__cause__`` is the HTTP library's ``RemoteProtocolError``
  ("peer closed connection without sending complete message body");
* a complete 200 body that is not valid JSON raises a bare ``json.JSONDecodeError``;
* ``APITimeoutError`` is a subclass of ``APIConnectionError``;
* ``APIStatusError.body`` is the inner ``error`` object (``message``, ``type``, ``param``,
  ``code``) and ``.response.headers`` holds ``retry-after`` / ``retry-after-ms``.
"""

from __future__ import annotations

import json

from faceedit_bench.api import Outcome, RetryableError, incomplete_body, retry_after_s

#: Error codes of a request the provider's safety system rejected (``content_filter``: Azure OpenAI).
REFUSAL_CODES = frozenset({"moderation_blocked", "content_policy_violation", "content_filter"})


def _message(exc: object) -> str:
    body = getattr(exc, "body", None)
    if isinstance(body, dict) and body.get("message"):
        return str(body["message"])
    return str(getattr(exc, "message", exc))


def failure_outcome(exc: Exception) -> tuple[Outcome, str]:
    """``(refused | api_error, reason)`` for a permanent failure; raises ``RetryableError``
    for a transient one and re-raises anything that is not an API failure."""
    import openai

    if isinstance(exc, json.JSONDecodeError):
        raise RetryableError("truncated", f"the answer is not complete JSON ({exc})") from exc
    if isinstance(exc, openai.APITimeoutError):
        raise RetryableError("timeout", "the request timed out (client timeout)") from exc
    if isinstance(exc, openai.APIConnectionError):
        if incomplete_body(exc):
            raise RetryableError("truncated", f"the answer was cut short: {exc.__cause__}") from exc
        raise RetryableError("connection", f"{exc} ({exc.__cause__ or 'no detail'})") from exc
    if isinstance(exc, openai.APIResponseValidationError):
        raise RetryableError("truncated", f"the answer does not have the API's shape: {exc}") from exc
    if not isinstance(exc, openai.APIStatusError):
        raise exc
    status, message, code = exc.status_code, _message(exc), exc.code
    headers = exc.response.headers if exc.response is not None else None
    if status == 429 and code == "insufficient_quota":  # billing, not rate: waiting cannot help
        return Outcome.API_ERROR, f"HTTP 429: {message} (code: insufficient_quota)"
    if status == 429:
        raise RetryableError("rate_limited", message, status=status, retry_after=retry_after_s(headers)) from exc
    if status == 408:
        raise RetryableError("timeout", message, status=status) from exc
    if status == 409 or status >= 500:  # 409: the SDK's own retry policy treats a lock conflict as transient
        raise RetryableError("server_error", message, status=status, retry_after=retry_after_s(headers)) from exc
    if code in REFUSAL_CODES:
        return Outcome.REFUSED, f"{code}: {message}"
    return Outcome.API_ERROR, f"HTTP {status}: {message}" + (f" (code: {code})" if code else "")
