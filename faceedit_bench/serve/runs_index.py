"""Every run of a workspace, one summary row each, for the app's runs table and ``faceedit-bench runs``.

A row is read from the run folder's ``report.json`` (a finished run) or, for a folder without one, from its
files' times: a run still writing its tables is *running*, one whose files stopped changing was *killed*. A
finished run is *preliminary* when its report says so (too few identities) and *partial* when it stopped early
(its budget). Rows are kept by the report's modification time, so a table of many runs parses each report
once; the cache holds only the small rows.
"""

from __future__ import annotations

import json
import math
import textwrap
import threading
import time
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from faceedit_bench.report.compared_runs import editor_label
from faceedit_bench.report.measures import label_of, report_measures
from faceedit_bench.report.preliminary import is_preliminary
from faceedit_bench.report.templates import fmt_ci

#: A folder without report.json whose newest file is younger than this is a run still going.
RUNNING_WINDOW_S = 120.0
#: At most this many headline metrics per row (the protocol's own figures first).
HEADLINE_METRICS = 3
STATUSES = ("finished", "preliminary", "partial", "running", "killed")


@dataclass(frozen=True)
class Figure:
    name: str
    label: str
    mean: float | None
    text: str  # mean [low, high], or why there is no interval


@dataclass(frozen=True)
class RunRow:
    folder: str  # the folder's name under runs/: the run's address in the app
    name: str
    editor: str
    judge: str
    testset: str
    dataset: str
    date: str  # ISO 8601, UTC
    status: str
    faces: int | None  # the faces that took part (seen, less those excluded)
    identities: int | None
    sessions: int | None = None  # included sessions (face x session x condition)
    anchors: str = ""  # "2 of 3 passed": the judge's sanity anchors at the run's start; "" without a judge
    figures: tuple[Figure, ...] = field(default=())

    def figure_text(self, name: str) -> str:
        return next((f.text for f in self.figures if f.name == name), "")

    def cell(self, column: str) -> Any:
        """A sortable value of one column (a metric column by its name)."""
        if column in SORT_COLUMNS:
            return getattr(self, column)
        return next((f.mean for f in self.figures if f.name == column), None)


SORT_COLUMNS = ("name", "editor", "judge", "testset", "dataset", "date", "status", "faces", "identities", "sessions")


def runs_dir(workspace: Path) -> Path:
    return Path(workspace) / "runs"


class RunsIndex:
    """The rows of one workspace's runs, re-read only when a report changes."""

    def __init__(self, workspace: Path) -> None:
        self.workspace = Path(workspace)
        self._rows: dict[str, tuple[float, RunRow]] = {}
        self._lock = threading.Lock()

    def rows(self) -> list[RunRow]:
        folders = _folders(runs_dir(self.workspace))
        out = []
        for folder in folders:
            report = folder / "report.json"
            try:
                mtime = report.stat().st_mtime
            except OSError:
                out.append(unfinished_row(folder))
                continue
            with self._lock:
                kept = self._rows.get(folder.name)
            if kept is None or kept[0] != mtime:
                kept = (mtime, finished_row(folder))
                with self._lock:
                    self._rows[folder.name] = kept
            out.append(kept[1])
        with self._lock:  # forget deleted runs
            for gone in set(self._rows) - {f.name for f in folders}:
                self._rows.pop(gone, None)
        return out


def _folders(root: Path) -> list[Path]:
    try:
        return sorted(p for p in root.iterdir() if p.is_dir() and not p.name.startswith("."))
    except OSError:
        return []


def read_report(folder: Path) -> dict[str, Any] | None:
    try:
        report = json.loads((folder / "report.json").read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError):
        return None
    return report if isinstance(report, dict) else None


def finished_row(folder: Path) -> RunRow:
    report = read_report(folder)
    if report is None:
        return unfinished_row(folder, why="killed")
    run = report.get("run") or {}
    components = report.get("components") or {}
    judge = components.get("judge") or {}
    status = ("partial" if run.get("complete") is False else "preliminary" if is_preliminary(report)
              else "finished")
    sample = report.get("sample_size") or {}
    counts = report.get("counts") or {}
    faces = (counts.get("faces") or {})
    excluded = sum(v for v in (faces.get("excluded") or {}).values() if isinstance(v, int))
    seen = _int(faces.get("seen"))
    return RunRow(folder=folder.name, name=str(run.get("name") or folder.name), editor=editor_label(report),
                  judge=str(judge.get("name") or "none"), testset=str((report.get("testset") or {}).get("name")),
                  dataset=str((components.get("dataset") or {}).get("name")), date=str(run.get("created_at") or ""),
                  status=status, faces=None if seen is None else seen - excluded,
                  identities=_int(sample.get("identities")),
                  sessions=_int((counts.get("sessions") or {}).get("included", sample.get("sessions"))),
                  figures=tuple(headline_figures(report)), anchors=anchor_status(report))


