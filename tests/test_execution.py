"""The execution layer: retries, Retry-After, give-up, timeouts, concurrency, push-back, budget."""

from __future__ import annotations

import asyncio

import pytest

from faceedit_bench.execution import Budget, BudgetReached, CallLimits, Executor, GaveUp, RetryableError


class Script:
    """One attempt per call: raise the next scripted error, or return 'ok'."""

    def __init__(self, *errors: Exception | None) -> None:
        self.errors = list(errors)
        self.attempts = 0

    async def __call__(self) -> str:
        self.attempts += 1
        error = self.errors.pop(0) if self.errors else None
        if error is not None:
            raise error
        return "ok"


def executor(**limits) -> tuple[Executor, list[float]]:
    slept: list[float] = []

    async def sleep(seconds: float) -> None:
        slept.append(seconds)

    settings = {"provider_key": "test", "backoff_initial_s": 0.5, "backoff_max_s": 30.0, **limits}
    return Executor(CallLimits(**settings), sleep=sleep), slept


def test_transient_errors_are_retried_and_counted():
    ex, slept = executor()
    fn = Script(RetryableError("rate_limited", "429", status=429), RetryableError("server_error", "503", status=503))
    assert asyncio.run(ex.call(fn)) == "ok"
    assert fn.attempts == 3 and len(slept) == 2
    assert ex.stats.as_dict()["retries"] == {"rate_limited": 1, "server_error": 1}
    assert ex.stats.attempts == 3 and ex.stats.succeeded == 1 and ex.stats.calls == 1


def test_retry_after_is_a_lower_bound_on_the_wait():
    ex, slept = executor(backoff_initial_s=0.01)
    fn = Script(RetryableError("rate_limited", "429", status=429, retry_after=7.0))
    asyncio.run(ex.call(fn))
    assert slept[0] >= 7.0


def test_backoff_grows_exponentially():
    ex, slept = executor(max_attempts=5, backoff_initial_s=1.0)
    fn = Script(*[RetryableError("server_error", "500", status=500)] * 4)
    asyncio.run(ex.call(fn))
    # initial * 2**n plus jitter in [0, initial]
    for n, wait in enumerate(slept):
        assert 2 ** n <= wait <= 2 ** n + 1.0


def test_gives_up_after_max_attempts_with_the_last_status():
    ex, _ = executor(max_attempts=3)
    fn = Script(*[RetryableError("server_error", "boom", status=503)] * 5)
    with pytest.raises(GaveUp) as info:
        asyncio.run(ex.call(fn))
    assert fn.attempts == 3 and info.value.attempts == 3 and info.value.status == 503
    assert "HTTP 503" in str(info.value) and ex.stats.gave_up == {"server_error": 1}


def test_other_exceptions_are_not_retried():
    ex, _ = executor()
    fn = Script(ValueError("a bug, not a provider hiccup"))
    with pytest.raises(ValueError):
        asyncio.run(ex.call(fn))
    assert fn.attempts == 1


def test_a_slow_attempt_times_out_and_is_retried():
    ex, _ = executor(timeout_s=0.05)
    attempts = []

    async def slow_then_fast() -> str:
        attempts.append(1)
        if len(attempts) == 1:
            await asyncio.sleep(10)
        return "ok"

    assert asyncio.run(ex.call(slow_then_fast)) == "ok"
    assert ex.stats.retries == {"timeout": 1}


def test_concurrency_is_bounded():
    ex, _ = executor(max_concurrency=3)
    running, peak = 0, 0

    async def work() -> None:
        nonlocal running, peak
        running += 1
        peak = max(peak, running)
        await asyncio.sleep(0.01)
        running -= 1

    async def main() -> None:
        await asyncio.gather(*(ex.call(work) for _ in range(12)))

    asyncio.run(main())
    assert peak == 3


def test_rate_limit_answers_push_the_rate_back_and_successes_restore_it():
    ex, _ = executor(requests_per_minute=6000)

    async def calls(n: int, *errors: Exception) -> None:
        for _ in range(n):
            await ex.call(Script(*errors))

    asyncio.run(calls(5, RetryableError("rate_limited", "429", status=429)))
    assert ex.rate_factor < 1.0
    low = ex.rate_factor
    asyncio.run(_fresh_loop_calls(ex, 10))
    assert ex.rate_factor > low
    for _ in range(100):
        ex._note_push_back(RetryableError("rate_limited", "429"))
    assert ex.rate_factor == Executor.FLOOR


async def _fresh_loop_calls(ex: Executor, n: int) -> None:
    ex._requests = ex._request_limiter()  # limiters belong to one event loop; a run has one
    for _ in range(n):
        await ex.call(Script())


def test_budget_stops_new_calls():
    budget = Budget(limit_usd=1.0)
    ex = Executor(CallLimits(provider_key="test"), budget)
    asyncio.run(ex.call(Script()))
    budget.add(1.0)
    with pytest.raises(BudgetReached, match="rerun"):
        asyncio.run(ex.call(Script()))


def test_limits_are_validated():
    with pytest.raises(ValueError):
        CallLimits(provider_key="x", requests_per_minute=0)
    with pytest.raises(ValueError):
        RetryableError("unknown_kind", "?")


def test_requests_inside_an_attempt_are_counted_apart_and_spend_no_request_budget():
    from faceedit_bench.execution import count_request

    ex, _ = executor(requests_per_minute=60)
    acquired = []
    real_acquire = ex._requests.acquire

    async def counting_acquire(amount: float = 1) -> None:
        acquired.append(amount)
        await real_acquire(amount)

    ex._requests.acquire = counting_acquire

    async def task() -> str:  # one submission, then polls and a download
        for _ in range(5):
            count_request("poll")
        count_request("download")
        return "ok"

    fn = Script(RetryableError("server_error", "503", status=503))

    async def main() -> None:
        await ex.call(task)
        await ex.call(fn)

    asyncio.run(main())
    assert len(acquired) == ex.stats.attempts == 3  # the limiter admits attempts only
    assert ex.stats.as_dict()["other_requests"] == {"download": 1, "poll": 5}
    count_request("poll")  # outside any attempt: counted nowhere, no error
    assert ex.stats.other_requests["poll"] == 5
