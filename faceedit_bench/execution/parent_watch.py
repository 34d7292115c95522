"""Worker processes end when the process that started them dies.

A process pool's workers (spawned) outlive a parent killed with SIGKILL: nothing tells them,
and they are re-parented to init with the resource tracker. Each worker therefore watches its
parent and exits when it is gone; once the workers are gone the resource tracker sees its pipe
close and exits too. ``prctl(PR_SET_PDEATHSIG)`` is not used: it fires when the parent *thread*
that started the worker ends, and pools start workers from short-lived threads.
"""

from __future__ import annotations

import multiprocessing
import multiprocessing.connection
import os
import signal
import sys
import threading
import time

POLL_S = 0.5  # how long a worker may outlive its parent; the check costs one system call


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
    by the signal instead would break the pool under the work still running."""
    for name in ("SIGINT", "SIGTERM", "SIGHUP"):
        if hasattr(signal, name):
            signal.signal(getattr(signal, name), signal.SIG_IGN)
