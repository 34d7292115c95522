"""What a failed ModelArk call means: retry it, or record it as an outcome.

The error answer is read the way every provider's is (``HostedConnection.answer_failure``, :mod:`faceedit_bench.api`):
a content-safety code is ``refused``, 429 / 408 / 5xx are retried, 429 with a quota code and other 4xx are
``api_error`` with ``HTTP <status>: <message> (code: <code>)``. Behaviour of the Ark runtime
(``byteplussdkarkruntime`` 3.0.x) this relies on:

* an error answer raises ``ArkAPIStatusError`` (``ArkBadRequestError`` 400, ``ArkRateLimitError`` 429,
  ``ArkInternalServerError`` 5xx ...) whose ``.code`` and ``.message`` hold the body's ``error.code`` /
  ``error.message`` (the message sits in ``.body["message"]``; ``.message`` itself is the SDK's
  "Error code: ..." summary). ``.code`` is whatever type the body gave it: an endpoint without ``/api/v3``
  answers ``{"code": 404}``, an integer;
* a body cut short raises ``ArkAPIConnectionError`` whose ``__cause__`` is httpx's ``RemoteProtocolError``;
  ``ArkAPITimeoutError`` (client timeout) is a subclass of ``ArkAPIConnectionError``;
* a 200 body that is not JSON raises ``json.JSONDecodeError`` or ``UnicodeDecodeError`` (binary), or, when
  its content type is not JSON, comes back as the body's text instead of the answer object.

ModelArk error codes (docs.byteplus.com, ModelArk "Error codes"): the content-safety codes end in
``SensitiveContentDetected`` (``InputTextSensitiveContentDetected``, ``InputImageSensitiveContentDetected``,
``OutputImageSensitiveContentDetected``, ``OutputTextSensitiveContentDetected``, ``SensitiveContentDetected.*``)
or ``RiskDetection``; 429 ``RateLimitExceeded.*`` / ``ServerOverloaded`` pass with time, while 429
``QuotaExceeded`` and ``SetLimitExceeded`` (the account's quota or its own spending cap) do not.
"""

from __future__ import annotations

from faceedit_bench.api import HostedConnection, Outcome

#: 429 codes that waiting does not fix: the account's quota or the safe-experience spending cap.
PERMANENT_429 = frozenset({"QuotaExceeded", "SetLimitExceeded", "AccountOverdueError"})


def is_refusal_code(code: str) -> bool:
    """Whether a ModelArk error code says the content-safety system declined the input or output."""
    return "SensitiveContentDetected" in code or code.endswith("RiskDetection") or "RiskDetection." in code


def failure_outcome(exc: Exception, where: str) -> tuple[Outcome, str]:
    """``(refused | api_error, reason)`` for a permanent failure of a call to ``where``; raises
    ``RetryableError`` for a transient one and re-raises anything that is not an API failure (the engine
    records it as ``failed`` with the exception)."""
    from byteplussdkarkruntime import _exceptions as ark

    return HostedConnection.openai_shaped_failure(
        exc, where, status_error=ark.ArkAPIStatusError, validation_error=ark.ArkAPIResponseValidationError,
        refusal=is_refusal_code, quota_codes=PERMANENT_429)
