"""What an error answer or a failed exchange with a hosted provider means (:mod:`~faceedit_bench.execution.hosted`):
an OpenAI-shaped error (HTTP status plus the provider's error code), a transport failure, and a status or code of
whatever type an SDK gave it."""

from __future__ import annotations

import logging
import os
from collections.abc import Callable, Collection, Mapping
from typing import Any

from faceedit_bench.execution.call_errors import (
    RetryableError,
    UnexpectedAnswer,
    incomplete_body,
    retry_after_s,
    unexpected_answer,
)
from faceedit_bench.execution.secrets import redact
from faceedit_bench.records import Outcome

log = logging.getLogger(__name__)


def as_status(value: Any) -> int | None:
    """An HTTP status as an integer, whatever type an SDK or a body gave it in; None when it is none."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value
    if isinstance(value, str) and value.strip().isdigit():
        return int(value)
    return None


def as_code(value: Any) -> str | None:
    """A provider's error code as text (an integer, a string, or nothing): every test on a code is a text test,
    so a code of an unexpected type (``"code": 404``) never meets a string operation as itself."""
    if value is None or value == "" or isinstance(value, (dict, list)):
        return None
    return str(value)


def answer_failure(status: Any, message: str, *, code: Any = None, headers: Mapping[str, str] | None = None,
                   retry_after: float | None = None, refusal: Callable[[str], bool] | None = None,
                   quota_codes: Collection[str] = ()) -> tuple[Outcome, str]:
    """What an error answer means, the same for every provider (OpenAI's shape: an HTTP status and an error
    code): ``(refused, reason)`` for a code ``refusal`` recognises, ``(api_error, reason)`` for a permanent
    failure (a 4xx, a 429 whose code is in ``quota_codes``: waiting does not help); raises
    :class:`RetryableError` for a transient one (429, 408, 409, 5xx), waiting at least ``retry_after`` or the
    ``Retry-After`` in ``headers``."""
    status_code, code_text = as_status(status), as_code(code)
    message = redact(str(message))
    reason = (f"HTTP {status_code}: " if status_code else "") + message + (f" (code: {code_text})" if code_text else "")
    if code_text and refusal is not None and refusal(code_text):
        return Outcome.REFUSED, f"{code_text}: {message}"
    wait = retry_after if retry_after is not None else retry_after_s(headers)
    if status_code == 429 and code_text not in quota_codes:
        raise RetryableError("rate_limited", reason, status=429, retry_after=wait)
    if status_code == 408:
        raise RetryableError("timeout", reason, status=408)
    if status_code == 409 or (status_code or 0) >= 500:  # 409: a conflict (a lock) passes with time
        raise RetryableError("server_error", reason, status=status_code, retry_after=wait)
    return Outcome.API_ERROR, reason


def openai_shaped_failure(exc: Exception, where: str, *, status_error: type[BaseException],
                          validation_error: type[BaseException] | None = None,
                          refusal: Callable[[str], bool] | None = None,
                          quota_codes: Collection[str] = ()) -> tuple[Outcome, str]:
    """What an exception of an OpenAI-shaped SDK means (openai's, and those built like it: an error answer raises
    ``status_error`` with ``status_code``, ``code``, ``body["message"]`` and ``response.headers``; an answer of
    the wrong shape raises ``validation_error``): :func:`answer_failure` for an error answer, an
    :class:`UnexpectedAnswer` or :func:`transport_failure`'s kind raised for the others, and anything else
    raised again (the engine records it as ``failed``)."""
    if validation_error is not None and isinstance(exc, validation_error):
        raise UnexpectedAnswer(where, str(getattr(exc, "body", "")), expected="the API's answer",
                               problem=_sdk_message(exc)) from exc
    if isinstance(exc, status_error):
        return answer_failure(getattr(exc, "status_code", None), _sdk_message(exc), code=getattr(exc, "code", None),
                              headers=getattr(getattr(exc, "response", None), "headers", None), refusal=refusal,
                              quota_codes=quota_codes)
    transient = transport_failure(exc, where)
    if transient is None:
        raise exc
    raise transient from exc


def _sdk_message(exc: BaseException) -> str:
    """The provider's own message (``body["message"]``) rather than the SDK's summary of it."""
    body = getattr(exc, "body", None)
    if isinstance(body, dict) and body.get("message"):
        return str(body["message"])
    return str(getattr(exc, "message", exc))


#: Exception class names of the HTTP stacks the SDKs use (httpx, httpx2, aiohttp, http.client), by kind.
_TIMEOUTS = ("TimeoutException", "TimeoutError", "ServerTimeoutError", "APITimeoutError", "ArkAPITimeoutError")
_CONNECTION = ("TransportError", "ClientConnectionError", "APIConnectionError", "ArkAPIConnectionError")
_GARBLED = ("DecodingError", "ClientPayloadError")


def transport_failure(exc: BaseException, where: str) -> RetryableError | None:
    """The retryable kind of a failed exchange with ``where`` (an endpoint, a URL): a timeout, a connection
    failure, a body cut short (``truncated``) or not in the expected format (``malformed``); None for anything
    else. Classified by the HTTP stack's class names, so the core imports no HTTP library."""
    malformed = unexpected_answer(exc, where)
    if malformed is not None:
        return malformed
    refused = _refused_connection(exc)
    if refused is not None:
        return RetryableError("connection", f"{where}: {refused}")
    names = {cls.__name__ for cls in type(exc).__mro__}
    text = redact(f"{type(exc).__name__}: {exc}" + (f" ({exc.__cause__})" if exc.__cause__ else ""))
    if names & set(_TIMEOUTS) or isinstance(exc, TimeoutError):
        return RetryableError("timeout", f"{where}: {text}")
    if incomplete_body(exc) or names & set(_GARBLED):
        return RetryableError("truncated", f"{where}: the answer was cut short ({text})")
    if names & set(_CONNECTION) or isinstance(exc, OSError):
        return RetryableError("connection", f"{where}: {text}")
    return None


def _refused_connection(exc: BaseException) -> str | None:
    """For aiohttp's connector errors, whose text shows the SSL context's repr (``ssl:<ssl.SSLContext object at
    0x...>``): the host, the port and the OS's reason."""
    os_error = getattr(exc, "os_error", None)
    host, port = getattr(exc, "host", None), getattr(exc, "port", None)
    if not isinstance(os_error, OSError) or host is None:
        return None
    code = os_error.errno
    reason = os.strerror(code) if isinstance(code, int) and code > 0 else (os_error.strerror or str(os_error))
    return f"cannot connect to {host}:{port}: {reason}"


# -- the component ------------------------------------------------------------------------------------
