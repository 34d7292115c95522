"""The execution layer: retries, Retry-After, give-up, timeouts, concurrency, push-back, budget."""

from __future__ import annotations

import asyncio
import logging

import pytest

from faceedit_bench.execution.budget import Budget, BudgetReached
from faceedit_bench.execution.call_errors import UNREACHABLE_AFTER, EndpointUnreachable, GaveUp, RetryableError
from faceedit_bench.execution.calls import Executor
from faceedit_bench.execution.limits import CallLimits


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


def test_one_executor_serves_successive_event_loops():
    """A command that asks in rounds (one ``asyncio.run`` each) keeps its executor: its limits must not stay
    bound to the first loop, where every later call would fail."""
    ex, _ = executor(max_concurrency=1, requests_per_minute=6000)
    done = []

    async def work() -> None:
        await asyncio.sleep(0.001)
        done.append(1)

    async def round_of_calls() -> None:
        await asyncio.gather(*(ex.call(work) for _ in range(3)))  # contention: the slots wait in this loop

    for _ in range(3):
        asyncio.run(round_of_calls())
    assert len(done) == 9


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


def test_retry_after_is_read_from_seconds_milliseconds_or_an_http_date():
    import email.utils
    import time as _time

    from faceedit_bench.execution.call_errors import retry_after_s

    assert retry_after_s({"Retry-After": "3"}) == 3.0
    assert retry_after_s({"retry-after-ms": "1500", "Retry-After": "9"}) == 1.5  # the finer one wins
    soon = email.utils.formatdate(_time.time() + 30, usegmt=True)
    assert 25 < retry_after_s({"retry-after": soon}) <= 30
    assert retry_after_s({"Retry-After": "soon"}) is None and retry_after_s(None) is None
    assert retry_after_s({"Retry-After": "-4"}) == 0.0
# -- a dead endpoint ----------------------------------------------------------------------------


def refused() -> RetryableError:
    return RetryableError("connection", "ConnectError: [Errno 111] Connection refused")


def test_an_endpoint_that_never_connects_stops_the_run_with_one_message():
    ex, slept = executor(endpoint="http://127.0.0.1:9/v1", endpoint_source="from editor.params.base_url")
    fn = Script(*[refused()] * 6)
    with pytest.raises(EndpointUnreachable) as caught:
        asyncio.run(ex.call(fn))
    message = str(caught.value)
    assert "Cannot connect to http://127.0.0.1:9/v1 (from editor.params.base_url): ConnectError" in message
    assert "Connection refused" in message and "base_url" in message and "resume" in message
    assert fn.attempts == UNREACHABLE_AFTER and len(slept) == UNREACHABLE_AFTER - 1  # not six attempts
    # Every later call stops at once, without an attempt (nothing is recorded as api_error).
    later = Script()
    with pytest.raises(EndpointUnreachable):
        asyncio.run(ex.call(later))
    assert later.attempts == 0


def test_concurrent_first_calls_that_all_fail_to_connect_stop_together():
    ex, _ = executor(endpoint="http://nonexistent.invalid", max_concurrency=8)

    async def run() -> list[object]:
        return await asyncio.gather(*(ex.call(Script(*[refused()] * 6)) for _ in range(8)), return_exceptions=True)

    results = asyncio.run(run())
    assert all(isinstance(r, EndpointUnreachable) for r in results)
    # Far fewer than 8 calls x 6 attempts: once taken for dead, no call makes another attempt.
    assert ex.stats.attempts <= UNREACHABLE_AFTER + 8


@pytest.mark.parametrize("first", [None, RetryableError("rate_limited", "429", status=429),
                                   RetryableError("server_error", "503", status=503)])
def test_connection_failures_after_any_answer_are_retried_as_usual(first):
    # A success, a 429 or a 5xx proves the endpoint exists: later connection failures are transient.
    ex, _ = executor(max_attempts=6)
    asyncio.run(ex.call(Script(first)))
    fn = Script(*[refused()] * 6)
    with pytest.raises(GaveUp) as caught:
        asyncio.run(ex.call(fn))
    assert fn.attempts == 6 and caught.value.kind == "connection"


