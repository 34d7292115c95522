"""A run's sessions and steps for the app, read from the run folder's tables (Parquet, else CSV) on each request:
nothing of a run is kept in memory between requests, so the server's memory does not grow with the workspace.

A session's *outcome* is what a reader filters by: ``ok``, ``refused`` (a step the provider declined),
``parse error`` (a judge answer that did not fit its schema, in any step) or ``failed`` (any other reason the
session was excluded: an API error, no image, no face ...).
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterable, Mapping, Sequence
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


def read_table(run_dir: Path, which: str, columns: Sequence[str] | None = None) -> list[dict[str, Any]]:
    """The rows of a run's ``steps`` or ``sessions`` table; only ``columns`` (those present) when given."""
    import pyarrow.parquet as pq

    parquet, csv_name = (tables.STEPS_PARQUET, tables.STEPS_CSV) if which == "steps" else \
        (tables.SESSIONS_PARQUET, tables.SESSIONS_CSV)
    if (run_dir / parquet).is_file():
        with pq.ParquetFile(run_dir / parquet) as file:
            present = set(file.schema_arrow.names)
            wanted = None if columns is None else [c for c in columns if c in present]
            return file.read(columns=wanted).to_pylist()
    if (run_dir / csv_name).is_file():
        import csv

        with open(run_dir / csv_name, newline="", encoding="utf-8") as fh:
            rows = list(csv.DictReader(fh))
        return rows if columns is None else [{c: r[c] for c in columns if c in r} for r in rows]
    return []


def number(value: Any) -> float | None:
    try:
        out = float(value)
    except (TypeError, ValueError):
        return None
    return out if math.isfinite(out) else None


def key_of(row: Mapping[str, Any]) -> tuple[str, str, str]:
    return (str(row.get("face_id") or ""), str(row.get("session_id") or ""), str(row.get("condition") or ""))


def parse_errors(run_dir: Path) -> set[tuple[str, str, str]]:
    """The sessions with a judge answer that did not parse, in any step (any ``*_outcome`` column)."""
    import pyarrow.parquet as pq

    path = run_dir / tables.STEPS_PARQUET
    if path.is_file():
        with pq.ParquetFile(path) as file:
            outcome_columns = [c for c in file.schema_arrow.names if c.endswith("_outcome")]
        rows = read_table(run_dir, "steps", [*SESSION_KEY, *outcome_columns])
    else:
        rows = read_table(run_dir, "steps")
        outcome_columns = [c for c in (rows[0] if rows else {}) if c.endswith("_outcome")]
    return {key_of(r) for r in rows if any(r.get(c) == "parse_error" for c in outcome_columns)}


def session_outcome(excluded: str, parse_failed: bool) -> str:
    if "refused" in excluded:
        return "refused"
    if parse_failed or "parse_error" in excluded:
        return "parse error"
    return "failed" if excluded else "ok"


def sessions(run_dir: Path) -> list[dict[str, Any]]:
    """Every session row of the run with its ``outcome``."""
    rows = read_table(run_dir, "sessions")
    unparsed = parse_errors(run_dir) if rows else set()
    for row in rows:
        row["outcome"] = session_outcome(str(row.get("excluded") or ""), key_of(row) in unparsed)
    return rows


def groups(rows: Iterable[Mapping[str, Any]]) -> list[str]:
    """Every ``label=value`` of the demographic labels the sessions carry."""
    found = {f"{key}={row[key]}" for row in rows for key in tables.DEMOGRAPHIC_KEYS if row.get(key)}
    return sorted(found)


def sort_sessions(rows: list[dict[str, Any]], metric: str, worst_first: bool) -> list[dict[str, Any]]:
    """By ``metric`` (rows without a value last), worst first when asked."""
    present = [r for r in rows if number(r.get(metric)) is not None]
    absent = [r for r in rows if number(r.get(metric)) is None]
    present.sort(key=lambda r: number(r[metric]), reverse=worst_first)  # type: ignore[arg-type, return-value]
    return present + absent


def session_steps(run_dir: Path, face_id: str, session_id: str, condition: str) -> list[dict[str, Any]]:
    """The steps I_0..I_K of one session, in order, with their JSON cells decoded."""
    import pyarrow.compute as pc
    import pyarrow.parquet as pq

    path = run_dir / tables.STEPS_PARQUET
    if path.is_file():
        with pq.ParquetFile(path) as file:
            table = file.read()
        mask = pc.and_(pc.equal(table["face_id"], face_id), pc.equal(table["session_id"], session_id))
        if "condition" in table.column_names:
            mask = pc.and_(mask, pc.equal(table["condition"], condition))
        rows = table.filter(mask).to_pylist()
    else:
        rows = [r for r in read_table(run_dir, "steps") if key_of(r) == (face_id, session_id, condition)]
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


def other_runs_of_session(workspace: Path, this_run: str, face_id: str, session_id: str,
                          rows: Iterable[Any]) -> list[Any]:
    """The finished runs (``RunRow`` of the runs index) other than this one that ran the same test set; whether
    they hold this face's session is checked when the link is followed."""
    return [r for r in rows if r.folder != this_run and r.status not in ("running", "killed")]
