"""What a failed ModelArk call means: retry it, or record it as an outcome.

Transient failures raise :class:`~faceedit_bench.api.RetryableError` for the core's
execution layer; permanent ones become ``refused`` (the content-safety system declined) or
``api_error`` with ``HTTP <status>: <message> (code: <code>)``. Behaviour of the Ark runtime
(``byteplussdkarkruntime`` 3.0.x) this relies on:

* an error answer raises ``ArkAPIStatusError`` (``ArkBadRequestError`` 400,
  ``ArkRateLimitError`` 429, ``ArkInternalServerError`` 5xx ...) whose ``.code`` and
  ``.message`` hold ModelArk's ``error.code`` / ``error.message`` (the message sits in
  ``.body["message"]``; ``.message`` itself is the SDK's "Error code: ..." summary);
* a body cut short raises ``ArkAPIConnectionError`` whose ``__cause__`` is httpx's
  ``RemoteProtocolError`` ("peer closed connection without sending complete message body");
* ``ArkAPITimeoutError`` (client timeout) is a subclass of ``ArkAPIConnectionError``;
* a complete 200 body that is not JSON raises a bare ``json.JSONDecodeError``.

ModelArk error codes (docs.byteplus.com, ModelArk "Error codes"): the content-safety codes
end in ``SensitiveContentDetected`` (``InputTextSensitiveContentDetected``,
``InputImageSensitiveContentDetected``, ``OutputImageSensitiveContentDetected``,
``OutputTextSensitiveContentDetected``, ``SensitiveContentDetected.*``) or
``RiskDetection``; 429 ``RateLimitExceeded.*`` / ``ServerOverloaded`` pass with time, while
429 ``QuotaExceeded`` and ``SetLimitExceeded`` (the account's quota or its own spending cap)
do not.
"""

from __future__ import annotations

import json

from faceedit_bench.api import Outcome, RetryableError, incomplete_body, redact, retry_after_s

#: 429 codes that waiting does not fix: the account's quota or the safe-experience spending cap.
PERMANENT_429 = frozenset({"QuotaExceeded", "SetLimitExceeded", "AccountOverdueError"})


def is_refusal_code(code: str | None) -> bool:
    """Whether a ModelArk error code says the content-safety system declined the input or output."""
    if not code:
        return False
    return "SensitiveContentDetected" in code or code.endswith("RiskDetection") or "RiskDetection." in code


def _message(exc: object) -> str:
    body = getattr(exc, "body", None)
    if isinstance(body, dict) and body.get("message"):
        return redact(str(body["message"]))
    return redact(str(getattr(exc, "message", exc)))


def failure_outcome(exc: Exception) -> tuple[Outcome, str]:
    """``(refused | api_error, reason)`` for a permanent failure; raises ``RetryableError`` for a
    transient one and re-raises anything that is not an API failure (the engine records it as
    ``failed`` with the exception)."""
    from byteplussdkarkruntime import _exceptions as ark

    if isinstance(exc, json.JSONDecodeError):
        raise RetryableError("truncated", f"the answer is not complete JSON ({exc})") from exc
    if isinstance(exc, ark.ArkAPITimeoutError):
        raise RetryableError("timeout", "the request timed out (client timeout)") from exc
    if isinstance(exc, ark.ArkAPIConnectionError):
        cause = redact(f"{type(exc.__cause__).__name__}: {exc.__cause__}") if exc.__cause__ else "no detail"
        if incomplete_body(exc):
            raise RetryableError("truncated", f"the answer was cut short ({cause})") from exc
        raise RetryableError("connection", f"connection error ({cause})") from exc
    if isinstance(exc, ark.ArkAPIResponseValidationError):
        raise RetryableError("truncated", f"the answer does not have the API's shape: {_message(exc)}") from exc
    if not isinstance(exc, ark.ArkAPIStatusError):
        raise exc
    status, message, code = exc.status_code, _message(exc), exc.code
    headers = exc.response.headers if exc.response is not None else None
    suffix = f" (code: {code})" if code else ""
    if is_refusal_code(code):  # 400: moderation of the input at submit time, or of the output
        return Outcome.REFUSED, f"{code}: {message}"
    if status == 429 and code in PERMANENT_429:
        return Outcome.API_ERROR, f"HTTP 429: {message}{suffix}"
    if status == 429:
        raise RetryableError("rate_limited", f"HTTP 429: {message}{suffix}", status=429,
                             retry_after=retry_after_s(headers)) from exc
    if status == 408:
        raise RetryableError("timeout", f"HTTP 408: {message}{suffix}", status=408) from exc
    if status >= 500:
        raise RetryableError("server_error", f"HTTP {status}: {message}{suffix}", status=status,
                             retry_after=retry_after_s(headers)) from exc
    return Outcome.API_ERROR, f"HTTP {status}: {message}{suffix}"
