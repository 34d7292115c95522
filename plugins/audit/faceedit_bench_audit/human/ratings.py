"""Human ratings: reading and checking a ratings CSV (METHODOLOGY §4.6; the format is in docs/human_evaluation.md).

One row per (item, rater, axis) score::

    item,rater,axis,score,condition,editor,race
    face-07|O-01,r01,edit_success,4,baseline,flux2_dev,Indian

- ``item`` (required): what was rated, shared across conditions so baseline and condition pair up. To match
  a run's items it is ``<face_id>|<session_id>`` (the run's sessions table).
- ``rater`` (required): a stable rater id.
- ``axis`` (required): what was scored, e.g. the rubric's ``edit_success``, ``skin_tone`` ...
- ``score`` (required): a number on the scale (1-5 by default).
- ``condition`` (optional column; empty reads ``baseline``): the prompt condition of the rated output.
- ``editor`` (optional): which editor made the output; needed when ratings cover several runs.
- ``race``, ``gender``, ``age_bin`` (optional): the source's group labels, for the tests across groups.

Every problem is reported with its line and column, all at once (up to :data:`MAX_LISTED`), before any
statistic is computed.
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from faceedit_bench.api import FaceEditBenchError, csv_records, read_utf8

REQUIRED = ("item", "rater", "axis", "score")
OPTIONAL = ("condition", "editor")
GROUP_COLUMNS = ("race", "gender", "age_bin")
BASELINE = "baseline"
MAX_LISTED = 20
_AXIS = re.compile(r"^[A-Za-z][A-Za-z0-9_]*$")


class RatingsError(FaceEditBenchError):
    """A ratings CSV that cannot be read as documented; the message names every bad line and column."""


@dataclass(frozen=True)
class Rating:
    item: str
    rater: str
    axis: str
    score: float
    condition: str = BASELINE
    editor: str = ""
    groups: tuple[tuple[str, str], ...] = ()  # (group column, label), e.g. ("race", "Indian")
    line: int = 0

    @property
    def unit(self) -> tuple[str, str, str]:
        """What one output is: (editor, item, condition); its raters' scores are averaged."""
        return (self.editor, self.item, self.condition)


@dataclass(frozen=True)
class Ratings:
    source: str
    rows: tuple[Rating, ...]
    scale: tuple[float, float]

    @property
    def axes(self) -> list[str]:
        return sorted({r.axis for r in self.rows})

    @property
    def conditions(self) -> list[str]:
        found = {r.condition for r in self.rows}
        return [BASELINE] * (BASELINE in found) + sorted(found - {BASELINE})

    @property
    def editors(self) -> list[str]:
        return sorted({r.editor for r in self.rows})


def read_ratings(path: Path | str, scale: tuple[float, float] = (1.0, 5.0)) -> Ratings:
    path = Path(path)
    if not path.is_file():
        raise RatingsError(f"{path}: no such file; give the ratings CSV (columns {', '.join(REQUIRED)}, "
                           f"optional {', '.join(OPTIONAL + GROUP_COLUMNS)}; docs/human_evaluation.md)")
    return parse_ratings(read_utf8(path, what="ratings CSV", error=RatingsError), str(path), scale)


def parse_ratings(text: str, source: str = "ratings.csv", scale: tuple[float, float] = (1.0, 5.0)) -> Ratings:
    low, high = scale
    if not low < high:
        raise RatingsError(f"the rating scale must go from a lower to a higher score, got {low:g}..{high:g}")
    problems: list[str] = []  # every row's, listed at once
    header, records = csv_records(text, source, what="ratings CSV", error=RatingsError, problems=problems)
    _check_header(header, source)
    rows: list[Rating] = []
    first_line: dict[tuple[str, ...], int] = {}
    for line, record in records:
        row = {h: c.strip() for h, c in record.items()}
        rating = _rating(row, line, (low, high), problems)
        if rating is None:
            continue
        key = (rating.editor, rating.item, rating.condition, rating.axis, rating.rater)
        if key in first_line:
            problems.append(f"line {line}: rater {rating.rater!r} already scored {rating.axis} of item "
                            f"{rating.item!r} ({rating.condition}{', ' + rating.editor if rating.editor else ''}) "
                            f"on line {first_line[key]}; keep one score per rater")
            continue
        first_line[key] = line
        rows.append(rating)
    if problems:
        more = f"\n  ... and {len(problems) - MAX_LISTED} more" if len(problems) > MAX_LISTED else ""
        raise RatingsError(f"{source}: {len(problems)} problem(s):\n  " + "\n  ".join(problems[:MAX_LISTED]) + more)
    if not rows:
        raise RatingsError(f"{source}: no ratings (only a header); add one row per (item, rater, axis) score")
    _check_groups(rows, source)
    return Ratings(source, tuple(rows), (low, high))


def _check_header(header: Sequence[str], source: str) -> None:
    if not header or header == [""]:
        raise RatingsError(f"{source}: empty file; the first line names the columns: {','.join(REQUIRED)},condition")
    missing = [c for c in REQUIRED if c not in header]
    unknown = [c for c in header if c not in REQUIRED + OPTIONAL + GROUP_COLUMNS]
    twice = sorted({c for c in header if header.count(c) > 1})
    if missing or unknown or twice:
        parts = ([f"missing column(s) {', '.join(missing)}"] if missing else []) + \
                ([f"unknown column(s) {', '.join(unknown)}"] if unknown else []) + \
                ([f"column(s) named twice: {', '.join(twice)}"] if twice else [])
        raise RatingsError(f"{source}, line 1 (header): {'; '.join(parts)}. Columns: {', '.join(REQUIRED)} "
                           f"(required), {', '.join(OPTIONAL + GROUP_COLUMNS)} (optional)")


def _rating(row: dict[str, str], line: int, scale: tuple[float, float], problems: list[str]) -> Rating | None:
    before = len(problems)
    for column in REQUIRED:
        if not row[column]:
            problems.append(f"line {line}, column {column}: empty; every row needs {', '.join(REQUIRED)}")
    if len(problems) > before:
        return None
    if not _AXIS.match(row["axis"]):
        problems.append(f"line {line}, column axis: {row['axis']!r} is not an axis name (letters, digits and _, "
                        "e.g. edit_success)")
    score = _number(row["score"])
    low, high = scale
    if score is None:
        problems.append(f"line {line}, column score: {row['score']!r} is not a number; write a score from "
                        f"{low:g} to {high:g}")
    elif not low <= score <= high:
        problems.append(f"line {line}, column score: {score:g} is outside the scale {low:g}..{high:g} "
                        "(set the scale with --scale LOW HIGH)")
    if len(problems) > before or score is None:
        return None
    groups = tuple((c, row[c]) for c in GROUP_COLUMNS if row.get(c))
    return Rating(row["item"], row["rater"], row["axis"], score, row.get("condition") or BASELINE,
                  row.get("editor", ""), groups, line)


def _number(text: str) -> float | None:
    try:
        value = float(text)
    except ValueError:
        return None
    return value if math.isfinite(value) else None


def _check_groups(rows: Sequence[Rating], source: str) -> None:
    """An item's group labels are the same on every row (they describe the source portrait)."""
    seen: dict[tuple[str, str, str], tuple[str, int]] = {}
    for r in rows:
        for column, label in r.groups:
            key = (r.editor, r.item, column)
            if key in seen and seen[key][0] != label:
                raise RatingsError(f"{source}, line {r.line}, column {column}: item {r.item!r} is {label!r} here "
                                   f"but {seen[key][0]!r} on line {seen[key][1]}; an item has one {column}")
            seen.setdefault(key, (label, r.line))
