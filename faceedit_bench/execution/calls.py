"""One provider-agnostic way to call hosted models.

Plugins implement a *single attempt* (``aedit`` / ``ajudge``) and raise
:class:`RetryableError` for transient failures. Everything else lives here, in one
place, so that every attempt is counted the same way for every provider:

* bounded concurrency per provider key (an ``asyncio.Semaphore``), held per attempt: a call
  waiting out its backoff holds no slot, so the others keep the provider busy meanwhile;
* client-side rate limits in requests/min and tokens/min (``aiolimiter`` leaky buckets),
  shared by every component that names the same ``provider_key``, granted in the order calls ask;
* retries with exponential backoff and jitter (``tenacity``) on rate limits, server
  errors, timeouts, connection errors and truncated or malformed answers, waiting at least the
  provider's ``Retry-After``;
* push-back: each rate-limit answer lowers the request rate by 10% (to at most a quarter
  of the configured rate), and each success restores 5%, so a provider that answers 429 to
  more than about a third of the requests gets fewer of them, while an occasional 429
  costs almost nothing;
* a per-attempt timeout;
* a spending budget: once reached no new call starts (calls in flight finish);
* a dead endpoint ends the run: when the first attempts to a provider all fail to connect or
  time out (``UNREACHABLE_AFTER`` in a row, no answer ever received), :class:`EndpointUnreachable`
  names the endpoint and the error instead of every call being retried for hours;
* silence is said: while attempts are waiting and the provider has not answered anything for
  ``NO_ANSWER_NOTICE_S``, a warning names the endpoint, the calls waiting and when they give up.

SDK-level retries must be switched off by the plugins, so nothing retries unseen.

A provider that answers through a task (submit, then poll, then download the result) makes
the whole task ONE attempt: the rate limiters admit its one submission, the concurrency bound
is then the provider's limit on active tasks, and the polls and downloads inside the attempt
spend no request budget; the plugin counts them with :func:`count_request` (``other_requests``
in the stats).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections import Counter
from collections.abc import Awaitable, Callable
from contextvars import ContextVar
from dataclasses import dataclass, field
from typing import Any, TypeVar

from aiolimiter import AsyncLimiter
from tenacity import AsyncRetrying, RetryCallState, retry_if_exception_type, stop_after_attempt
from tenacity.wait import wait_exponential_jitter

from faceedit_bench.execution.budget import Budget
from faceedit_bench.execution.call_errors import (
    DEAD_ENDPOINT_KINDS,
    SILENT_KINDS,
    UNREACHABLE_AFTER,
    EndpointUnreachable,
    GaveUp,
    RetryableError,
)
from faceedit_bench.execution.limits import CallLimits
from faceedit_bench.execution.offline import check_call_allowed

T = TypeVar("T")
log = logging.getLogger(__name__)

#: Seconds with attempts waiting and no answer at all from the provider before the console says so
#: (and again every as many seconds while the silence lasts).
NO_ANSWER_NOTICE_S = 30.0


@dataclass
class CallStats:
    """Counts for one provider key, reported with the run."""

    calls: int = 0  # logical calls started
    attempts: int = 0
    succeeded: int = 0
    gave_up: Counter[str] = field(default_factory=Counter)  # kind -> calls
    retries: Counter[str] = field(default_factory=Counter)  # kind -> retried attempts
    rate_wait_s: float = 0.0  # time spent waiting for the rate limiters
    latency_s: float = 0.0  # time spent inside attempts (the provider's answer time), queue waits excluded
    # kind -> requests made inside attempts besides the admitted one (polls, downloads), not rate-limited
    other_requests: Counter[str] = field(default_factory=Counter)

    def as_dict(self) -> dict[str, Any]:
        return {
            "calls": self.calls, "attempts": self.attempts, "succeeded": self.succeeded,
            "gave_up": dict(sorted(self.gave_up.items())), "retries": dict(sorted(self.retries.items())),
            "rate_wait_s": round(self.rate_wait_s, 3), "latency_s": round(self.latency_s, 3),
            "other_requests": dict(sorted(self.other_requests.items())),
        }


@dataclass
class CallTiming:
    """Where one call's time went: the provider's answer time apart from the waits before it."""

    latency_s: float | None = None  # the last attempt, from sending to its answer
    provider_s: float = 0.0  # every attempt's answer time
    attempts: int = 0


#: The stats of the executor whose attempt is running in this task (asyncio tasks copy it).
_ATTEMPT_STATS: ContextVar[CallStats | None] = ContextVar("faceedit_attempt_stats", default=None)


def count_request(kind: str, n: int = 1) -> None:
    """Count ``n`` requests of ``kind`` (e.g. ``"poll"``, ``"download"``) that the running attempt
    made besides the one its rate limiters admitted. They spend no request budget. Outside an
    executor's attempt (a plugin's own tests) nothing is counted."""
    stats = _ATTEMPT_STATS.get()
    if stats is not None:
        stats.other_requests[kind] += n


def _wait_for(limits: CallLimits) -> Callable[[RetryCallState], float]:
    backoff = wait_exponential_jitter(initial=limits.backoff_initial_s, max=limits.backoff_max_s,
                                      jitter=limits.backoff_initial_s)

    def wait(state: RetryCallState) -> float:
        delay = backoff(state)
        exc = state.outcome.exception() if state.outcome else None
        if isinstance(exc, RetryableError) and exc.retry_after is not None:
            delay = max(delay, min(exc.retry_after, limits.backoff_max_s))
        return delay

    return wait


class Executor:
    """Runs calls for one provider key. Create it inside the event loop that uses it."""

    PUSH_BACK = 0.9  # rate factor applied on every rate-limit answer
    RECOVER = 0.05  # rate factor restored on every success
    FLOOR = 0.25

    def __init__(self, limits: CallLimits, budget: Budget | None = None,
                 sleep: Callable[[float], Awaitable[None]] = asyncio.sleep,
                 notice_after_s: float = NO_ANSWER_NOTICE_S) -> None:
        self.limits = limits
        self._sleep = sleep
        self._notice_after_s = notice_after_s
        self._in_flight = 0  # attempts sent and not yet ended
        self._heard_at = 0.0  # the last answer, or the start of the current wait when none came since
        self._notice: asyncio.TimerHandle | None = None
        self.budget = budget or Budget()
        self.stats = CallStats()
        self._loop: asyncio.AbstractEventLoop | None = None
        self._new_waiters()
        self._factor = 1.0
        self._answered = False  # has the provider ever answered (anything, even an error status)?
        self._unreachable: EndpointUnreachable | None = None
        self._silent_failures = 0  # attempts in a row that failed to connect or timed out
        tpm = limits.tokens_per_minute
        self._token_cost = min(limits.tokens_per_call, tpm) if tpm else 0

    def _new_waiters(self) -> None:
        """The concurrency slots and the rate limiters, whose waiters belong to one event loop (:meth:`_bind_loop`)."""
        self._slots = asyncio.Semaphore(self.limits.max_concurrency)
        self._turns = asyncio.Lock()  # the rate limiters' one waiter at a time, in arrival order (_acquire)
        self._requests = self._request_limiter()
        tpm = self.limits.tokens_per_minute
        self._tokens = AsyncLimiter(tpm, 60) if tpm else None

    def _request_limiter(self) -> AsyncLimiter | None:
        rpm = self.limits.requests_per_minute
        if not rpm:
            return None
        # A small bucket (1/FLOOR requests, so a pushed-back request still fits): requests are
        # spread evenly, and no minute ever holds more than the limit plus 4.
        per_second = rpm / 60.0
        burst = 1 / self.FLOOR
        return AsyncLimiter(burst, burst / per_second)

    def _bind_loop(self) -> None:
        """asyncio's semaphores and the rate limiters' waiters belong to the event loop they first waited in;
        a command that asks in rounds (one ``asyncio.run`` each) gets fresh ones for each new loop. The learned
        rate factor and the call statistics carry over; nothing is in flight across loops."""
        loop, first = asyncio.get_running_loop(), self._loop is None
        if loop is self._loop:
            return
        self._loop = loop
        if not first:  # those made in __init__ are not yet bound to any loop
            self._new_waiters()

    def _adjust(self, factor: float) -> None:
        self._factor = min(1.0, max(self.FLOOR, factor))

    @property
    def rate_factor(self) -> float:
        """The share of the configured request rate currently used (1.0 = full rate)."""
        return self._factor

    async def _acquire(self) -> None:
        started = time.perf_counter()
        # In arrival order, one at a time: aiolimiter serves its waiters smallest amount first, and a request
        # made while the rate is pushed back asks for more, so it waited behind every later request made at a
        # higher rate (measured with 7% faults: sessions took up to 87 s of a 90 s run; 45 s in arrival order).
        async with self._turns:
            if self._requests is not None:
                # Pushed back to a fraction f of the rate: each request takes 1/f of a slot.
                await self._requests.acquire(1 / self._factor)
            if self._tokens is not None and self._token_cost:
                await self._tokens.acquire(self._token_cost)
        self.stats.rate_wait_s += time.perf_counter() - started

    async def _attempt(self, fn: Callable[[], Awaitable[T]], timing: CallTiming) -> T:
        self._check_reachable()  # another call may have found the endpoint dead while this one waited
        # One slot per attempt, released while the call backs off (unless the limits keep it per call).
        async with contextlib.nullcontext() if self.limits.keep_slot_in_backoff else self._slots:
            self._check_reachable()
            await self._acquire()
            self.stats.attempts += 1
            timing.attempts += 1
            token = _ATTEMPT_STATS.set(self.stats)  # wait_for's task copies the context: count_request sees it
            sent = time.perf_counter()
            self._attempt_sent()
            answered = True
            try:
                result = await asyncio.wait_for(fn(), self.limits.timeout_s)
            except TimeoutError as exc:
                answered = False
                error = RetryableError("timeout", f"no answer within {self.limits.timeout_s:g} s (limits.timeout_s)")
                self._note_failure(error)
                raise error from exc
            except RetryableError as exc:
                answered = exc.kind not in SILENT_KINDS
                self._note_failure(exc)
                raise
            finally:
                self._attempt_ended(answered)
                _ATTEMPT_STATS.reset(token)
                timing.latency_s = time.perf_counter() - sent
                timing.provider_s += timing.latency_s
                self.stats.latency_s += timing.latency_s
        self._answered, self._silent_failures = True, 0
        return result

    def _note_failure(self, exc: RetryableError) -> None:
        """Take the endpoint for dead once ``UNREACHABLE_AFTER`` attempts in a row failed to
        connect, timed out or got an answer not in the API's format, and the provider has never answered
        properly. A rate limit, a server error or a cut-off answer is an answer; after any answer, these
        failures are transient and retried as usual."""
        if exc.kind not in DEAD_ENDPOINT_KINDS:
            self._answered, self._silent_failures = True, 0
            return
        self._silent_failures += 1
        if not self._answered and self._unreachable is None and self._silent_failures >= min(
                UNREACHABLE_AFTER, self.limits.max_attempts):
            self._unreachable = EndpointUnreachable(self.limits, exc, self._silent_failures)
        self._check_reachable()

    # -- saying so when the provider is silent ---------------------------------------------------

    def _attempt_sent(self) -> None:
        if self._in_flight == 0:
            self._heard_at = time.monotonic()  # nothing was awaited before: the wait starts now
        self._in_flight += 1
        if self._notice is None:
            self._notice = asyncio.get_running_loop().call_later(self._notice_after_s, self._check_silence)

    def _attempt_ended(self, answered: bool) -> None:
        self._in_flight -= 1
        if answered:
            self._heard_at = time.monotonic()
        if self._in_flight == 0 and self._notice is not None:
            self._notice.cancel()  # nothing waits: no timer outlives the event loop
            self._notice = None

    def _check_silence(self) -> None:
        self._notice = None
        if self._in_flight == 0:
            return  # nothing is waiting; the next attempt starts the clock again
        silent = time.monotonic() - self._heard_at
        if silent >= self._notice_after_s:
            where = self.limits.endpoint or self.limits.provider_key
            then = ("it has never answered: the run stops after "
                    f"{min(UNREACHABLE_AFTER, self.limits.max_attempts)} timed-out attempt(s) in a row"
                    if not self._answered else "it answered before: they are retried as usual")
            log.warning("No answer from %s for %.0f s: %d attempt(s) waiting, each given up after "
                        "limits.timeout_s=%g s; %s.", where, silent, self._in_flight, self.limits.timeout_s, then)
            delay = self._notice_after_s
        else:
            delay = self._notice_after_s - silent
        self._notice = asyncio.get_running_loop().call_later(delay, self._check_silence)

    def _check_reachable(self) -> None:
        if self._unreachable is not None:
            dead = self._unreachable  # a fresh exception per call: each has its own traceback
            raise EndpointUnreachable(dead.limits, dead.error, dead.attempts)

    async def call(self, fn: Callable[[], Awaitable[T]], timing: CallTiming | None = None) -> T:
        """Run ``fn`` (one attempt) with limits and retries. Raises :class:`GaveUp` when
        every attempt failed and :class:`BudgetReached` before starting past the budget.
        ``timing``, when given, receives the provider's answer time apart from the waits."""
        check_call_allowed(self.limits.provider_key)
        self._bind_loop()
        self.budget.check()
        self._check_reachable()
        self.stats.calls += 1
        retrying = AsyncRetrying(
            stop=stop_after_attempt(self.limits.max_attempts),
            wait=_wait_for(self.limits),
            retry=retry_if_exception_type(RetryableError),
            before_sleep=self._before_retry,
            sleep=self._sleep,
            reraise=True,
        )
        try:
            async with self._slots if self.limits.keep_slot_in_backoff else contextlib.nullcontext():
                result = await retrying(self._attempt, fn, timing if timing is not None else CallTiming())
        except RetryableError as exc:
            self.stats.gave_up[exc.kind] += 1
            self._note_push_back(exc)
            raise GaveUp(exc, retrying.statistics.get("attempt_number", self.limits.max_attempts)) from exc
        self.stats.succeeded += 1
        self._adjust(self._factor + self.RECOVER)
        return result

    def _before_retry(self, state: RetryCallState) -> None:
        exc = state.outcome.exception() if state.outcome else None
        if isinstance(exc, RetryableError):
            self.stats.retries[exc.kind] += 1
            self._note_push_back(exc)

    def _note_push_back(self, exc: RetryableError) -> None:
        if exc.kind == "rate_limited":
            self._adjust(self._factor * self.PUSH_BACK)


class Executors:
    """The executors of one run, one per provider key, sharing the run's budget."""

    def __init__(self, budget: Budget | None = None) -> None:
        self.budget = budget or Budget()
        self._by_key: dict[str, Executor] = {}

    def get(self, limits: CallLimits) -> Executor:
        if limits.provider_key not in self._by_key:
            self._by_key[limits.provider_key] = Executor(limits, self.budget)
        return self._by_key[limits.provider_key]

    def stats(self) -> dict[str, dict[str, Any]]:
        """Counts per provider key, with the effective endpoint where the component names it."""
        return {key: {**ex.stats.as_dict(), **({"endpoint": ex.limits.endpoint,
                                                "endpoint_source": ex.limits.endpoint_source}
                                               if ex.limits.endpoint else {})}
                for key, ex in sorted(self._by_key.items())}
