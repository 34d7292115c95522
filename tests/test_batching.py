"""The micro-batcher on its own: no model, plain functions."""

from __future__ import annotations

import asyncio
import threading

import pytest

from faceedit_bench.execution.batching import MicroBatcher


def run(batcher: MicroBatcher, items: list) -> list:
    async def gather() -> list:
        return list(await asyncio.gather(*(batcher.submit(i) for i in items), return_exceptions=True))

    return asyncio.run(gather())


def test_concurrent_requests_share_calls_up_to_the_batch_size() -> None:
    calls: list[list[int]] = []
    batcher = MicroBatcher(lambda xs: calls.append(list(xs)) or [x * 10 for x in xs], max_batch=3, wait_s=0.05)
    assert run(batcher, [1, 2, 3, 4, 5]) == [10, 20, 30, 40, 50]
    assert calls == [[1, 2, 3], [4, 5]]


def test_only_items_of_one_group_share_a_call() -> None:
    calls: list[list[str]] = []
    batcher = MicroBatcher(lambda xs: calls.append(list(xs)) or list(xs), max_batch=4, wait_s=0.01,
                           group=len)
    assert run(batcher, ["a", "bb", "c", "dd", "e"]) == ["a", "bb", "c", "dd", "e"]
    assert calls == [["a", "c", "e"], ["bb", "dd"]]


def test_calls_run_off_the_event_loop_one_at_a_time() -> None:
    active, peak, loop_threads = [0], [0], set()
    lock = threading.Lock()

    def work(xs: list[int]) -> list[int]:
        with lock:
            active[0] += 1
            peak[0] = max(peak[0], active[0])
        loop_threads.add(threading.current_thread().name)
        with lock:
            active[0] -= 1
        return xs

    batcher = MicroBatcher(work, max_batch=1, wait_s=0.0)
    assert run(batcher, [1, 2, 3]) == [1, 2, 3]
    assert peak[0] == 1 and threading.main_thread().name not in loop_threads


def test_an_error_reaches_every_caller_of_its_batch_only() -> None:
    def work(xs: list[int]) -> list[int]:
        if 2 in xs:
            raise RuntimeError("boom")
        return xs

    batcher = MicroBatcher(work, max_batch=2, wait_s=0.05)
    first, second, third = run(batcher, [1, 2, 3])
    assert isinstance(first, RuntimeError) and isinstance(second, RuntimeError) and third == 3


def test_a_wrong_number_of_results_is_an_error() -> None:
    batcher = MicroBatcher(lambda xs: xs[:1], max_batch=2, wait_s=0.05)
    assert all(isinstance(r, RuntimeError) for r in run(batcher, [1, 2]))


def test_a_caller_that_gave_up_is_not_batched() -> None:
    calls: list[list[int]] = []
    batcher = MicroBatcher(lambda xs: calls.append(list(xs)) or list(xs), max_batch=4, wait_s=0.2)

    async def scenario() -> int:
        gone = asyncio.ensure_future(batcher.submit(1))
        kept = asyncio.ensure_future(batcher.submit(2))
        await asyncio.sleep(0)
        gone.cancel()
        return await kept

    assert asyncio.run(scenario()) == 2
    assert calls == [[2]]


def test_the_batcher_survives_a_new_event_loop() -> None:
    batcher = MicroBatcher(lambda xs: list(xs), max_batch=2, wait_s=0.01)
    assert run(batcher, [1, 2]) == [1, 2]
    assert run(batcher, [3]) == [3]


@pytest.mark.parametrize("kwargs", [{"max_batch": 0, "wait_s": 0.1}, {"max_batch": 1, "wait_s": -1}])
def test_bad_settings_are_refused(kwargs: dict) -> None:
    with pytest.raises(ValueError):
        MicroBatcher(lambda xs: xs, **kwargs)
