"""Inter-process locks, so runs share a workspace safely (a sweep, two terminals, two cluster jobs).

Held around what two processes must not do at the same time: creating a SQLite store (the
ledger, MLflow's schema migration) and writing one run folder's files. The locks are OS file
locks (``filelock``): a process that dies, even by kill -9, releases its lock with it, so a
lock file left behind never blocks anyone.
"""

from __future__ import annotations

import re
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from filelock import FileLock, Timeout

from faceedit_bench.errors import FaceEditBenchError

LOCK_DIR = ".locks"
#: Long enough for another process to finish writing a large run's tables, short enough that
#: a hung peer (not a dead one: the OS releases those) is reported rather than waited on forever.
DEFAULT_TIMEOUT_S = 1800.0


class LockTimeout(FaceEditBenchError):
    """Another process held a workspace lock for longer than we wait."""


def lock_path(directory: Path | str, name: str) -> Path:
    """``<directory>/.locks/<name>.lock`` (``name`` made path-safe)."""
    safe = re.sub(r"[^A-Za-z0-9_.-]+", "-", name).strip(".-") or "lock"
    return Path(directory) / LOCK_DIR / f"{safe}.lock"


@contextmanager
def file_lock(path: Path | str, *, what: str, timeout: float = DEFAULT_TIMEOUT_S) -> Iterator[None]:
    """Hold the lock file ``path`` (created with its folder if missing) for the block.

    ``what`` says what is being done under it, for the message when the wait runs out."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    lock = FileLock(path, timeout=timeout)
    started = time.monotonic()
    try:
        lock.acquire()
    except Timeout:
        raise LockTimeout(
            f"waited {time.monotonic() - started:.0f} s for {path} ({what}): another faceedit_bench process in "
            "this workspace holds it and has not finished. Wait for it (or stop it), then run again; the "
            "lock is released as soon as that process ends, however it ends."
        ) from None
    try:
        yield
    finally:
        lock.release()


@contextmanager
def directory_lock(directory: Path | str, name: str, *, what: str,
                   timeout: float = DEFAULT_TIMEOUT_S) -> Iterator[None]:
    """:func:`file_lock` on :func:`lock_path` ``(directory, name)``."""
    with file_lock(lock_path(directory, name), what=what, timeout=timeout):
        yield
