"""A stop signal sent to the whole process group (Ctrl-C in a terminal, SLURM's SIGTERM) while an embedding
worker is still starting must not kill it: a killed worker breaks the pool under the run's clean stop (and
Python 3.11's pool then prints a traceback from its manager thread)."""

from __future__ import annotations

import multiprocessing
import os
import signal
import time

import pytest

from faceedit_bench.execution.parent_watch import STOP_SIGNALS, leave_stop_signals_to_parent, worker_context


def _start_slowly_then_ignore_stop_signals() -> None:
    time.sleep(1.0)  # a worker importing its libraries on a loaded machine
    leave_stop_signals_to_parent()
    time.sleep(0.2)  # a signal dropped while blocked is not delivered on unblocking


def _blocked_at_start(queue) -> None:
    queue.put(sorted(int(s) for s in signal.pthread_sigmask(signal.SIG_BLOCK, [])))


@pytest.mark.skipif(not hasattr(signal, "pthread_sigmask"), reason="POSIX signal masks")
@pytest.mark.parametrize("signum", sorted(STOP_SIGNALS))
def test_a_worker_signalled_while_it_starts_lives_on(signum):
    process = worker_context().Process(target=_start_slowly_then_ignore_stop_signals)
    process.start()
    os.kill(process.pid, signum)
    process.join(30)
    assert process.exitcode == 0


@pytest.mark.skipif(not hasattr(signal, "pthread_sigmask"), reason="POSIX signal masks")
def test_a_plain_spawned_worker_would_have_died():
    """The same start through the plain ``spawn`` context: the signal kills it (what the test above guards)."""
    process = multiprocessing.get_context("spawn").Process(target=_start_slowly_then_ignore_stop_signals)
    process.start()
    os.kill(process.pid, signal.SIGTERM)
    process.join(30)
    assert process.exitcode == -signal.SIGTERM


@pytest.mark.skipif(not hasattr(signal, "pthread_sigmask"), reason="POSIX signal masks")
def test_the_parent_keeps_its_own_signal_mask():
    ctx = worker_context()
    queue = ctx.Queue()
    before = signal.pthread_sigmask(signal.SIG_BLOCK, [])
    process = ctx.Process(target=_blocked_at_start, args=(queue,))
    process.start()
    assert set(queue.get(timeout=30)) >= {int(s) for s in STOP_SIGNALS}
    process.join(30)
    assert signal.pthread_sigmask(signal.SIG_BLOCK, []) == before
