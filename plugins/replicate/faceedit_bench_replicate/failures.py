"""What a failed Replicate request means: retry it, or record it as an outcome.

The error answer is read the way every provider's is (``HostedConnection.answer_failure``, :mod:`faceedit_bench.api`).
Behaviour of the ``replicate`` SDK (1.0.x) this relies on:

* an error answer raises ``ReplicateError`` with ``.status``, ``.title`` and ``.detail`` from
  Replicate's problem-details body; the response headers are not kept, so the wait a 429 asks
  for is read from its detail ("Request was throttled. Expected available in 3 seconds.");
* transport failures are httpx's own exceptions (``TimeoutException``, ``RemoteProtocolError``
  for a body cut short, ``ConnectError`` ...), not wrapped; a 200 body that is not JSON raises
  ``json.JSONDecodeError`` or ``UnicodeDecodeError`` (binary);
* a download through ``FileOutput.aread`` raises ``httpx.HTTPStatusError`` for an error status.
"""

from __future__ import annotations

import re

from faceedit_bench.api import HostedConnection, Outcome, redact

__all__ = ["failure_outcome"]

_THROTTLED = re.compile(r"available in\s+~?(\d+(?:\.\d+)?)\s*second", re.IGNORECASE)


def failure_outcome(exc: Exception, where: str) -> tuple[Outcome, str]:
    """``(api_error, reason)`` for a permanent failure of a request to ``where``; raises ``RetryableError`` for
    a transient one and re-raises anything else."""
    from replicate.exceptions import ReplicateError

    transient = HostedConnection.transport_failure(exc, where)
    if transient is not None:
        raise transient from exc
    if not isinstance(exc, ReplicateError):
        raise exc
    wait = _THROTTLED.search(exc.detail or "")
    message = redact(": ".join(p for p in (exc.title, exc.detail) if p) or "no detail")
    return HostedConnection.answer_failure(exc.status, message, retry_after=float(wait.group(1)) if wait else None)
