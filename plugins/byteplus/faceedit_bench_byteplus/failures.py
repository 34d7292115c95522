"""What a failed ModelArk call means: retry it, or record it as an outcome.

The error answer is read the way every provider's is (:func:`~faceedit_bench.api.hosted.answer_failure`):
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

from faceedit_bench.api import Outcome, redact
from faceedit_bench.api.hosted import UnexpectedAnswer, answer_failure, transport_failure

#: 429 codes that waiting does not fix: the account's quota or the safe-experience spending cap.
PERMANENT_429 = frozenset({"QuotaExceeded", "SetLimitExceeded", "AccountOverdueError"})


def is_refusal_code(code: str) -> bool:
    """Whether a ModelArk error code says the content-safety system declined the input or output."""
    return "SensitiveContentDetected" in code or code.endswith("RiskDetection") or "RiskDetection." in code


def _message(exc: object) -> str:
    body = getattr(exc, "body", None)
    if isinstance(body, dict) and body.get("message"):
        return redact(str(body["message"]))
    return redact(str(getattr(exc, "message", exc)))


def failure_outcome(exc: Exception, where: str) -> tuple[Outcome, str]:
    """``(refused | api_error, reason)`` for a permanent failure of a call to ``where``; raises
    ``RetryableError`` for a transient one and re-raises anything that is not an API failure (the engine
    records it as ``failed`` with the exception)."""
    from byteplussdkarkruntime import _exceptions as ark

    if isinstance(exc, ark.ArkAPIResponseValidationError):
        raise UnexpectedAnswer(where, str(getattr(exc, "body", "")), expected="the API's answer",
                               problem=_message(exc)) from exc
    if isinstance(exc, ark.ArkAPIStatusError):
        return answer_failure(exc.status_code, _message(exc), code=exc.code,
                              headers=exc.response.headers if exc.response is not None else None,
                              refusal=is_refusal_code, quota_codes=PERMANENT_429)
    transient = transport_failure(exc, where)
    if transient is None:
        raise exc
    raise transient from exc
