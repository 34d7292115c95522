"""What a failed OpenAI call means: retry it, or record it as an outcome.

The error answer is read the way every provider's is (``HostedConnection.answer_failure``, :mod:`faceedit_bench.api`):
a safety code is ``refused``, 429 / 408 / 409 / 5xx are retried, 429 ``insufficient_quota`` and other 4xx are
``api_error`` with ``HTTP <status>: <message> (code: <code>)``. Behaviour of the openai SDK (3.x) this relies on:

* a body cut short by the server (fewer bytes than Content-Length) raises ``APIConnectionError`` whose
  ``__cause__`` is the HTTP library's ``RemoteProtocolError``; ``APITimeoutError`` is a subclass of
  ``APIConnectionError``;
* a 200 body that is not JSON raises ``json.JSONDecodeError`` or ``UnicodeDecodeError`` (binary), or, when its
  content type is not JSON, comes back as the body's text instead of the answer object (:func:`answer_of`);
* ``APIStatusError.body`` is the inner ``error`` object (``message``, ``type``, ``param``, ``code``) and
  ``.response.headers`` holds ``retry-after`` / ``retry-after-ms``.
"""

from __future__ import annotations

from typing import Any

from faceedit_bench.api import HostedConnection, Outcome

__all__ = ["REFUSAL_CODES", "answer_of", "failure_outcome"]

#: Error codes of a request the provider's safety system rejected (``content_filter``: Azure OpenAI).
REFUSAL_CODES = frozenset({"moderation_blocked", "content_policy_violation", "content_filter"})


def failure_outcome(exc: Exception, where: str = "the OpenAI endpoint") -> tuple[Outcome, str]:
    """``(refused | api_error, reason)`` for a permanent failure of a call to ``where``; raises
    ``RetryableError`` for a transient one and re-raises anything that is not an API failure."""
    import openai

    return HostedConnection.openai_shaped_failure(
        exc, where, status_error=openai.APIStatusError, validation_error=openai.APIResponseValidationError,
        refusal=REFUSAL_CODES.__contains__, quota_codes=("insufficient_quota",))


def answer_of(response: Any, where: str) -> Any:
    """The SDK's answer object; a ``HostedConnection.UnexpectedAnswer`` when the SDK handed back the text of a body that
    is not JSON (a proxy's HTML page, an image) instead."""
    if isinstance(response, (str, bytes)):
        raise HostedConnection.UnexpectedAnswer(where, response)
    return response
