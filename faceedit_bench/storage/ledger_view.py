"""The workspace ledger read only, for a command that must write nothing (``faceedit-bench plan``)."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

from faceedit_bench.records import Outcome

#: At most this many recorded calls are read to measure a component's usage per call.
USAGE_SAMPLE = 500


class LedgerView:
    """The workspace ledger, read only (absent: nothing cached)."""

    def __init__(self, path: Path) -> None:
        self._db = sqlite3.connect(f"file:{path}?mode=ro", uri=True) if path.is_file() else None

    def edit(self, key: str) -> tuple[Outcome, str | None] | None:
        row = self._db.execute("SELECT outcome, output_hash FROM edits WHERE edit_key = ?", (key,)).fetchone() \
            if self._db else None
        return (Outcome(row[0]), row[1]) if row else None

    def judgment(self, key: str) -> Outcome | None:
        row = self._db.execute("SELECT outcome FROM judgments WHERE judgment_key = ?", (key,)).fetchone() \
            if self._db else None
        return Outcome(row[0]) if row else None

    def usage(self, table: str, column: str, fp: str) -> tuple[dict[str, float], int]:
        """The mean usage of a component's answered calls, and how many it is the mean of."""
        if self._db is None:
            return {}, 0
        rows = self._db.execute(f"SELECT usage FROM {table} WHERE {column} = ? AND outcome = 'ok' LIMIT ?",
                                (fp, USAGE_SAMPLE)).fetchall()
        totals: dict[str, float] = {}
        for (text,) in rows:
            for key, value in json.loads(text).items():
                if isinstance(value, (int, float)) and not isinstance(value, bool):
                    totals[key] = totals.get(key, 0.0) + value
        return {k: v / len(rows) for k, v in totals.items()} if rows else {}, len(rows)

    def close(self) -> None:
        if self._db is not None:
            self._db.close()
