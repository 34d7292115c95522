"""The runs a human evaluation is compared with: each run is one editor (a system); its sessions table gives
the judge's and every metric's value per rated output, matched by item ``<face_id>|<session_id>`` and
condition (the sessions table's ``condition`` column; ``baseline`` where it has none)."""

from __future__ import annotations

import csv
import dataclasses
import io
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from faceedit_bench.api import read_utf8
from faceedit_bench.api.sections import FinishedRun
from faceedit_bench_audit.human.ratings import BASELINE, Ratings, RatingsError

ITEM_SEPARATOR = "|"


@dataclass(frozen=True)
class RatedRun:
    """One run: its editor label (the system), directory, report and sessions table rows."""

    label: str
    run_dir: Path
    report: Mapping[str, Any]
    sessions: tuple[Mapping[str, str], ...]

    def higher_is_better(self, metric: str) -> bool | None:
        m = (self.report.get("metrics") or {}).get(metric)
        hib = (m or {}).get("higher_is_better")
        return hib if isinstance(hib, bool) else None  # None: not stated, or no better direction

    @property
    def table(self) -> Path:
        """The run's sessions table."""
        return FinishedRun(self.report, self.run_dir).sessions_csv

    def values(self, column: str) -> dict[tuple[str, str], float]:
        """(item, condition) -> the session's value in ``column``; empty cells (undefined) are left out."""
        out: dict[tuple[str, str], float] = {}
        for row in self.sessions:
            cell = row.get(column, "")
            if cell in ("", None) or row.get("excluded"):
                continue
            key = (f"{row['face_id']}{ITEM_SEPARATOR}{row['session_id']}", row.get("condition") or BASELINE)
            if key in out:  # several conditions in a table without the column: which value is which is unknown
                raise RatingsError(f"{self.table} has several rows for item {key[0]!r} and no "
                                   "condition column, so the ratings cannot be matched; rerun the experiment to "
                                   "rewrite its tables")
            try:
                out[key] = float(cell)
            except ValueError:
                raise RatingsError(f"{self.table}: column {column!r} holds {cell!r}, not a number; "
                                   "name a metric or judge value column") from None
        return out


def load_rated_runs(paths: Sequence[Path]) -> list[RatedRun]:
    runs = []
    for path in paths:
        finished = FinishedRun.load(Path(path))
        report, run_dir, table = finished.report, finished.folder, finished.sessions_csv
        if not table.is_file():
            raise RatingsError(f"{run_dir}: no {table.name}; the run's per-session values are needed to match "
                               "ratings (rerun the experiment to rewrite its tables)")
        text = read_utf8(table, what="sessions table", error=RatingsError)
        rows = tuple(csv.DictReader(io.StringIO(text, newline="")))
        editor = str(((report.get("components") or {}).get("editor") or {}).get("name") or run_dir.name)
        runs.append(RatedRun(editor, run_dir, report, rows))
    labels = [r.label for r in runs]
    if len(set(labels)) < len(labels):  # the same editor twice: tell them apart by run name
        runs = [dataclasses.replace(r, label=str(r.report.get("run", {}).get("name") or r.run_dir.name))
                for r in runs]
    return runs


def assign_editors(ratings: Ratings, runs: Sequence[RatedRun]) -> Ratings:
    """Ratings whose ``editor`` names a run; a CSV without editors fits exactly one run."""
    labels = [r.label for r in runs]
    if not runs:
        return ratings
    if ratings.editors == [""]:
        if len(runs) != 1:
            raise RatingsError(f"{ratings.source}: no editor column, but {len(runs)} runs are given; add a column "
                               f"'editor' naming each rated output's editor ({', '.join(labels)})")
        rows = tuple(dataclasses.replace(r, editor=labels[0]) for r in ratings.rows)
        return dataclasses.replace(ratings, rows=rows)
    unknown = sorted(set(ratings.editors) - set(labels))
    if unknown:
        first = next(r for r in ratings.rows if r.editor in unknown)
        raise RatingsError(f"{ratings.source}, line {first.line}, column editor: {first.editor!r} is none of the "
                           f"given runs' editors ({', '.join(labels)}); name the editor as its run does, or "
                           "pass its run with --run")
    return ratings


def vlm_scores(runs: Sequence[RatedRun], axes: Sequence[str], names: Mapping[str, str] | None = None,
               ) -> dict[tuple[str, str, str, str], float]:
    """(editor, item, condition, axis) -> the run's session value named like the axis (the rubric's values),
    or as ``names`` maps it."""
    names = dict(names or {})
    unknown = sorted(set(names) - set(axes))
    if unknown:
        raise RatingsError(f"--vlm-axis {unknown[0]}=...: the ratings have no axis {unknown[0]!r}; axes: "
                           f"{', '.join(axes)}")
    out: dict[tuple[str, str, str, str], float] = {}
    for run in runs:
        for axis in axes:
            for (item, condition), v in run.values(names.get(axis, axis)).items():
                out[(run.label, item, condition, axis)] = v
    return out
