"""One provider-agnostic way to call hosted models.

Plugins implement a *single attempt* (``aedit`` / ``ajudge``) and raise
:class:`RetryableError` for transient failures. Everything else lives here, in one
place, so that every attempt is counted the same way for every provider:

* bounded concurrency per provider key (an ``asyncio.Semaphore``);
* client-side rate limits in requests/min and tokens/min (``aiolimiter`` leaky buckets),
  shared by every component that names the same ``provider_key``;
* retries with exponential backoff and jitter (``tenacity``) on rate limits, server
  errors, timeouts, connection errors and truncated answers, waiting at least the
  provider's ``Retry-After``;
* push-back: each rate-limit answer lowers the request rate by 10% (to at most a quarter
  of the configured rate), and each success restores 5%, so a provider that answers 429 to
  more than about a third of the requests gets fewer of them, while an occasional 429
  costs almost nothing;
* a per-attempt timeout;
* a spending budget: once reached no new call starts (calls in flight finish);
* a dead endpoint ends the run: when the first attempts to a provider all fail to connect
  (``UNREACHABLE_AFTER`` in a row, no answer ever received), :class:`EndpointUnreachable`
  names the endpoint and the error instead of every call being retried for hours.

SDK-level retries must be switched off by the plugins, so nothing retries unseen.

A provider that answers through a task (submit, then poll, then download the result) makes
the whole task ONE attempt: the rate limiters admit its one submission, the concurrency bound
is then the provider's limit on active tasks, and the polls and downloads inside the attempt
spend no request budget; the plugin counts them with :func:`count_request` (``other_requests``
in the stats).
"""

from __future__ import annotations

import asyncio
import email.utils
import time
from collections import Counter
from collections.abc import Awaitable, Callable, Mapping
from contextvars import ContextVar
from dataclasses import dataclass, field
from typing import Any, TypeVar

from aiolimiter import AsyncLimiter
from tenacity import AsyncRetrying, RetryCallState, retry_if_exception_type, stop_after_attempt
from tenacity.wait import wait_exponential_jitter

from faceedit_bench.errors import ConfigError, FaceEditBenchError
from faceedit_bench.execution.cost import cost_usd
from faceedit_bench.execution.endpoints import Endpoint
from faceedit_bench.execution.secrets import redact

T = TypeVar("T")

#: Kinds of transient failure a plugin may report.
RETRYABLE_KINDS = ("rate_limited", "server_error", "timeout", "connection", "truncated")


@dataclass(frozen=True)
class CallLimits:
    """How calls to one provider may be made. Components that share a ``provider_key``
    (e.g. an editor and a judge on the same account) share one set of limits: the
    first component to register a key decides them. ``max_concurrency`` bounds calls in
    flight, retries' waits included: for a submit-then-poll provider, its active tasks."""

    provider_key: str
    max_concurrency: int = 16
    requests_per_minute: float | None = None
    tokens_per_minute: float | None = None
    tokens_per_call: int = 0  # reserved against tokens_per_minute before each attempt
    max_attempts: int = 6
    timeout_s: float = 120.0
    backoff_initial_s: float = 1.0
    backoff_max_s: float = 60.0
    # Where the calls go and how that was chosen (set by the component, never configured as a
    # limit): named when the endpoint cannot be reached, and recorded in the report's calls.
    endpoint: str = ""
    endpoint_source: str = ""

    def __post_init__(self) -> None:
        if self.max_concurrency < 1 or self.max_attempts < 1:
            raise ValueError("max_concurrency and max_attempts must be at least 1")
        for name in ("requests_per_minute", "tokens_per_minute"):
            value = getattr(self, name)
            if value is not None and value <= 0:
                raise ValueError(f"{name} must be positive (or null for no limit)")


LIMIT_FIELDS = tuple(name for name in CallLimits.__dataclass_fields__
                     if name not in ("provider_key", "endpoint", "endpoint_source"))


