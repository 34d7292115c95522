"""Human studies' tables in the workspace ledger (``<workspace>/ledger.sqlite``): the study, its items, its
annotators (a pseudonym and the SHA-256 of their link's secret, nothing else), each annotator's list of items
and their answers.

Every write is one ``BEGIN IMMEDIATE`` transaction committed before the call returns (``synchronous=FULL``), so
an answer a server has acknowledged survives the server being killed, and several servers or processes can
write at once (SQLite's WAL, as the run ledger). The schema is created under the ledger's creation lock,
as :class:`~faceedit_bench.storage.ledger.Ledger` does. Connections are opened per call: a web server's
worker threads never share one.
"""

from __future__ import annotations

import json
import sqlite3
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from faceedit_bench.storage.atomic import create_empty
from faceedit_bench.storage.locks import directory_lock

LEDGER = "ledger.sqlite"

SCHEMA = """
CREATE TABLE IF NOT EXISTS studies (
    study_id TEXT PRIMARY KEY,
    kind TEXT NOT NULL,
    spec TEXT NOT NULL,
    created_at REAL NOT NULL
);
CREATE TABLE IF NOT EXISTS study_items (
    study_id TEXT NOT NULL,
    item_id TEXT NOT NULL,
    item TEXT NOT NULL,
    gold TEXT,
    PRIMARY KEY (study_id, item_id)
);
CREATE TABLE IF NOT EXISTS study_annotators (
    study_id TEXT NOT NULL,
    annotator TEXT NOT NULL,
    secret_hash TEXT NOT NULL UNIQUE,
    PRIMARY KEY (study_id, annotator)
);
CREATE TABLE IF NOT EXISTS study_tasks (
    study_id TEXT NOT NULL,
    annotator TEXT NOT NULL,
    seq INTEGER NOT NULL,
    item_id TEXT NOT NULL,
    swapped INTEGER NOT NULL,
    PRIMARY KEY (study_id, annotator, seq)
);
CREATE TABLE IF NOT EXISTS study_answers (
    study_id TEXT NOT NULL,
    annotator TEXT NOT NULL,
    item_id TEXT NOT NULL,
    answer TEXT NOT NULL,
    PRIMARY KEY (study_id, annotator, item_id)
);
"""


@dataclass(frozen=True)
class Task:
    """One item of one annotator's list, as that annotator sees it (``swapped``: the pair's sides exchanged)."""

    seq: int
    item_id: str
    swapped: bool


@dataclass(frozen=True)
class Answer:
    annotator: str
    item_id: str
    answer: dict[str, Any]


