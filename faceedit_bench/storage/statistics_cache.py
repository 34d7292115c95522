"""Computed statistics kept in the ledger, under the hash of everything they were computed from.

The report stage's statistics (permutation tests, bootstrap intervals, group tests) are pure functions of
their inputs and settings, seeded: one computed once never needs computing again. Each is stored as it
finishes, in its own transaction, so a report stage killed midway resumes with what it finished, and a
re-report of an unchanged run reads them all back. Keys are content hashes
(:mod:`faceedit_bench.analysis.cached`), so processes sharing a workspace share the rows: two that
compute the same statistic at once write the same value, and the first row stays.

The rows live in the ledger's ``statistics`` table (its schema creates it). This class opens its own
connection, usable from any thread (the tests of one call run on a thread pool), because the run's
ledger connection is closed before the report is built.
"""

from __future__ import annotations

import sqlite3
import threading
import time
from pathlib import Path

from faceedit_bench.storage.ledger import Ledger
from faceedit_bench.storage.workspace import Place, WorkspaceGone


class StatisticsCache:
    """``get`` / ``put`` of JSON texts by key, in the ledger at ``path``."""

    def __init__(self, path: Path) -> None:
        self.path = Path(path)
        if not self.path.parent.is_dir():  # the workspace was deleted or moved: never made anew to hold a report
            raise WorkspaceGone("the ledger", self.path)
        Ledger(self.path).close()  # creates the file and its tables (under the ledger's lock) if missing
        self._place = Place(self.path, "the ledger")
        self._db = sqlite3.connect(self.path, timeout=60, isolation_level=None, check_same_thread=False)
        # As the ledger's own connection (the setting is per connection): in WAL mode a commit survives a kill
        # of the process without an fsync, which SQLite's default FULL adds to every put (milliseconds each).
        self._db.execute("PRAGMA synchronous=NORMAL")
        self._lock = threading.Lock()
        self.hits = self.stored = 0

    def get(self, key: str) -> str | None:
        with self._lock:
            row = self._db.execute("SELECT value FROM statistics WHERE key = ?", (key,)).fetchone()
        if row is not None:
            self.hits += 1
        return None if row is None else str(row[0])

    def put(self, key: str, kind: str, value: str) -> None:
        """Store one statistic now (committed before this returns: a kill after it loses nothing)."""
        with self._lock:
            self._db.execute("INSERT OR IGNORE INTO statistics VALUES (?,?,?,?)", (key, kind, value, time.time()))
            self.stored += 1

    def close(self) -> None:
        with self._lock:
            self._db.close()

    def __enter__(self) -> StatisticsCache:
        return self

    def __exit__(self, kind: type[BaseException] | None, *exc: object) -> None:
        self.close()
        if kind is None:  # what was kept went to a ledger deleted or moved meanwhile: the report did not finish
            self._place.check()
