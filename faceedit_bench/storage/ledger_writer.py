"""The ledger's one writing thread: finished rows, claims and lease renewals, committed as they come.

The thread commits whatever is waiting as soon as it is handed a row (a group commit: the rows that come
while one transaction is written go together in the next), with no fixed delay: in WAL mode with
``synchronous=NORMAL`` a commit costs well under a millisecond, survives a SIGKILL of the process, and only
a power cut can take the last ones back. A claim is made at once, with whatever else is waiting. The thread
is the only one that writes rows, so an answered call reaches the disk whatever the run's other threads do:
the event loop may be busy, the MLflow store being built, a report's statistics computed. A failed write
(a full disk, the ledger deleted or moved) stops the thread; the error is raised to the next caller.
"""

from __future__ import annotations

import sqlite3
import threading
import time
from collections.abc import Callable
from concurrent.futures import Future
from pathlib import Path
from typing import Any

from faceedit_bench.storage import claims
from faceedit_bench.storage.workspace import Place


class LedgerWriter:
    def __init__(self, path: Path, claims_path: Path) -> None:
        self.path, self.claims_path = path, claims_path
        # The files as opened: each commit first checks that they are still where the run left them.
        self._places = [Place(path, "the ledger")] + ([] if claims_path == path else [Place(claims_path, "the ledger")])
        self.owner = claims.new_owner()
        self.error: BaseException | None = None
        self.reported = False  # the error was raised to a caller
        self._cond = threading.Condition()
        self._rows: list[tuple[str, list[tuple[Any, ...]]]] = []
        self._committed: list[Callable[[], None]] = []  # run once the rows are committed (pending reads end)
        self._done: list[str] = []  # claims answered by the rows above
        self._claims: list[tuple[str, float, Future[claims.Status]]] = []
        self._releases: list[str] = []
        self._held = 0  # claims this process holds: renewed while any is
        self._renew_at = 0.0
        self._flushes: list[threading.Event] = []
        self._stopping = False
        self._thread: threading.Thread | None = None

    # -- called by the ledger (any thread) -------------------------------------------------

    def queue(self, statement: str, row: tuple[Any, ...], committed: Callable[[], None]) -> None:
        with self._cond:
            self._raise()
            if self._rows and self._rows[-1][0] == statement:
                self._rows[-1][1].append(row)
            else:
                self._rows.append((statement, [row]))
            self._committed.append(committed)
            if len(self._committed) == 1:  # the first row waiting: the thread commits now
                self._start()
                self._cond.notify()

    def answered(self, key: str) -> None:
        """The claim on ``key`` is answered by the rows queued so far."""
        with self._cond:
            self._done.append(key)
            self._held -= 1

    def claim(self, key: str, since: float) -> Future[claims.Status]:
        future: Future[claims.Status] = Future()
        with self._cond:
            self._raise()
            self._claims.append((key, since, future))
            self._start()
            self._cond.notify()
        return future

    def release(self, key: str) -> None:
        with self._cond:
            self._releases.append(key)
            self._held -= 1
            self._start()
            self._cond.notify()

    def flush(self) -> None:
        """Commit everything queued so far; raise the error that stopped the writer, if any."""
        with self._cond:
            self._raise()
            if not (self._rows or self._done or self._releases or self._claims) or self._thread is None:
                return
            done, thread = threading.Event(), self._thread
            self._flushes.append(done)
            self._cond.notify()
        while not done.wait(1.0) and thread.is_alive():
            pass
        with self._cond:
            self._raise()

    def close(self) -> None:
        """Commit what is queued, give up unanswered claims and end the thread."""
        with self._cond:
            self._stopping = True
            self._cond.notify()
            thread = self._thread
        if thread is not None:
            thread.join()

    def check_in_place(self) -> None:
        """Raise :class:`~faceedit_bench.storage.workspace.WorkspaceGone` when a ledger file was deleted or moved."""
        for place in self._places:
            place.check()

    def _raise(self) -> None:
        if self.error is not None:
            self.reported = True
            raise self.error

    def _start(self) -> None:
        if self._thread is None and self.error is None and not self._stopping:
            self._thread = threading.Thread(target=self._serve, name="faceedit-ledger-writer", daemon=True)
            self._thread.start()

    # -- the thread ------------------------------------------------------------------------

    def _due(self, now: float) -> float | None:
        """Seconds until the next commit is due (0: now), or None to wait for news."""
        if self._rows or self._stopping or self._claims or self._releases or self._flushes:
            return 0.0
        return max(0.0, self._renew_at - now) if self._held > 0 else None

    def _serve(self) -> None:
        db = self._connect(self.path)
        other = None if self.claims_path == self.path else self._connect(self.claims_path)
        try:
            while True:
                with self._cond:
                    while (wait := self._due(time.monotonic())) != 0.0:
                        self._cond.wait(wait)
                    batch = (self._rows, self._committed, self._done, self._claims, self._releases, self._flushes)
                    self._rows, self._committed, self._done, self._claims, self._releases, self._flushes = \
                        [], [], [], [], [], []
                    stopping = self._stopping
                    renew = self._held > 0 and time.monotonic() >= self._renew_at
                    if renew:
                        self._renew_at = time.monotonic() + claims.LEASE_S / 4
                try:
                    self._commit(db, other, *batch[:5], renew=renew, stopping=stopping)
                except BaseException as exc:  # noqa: BLE001 - handed to the run's threads, which stop the run
                    with self._cond:
                        self.error = exc
                        for _, _, future in [*batch[3], *self._claims]:
                            _settle(future, error=exc)
                        for event in [*batch[5], *self._flushes]:
                            event.set()
                    return
                for event in batch[5]:
                    event.set()
                if stopping:
                    return
        finally:
            db.close()
            if other is not None:
                other.close()

    @staticmethod
    def _connect(path: Path) -> sqlite3.Connection:
        db = sqlite3.connect(path, timeout=60, isolation_level=None)
        db.execute("PRAGMA synchronous=NORMAL")
        return db

    def _commit(self, db: sqlite3.Connection, other: sqlite3.Connection | None,
                rows: list[tuple[str, list[tuple[Any, ...]]]], committed: list[Callable[[], None]], done: list[str],
                asked: list[tuple[str, float, Future[claims.Status]]], releases: list[str], *,
                renew: bool, stopping: bool) -> None:
        self.check_in_place()
        found: dict[str, claims.Status] = {}
        if rows or other is None:
            with db:
                db.execute("BEGIN IMMEDIATE")
                for statement, values in rows:
                    db.executemany(statement, values)
                if other is None:  # the answers and their claims in one transaction
                    found = self._claims_work(db, done, asked, releases, renew=renew, stopping=stopping)
        if other is not None and (done or asked or releases or renew or stopping):
            # A shard: its answers are in its own file, then marked in the workspace's.
            with other:
                other.execute("BEGIN IMMEDIATE")
                found = self._claims_work(other, done, asked, releases, renew=renew, stopping=stopping)
        for forget in committed:
            forget()
        for key, _, future in asked:
            _settle(future, found[key])

    def _claims_work(self, db: sqlite3.Connection, done: list[str], asked: list[tuple[str, float, Any]],
                     releases: list[str], *, renew: bool, stopping: bool) -> dict[str, claims.Status]:
        if done:
            claims.mark_done(db, self.owner, done, str(self.path))
        if releases:
            claims.release(db, self.owner, releases)
        if stopping:
            claims.release(db, self.owner)
        if renew:
            claims.renew(db, self.owner)
        found = {key: claims.claim(db, self.owner, key, since) for key, since, _ in asked}
        with self._cond:
            self._held += sum(1 for status in found.values() if status.state is claims.State.MINE)
            if self._held > 0 and self._renew_at == 0.0:
                self._renew_at = time.monotonic() + claims.LEASE_S / 4
        return found


def _settle(future: Future[claims.Status], result: claims.Status | None = None, *,
            error: BaseException | None = None) -> None:
    """Answer a claim, unless its waiter is gone (a cancelled task: the run is stopping)."""
    if future.set_running_or_notify_cancel():
        if error is not None:
            future.set_exception(error)
        else:
            future.set_result(result)
