"""How a hosted call fails: a transient attempt (:class:`RetryableError`, with the provider's
``Retry-After``), a call whose every attempt failed (:class:`GaveUp`), a dead endpoint
(:class:`EndpointUnreachable`); and :func:`incomplete_body`, with which the hosted base
(``execution/hosted.py``) classifies an SDK's exceptions into :class:`RetryableError` kinds."""

from __future__ import annotations

import email.utils
import json
import re
import time
from collections.abc import Mapping

from faceedit_bench.errors import FaceEditBenchError
from faceedit_bench.execution.budget import BudgetReached
from faceedit_bench.execution.limits import CallLimits
from faceedit_bench.execution.offline import ProviderCallsOff
from faceedit_bench.execution.secrets import redact

#: Kinds of transient failure a plugin may report. ``truncated``: the body ended before its announced length;
#: ``malformed``: a complete answer not in the API's format (:class:`UnexpectedAnswer`).
RETRYABLE_KINDS = ("rate_limited", "server_error", "timeout", "connection", "truncated", "malformed")
#: Kinds that carry no answer from the provider (every other kind is an answer, even an error).
SILENT_KINDS = ("connection", "timeout")
#: Kinds that show the endpoint may be the wrong one when they are all it ever gave (:class:`EndpointUnreachable`).
DEAD_ENDPOINT_KINDS = (*SILENT_KINDS, "malformed")


#: An object's default repr (``<ssl.SSLContext object at 0x7f...>``), with a ``name:`` label glued to it.
_OBJECT_REPR = re.compile(r"\s*(?:\w+:)?<[\w.]+ object at 0x[0-9a-fA-F]+>")


def plain_message(text: str) -> str:
    """``text`` without default object reprs: an address in memory tells a user nothing."""
    return _OBJECT_REPR.sub("", text)


class RetryableError(Exception):
    """A transient failure of one attempt; ``kind`` is one of :data:`RETRYABLE_KINDS`. The
    message is shown to users (in the dead-endpoint error and the ledger): object reprs that an
    HTTP library put in its exception text are dropped."""

    def __init__(self, kind: str, message: str, *, status: int | None = None,
                 retry_after: float | None = None) -> None:
        if kind not in RETRYABLE_KINDS:
            raise ValueError(f"unknown retryable kind {kind!r}; use one of {RETRYABLE_KINDS}")
        super().__init__(plain_message(message))
        self.kind = kind
        self.status = status
        self.retry_after = retry_after


#: Characters of an unexpected answer quoted in its message.
EXCERPT = 80
#: Control characters that no text answer holds: the body is binary.
_BINARY = re.compile(r"[\x00-\x08\x0e-\x1f]")


def excerpt(body: bytes | str | None) -> str:
    """A short, printable description of an answer's body: its start as text, or its size and first bytes."""
    if not body:
        return "an empty body"
    if isinstance(body, bytes):
        try:
            text = body.decode("utf-8")
        except UnicodeDecodeError:
            text = ""
        if not text or _BINARY.search(text[:256]):
            return f"{len(body):,} bytes of binary data (starting {body[:8].hex(' ')})"
    elif "\ufffd" in body or _BINARY.search(body[:256]):  # bytes an SDK decoded as text
        return f"binary data ({len(body):,} characters when read as text)"
    else:
        text = body
    flat = " ".join(text.split())
    return repr(flat if len(flat) <= EXCERPT else flat[:EXCERPT] + "…")


class UnexpectedAnswer(RetryableError):
    """A complete answer that is not in the format the API promises: a 200 whose body is binary, an HTML page
    (a proxy's or a web server's), JSON cut short or of another shape. One kind (``malformed``) for every
    provider, retried like a server error; an endpoint whose every answer is one of these stops the run
    (:class:`EndpointUnreachable`). The message names where the answer came from and quotes its start."""

    def __init__(self, where: str, body: bytes | str | None, *, expected: str = "JSON", status: int | None = 200,
                 problem: str = "") -> None:
        answered = f"answered HTTP {status}" if status else "answered"
        why = f" ({problem})" if problem else ""
        super().__init__("malformed", redact(f"{where} {answered} with {excerpt(body)}, not {expected}{why}"),
                         status=status)


