"""A run stopped by SIGTERM or SIGHUP stops the way Ctrl-C stops it.

SIGTERM is what SLURM sends on preemption and at the time limit, and what ``timeout``, ``kill`` and
systemd send; SIGHUP comes when the terminal closes. By default either ends a Python process at
once: no cleanup, no resume hint, worker queues left to the resource tracker ("leaked semaphore").
Inside :func:`stopping_on_signals` both raise :class:`RunStopped`, a ``KeyboardInterrupt``, in the
main thread, so the run unwinds exactly as on Ctrl-C: the ledger commits what finished, the worker
pool shuts down, the tracker marks the run KILLED, and the console says how to resume.

The exit code is the shell's for a process ended by that signal, 128 + its number: 130 for Ctrl-C
(SIGINT), 143 for SIGTERM, 129 for SIGHUP. Schedulers and scripts read it as "stopped by a signal",
which is what happened; the work is kept. A second SIGTERM or SIGHUP while the run unwinds ends the
process at once (the default action), as a second Ctrl-C interrupts the cleanup. A signal the process
was started to ignore (``nohup`` ignores SIGHUP) stays ignored.
"""

from __future__ import annotations

import signal
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from types import FrameType
from typing import Any

#: Signals handled like Ctrl-C, where the platform has them.
STOP_SIGNALS = tuple(getattr(signal, name) for name in ("SIGTERM", "SIGHUP") if hasattr(signal, name))


class RunStopped(KeyboardInterrupt):
    """The run was asked to stop by ``signum`` (SIGTERM, SIGHUP)."""

    def __init__(self, signum: int) -> None:
        super().__init__(signal.Signals(signum).name)
        self.signum = signum


def signal_name(stop: BaseException) -> str:
    """``SIGINT`` for Ctrl-C (a plain ``KeyboardInterrupt``), else the signal that stopped the run."""
    return signal.Signals(getattr(stop, "signum", signal.SIGINT)).name


def stopped_by(stop: BaseException) -> str:
    """The console's first words for a stopped run: ``Interrupted.`` or ``Stopped by SIGTERM.``"""
    return "Interrupted." if not isinstance(stop, RunStopped) else f"Stopped by {signal_name(stop)}."


def exit_code(stop: BaseException) -> int:
    """128 + the number of the signal that stopped the run (130 for Ctrl-C)."""
    return 128 + int(getattr(stop, "signum", signal.SIGINT))


def _raise_once(signum: int, _frame: FrameType | None) -> None:
    for number in STOP_SIGNALS:  # the next one ends the process at once
        if signal.getsignal(number) is _raise_once:
            signal.signal(number, signal.SIG_DFL)
    raise RunStopped(signum)


@contextmanager
def stopping_on_signals() -> Iterator[None]:
    """Turn SIGTERM and SIGHUP into :class:`RunStopped` for the block (the main thread only: Python
    runs handlers there); the handlers before it (a launcher's own) are restored after it."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    # A signal the process was started to ignore stays ignored: `nohup` ignores SIGHUP so that the run
    # outlives its terminal.
    previous: dict[int, Any] = {number: signal.signal(number, _raise_once) for number in STOP_SIGNALS
                                if signal.getsignal(number) is not signal.SIG_IGN}
    try:
        yield
    finally:
        for number, handler in previous.items():
            signal.signal(number, handler)