def test_timeouts_of_an_endpoint_that_never_answered_count_toward_the_rule():
    # A server that accepts connections and never answers is as dead as a closed port.
    ex, _ = executor(max_attempts=6, endpoint="http://127.0.0.1:9/v1", endpoint_source="from judge.params.base_url")
    fn = Script(refused(), RetryableError("timeout", "the request timed out (client timeout)"),
                RetryableError("timeout", "the request timed out (client timeout)"), None)
    with pytest.raises(EndpointUnreachable) as caught:
        asyncio.run(ex.call(fn))
    assert fn.attempts == UNREACHABLE_AFTER
    message = str(caught.value)
    assert message.startswith("No answer from http://127.0.0.1:9/v1 (from judge.params.base_url): the request timed")
    assert "3 attempts in a row got no answer within limits.timeout_s=120 s" in message and "resume" in message


def test_the_attempt_timeout_counts_toward_the_rule_too():
    ex, _ = executor(max_attempts=6, timeout_s=0.05, endpoint="http://127.0.0.1:9")

    async def never_answers() -> str:
        await asyncio.Event().wait()
        return "never"

    with pytest.raises(EndpointUnreachable, match=r"^No answer from http://127.0.0.1:9: no answer within 0.05 s"):
        asyncio.run(ex.call(never_answers))
    assert ex.stats.attempts == UNREACHABLE_AFTER


@pytest.mark.parametrize("first", [None, RetryableError("server_error", "503", status=503)])
def test_timeouts_after_any_answer_are_retried_as_usual(first):
    ex, _ = executor(max_attempts=6)
    asyncio.run(ex.call(Script(first)))
    fn = Script(*[RetryableError("timeout", "slow")] * 5)
    assert asyncio.run(ex.call(fn)) == "ok"
    assert fn.attempts == 6


def test_silence_is_said_while_attempts_wait(caplog):
    ex = Executor(CallLimits(provider_key="p", endpoint="http://127.0.0.1:9/v1", max_attempts=1, timeout_s=5.0),
                  notice_after_s=0.01)
    answer = asyncio.Event()

    async def answers_when_told() -> str:
        await answer.wait()
        return "ok"

    def release(record: logging.LogRecord) -> bool:
        answer.set()  # the notice came: now answer (no sleeping, no timing in the test)
        return True

    logger = logging.getLogger("faceedit_bench.execution.calls")
    logger.addFilter(release)
    try:
        with caplog.at_level(logging.WARNING, logger=logger.name):
            assert asyncio.run(ex.call(answers_when_told)) == "ok"
    finally:
        logger.removeFilter(release)
    (notice,) = [r.getMessage() for r in caplog.records]
    assert notice.startswith("No answer from http://127.0.0.1:9/v1 for ")
    assert "1 attempt(s) waiting, each given up after limits.timeout_s=5 s" in notice
    assert "it has never answered: the run stops after 1 timed-out attempt(s) in a row" in notice


def test_answers_keep_the_console_quiet(caplog):
    ex = Executor(CallLimits(provider_key="p"), notice_after_s=0.01)
    with caplog.at_level(logging.WARNING, logger="faceedit_bench.execution.calls"):
        assert asyncio.run(ex.call(Script())) == "ok"
    assert caplog.records == []


def test_the_endpoint_is_reported_with_the_call_counts():
    from faceedit_bench.execution.calls import Executors

    executors = Executors()

    async def run() -> None:
        await executors.get(CallLimits(provider_key="p", endpoint="https://gw.example/v1",
                                       endpoint_source="from $OPENAI_BASE_URL")).call(Script())

    asyncio.run(run())
    stats = executors.stats()["p"]
    assert stats["endpoint"] == "https://gw.example/v1" and stats["endpoint_source"] == "from $OPENAI_BASE_URL"
    assert stats["succeeded"] == 1


def test_endpoint_is_not_a_configurable_limit():
    from faceedit_bench.errors import ConfigError
    from faceedit_bench.execution.limits import limits_from_config

    with pytest.raises(ConfigError, match="unknown limits key"):
        limits_from_config({"endpoint": "http://x"}, {}, provider_key="p", what="editor x")
def test_requests_inside_an_attempt_are_counted_apart_and_spend_no_request_budget():
    from faceedit_bench.execution.calls import count_request

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


