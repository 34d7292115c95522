"""A run's sessions and steps for the app, from the run folder's tables (Parquet, else CSV), the last few of
which are kept (:class:`TableCache`, bounded: the server's memory does not grow with the workspace).

A session's *outcome* is what a reader filters by: ``ok``, ``refused`` (a step the provider declined),
``parse error`` (a judge answer that did not fit its schema, in any step) or ``failed`` (any other reason the
session was excluded: an API error, no image, no face ...).
"""

from __future__ import annotations

import json
import math
import threading
from collections import OrderedDict
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from faceedit_bench.report import tables

OUTCOMES = ("ok", "refused", "failed", "parse error")
SESSION_KEY = ("face_id", "session_id", "condition")


@dataclass(frozen=True)
class SessionFilter:
    group: str = ""  # "<label>=<value>", e.g. gender=female
    outcome: str = ""  # one of OUTCOMES
    metric: str = ""
    low: float | None = None
    high: float | None = None

    def keeps(self, row: Mapping[str, Any]) -> bool:
        if self.group:
            key, _, value = self.group.partition("=")
            if str(row.get(key) or "") != value:
                return False
        if self.outcome and row["outcome"] != self.outcome:
            return False
        if self.metric and (self.low is not None or self.high is not None):
            value = number(row.get(self.metric))
            if value is None or (self.low is not None and value < self.low) or \
                    (self.high is not None and value > self.high):
                return False
        return True


class TableCache:
    """The last few tables read, as Arrow tables, keyed by file and modification time: paging through a run's
    sessions, or from one session to the next, reads its tables once. Bounded (``size`` tables), so the server's
    memory is that of its largest runs' tables, however many runs the workspace holds."""

    def __init__(self, size: int = 4) -> None:
        self._kept: OrderedDict[tuple[str, int], Any] = OrderedDict()
        self._size = size
        self._lock = threading.Lock()
        self.session_rows: tuple[str, Any, Any, list[dict[str, Any]]] | None = None  # see sessions()

    def table(self, run_dir: Path, which: str) -> Any:
        """A run's ``steps`` or ``sessions`` table (Parquet, else CSV); None when it has neither."""
        parquet, csv_name = (tables.STEPS_PARQUET, tables.STEPS_CSV) if which == "steps" else \
            (tables.SESSIONS_PARQUET, tables.SESSIONS_CSV)
        path = run_dir / parquet if (run_dir / parquet).is_file() else run_dir / csv_name
        try:
            key = (str(path), path.stat().st_mtime_ns)
        except OSError:
            return None
        with self._lock:
            if key in self._kept:
                self._kept.move_to_end(key)
                return self._kept[key]
        found = _read(path)
        with self._lock:
            self._kept[key] = found
            while len(self._kept) > self._size:
                self._kept.popitem(last=False)
        return found


def _read(path: Path) -> Any:
    import pyarrow.parquet as pq

    if path.suffix == ".parquet":
        with pq.ParquetFile(path) as file:  # not pq.read_table: its pyarrow.dataset imports pandas
            return file.read()
    return tables.read_csv_table(path)


def number(value: Any) -> float | None:
    try:
        out = float(value)
    except (TypeError, ValueError):
        return None
    return out if math.isfinite(out) else None


def key_of(row: Mapping[str, Any]) -> tuple[str, str, str]:
    return (str(row.get("face_id") or ""), str(row.get("session_id") or ""), str(row.get("condition") or ""))


def parse_errors(steps: Any) -> set[tuple[str, str, str]]:
    """The sessions with a judge answer that did not parse, in any step (any ``*_outcome`` column)."""
    import pyarrow.compute as pc

    mask = None
    for column in (c for c in steps.column_names if c.endswith("_outcome")):
        hit = pc.fill_null(pc.equal(steps[column].cast("string"), "parse_error"), False)
        mask = hit if mask is None else pc.or_(mask, hit)
    if mask is None:
        return set()
    return {key_of(r) for r in steps.select([c for c in SESSION_KEY if c in steps.column_names])
            .filter(mask).to_pylist()}


def session_outcome(excluded: str, parse_failed: bool) -> str:
    if "refused" in excluded:
        return "refused"
    if parse_failed or "parse_error" in excluded:
        return "parse error"
    return "failed" if excluded else "ok"


def sessions(cache: TableCache, run_dir: Path) -> list[dict[str, Any]]:
    """Every session row of the run with its ``outcome``; the last run's rows are kept (paging, sorting and
    filtering one run's sessions reads them once). Callers do not change the rows."""
    table, steps = cache.table(run_dir, "sessions"), cache.table(run_dir, "steps")
    kept = cache.session_rows
    if kept is not None and kept[0] == str(run_dir) and kept[1] is table and kept[2] is steps:
        return kept[3]
    rows = table.to_pylist() if table is not None else []
    unparsed = parse_errors(steps) if rows and steps is not None else set()
    for row in rows:
        row["outcome"] = session_outcome(str(row.get("excluded") or ""), key_of(row) in unparsed)
    cache.session_rows = (str(run_dir), table, steps, rows)  # the tables held: the same objects mean the same files
    return rows


def groups(rows: Iterable[Mapping[str, Any]]) -> list[str]:
    """Every ``label=value`` of the demographic labels the sessions carry."""
    found = {f"{key}={row[key]}" for row in rows for key in tables.DEMOGRAPHIC_KEYS if row.get(key)}
    return sorted(found)


def sort_sessions(rows: list[dict[str, Any]], metric: str, worst_first: bool) -> list[dict[str, Any]]:
    """By ``metric`` (rows without a value last), worst first when asked."""
    keyed = [(number(r.get(metric)), r) for r in rows]
    present = sorted(((v, r) for v, r in keyed if v is not None), key=lambda pair: pair[0], reverse=worst_first)
    return [r for _, r in present] + [r for v, r in keyed if v is None]


def session_steps(cache: TableCache, run_dir: Path, face_id: str, session_id: str, condition: str
                  ) -> list[dict[str, Any]]:
    """The steps I_0..I_K of one session, in order, with their JSON cells decoded."""
    import pyarrow.compute as pc

    table = cache.table(run_dir, "steps")
    if table is None:
        return []
    mask = pc.and_(pc.equal(table["face_id"].cast("string"), face_id),
                   pc.equal(table["session_id"].cast("string"), session_id))
    if "condition" in table.column_names:
        mask = pc.and_(mask, pc.equal(table["condition"].cast("string"), condition))
    rows = table.filter(pc.fill_null(mask, False)).to_pylist()
    for row in rows:
        for column in ("state", "judge_values", "judge_flags", "image_values"):
            row[column] = decoded(row.get(column))
    return sorted(rows, key=lambda r: int(r.get("k") or 0))


def decoded(cell: Any) -> Any:
    if not isinstance(cell, str) or not cell.strip():
        return None
    try:
        return json.loads(cell)
    except json.JSONDecodeError:
        return cell
