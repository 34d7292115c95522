"""Unverified is not unchecked: a submission's numbers must agree with themselves before it is listed.

Checked without re-scoring anything (issue 41 item 6):
- every mean lies inside its own interval (overall, per group, per step, per disparity group);
- every figure the bundled tables can recompute equals its recomputation: from sessions.csv each metric's
  n and mean, overall and per demographic group; from steps.csv the edit steps by outcome and the FSS_k
  series, and (a bundle without sessions.csv) the means of the embedder metrics registered here. A figure
  whose column holds no value at all in the table is not recomputable from it, and is left out.

The tables store values to 6 significant digits, so a recomputed mean is compared within a relative 1e-4 of
the values' scale (a hand edit moves a figure by far more). A refusal names the figure, what it says and
what it should be.
"""

from __future__ import annotations

import csv
import io
import math
from collections import Counter, defaultdict
from collections.abc import Iterator, Mapping
from typing import Any

from faceedit_bench.leaderboard.errors import SubmissionRejected
from faceedit_bench.leaderboard.record import SESSIONS_FILE, step_rows
from faceedit_bench.leaderboard.schema import printable

#: Relative tolerance of a recomputed mean (6 significant digits in the tables, then a sum).
RECOMPUTED = 1e-4
#: What an interval may miss its own mean by (float rounding of the bounds).
ROUNDING = 1e-9


def _summaries(record: Mapping[str, Any]) -> Iterator[tuple[str, Mapping[str, Any]]]:
    """Every (field, summary with mean and interval) of a record."""
    for name, m in record["metrics"].items():
        yield f"metrics.{name}", m
    for series, points in record["trajectory"].items():
        for p in points:
            yield f"trajectory.{series}[{p['k']}]", p
    for attribute, labels in record["groups"].items():
        for label, group in labels.items():
            for name, s in group["metrics"].items():
                yield f"groups.{attribute}.{label}.{name}", s
    for row in record.get("disparity") or []:
        for label, s in row["groups"].items():
            yield f"disparity.{row['metric']}.{row['contrast']}.groups.{label}", s


def outside_intervals(record: Mapping[str, Any]) -> list[str]:
    """Every mean outside its own interval."""
    out = []
    for field, s in _summaries(record):
        mean, low, high = s.get("mean"), s.get("ci_low"), s.get("ci_high")
        if mean is None or low is None or high is None:
            continue
        slack = ROUNDING * max(1.0, abs(low), abs(high))
        if not low - slack <= mean <= high + slack:
            out.append(f"{printable(field, 120)}.mean is {mean:.6g}, outside its own interval "
                       f"[{low:.6g}, {high:.6g}]")
    return out


def _differs(stated: Any, values: list[float]) -> bool:
    if stated is None:
        return bool(values)
    if not values:
        return True
    scale = max(1.0, max(abs(v) for v in values))
    return abs(float(stated) - math.fsum(values) / len(values)) > RECOMPUTED * scale


def _check_mean(out: list[str], field: str, summary: Mapping[str, Any] | None, values: list[float], table: str) -> None:
    summary = summary or {}
    if not all(math.isfinite(v) for v in values):
        out.append(f"{printable(field, 120)}: {table} holds a value that is not a number")
    elif int(summary.get("n") or 0) != len(values):
        out.append(f"{printable(field, 120)}.n is {summary.get('n')}; {table} has {len(values)} values")
    elif _differs(summary.get("mean"), values):
        mean = summary.get("mean")
        out.append(f"{printable(field, 120)}.mean is {'none' if mean is None else f'{mean:.6g}'}; {table} gives "
                   f"{math.fsum(values) / len(values):.6g} (n {len(values)})")


def _rows(table: bytes) -> list[dict[str, str]]:
    from faceedit_bench.report.tables import reference_condition

    try:
        rows = list(csv.DictReader(io.StringIO(table.decode("utf-8"))))
    except (UnicodeDecodeError, csv.Error) as exc:
        raise SubmissionRejected(f"sessions.csv is not a readable UTF-8 CSV table ({str(exc)[:200]}).") from None
    reference = reference_condition(r.get("condition") or "" for r in rows)
    return [r for r in rows if (r.get("condition") or "baseline") == reference]