def unexpected_answer(exc: BaseException, where: str, *, expected: str = "JSON") -> UnexpectedAnswer | None:
    """The :class:`UnexpectedAnswer` behind an SDK's exception (``exc`` or what caused it): a body that is not
    JSON (``json.JSONDecodeError``) or not text (``UnicodeDecodeError``); None for anything else."""
    seen: BaseException | None = exc
    while seen is not None:
        if isinstance(seen, UnexpectedAnswer):
            return seen
        if isinstance(seen, json.JSONDecodeError):
            return UnexpectedAnswer(where, seen.doc, expected=expected, problem=f"{seen.msg}, character {seen.pos}")
        if isinstance(seen, UnicodeDecodeError):
            return UnexpectedAnswer(where, seen.object, expected=expected, problem="not text")
        seen = seen.__cause__ or seen.__context__
    return None


def retry_after_s(headers: Mapping[str, str] | None) -> float | None:
    """Seconds a provider asked to wait, from ``retry-after-ms`` or ``Retry-After`` (seconds or
    an HTTP date); ``None`` when it did not say. For plugins building a :class:`RetryableError`."""
    if not headers:
        return None
    lower = {str(k).lower(): str(v).strip() for k, v in headers.items()}
    try:
        if "retry-after-ms" in lower:
            return max(0.0, float(lower["retry-after-ms"]) / 1000.0)
        if "retry-after" in lower:
            return max(0.0, float(lower["retry-after"]))
    except ValueError:
        pass
    try:
        when = email.utils.parsedate_to_datetime(lower.get("retry-after", ""))
    except (TypeError, ValueError):
        return None
    return max(0.0, when.timestamp() - time.time())


class GaveUp(Exception):
    """Every attempt failed; the caller records the call as ``api_error``."""

    def __init__(self, last: RetryableError, attempts: int) -> None:
        status = f" (HTTP {last.status})" if last.status else ""
        super().__init__(f"{last.kind}{status} after {attempts} attempt(s): {last}")
        self.kind = last.kind
        self.status = last.status
        self.attempts = attempts


#: Attempts in a row (of one call or of several) that must fail to connect or time out, with no
#: answer ever received from the provider, before its endpoint is taken for dead. Stopping early
#: costs little when wrong (nothing finished is lost; the rerun resumes); not stopping costs hours.
UNREACHABLE_AFTER = 3


class EndpointUnreachable(FaceEditBenchError):
    """A provider never answered: the first attempts all failed to connect, timed out or got answers not in its
    API's format. The run stops with this message instead of retrying every call (an hour for a wrong host name,
    13 minutes per call for a server that accepts connections and never answers)."""

    def __init__(self, limits: CallLimits, error: RetryableError, attempts: int) -> None:
        where = limits.endpoint or f"the endpoint of {limits.provider_key}"
        source = f" ({limits.endpoint_source})" if limits.endpoint_source else ""
        if error.kind == "malformed":
            head = (f"{where}{source} answers, but not in its API's format: {error}. Its first {attempts} answers were "
                    "all like this, so the run stops instead of retrying every call: the endpoint is probably not "
                    "this provider's API (a web page, a proxy's error page, another service). Check the endpoint "
                    "and where it was set")
        elif error.kind == "timeout":
            head = (f"No answer from {where}{source}: {error}. {attempts} attempts in a row got no answer within "
                    f"limits.timeout_s={limits.timeout_s:g} s (or failed to connect) and it has never answered, so "
                    "the run stops instead of waiting out every call. Check that the server behind the endpoint is "
                    "running and answering (one that accepts connections but never answers looks like this); if "
                    "the provider is only slow, raise the component's limits.timeout_s. Check the endpoint and "
                    "where it was set")
        else:
            head = (f"Cannot connect to {where}{source}: {error}. {attempts} attempts in a row failed to connect and "
                    "no call to it has ever succeeded, so the run stops instead of retrying every call. Check the "
                    "endpoint and where it was set, that its host name resolves and its server is running")
        super().__init__(redact(f"{head}, and the network or proxy. Every finished step is kept: run the same "
                                "command again to resume."))
        self.limits, self.error, self.attempts = limits, error, attempts


#: Raised by a call, these end the run rather than becoming the call's outcome: nothing is recorded
#: for the call, and the rerun (a higher budget, a live endpoint, the missing shards run) does it.
RUN_ENDING: tuple[type[Exception], ...] = (BudgetReached, EndpointUnreachable, ProviderCallsOff)


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
