"""A micro-batcher for plugins of local models (diffusers editors, VLM judges): requests
that arrive together on the event loop share one model call.

Callers ``await batcher.submit(item)``. One worker task collects up to ``max_batch`` items
with the same group key (e.g. the image size), waiting at most ``wait_s`` for a batch to
fill, runs ``run(items)`` in a worker thread (the event loop stays free to collect the next
batch) and resolves each caller with its own result. Batches run one at a time: the model
is one device's worth of work.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Hashable, Sequence
from typing import Any, Generic, TypeVar

T = TypeVar("T")
R = TypeVar("R")


def is_out_of_memory(exc: BaseException) -> bool:
    """A device running out of memory (torch's ``OutOfMemoryError``, or its message in a
    ``RuntimeError`` from older code paths): a batch that may fit when split."""
    return type(exc).__name__ == "OutOfMemoryError" or "out of memory" in str(exc).lower()


class MicroBatcher(Generic[T, R]):
    """Gathers single calls into batches of at most ``max_batch`` (waiting up to ``wait_s`` for company, items
    of one ``group`` only) and runs each batch with ``run``: one model call serves many awaiting callers.
    :meth:`is_out_of_memory` tells a batch that may fit when split."""

    is_out_of_memory = staticmethod(is_out_of_memory)

    def __init__(self, run: Callable[[list[T]], Sequence[R]], *, max_batch: int, wait_s: float,
                 group: Callable[[T], Hashable] = lambda _: None) -> None:
        if max_batch < 1:
            raise ValueError("batch_size must be at least 1")
        if wait_s < 0:
            raise ValueError("batch_wait_s must not be negative")
        self._run = run
        self.max_batch = max_batch
        self.wait_s = wait_s
        self._group = group
        self._loop: asyncio.AbstractEventLoop | None = None
        self._pending: list[tuple[T, asyncio.Future[R]]] = []
        self._full = asyncio.Event()
        self._worker: asyncio.Task[None] | None = None

    async def submit(self, item: T) -> R:
        loop = asyncio.get_running_loop()
        if loop is not self._loop:  # a new event loop (each engine run has its own): start afresh
            self._loop, self._pending, self._full, self._worker = loop, [], asyncio.Event(), None
        future: asyncio.Future[R] = loop.create_future()
        self._pending.append((item, future))
        if self._fillable() >= self.max_batch:
            self._full.set()
        if self._worker is None:
            self._worker = loop.create_task(self._work())
        return await future

    def _fillable(self) -> int:
        """How many pending items could join the next batch (same group as the oldest)."""
        live = [(i, f) for i, f in self._pending if not f.done()]
        if not live:
            return 0
        key = self._group(live[0][0])
        return sum(1 for i, _ in live if self._group(i) == key)

    def _take(self) -> list[tuple[T, asyncio.Future[R]]]:
        self._pending = [(i, f) for i, f in self._pending if not f.done()]  # drop callers that gave up
        if not self._pending:
            return []
        key = self._group(self._pending[0][0])
        batch = [(i, f) for i, f in self._pending if self._group(i) == key][: self.max_batch]
        taken = {id(f) for _, f in batch}
        self._pending = [(i, f) for i, f in self._pending if id(f) not in taken]
        return batch

    async def _work(self) -> None:
        try:
            while self._pending:
                if self._fillable() < self.max_batch:
                    self._full.clear()
                    try:  # give concurrent callers a moment to join this batch
                        await asyncio.wait_for(self._full.wait(), self.wait_s)
                    except TimeoutError:
                        pass
                batch = self._take()
                if batch:
                    await self._run_batch(batch)
        finally:
            self._worker = None

    async def _run_batch(self, batch: list[tuple[T, asyncio.Future[R]]]) -> None:
        try:
            results = await asyncio.to_thread(self._run, [item for item, _ in batch])
        except Exception as exc:  # every caller of the batch gets the error
            for _, future in batch:
                if not future.done():
                    future.set_exception(exc)
            return
        if len(results) != len(batch):
            error = RuntimeError(f"batch of {len(batch)} returned {len(results)} results")
            for _, future in batch:
                if not future.done():
                    future.set_exception(error)
            return
        for (_, future), result in zip(batch, results):
            if not future.done():
                future.set_result(result)

    def describe(self) -> dict[str, Any]:
        return {"batch_size": self.max_batch, "batch_wait_s": self.wait_s}
