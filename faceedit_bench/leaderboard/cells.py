"""The leaderboard's cells, tables and views as plain data (the renderers' input), and the cells every
table shares: an entry's rank, editor, status and notes, and a summary as ``mean [lo, hi]``."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from faceedit_bench.analysis.baselines import is_reference_editor
from faceedit_bench.leaderboard.entries import Entry
from faceedit_bench.report.versions import named_version


def is_reference(e: Entry) -> bool:
    """A baseline (the identity editor): shown as a reference row above the ranked ones, never ranked."""
    return is_reference_editor(e.record["editor"]["name"])


@dataclass(frozen=True)
class MetricInfo:
    name: str
    unit: str
    higher_is_better: bool | None  # None: no better direction (its ideal is the middle): shown, never ranked
    description: str
    label: str = ""
    bounds: tuple[float, float] | None = None  # the range its values can take (measures): a plot's axis


def first_directed(metrics: list[MetricInfo]) -> MetricInfo | None:
    """The default metric to rank by: the first with a better direction (a middle-ideal score ranks nobody)."""
    return next((m for m in metrics if m.higher_is_better is not None), None)


def hib_text(higher_is_better: bool | None) -> str:
    """A column's sort hint: "true"/"false", "" for a metric without a better direction."""
    return "" if higher_is_better is None else str(bool(higher_is_better)).lower()


def direction_sentence(higher_is_better: bool | None) -> str:
    sentences = {True: "Higher is better.", False: "Lower is better.", None: "Neither direction is better."}
    return sentences[higher_is_better]


@dataclass
class Cell:
    text: str
    value: str = ""  # sort key: a number as text, or "" (always sorted last)
    sub: str = ""  # a second, smaller line
    cls: str = ""
    href: str | None = None  # https links only


@dataclass
class Column:
    title: str
    kind: str  # "num" or "text"
    hib: str = ""  # "true"/"false" for metric columns: the first click sorts best first
    help: str = ""


@dataclass
class Row:
    id: str
    status: str
    cells: list[Cell]
    reference: bool = False  # a baseline row (no rank; shown above the ranked rows)


@dataclass
class Plot:
    title: str
    unit: str
    higher_is_better: bool | None  # None: no better direction
    series: list[str]  # group labels; [""] for one series
    rows: list[tuple[str, list[tuple[float | None, float | None, float | None]]]]  # label, per series (mean, lo, hi)
    bounds: tuple[float, float] | None = None  # the axis is at least this range; else it includes 0


@dataclass
class Table:
    """A further table of a section (e.g. the pooled overediting patterns), shown below its main table."""

    title: str
    columns: list[Column]
    rows: list[Row]
    note: str = ""


@dataclass
class Section:
    contrast: str  # ALL or a demographic attribute
    title: str
    columns: list[Column]
    rows: list[Row]
    plots: list[Plot] = field(default_factory=list)
    tables: list[Table] = field(default_factory=list)
    rank_by: str | None = None  # a section ranked otherwise than its view (the named views)
    note: str = ""  # what the section shows, above its table


@dataclass
class View:
    key: str
    label: str
    details: list[tuple[str, str]]
    metrics: list[MetricInfo]
    rank_by: str | None
    sections: list[Section]
    notes: list[str]


def fmt(value: Any, digits: int = 3) -> str:
    if value is None:
        return "n/a"
    return f"{float(value):.{digits}f}"


def sort_value(value: Any) -> str:
    return "" if value is None else repr(float(value))


def fmt_summary(s: Mapping[str, Any] | None) -> tuple[str, str]:
    """(``mean [lo, hi]``, ``n=..``)."""
    if not s or s.get("mean") is None:
        return "n/a", f"n={s.get('n', 0)}" if s else ""
    ci = f" [{fmt(s['ci_low'])}, {fmt(s['ci_high'])}]" if s.get("ci_low") is not None else " (no CI)"
    return f"{fmt(s['mean'])}{ci}", f"n={s.get('n', 0)}"



def rank_cell(e: Entry, ranks: Mapping[str, int | None]) -> Cell:
    if is_reference(e):
        return Cell("ref", "", cls="reference")
    rank = ranks.get(e.id)
    return Cell(str(rank) if rank is not None else "–", "" if rank is None else str(rank))


def editor_cell(e: Entry) -> Cell:
    editor = e.record["editor"]
    sub = e.id + (f" · by {e.record['submitter']}" if e.record.get("submitter") else "")
    if is_reference(e):
        sub = "reference: no edit · " + sub
    return Cell(named_version(editor["name"], editor["version"]), editor["name"].lower(), sub)


def status_cell(e: Entry) -> Cell:
    return Cell(e.status, e.status, e.status_note, cls=f"status {e.status}")


def notes_cell(e: Entry) -> Cell:
    url = e.record.get("url")
    href = url if isinstance(url, str) and url.startswith("https://") else None
    return Cell(e.record.get("notes") or "", (e.record.get("notes") or "").lower(), url or "", cls="notes", href=href)


def entry_labels(entries: list[Entry]) -> list[str]:
    """A plot row's label per entry: the editor and its model version, the reference marked; the submission id
    added only where two rows would read alike (two runs of one editor)."""
    names = [("[reference] " if is_reference(e) else "") + named_version(e.record["editor"]["name"],
                                                                         e.record["editor"]["version"])
             for e in entries]
    return [f"{name} · {e.id}" if names.count(name) > 1 else name for name, e in zip(names, entries)]


def point(s: Mapping[str, Any] | None) -> tuple[float | None, float | None, float | None]:
    if not s:
        return (None, None, None)
    return (s.get("mean"), s.get("ci_low"), s.get("ci_high"))