def anchor_status(report: Mapping[str, Any]) -> str:
    checked = [a for a in ((report.get("judge_reliability") or {}).get("anchors") or []) if isinstance(a, Mapping)]
    return f"{sum(bool(a.get('passed')) for a in checked)} of {len(checked)} passed" if checked else ""


def unfinished_row(folder: Path, why: str | None = None) -> RunRow:
    newest = max((p.stat().st_mtime for p in _files(folder)), default=folder.stat().st_mtime)
    status = why or ("running" if time.time() - newest < RUNNING_WINDOW_S else "killed")
    name, _, _ = folder.name.rpartition("-")
    return RunRow(folder=folder.name, name=name or folder.name, editor="?", judge="?", testset="?", dataset="?",
                  date=time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(folder.stat().st_mtime)), status=status,
                  faces=None, identities=None)


def _files(folder: Path) -> Iterable[Path]:
    try:
        return [p for p in folder.iterdir() if p.is_file()]
    except OSError:
        return []


def headline_figures(report: Mapping[str, Any], *, everything: bool = False) -> list[Figure]:
    """The run's own session metrics, each with its interval: the first :data:`HEADLINE_METRICS` of them, or
    ``everything`` (then the image metrics too, after them)."""
    measures = report_measures(report)
    metrics = [(n, m) for n, m in (report.get("metrics") or {}).items() if isinstance(m, Mapping)]
    metrics.sort(key=lambda item: "image_metrics" in (item[1].get("requires") or ()))
    if not everything:
        metrics = [(n, m) for n, m in metrics if "image_metrics" not in (m.get("requires") or ())][:HEADLINE_METRICS]
    return [Figure(n, label_of(n, measures), _float(m.get("mean")), fmt_ci(m)) for n, m in metrics]


def _int(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def _float(value: Any) -> float | None:
    return float(value) if isinstance(value, (int, float)) and math.isfinite(value) else None


#: The runs table's judge-anchor filter: the anchors are asked once per run (of its first face), so their status
#: is the run's, shared by all its sessions.
ANCHOR_FILTERS = ("failed", "passed", "no judge")


def anchor_filter(row: RunRow) -> str:
    """The row's :data:`ANCHOR_FILTERS` value."""
    if not row.anchors:
        return "no judge"
    passed, _, rest = row.anchors.partition(" of ")
    return "passed" if passed == rest.split()[0] else "failed"


def select(rows: list[RunRow], *, q: str = "", status: str = "", anchors: str = "", sort: str = "date",
           descending: bool = True) -> list[RunRow]:
    """The rows matching ``q`` (any words of name, editor, judge, test set, dataset), ``status`` and ``anchors``
    (one of :data:`ANCHOR_FILTERS`), sorted by ``sort`` (a column or a metric name); rows without a value sort
    last."""
    words = q.lower().split()
    if words:
        rows = [r for r in rows if all(w in f"{r.name} {r.editor} {r.judge} {r.testset} {r.dataset}".lower()
                                       for w in words)]
    if status:
        rows = [r for r in rows if r.status == status]
    if anchors:
        rows = [r for r in rows if anchor_filter(r) == anchors]
    present = [r for r in rows if r.cell(sort) is not None]
    absent = [r for r in rows if r.cell(sort) is None]
    present.sort(key=lambda r: r.cell(sort), reverse=descending)
    return present + absent


def metric_columns(rows: Iterable[RunRow]) -> list[tuple[str, str]]:
    """(name, label) of every headline metric any row has, in first-seen order."""
    seen: dict[str, str] = {}
    for row in rows:
        for f in row.figures:
            seen.setdefault(f.name, f.label)
    return list(seen.items())


def format_runs_table(rows: list[RunRow], width: int = 100) -> str:
    """The runs for the console, within ``width`` columns: per run its folder (what other commands take), status
    and date, then what it ran, then its headline metrics with their intervals."""
    if not rows:
        return "no runs in this workspace yet"
    blocks = []
    for r in rows:
        what = (f"{r.editor} · test set {r.testset} · dataset {r.dataset} · judge {r.judge}"
                f"{f' (anchors {r.anchors})' if r.anchors else ''} · {_n(r.faces)} faces, "
                f"{_n(r.identities)} identities")
        figures = "; ".join(f"{f.label} {f.text}" for f in r.figures)
        lines = [line for text in (what, figures) for line in textwrap.wrap(text, width - 4)]
        blocks.append("\n".join([f"{r.folder}  {r.status}  {r.date[:16].replace('T', ' ')}"[:width],
                                  *("    " + line for line in lines)]))
    return "\n".join(blocks)


def _n(value: int | None) -> str:
    return "-" if value is None else str(value)
