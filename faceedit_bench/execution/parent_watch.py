"""Worker processes end when the process that started them dies, and leave stop signals to it.

A process pool's workers (spawned) outlive a parent killed with SIGKILL: nothing tells them,
and they are re-parented to init with the resource tracker. Each worker therefore watches its
parent and exits when it is gone; once the workers are gone the resource tracker sees its pipe
close and exits too. ``prctl(PR_SET_PDEATHSIG)`` is not used: it fires when the parent *thread*
that started the worker ends, and pools start workers from short-lived threads.
"""

from __future__ import annotations

import multiprocessing
import multiprocessing.connection
import multiprocessing.context
import os
import signal
import sys
import threading
import time

POLL_S = 0.5  # how long a worker may outlive its parent; the check costs one system call
STOP_SIGNALS = frozenset(getattr(signal, name) for name in ("SIGINT", "SIGTERM", "SIGHUP") if hasattr(signal, name))


def exit_with_parent(poll_s: float = POLL_S) -> None:
    """Start a daemon thread that ends this process (``os._exit``) when its parent dies."""
    spawned_by = multiprocessing.parent_process()  # None outside multiprocessing children
    parent = spawned_by.pid if spawned_by is not None and spawned_by.pid else os.getppid()
    sentinel = getattr(spawned_by, "sentinel", None)

    def watch() -> None:
        if sys.platform == "win32" and sentinel is not None:
            # Windows never re-parents; the parent's handle becomes ready when it exits.
            multiprocessing.connection.wait([sentinel])
        else:
            while os.getppid() == parent:  # a dead parent's children are re-parented
                time.sleep(poll_s)
        os._exit(1)

    threading.Thread(target=watch, name="faceedit-parent-watch", daemon=True).start()


def leave_stop_signals_to_parent() -> None:
    """Ignore Ctrl-C, SIGTERM and SIGHUP sent to the whole process group (by a terminal, by SLURM):
    they are the parent's to handle. It stops cleanly, then shuts its workers down; a worker killed
    by the signal instead would break the pool under the work still running. A worker started by
    :func:`worker_context` had them blocked until now: one sent while it started is dropped here."""
    for number in STOP_SIGNALS:
        signal.signal(number, signal.SIG_IGN)
    if hasattr(signal, "pthread_sigmask"):
        signal.pthread_sigmask(signal.SIG_UNBLOCK, STOP_SIGNALS)


class _WorkerProcess(multiprocessing.context.SpawnProcess):
    def start(self) -> None:
        if not hasattr(signal, "pthread_sigmask"):
            return super().start()
        # The blocked mask is inherited by the new interpreter: a stop signal sent to the process group
        # while the worker imports its libraries (seconds, under load) waits instead of killing it.
        # CPython starts its resource tracker the same way.
        before = signal.pthread_sigmask(signal.SIG_BLOCK, STOP_SIGNALS)
        try:
            return super().start()
        finally:
            signal.pthread_sigmask(signal.SIG_SETMASK, before)  # a signal that came meanwhile is handled now


class _WorkerContext(multiprocessing.context.SpawnContext):
    Process = _WorkerProcess


def worker_context() -> multiprocessing.context.SpawnContext:
    """The ``spawn`` context for worker pools whose initializer calls :func:`leave_stop_signals_to_parent`:
    each worker starts with the stop signals blocked, so none of them kills it before it can ignore them."""
    return _WorkerContext()
