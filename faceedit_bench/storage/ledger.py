"""The run ledger: one SQLite file holding every edit outcome and every face embedding.

Rows are keyed by content-derived identities (see :mod:`faceedit_bench.keys`), so the
ledger is shared safely by runs, resumed runs and concurrent processes (WAL mode).
Everything reported is recomputed from these rows; the report's statistics are kept too, by the hash of
their inputs (:mod:`faceedit_bench.storage.statistics_cache`), so a report is not recomputed twice.

Edits, judge answers and embeddings are written as they complete and committed at once, with whatever
else is waiting, by the ledger's own writing thread (:mod:`faceedit_bench.storage.ledger_writer`): a
killed run loses only what was not yet handed over or committed. Rows not yet committed are read back
from memory.

Before paying for an edit or a judge call, a process claims its key (:mod:`faceedit_bench.storage.claims`):
runs sharing a workspace pay each call once, whichever of them needs it first.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import json
import sqlite3
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

import numpy as np

from faceedit_bench.records import DetectedFace, FaceEmbedding, JudgeAnswer, Outcome
from faceedit_bench.storage import claims
from faceedit_bench.storage.atomic import create_empty
from faceedit_bench.storage.ledger_schema import EDIT_COLUMNS, MIGRATIONS, SCHEMA
from faceedit_bench.storage.ledger_writer import LedgerWriter
from faceedit_bench.storage.locks import directory_lock

T = TypeVar("T")



@dataclass(frozen=True)
class EditRow:
    edit_key: str
    outcome: Outcome
    output_hash: str | None
    reason: str
    usage: dict[str, Any]
    duration_s: float  # from the step's start to its answer: queue, rate-limit and backoff waits included
    latency_s: float | None = None  # the provider's answer time alone (the last attempt); None before it was kept


class Ledger:
    """``claims_in``: the ledger file that holds the claims (a shard's: the workspace ledger), else this one."""

    def __init__(self, path: Path, *, claims_in: Path | None = None) -> None:
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        # One process at a time creates the schema and switches to WAL (two at once can fail with
        # "database is locked"). The file is created first with the umask's mode: SQLite would make
        # it 0644 whatever the umask, and its -wal and -shm files take the database's mode.
        with directory_lock(self.path.parent, self.path.name, what=f"opening the ledger {self.path}"):
            create_empty(self.path)
            self._db = sqlite3.connect(self.path, timeout=60, isolation_level=None)
            self._db.execute("PRAGMA journal_mode=WAL")
            self._db.execute("PRAGMA synchronous=NORMAL")
            self._db.executescript(SCHEMA)
            self._migrate()  # under the lock: two processes never add the same column
        #: Answers other processes made since this moment are this run's own: taken, whatever their outcome.
        self.opened_at = time.time()
        claims_path = self.path if claims_in is None else Path(claims_in)
        self._claims_db = self._db if claims_in is None else _reader(claims_path)
        self._writer = LedgerWriter(self.path, claims_path)
        self._readers: dict[str, sqlite3.Connection] = {}  # other processes' ledgers holding answers (shards)
        self._mine: set[str] = set()  # keys this process has claimed and not yet answered
        self._pending_edits: dict[str, EditRow] = {}
        self._pending_judgments: dict[str, JudgeAnswer] = {}
        self._pending_embeddings: dict[tuple[str, str], FaceEmbedding] = {}
        self._pending_image_values: dict[tuple[str, str], tuple[Outcome, dict[str, Any] | None, str]] = {}
        self._pending_detections: dict[tuple[str, str], tuple[DetectedFace, ...]] = {}

    def _migrate(self) -> None:
        for table, column, kind in MIGRATIONS:
            columns = {row[1] for row in self._db.execute(f"PRAGMA table_info({table})")}
            if column not in columns:
                self._db.execute(f"ALTER TABLE {table} ADD COLUMN {column} {kind}")

    def close(self) -> None:
        try:
            if not self._writer.reported:  # an error already raised is not raised again on the way out
                self.flush()
                self._writer.check_in_place()  # deleted or moved since the last commit: said, not ended quietly
        finally:
            self._writer.close()
            for db in {id(d): d for d in (self._db, self._claims_db, *self._readers.values())}.values():
                db.close()

    # -- commits in time windows, by the writer thread -----------------------------------

    def _queue(self, statement: str, row: tuple[Any, ...], pending: dict[Any, Any], key: Any) -> None:
        """Hand ``row`` to the writer; ``pending[key]`` answers reads until it is committed."""
        value = pending[key]

        def forget() -> None:  # committed: read from the file from now on
            if pending.get(key) is value:
                pending.pop(key, None)
        self._writer.queue(statement, row, forget)

    def flush(self) -> None:
        """Commit every row written so far, in one transaction."""
        self._writer.flush()

    # -- claims on calls -----------------------------------------------------------------

    async def claim_edit(self, edit_key: str) -> EditRow | None:
        """None when this process is to make the edit (it holds the claim now), else the answer another
        process made since this ledger was opened (waited for, if it was being made)."""
        return await self._claim(edit_key, _edit_row)

    async def claim_judgment(self, key: str) -> JudgeAnswer | None:
        """As :meth:`claim_edit`, for a judge call."""
        return await self._claim(key, _judgment_row)

    def release(self, key: str) -> None:
        """Give up a claim without an answer (the call was not made): others take it over at once."""
        if key in self._mine:
            self._mine.discard(key)
            self._writer.release(key)

    async def _claim(self, key: str, read: Callable[[sqlite3.Connection, str], T | None]) -> T | None:
        while True:
            status = await asyncio.wrap_future(self._writer.claim(key, self.opened_at))
            while status is not None and status.state is claims.State.HELD:
                await asyncio.sleep(claims.POLL_S)
                status = claims.look(self._claims_db, self._writer.owner, key, self.opened_at)
            if status is None:
                continue  # free again (its owner gave it up, or died): claim it
            if status.state is claims.State.MINE:
                self._mine.add(key)
                return None
            assert status.done_in is not None
            found = read(self._reader_of(status.done_in), key)
            if found is None:  # marked done, yet its answer is not there: make it
                self._mine.add(key)
                return None
            return found

    def _reader_of(self, path: str) -> sqlite3.Connection:
        if path == str(self.path):
            return self._db
        if path not in self._readers:
            self._readers[path] = _reader(Path(path))
        return self._readers[path]

    def _answered(self, key: str) -> None:
        if key in self._mine:
            self._mine.discard(key)
            self._writer.answered(key)

    # -- components: what each fingerprint in the rows below stands for ------------------

    def record_component(self, fingerprint: str, kind: str, description: dict[str, Any]) -> None:
        self._db.execute("INSERT OR IGNORE INTO components VALUES (?,?,?)",
                         (fingerprint, kind, json.dumps(description, sort_keys=True, default=str)))

    # -- edits ---------------------------------------------------------------------------

    def get_edit(self, edit_key: str) -> EditRow | None:
        if edit_key in self._pending_edits:
            return self._pending_edits[edit_key]
        return _edit_row(self._db, edit_key)

    def put_edit(self, edit_key: str, *, editor_fp: str, face_id: str, session_id: str, k: int,
                 instruction: str, input_hash: str, row: EditRow) -> None:
        self._pending_edits[edit_key] = row
        self._queue(
            f"INSERT OR REPLACE INTO edits ({','.join(EDIT_COLUMNS)}) VALUES ({','.join('?' * len(EDIT_COLUMNS))})",
            (edit_key, editor_fp, face_id, session_id, k, instruction, input_hash, row.output_hash,
             row.outcome.value, row.reason, json.dumps(row.usage, sort_keys=True, default=str),
             row.duration_s, time.time(), row.latency_s),
            self._pending_edits, edit_key,
        )
        self._answered(edit_key)

    # -- judge answers -------------------------------------------------------------------

    def get_judgment(self, key: str) -> JudgeAnswer | None:
        if key in self._pending_judgments:
            return self._pending_judgments[key]
        return _judgment_row(self._db, key)

    def put_judgment(self, key: str, *, judge_fp: str, image_hashes: list[str], answer: JudgeAnswer) -> None:
        self._pending_judgments[key] = dataclasses.replace(answer, resumed=True)
        self._queue(
            "INSERT OR REPLACE INTO judgments VALUES (?,?,?,?,?,?,?,?,?,?,?)",
            (key, judge_fp, answer.template, answer.template_hash, json.dumps(image_hashes), answer.outcome.value,
             None if answer.value is None else json.dumps(answer.value, sort_keys=True), answer.raw, answer.reason,
             json.dumps(answer.usage, sort_keys=True, default=str), time.time()),
            self._pending_judgments, key,
        )
        self._answered(key)

    # -- judge anchors (history kept for drift) ------------------------------------------

    def anchor_history(self, key: str, n: int = 2) -> list[dict[str, Any]]:
        """The answers of the anchor's last ``n`` checks, newest first."""
        rows = self._db.execute("SELECT value FROM anchors WHERE anchor_key = ? ORDER BY created_at DESC LIMIT ?",
                                (key, n)).fetchall()
        return [json.loads(row[0]) for row in rows]

    def put_anchor(self, key: str, value: dict[str, Any]) -> None:
        self._db.execute("INSERT INTO anchors VALUES (?,?,?)", (key, json.dumps(value, sort_keys=True), time.time()))

    # -- embeddings ----------------------------------------------------------------------

    def get_embeddings(self, embedder_fp: str, hashes: Iterable[str]) -> dict[str, FaceEmbedding]:
        hashes = list(hashes)
        found: dict[str, FaceEmbedding] = {}
        if self._pending_embeddings:
            found = {h: self._pending_embeddings[(embedder_fp, h)] for h in hashes
                     if (embedder_fp, h) in self._pending_embeddings}
            hashes = [h for h in hashes if h not in found]
        for start in range(0, len(hashes), 500):
            chunk = hashes[start:start + 500]
            marks = ",".join("?" * len(chunk))
            rows = self._db.execute(
                f"SELECT image_hash, outcome, reason, n_faces, vector FROM embeddings "
                f"WHERE embedder_fp = ? AND image_hash IN ({marks})",
                (embedder_fp, *chunk),
            )
            for image_hash, outcome, reason, n_faces, blob in rows:
                vector = np.frombuffer(blob, dtype=np.float32) if blob is not None else None
                found[image_hash] = FaceEmbedding(Outcome(outcome), vector, n_faces, reason)
        return found

    def put_embeddings(self, embedder_fp: str, items: Iterable[tuple[str, FaceEmbedding]]) -> None:
        for h, e in items:
            self._pending_embeddings[(embedder_fp, h)] = e
            self._queue("INSERT OR REPLACE INTO embeddings VALUES (?,?,?,?,?,?,?)",
                        (embedder_fp, h, e.outcome.value, e.reason, e.n_faces,
                         None if e.vector is None else np.asarray(e.vector, dtype=np.float32).tobytes(), time.time()),
                        self._pending_embeddings, (embedder_fp, h))

    # -- image metric values and the detector's faces they read ------------------------------

    def get_image_values(self, metric_fp: str, step_keys: Iterable[str]
                         ) -> dict[str, tuple[Outcome, dict[str, Any] | None, str]]:
        """step key -> (outcome, values, reason) of one image metric's kept results."""
        found, rest = self._pending_first(self._pending_image_values, metric_fp, step_keys)
        for chunk in _chunks(rest):
            rows = self._db.execute(f"SELECT step_key, outcome, value, reason FROM image_values WHERE metric_fp = ? "
                                    f"AND step_key IN ({','.join('?' * len(chunk))})", (metric_fp, *chunk))
            found.update((key, (Outcome(o), json.loads(v) if v is not None else None, r)) for key, o, v, r in rows)
        return found

    def put_image_value(self, metric_fp: str, step_key: str, outcome: Outcome, values: dict[str, Any] | None,
                        reason: str) -> None:
        self._pending_image_values[(metric_fp, step_key)] = (outcome, values, reason)
        self._queue("INSERT OR REPLACE INTO image_values VALUES (?,?,?,?,?,?)",
                    (metric_fp, step_key, outcome.value, reason,
                     None if values is None else json.dumps(values, sort_keys=True), time.time()),
                    self._pending_image_values, (metric_fp, step_key))

    def get_detections(self, detector_fp: str, hashes: Iterable[str]) -> dict[str, tuple[DetectedFace, ...]]:
        found, rest = self._pending_first(self._pending_detections, detector_fp, hashes)
        for chunk in _chunks(rest):
            rows = self._db.execute(f"SELECT image_hash, faces FROM detections WHERE detector_fp = ? "
                                    f"AND image_hash IN ({','.join('?' * len(chunk))})", (detector_fp, *chunk))
            found.update((h, faces_from_json(faces)) for h, faces in rows)
        return found

    def put_detections(self, detector_fp: str, image_hash: str, faces: tuple[DetectedFace, ...]) -> None:
        self._pending_detections[(detector_fp, image_hash)] = faces
        self._queue("INSERT OR REPLACE INTO detections VALUES (?,?,?,?)",
                    (detector_fp, image_hash, json.dumps([{"box": list(f.box), "score": f.score,
                                                           "landmarks": {n: list(p) for n, p in f.landmarks.items()}}
                                                          for f in faces]), time.time()),
                    self._pending_detections, (detector_fp, image_hash))

    @staticmethod
    def _pending_first(pending: dict[tuple[str, str], Any], fp: str, keys: Iterable[str]) -> tuple[dict[str, Any],
                                                                                                   list[str]]:
        """Rows not yet committed, and the keys left to read from the file."""
        keys = list(keys)
        found = {k: pending[(fp, k)] for k in keys if (fp, k) in pending}
        return found, [k for k in keys if k not in found]


def _reader(path: Path) -> sqlite3.Connection:
    return sqlite3.connect(path, timeout=60, isolation_level=None)


def _edit_row(db: sqlite3.Connection, edit_key: str) -> EditRow | None:
    row = db.execute("SELECT outcome, output_hash, reason, usage, duration_s, latency_s FROM edits "
                     "WHERE edit_key = ?", (edit_key,)).fetchone()
    if row is None:
        return None
    return EditRow(edit_key, Outcome(row[0]), row[1], row[2], json.loads(row[3]), row[4], row[5])


def _judgment_row(db: sqlite3.Connection, key: str) -> JudgeAnswer | None:
    row = db.execute("SELECT outcome, value, raw, reason, usage, template, template_hash FROM judgments "
                     "WHERE judgment_key = ?", (key,)).fetchone()
    if row is None:
        return None
    value = json.loads(row[1]) if row[1] is not None else None
    return JudgeAnswer(Outcome(row[0]), value, row[2], row[3], json.loads(row[4]), row[5], row[6], resumed=True)


def faces_from_json(text: str) -> tuple[DetectedFace, ...]:
    """The faces of a ``detections`` row."""
    return tuple(DetectedFace(tuple(f["box"]), f["score"], {n: tuple(p) for n, p in f["landmarks"].items()})
                 for f in json.loads(text))


def kept_faces(path: Path, detector_fp: str, image_hash: str) -> tuple[DetectedFace, ...] | None:
    """The faces a ledger file keeps for an image, read through a connection of the caller's own (any thread);
    None when it keeps none (or the file has no such table yet)."""
    with contextlib.closing(sqlite3.connect(f"file:{path}?mode=ro", uri=True, timeout=60)) as db:
        try:
            row = db.execute("SELECT faces FROM detections WHERE detector_fp = ? AND image_hash = ?",
                             (detector_fp, image_hash)).fetchone()
        except sqlite3.OperationalError:
            return None
    return faces_from_json(row[0]) if row else None


def _chunks(keys: list[str], size: int = 500) -> Iterable[list[str]]:
    for start in range(0, len(keys), size):
        yield keys[start:start + size]
