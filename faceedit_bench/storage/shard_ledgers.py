"""Shard ledgers: one SQLite file per shard (one writer each), unioned into the workspace ledger.

A shard reads through to the workspace ledger (what earlier runs and merges recorded) and writes
only its own file. :func:`merge_ledger` copies one shard ledger's rows into the workspace ledger
in one transaction, table by table, whatever tables the schema has. Where both hold a row with
the same key, the kept row is decided by the rows alone, never by the order of merging:

- a row with outcome ``ok`` beats any other outcome (a failure another shard retried);
- between two rows both ``ok`` or both not, the one created later wins (the newest attempt);
- on an equal time the row already in the workspace ledger stays.

Tables without an outcome keep the first row per key (components: the same fingerprint always
describes the same thing); tables without a key (judge anchors, a history) gain the rows they do
not hold yet. Merging a shard twice therefore changes nothing the second time.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from faceedit_bench.records import FaceEmbedding, JudgeAnswer
from faceedit_bench.storage.ledger import EditRow, Ledger
from faceedit_bench.storage.locks import directory_lock

MERGE_CACHE_KIB = 65536  # SQLite page cache of a merge: 64 MiB


class ShardLedger(Ledger):
    """A shard's own ledger, answering lookups from the workspace ledger ``base`` where it has no row."""

    def __init__(self, path: Path, *, base: Path | None = None) -> None:
        # Claims are shared through the workspace ledger (shards that overlap pay each call once).
        self.base = Ledger(base) if base is not None else None
        super().__init__(path, claims_in=base)

    def close(self) -> None:
        super().close()
        if self.base is not None:
            self.base.close()

    def get_edit(self, edit_key: str) -> EditRow | None:
        row = super().get_edit(edit_key)
        return row if row is not None or self.base is None else self.base.get_edit(edit_key)

    def get_judgment(self, key: str) -> JudgeAnswer | None:
        answer = super().get_judgment(key)
        return answer if answer is not None or self.base is None else self.base.get_judgment(key)

    def anchor_history(self, key: str, n: int = 2) -> list[dict[str, Any]]:
        own = super().anchor_history(key, n)  # newer than the workspace's: the shard's checks came after
        return own if len(own) == n or self.base is None else own + self.base.anchor_history(key, n - len(own))

    def get_embeddings(self, embedder_fp: str, hashes: Iterable[str]) -> dict[str, FaceEmbedding]:
        hashes = list(hashes)
        found = super().get_embeddings(embedder_fp, hashes)
        if self.base is not None and len(found) < len(hashes):
            found.update(self.base.get_embeddings(embedder_fp, [h for h in hashes if h not in found]))
        return found


    def get_image_values(self, metric_fp: str, step_keys: Iterable[str]) -> dict[str, Any]:
        keys = list(step_keys)
        found = super().get_image_values(metric_fp, keys)
        if self.base is not None and len(found) < len(keys):
            found.update(self.base.get_image_values(metric_fp, [k for k in keys if k not in found]))
        return found

    def get_detections(self, detector_fp: str, hashes: Iterable[str]) -> dict[str, Any]:
        hashes = list(hashes)
        found = super().get_detections(detector_fp, hashes)
        if self.base is not None and len(found) < len(hashes):
            found.update(self.base.get_detections(detector_fp, [h for h in hashes if h not in found]))
        return found


def _columns(db: sqlite3.Connection, schema: str, table: str) -> list[tuple[str, int]]:
    """(name, position in the primary key, 0 if none) of each column, in table order."""
    return [(row[1], row[5]) for row in db.execute(f'PRAGMA {schema}.table_info("{table}")')]


def _merge_table(db: sqlite3.Connection, table: str, create_sql: str) -> int:
    if not _columns(db, "main", table):
        db.execute(create_sql)  # a table only the shard's schema has: the same definition here
    main = _columns(db, "main", table)
    in_shard = {name for name, _ in _columns(db, "shard", table)}
    cols = [name for name, _ in main if name in in_shard]
    key = [name for name, pk in sorted(main, key=lambda c: c[1]) if pk]
    names = ", ".join(f'"{c}"' for c in cols)
    insert = f'INSERT INTO main."{table}" ({names}) SELECT {names} FROM shard."{table}" WHERE true'
    before = db.total_changes
    if key and {"outcome", "created_at"} <= set(cols):
        updates = ", ".join(f'"{c}" = excluded."{c}"' for c in cols if c not in key)
        ok_new, ok_old = "(excluded.outcome = 'ok')", f"(\"{table}\".outcome = 'ok')"
        better = (f"{ok_new} > {ok_old} OR ({ok_new} = {ok_old} AND "
                  f"excluded.created_at > \"{table}\".created_at)")
        db.execute(f"{insert} ON CONFLICT ({', '.join(key)}) DO UPDATE SET {updates} WHERE {better}")
    elif key:
        db.execute(insert.replace("INSERT INTO", "INSERT OR IGNORE INTO", 1))
    else:
        same = " AND ".join(f'm."{c}" IS s."{c}"' for c in cols)
        picked = ", ".join(f's."{c}"' for c in cols)
        db.execute(f'INSERT INTO main."{table}" ({names}) SELECT {picked} FROM shard."{table}" AS s '
                   f'WHERE NOT EXISTS (SELECT 1 FROM main."{table}" AS m WHERE {same})')
    return db.total_changes - before


def merge_ledger(main: Path, shard: Path) -> dict[str, int]:
    """Union the shard ledger ``shard`` into the ledger ``main``: rows added or replaced per table."""
    Ledger(main).close()  # the current schema, created under the ledger's lock if the file is new
    with directory_lock(main.parent, f"{main.name}.merge", what=f"merging {shard} into {main}"):
        db = sqlite3.connect(main, timeout=600, isolation_level=None)
        try:
            # A bounded page cache (the merge's memory does not grow with the ledgers) large enough
            # for the keys' B-trees; NORMAL sync in WAL mode, as the ledger itself runs.
            db.execute(f"PRAGMA cache_size = -{MERGE_CACHE_KIB}")
            db.execute("PRAGMA synchronous = NORMAL")
            db.execute("ATTACH DATABASE ? AS shard", (str(shard),))
            tables = db.execute("SELECT name, sql FROM shard.sqlite_master WHERE type = 'table' "
                                "AND name NOT LIKE 'sqlite_%' ORDER BY name").fetchall()
            db.execute("BEGIN IMMEDIATE")
            try:
                changed = {name: _merge_table(db, name, sql) for name, sql in tables}
                db.execute("COMMIT")
            except BaseException:
                db.execute("ROLLBACK")
                raise
            db.execute("DETACH DATABASE shard")
        finally:
            db.close()
    return changed
