"""Recognising provider failures that are worth another attempt, for plugins that classify
their SDK's exceptions into :class:`~faceedit_bench.execution.calls.RetryableError` kinds."""

from __future__ import annotations

#: Exceptions of the HTTP stacks the SDKs use (httpx, http.client) raised for a body cut short.
_CUT_SHORT = ("RemoteProtocolError", "IncompleteRead", "ReadError")


def incomplete_body(exc: BaseException) -> bool:
    """True when ``exc`` (or what caused it) is an answer whose body ended early: a ``truncated``
    failure, retried like a server error."""
    seen: BaseException | None = exc
    while seen is not None:
        text = str(seen).lower()
        if type(seen).__name__ in _CUT_SHORT and ("message body" in text or "incomplete" in text):
            return True
        seen = seen.__cause__ or seen.__context__
    return False