def test_a_call_waiting_out_its_backoff_holds_no_slot_and_its_latency_is_kept_apart():
    from faceedit_bench.execution.calls import CallTiming

    limits = CallLimits(provider_key="test", max_concurrency=1, backoff_initial_s=0.3, backoff_max_s=0.3)
    order: list[str] = []

    async def main() -> CallTiming:
        ex = Executor(limits)
        failing = Script(RetryableError("rate_limited", "429", status=429))

        async def first() -> str:
            order.append("first")
            return await failing()

        async def second() -> str:
            order.append("second")
            await asyncio.sleep(0.05)  # the provider's answer time
            return "ok"

        timing = CallTiming()
        started = asyncio.get_running_loop().time()
        one = asyncio.ensure_future(ex.call(first))
        await asyncio.sleep(0.01)  # the first call has failed and is backing off
        assert await ex.call(second, timing) == "ok"
        assert asyncio.get_running_loop().time() - started < 0.3, "the second call waited for the backoff"
        assert await one == "ok"
        return timing

    timing = asyncio.run(main())
    assert order == ["first", "second", "first"]  # the one slot served the other call during the backoff
    assert timing.attempts == 1 and 0.04 < timing.latency_s < 0.25


def test_a_request_made_while_the_rate_was_pushed_back_is_not_overtaken_by_later_ones():
    """aiolimiter serves its waiters smallest amount first, and a request made while the rate is pushed back
    asks for more of the bucket: without a queue in arrival order it waited behind every later request made
    at full rate (in the hosted benchmark with 7% faults, a session's step waited most of the run)."""
    ex, _ = executor(requests_per_minute=600, max_concurrency=8)  # 10 requests/s from a bucket of 4
    order: list[str] = []

    def answering(name: str):
        async def attempt() -> str:
            order.append(name)
            return "ok"
        return attempt

    async def main() -> None:
        for _ in range(4):  # the bucket is full: from now on each request waits for room
            await ex.call(answering("filling"))
        for _ in range(7):
            ex._note_push_back(RetryableError("rate_limited", "429"))  # rate at 0.48: a request takes 2.1
        early = asyncio.ensure_future(ex.call(answering("early")))
        await asyncio.sleep(0.01)  # it waits for room
        ex._adjust(1.0)  # the rate restored: the later requests take 1 each
        later = [asyncio.ensure_future(ex.call(answering(f"later {i}"))) for i in range(3)]
        await asyncio.gather(early, *later)

    asyncio.run(main())
    assert order[4:] == ["early", "later 0", "later 1", "later 2"]


def test_ledgers_written_before_latency_was_kept_gain_the_column_and_keep_their_rows(tmp_path):
    import sqlite3

    from faceedit_bench.records import Outcome
    from faceedit_bench.storage.ledger import SCHEMA, EditRow, Ledger

    old = sqlite3.connect(tmp_path / "ledger.sqlite")
    old.executescript(SCHEMA.replace(",\n    latency_s REAL\n", "\n"))
    old.execute("INSERT INTO edits VALUES ('k1','e','f','s',1,'i','in','out','ok','','{}',2.5,0)")
    old.commit()
    old.close()
    for _ in range(2):  # opened twice: the column is added once
        ledger = Ledger(tmp_path / "ledger.sqlite")
        assert ledger.get_edit("k1") == EditRow("k1", Outcome.OK, "out", "", {}, 2.5, None)
        ledger.put_edit("k2", editor_fp="e", face_id="f", session_id="s", k=2, instruction="i", input_hash="out",
                        row=EditRow("k2", Outcome.OK, "out2", "", {}, 3.0, 0.4))
        assert ledger.get_edit("k2").latency_s == 0.4  # read back before it is committed
        ledger.close()
    db = sqlite3.connect(tmp_path / "ledger.sqlite")
    assert db.execute("SELECT latency_s, duration_s FROM edits WHERE edit_key='k2'").fetchone() == (0.4, 3.0)


def test_messages_shown_to_users_carry_no_object_reprs():
    aiohttp_text = ("Cannot connect to host 127.0.0.1:9 ssl:<ssl.SSLContext object at 0x7f0ed1557b60> "
                    "[Connect call failed ('127.0.0.1', 9)]")
    error = RetryableError("connection", f"ClientConnectorError: {aiohttp_text}")
    assert str(error) == ("ClientConnectorError: Cannot connect to host 127.0.0.1:9 "
                          "[Connect call failed ('127.0.0.1', 9)]")
    dead = EndpointUnreachable(CallLimits(provider_key="p", endpoint="http://127.0.0.1:9"), error, 3)
    assert "object at 0x" not in str(dead) and "127.0.0.1:9" in str(dead)