class StudyTables:
    """The study tables of the ledger of ``workspace``."""

    def __init__(self, workspace: Path | str) -> None:
        self.path = Path(workspace) / LEDGER
        self.path.parent.mkdir(parents=True, exist_ok=True)
        with directory_lock(self.path.parent, self.path.name, what=f"opening the ledger {self.path}"):
            create_empty(self.path)
            db = sqlite3.connect(self.path, timeout=60, isolation_level=None)
            try:
                db.execute("PRAGMA journal_mode=WAL")
                db.executescript(SCHEMA)
            finally:
                db.close()

    @contextmanager
    def _db(self, write: bool = False) -> Iterator[sqlite3.Connection]:
        db = sqlite3.connect(self.path, timeout=60, isolation_level=None)
        try:
            db.execute("PRAGMA synchronous=FULL")
            if not write:
                yield db
                return
            db.execute("BEGIN IMMEDIATE")
            try:
                yield db
            except BaseException:
                db.execute("ROLLBACK")
                raise
            db.execute("COMMIT")
        finally:
            db.close()

    # -- creating ------------------------------------------------------------------------

    def create(self, study_id: str, kind: str, spec: dict[str, Any], items: Sequence[dict[str, Any]],
               gold: dict[str, dict[str, Any]], annotators: Sequence[tuple[str, str]],
               tasks: dict[str, Sequence[Task]]) -> None:
        """The whole study in one transaction: it exists complete or not at all."""
        with self._db(write=True) as db:
            db.execute("INSERT INTO studies VALUES (?,?,?,?)", (study_id, kind, _dumps(spec), time.time()))
            db.executemany("INSERT INTO study_items VALUES (?,?,?,?)",
                           [(study_id, i["item_id"], _dumps(i),
                             _dumps(gold[i["item_id"]]) if i["item_id"] in gold else None) for i in items])
            self._add_annotators(db, study_id, annotators, tasks)

    def add_annotators(self, study_id: str, annotators: Sequence[tuple[str, str]],
                       tasks: dict[str, Sequence[Task]]) -> None:
        with self._db(write=True) as db:
            self._add_annotators(db, study_id, annotators, tasks)

    @staticmethod
    def _add_annotators(db: sqlite3.Connection, study_id: str, annotators: Sequence[tuple[str, str]],
                        tasks: dict[str, Sequence[Task]]) -> None:
        db.executemany("INSERT INTO study_annotators VALUES (?,?,?)",
                       [(study_id, name, secret_hash) for name, secret_hash in annotators])
        db.executemany("INSERT INTO study_tasks VALUES (?,?,?,?,?)",
                       [(study_id, name, t.seq, t.item_id, int(t.swapped)) for name, _ in annotators
                        for t in tasks[name]])

    # -- answering -----------------------------------------------------------------------

    def record(self, study_id: str, annotator: str, item_id: str, answer: dict[str, Any]) -> bool:
        """Store an answer, committed before returning. False: this annotator had answered the item already
        (the first answer is kept: a form sent twice, or again after a restart, changes nothing)."""
        with self._db(write=True) as db:
            cursor = db.execute("INSERT OR IGNORE INTO study_answers VALUES (?,?,?,?)",
                                (study_id, annotator, item_id, _dumps(answer)))
            return cursor.rowcount == 1

    # -- reading -------------------------------------------------------------------------

    def studies(self) -> list[dict[str, Any]]:
        with self._db() as db:
            rows = db.execute("SELECT study_id, kind, spec, created_at FROM studies ORDER BY created_at").fetchall()
        return [{"study_id": s, "kind": k, "spec": json.loads(spec), "created_at": t} for s, k, spec, t in rows]

    def study(self, study_id: str) -> dict[str, Any] | None:
        return next((s for s in self.studies() if s["study_id"] == study_id), None)

    def items(self, study_id: str, annotator: str | None = None, item_id: str | None = None,
              ) -> dict[str, dict[str, Any]]:
        """item id -> the item (its ``gold`` rule or None); ``annotator``: the items on their list only;
        ``item_id``: that item only."""
        query, args = "SELECT item_id, item, gold FROM study_items WHERE study_id=?", [study_id]
        if annotator is not None:
            query += " AND item_id IN (SELECT item_id FROM study_tasks WHERE study_id=? AND annotator=?)"
            args += [study_id, annotator]
        if item_id is not None:
            query += " AND item_id=?"
            args.append(item_id)
        with self._db() as db:
            rows = db.execute(query, args)
            return {i: {**json.loads(item), "gold": None if gold is None else json.loads(gold)}
                    for i, item, gold in rows}

    def annotator_of(self, study_id: str, secret_hash: str) -> str | None:
        with self._db() as db:
            row = db.execute("SELECT annotator FROM study_annotators WHERE study_id=? AND secret_hash=?",
                             (study_id, secret_hash)).fetchone()
        return None if row is None else row[0]

    def annotators(self, study_id: str) -> list[str]:
        with self._db() as db:
            return [r[0] for r in db.execute("SELECT annotator FROM study_annotators WHERE study_id=? "
                                             "ORDER BY annotator", (study_id,))]

    def tasks(self, study_id: str, annotator: str) -> list[Task]:
        with self._db() as db:
            rows = db.execute("SELECT seq, item_id, swapped FROM study_tasks WHERE study_id=? AND annotator=? "
                              "ORDER BY seq", (study_id, annotator)).fetchall()
        return [Task(seq, item_id, bool(swapped)) for seq, item_id, swapped in rows]

    def all_tasks(self, study_id: str) -> dict[tuple[str, str], Task]:
        """(annotator, item) -> the task, for every annotator."""
        with self._db() as db:
            rows = db.execute("SELECT annotator, seq, item_id, swapped FROM study_tasks WHERE study_id=?",
                              (study_id,)).fetchall()
        return {(a, i): Task(seq, i, bool(s)) for a, seq, i, s in rows}

    def answers(self, study_id: str, annotator: str | None = None) -> list[Answer]:
        """Answers in the order they were stored; ``annotator``: that annotator's only."""
        query = "SELECT annotator, item_id, answer FROM study_answers WHERE study_id=?"
        args: tuple[str, ...] = (study_id,)
        if annotator is not None:
            query, args = query + " AND annotator=?", (study_id, annotator)
        with self._db() as db:
            rows = db.execute(query + " ORDER BY rowid", args).fetchall()
        return [Answer(a, i, json.loads(ans)) for a, i, ans in rows]


def _dumps(value: Any) -> str:
    return json.dumps(value, sort_keys=True)