def limits_from_config(limits: Mapping[str, Any], defaults: Mapping[str, Any], *, provider_key: str,
                       what: str, endpoint: Endpoint | None = None) -> CallLimits:
    """``CallLimits`` from a component's ``limits`` config mapping; keys left out keep the
    component's ``defaults``. The provider key and the endpoint are the component's own, never
    configured as limits."""
    if not isinstance(limits, Mapping):
        raise ConfigError(f"{what}: limits must be a mapping of {', '.join(LIMIT_FIELDS)}, not {limits!r}")
    unknown = sorted(set(limits) - set(LIMIT_FIELDS))
    if unknown:
        hint = (" (provider_key is derived by the component from its endpoint, key variable and model)"
                if "provider_key" in unknown else "")
        raise ConfigError(f"{what}: unknown limits key(s) {', '.join(unknown)}{hint}. "
                          f"Accepted: {', '.join(LIMIT_FIELDS)}")
    where = {"endpoint": endpoint.url, "endpoint_source": endpoint.source} if endpoint else {}
    try:
        return CallLimits(provider_key=provider_key, **{**defaults, **limits}, **where)
    except (TypeError, ValueError) as exc:
        raise ConfigError(f"{what}: invalid limits: {exc}") from exc


class RetryableError(Exception):
    """A transient failure of one attempt; ``kind`` is one of :data:`RETRYABLE_KINDS`."""

    def __init__(self, kind: str, message: str, *, status: int | None = None,
                 retry_after: float | None = None) -> None:
        if kind not in RETRYABLE_KINDS:
            raise ValueError(f"unknown retryable kind {kind!r}; use one of {RETRYABLE_KINDS}")
        super().__init__(message)
        self.kind = kind
        self.status = status
        self.retry_after = retry_after


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


class BudgetReached(Exception):
    """The run's spending budget is used up; no new call is started."""


#: Attempts in a row (of one call or of several) that must fail to connect, with no answer
#: ever received from the provider, before its endpoint is taken for dead. Stopping early costs
#: little when wrong (nothing finished is lost; the rerun resumes); not stopping costs hours.
UNREACHABLE_AFTER = 3


class EndpointUnreachable(FaceEditBenchError):
    """A provider never answered: the first calls all failed to connect. The run stops with
    this message instead of retrying every call (an hour for a wrong host name)."""

    def __init__(self, limits: CallLimits, error: RetryableError, attempts: int) -> None:
        where = limits.endpoint or f"the endpoint of {limits.provider_key}"
        source = f" ({limits.endpoint_source})" if limits.endpoint_source else ""
        super().__init__(redact(
            f"Cannot connect to {where}{source}: {error}. {attempts} attempts in a row failed to connect and no "
            "call to it has ever succeeded, so the run stops instead of retrying every call. Check the endpoint "
            "(the component's base_url, or the SDK's *_BASE_URL environment variable; config wins), that its host "
            "name resolves and its server is running, and the network or proxy. Every finished step is kept: "
            "run the same command again to resume."))
        self.limits, self.error, self.attempts = limits, error, attempts


@dataclass
class Budget:
    """Estimated spending of this invocation, in USD, against an optional limit."""

    limit_usd: float | None = None
    spent_usd: float = 0.0

    def check(self) -> None:
        if self.limit_usd is not None and self.spent_usd >= self.limit_usd:
            raise BudgetReached(
                f"run.budget_usd={self.limit_usd:g} reached (estimated spend {self.spent_usd:.4f} USD); "
                "rerun the same command to resume from here, with a higher run.budget_usd to go further"
            )

    def add(self, usd: float) -> None:
        self.spent_usd += usd

    def charge(self, usage: Mapping[str, Any], prices: Mapping[str, float] | None) -> dict[str, Any]:
        """``usage`` with its estimated ``cost_usd`` (when there is a price table), counted
        against the budget."""
        spent = cost_usd(usage, prices)
        if spent is None:
            return dict(usage)
        self.add(spent)
        return {**usage, "cost_usd": spent}


