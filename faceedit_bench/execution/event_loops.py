"""Closing an event loop the way ``asyncio.run`` does, for commands that keep one loop across several rounds of
calls (a run's engine, an adaptive arena): what is still pending is cancelled and unwound, and the loop's
async generators are finalised, which closes every provider client made in it
(:func:`~faceedit_bench.execution.hosted.close_with`), before the loop closes. Closed any other way, a command
that gave up (a dead endpoint) prints the clients' "Event loop is closed" errors and the ContextVar errors of
tasks collected after their loop, after its own clear message."""

from __future__ import annotations

import asyncio
import contextlib

#: Closing cancels what is left in at most this many rounds, each waiting at most this long.
CLOSE_ROUNDS, CLOSE_ROUND_S = 100, 1.0


def close_event_loop(loop: asyncio.AbstractEventLoop) -> None:
    """Cancel the loop's pending tasks, let them unwind, finalise its async generators, close it."""
    if loop.is_closed():
        return
    # An interrupt raised inside a task surfaces again while its waiters unwind, and a task may take one
    # cancellation on its way out and wait again: cancel again, round after round, until every task is done.
    # Each round waits a bounded time, so no such task holds Ctrl-C up for good.
    for _ in range(CLOSE_ROUNDS):
        pending = asyncio.all_tasks(loop)
        if not pending:
            break
        for task in pending:
            task.cancel()
        with contextlib.suppress(KeyboardInterrupt, SystemExit):
            done, _ = loop.run_until_complete(asyncio.wait(pending, timeout=CLOSE_ROUND_S))
            for task in done:  # retrieved: the error that ended the command is raised by the command itself
                if not task.cancelled():
                    task.exception()
    loop.run_until_complete(loop.shutdown_asyncgens())
    loop.close()
