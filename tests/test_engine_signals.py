"""Ctrl-C reaches a run whose every call is held by a slow provider, whichever thread the kernel hands the
signal to: with no I/O the main thread sleeps in the selector, and a signal taken by another thread (an
embedding or SDK thread) used to wait for a provider timeout (minutes) before the run stopped."""

from __future__ import annotations

import asyncio
import signal
import threading

import pytest

from faceedit_bench.run.engine import Engine


@pytest.mark.skipif(not hasattr(signal, "pthread_kill"), reason="needs POSIX thread signals")
def test_ctrl_c_taken_by_another_thread_stops_a_run_waiting_on_held_calls():
    engine = Engine.__new__(Engine)  # only its event loop matters here
    engine._loop = asyncio.new_event_loop()
    interrupted, started, gave_up = threading.Event(), threading.Event(), []
    held = engine._loop.create_future()  # a call the provider never answers

    async def waiting_on_held_calls() -> str:
        started.set()
        return await held

    def another_thread() -> None:
        started.wait(30)
        signal.pthread_kill(threading.get_ident(), signal.SIGINT)  # the signal lands on this thread
        if not interrupted.wait(20):  # the run never noticed: release it so the test ends, and say so
            gave_up.append(True)
            engine._loop.call_soon_threadsafe(held.set_result, "released by the test")

    helper = threading.Thread(target=another_thread)
    helper.start()
    try:
        with pytest.raises(KeyboardInterrupt):
            engine.run_async(waiting_on_held_calls())
        interrupted.set()
    finally:
        helper.join()
        engine._loop.close()
    assert gave_up == [], "Ctrl-C waited until the held call ended"
    assert signal.getsignal(signal.SIGINT) is signal.default_int_handler  # Ctrl-C is the default again after a run