def _number(text: str | None) -> float | None:
    try:
        value = float(text) if text not in (None, "") else None
    except ValueError:
        return math.nan  # unreadable: differs from any stated mean
    return value


def from_sessions(record: Mapping[str, Any], table: bytes) -> list[str]:
    """Each metric's n and mean, overall and per group, against sessions.csv (every session it wrote: the
    excluded ones hold values only where a metric scores a failed edit)."""
    from faceedit_bench.report.tables import label_column

    out: list[str] = []
    rows = _rows(table)
    metrics = list(record["metrics"])
    for name, stated in record["metrics"].items():
        if not any(r.get(name) for r in rows):  # the table holds no value of it: nothing to recompute from
            continue
        values = [v for r in rows if (v := _number(r.get(name))) is not None]
        _check_mean(out, f"metrics.{name}", stated, values, SESSIONS_FILE)
        for attribute, labels in record["groups"].items():
            column = label_column(attribute, metrics)
            if not rows or column not in rows[0]:  # a label the table has no column for
                continue
            for label, group in labels.items():
                if name not in group["metrics"]:
                    continue
                values = [v for r in rows if r.get(column) == label and (v := _number(r.get(name))) is not None]
                _check_mean(out, f"groups.{attribute}.{label}.{name}", group["metrics"][name], values, SESSIONS_FILE)
    return out


def from_steps(record: Mapping[str, Any], steps_table: bytes, registered: Mapping[str, Any],
               has_sessions: bool) -> list[str]:
    """Edit steps by outcome and the FSS_k series against steps.csv; without sessions.csv, also the means of
    the embedder metrics this installation registers (computed from each included session's FSS_k)."""
    from faceedit_bench.analysis.session_metrics import SessionScores

    out: list[str] = []
    rows = list(step_rows(steps_table))
    outcomes = Counter(r["outcome"] for r in rows if r["k"] not in ("", "0") and r["outcome"])
    stated = {k: v for k, v in record["outcomes"]["steps"].items() if v}
    if dict(outcomes) != stated:
        out.append(f"outcomes.steps is {stated}; steps.csv counts {dict(sorted(outcomes.items()))}")
    fss: dict[tuple[str, str], dict[int, float]] = defaultdict(dict)
    for r in rows:
        if not r.get("session_excluded") and (v := _number(r.get("fss"))) is not None:
            fss[(r["face_id"], r["session_id"])][int(r["k"])] = v
    if not fss:  # a table without FSS values (made by hand for a test): nothing to recompute from
        return out
    points = {p["k"]: p for p in record["trajectory"].get("fss", [])}
    for k in sorted(set(points) | {k for s in fss.values() for k in s}):
        _check_mean(out, f"trajectory.fss[{k}]", points.get(k), [s[k] for s in fss.values() if k in s], "steps.csv")
    if not has_sessions:
        for name, m in record["metrics"].items():
            metric = registered.get(name)
            if getattr(metric, "requires", None) != frozenset({"embedder"}) or not hasattr(metric, "compute"):
                continue
            values = [v for s in fss.values() if sorted(s) == list(range(len(s)))
                      and (v := metric.compute(SessionScores(fss=tuple(s[k] for k in sorted(s))))) is not None]
            _check_mean(out, f"metrics.{name}", m, values, "steps.csv")
    return out


def inconsistencies(record: Mapping[str, Any], tables: Mapping[str, bytes],
                    registered: Mapping[str, Any]) -> list[str]:
    """Every figure of ``record`` that disagrees with itself or with the bundled tables (module docstring)."""
    out = outside_intervals(record)
    if SESSIONS_FILE in tables:
        out += from_sessions(record, tables[SESSIONS_FILE])
    if "steps.csv" in tables:
        out += from_steps(record, tables["steps.csv"], registered, SESSIONS_FILE in tables)
    return out
