"""What a failed Replicate request means: retry it, or record it as an outcome.

Behaviour of the ``replicate`` SDK (1.0.x) this relies on:

* an error answer raises ``ReplicateError`` with ``.status``, ``.title`` and ``.detail`` from
  Replicate's problem-details body; the response headers are not kept, so the wait a 429 asks
  for is read from its detail ("Request was throttled. Expected available in 3 seconds.");
* transport failures are httpx's own exceptions (``TimeoutException``, ``RemoteProtocolError``
  for a body cut short, ``ConnectError`` ...), not wrapped;
* a download through ``FileOutput.aread`` raises ``httpx.HTTPStatusError`` for an error status.
"""

from __future__ import annotations

import json
import re

from faceedit_bench.api import Outcome, RetryableError, incomplete_body, redact

_THROTTLED = re.compile(r"available in\s+~?(\d+(?:\.\d+)?)\s*second", re.IGNORECASE)


def transport_failure(exc: BaseException) -> RetryableError | None:
    """The retryable kind of an httpx transport failure or a garbled body, else ``None``."""
    import httpx

    text = redact(f"{type(exc).__name__}: {exc}")
    if isinstance(exc, json.JSONDecodeError):
        return RetryableError("truncated", f"the answer is not complete JSON ({text})")
    if isinstance(exc, httpx.TimeoutException):
        return RetryableError("timeout", text)
    if incomplete_body(exc) or isinstance(exc, httpx.DecodingError):
        return RetryableError("truncated", f"the answer was cut short ({text})")
    if isinstance(exc, (httpx.TransportError, OSError)):
        return RetryableError("connection", text)
    return None


def failure_outcome(exc: Exception) -> tuple[Outcome, str]:
    """``(api_error, reason)`` for a permanent failure of an API request; raises
    ``RetryableError`` for a transient one and re-raises anything else."""
    from replicate.exceptions import ReplicateError

    transient = transport_failure(exc)
    if transient is not None:
        raise transient from exc
    if not isinstance(exc, ReplicateError):
        raise exc
    status = int(exc.status or 0)
    message = redact(": ".join(p for p in (exc.title, exc.detail) if p) or "no detail")
    if status == 429:
        wait = _THROTTLED.search(exc.detail or "")
        raise RetryableError("rate_limited", f"HTTP 429: {message}", status=429,
                             retry_after=float(wait.group(1)) if wait else None) from exc
    if status == 408:
        raise RetryableError("timeout", f"HTTP 408: {message}", status=408) from exc
    if status >= 500:
        raise RetryableError("server_error", f"HTTP {status}: {message}", status=status) from exc
    return Outcome.API_ERROR, f"HTTP {status}: {message}"