@dataclass
class CallStats:
    """Counts for one provider key, reported with the run."""

    calls: int = 0  # logical calls started
    attempts: int = 0
    succeeded: int = 0
    gave_up: Counter[str] = field(default_factory=Counter)  # kind -> calls
    retries: Counter[str] = field(default_factory=Counter)  # kind -> retried attempts
    rate_wait_s: float = 0.0  # time spent waiting for the rate limiters
    # kind -> requests made inside attempts besides the admitted one (polls, downloads), not rate-limited
    other_requests: Counter[str] = field(default_factory=Counter)

    def as_dict(self) -> dict[str, Any]:
        return {
            "calls": self.calls, "attempts": self.attempts, "succeeded": self.succeeded,
            "gave_up": dict(sorted(self.gave_up.items())), "retries": dict(sorted(self.retries.items())),
            "rate_wait_s": round(self.rate_wait_s, 3), "other_requests": dict(sorted(self.other_requests.items())),
        }


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
                 sleep: Callable[[float], Awaitable[None]] = asyncio.sleep) -> None:
        self.limits = limits
        self._sleep = sleep
        self.budget = budget or Budget()
        self.stats = CallStats()
        self._slots = asyncio.Semaphore(limits.max_concurrency)
        self._factor = 1.0
        self._answered = False  # has the provider ever answered (anything, even an error status)?
        self._unreachable: EndpointUnreachable | None = None
        self._connect_failures = 0  # attempts in a row that failed to connect
        self._requests = self._request_limiter()
        tpm = limits.tokens_per_minute
        self._tokens = AsyncLimiter(tpm, 60) if tpm else None
        self._token_cost = min(limits.tokens_per_call, tpm) if tpm else 0

    def _request_limiter(self) -> AsyncLimiter | None:
        rpm = self.limits.requests_per_minute
        if not rpm:
            return None
        # A small bucket (1/FLOOR requests, so a pushed-back request still fits): requests are
        # spread evenly, and no minute ever holds more than the limit plus 4.
        per_second = rpm / 60.0
        burst = 1 / self.FLOOR
        return AsyncLimiter(burst, burst / per_second)

    def _adjust(self, factor: float) -> None:
        self._factor = min(1.0, max(self.FLOOR, factor))

    @property
    def rate_factor(self) -> float:
        """The share of the configured request rate currently used (1.0 = full rate)."""
        return self._factor

    async def _acquire(self) -> None:
        started = time.perf_counter()
        if self._requests is not None:
            # Pushed back to a fraction f of the rate: each request takes 1/f of a slot.
            await self._requests.acquire(1 / self._factor)
        if self._tokens is not None and self._token_cost:
            await self._tokens.acquire(self._token_cost)
        self.stats.rate_wait_s += time.perf_counter() - started

    async def _attempt(self, fn: Callable[[], Awaitable[T]]) -> T:
        self._check_reachable()  # another call may have found the endpoint dead while this one waited
        await self._acquire()
        self.stats.attempts += 1
        token = _ATTEMPT_STATS.set(self.stats)  # wait_for's task copies the context: count_request sees it
        try:
            result = await asyncio.wait_for(fn(), self.limits.timeout_s)
        except TimeoutError as exc:
            raise RetryableError("timeout", f"no answer within {self.limits.timeout_s:g} s") from exc
        except RetryableError as exc:
            self._note_failure(exc)
            raise
        finally:
            _ATTEMPT_STATS.reset(token)
        self._answered, self._connect_failures = True, 0
        return result

    def _note_failure(self, exc: RetryableError) -> None:
        """Take the endpoint for dead once ``UNREACHABLE_AFTER`` attempts in a row failed to
        connect and the provider has never answered. A rate limit, a server error or a cut-off
        answer is an answer; a timeout proves nothing either way; after any answer, connection
        failures are transient and retried as usual."""
        if exc.kind != "connection":
            if exc.kind != "timeout":
                self._answered, self._connect_failures = True, 0
            return
        self._connect_failures += 1
        if not self._answered and self._unreachable is None and self._connect_failures >= min(
                UNREACHABLE_AFTER, self.limits.max_attempts):
            self._unreachable = EndpointUnreachable(self.limits, exc, self._connect_failures)
        self._check_reachable()

    def _check_reachable(self) -> None:
        if self._unreachable is not None:
            dead = self._unreachable  # a fresh exception per call: each has its own traceback
            raise EndpointUnreachable(dead.limits, dead.error, dead.attempts)

    async def call(self, fn: Callable[[], Awaitable[T]]) -> T:
        """Run ``fn`` (one attempt) with limits and retries. Raises :class:`GaveUp` when
        every attempt failed and :class:`BudgetReached` before starting past the budget."""
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
        async with self._slots:
            try:
                result = await retrying(self._attempt, fn)
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
