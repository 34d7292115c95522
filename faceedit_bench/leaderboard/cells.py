"""The leaderboard's cells, tables and views as plain data (the renderers' input), and what every table shares:
the metrics of a view with their directions, the ranking of entries, and the cells for an entry's rank,
editor, status and notes, and a summary as ``mean [lo, hi]``."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlsplit

from faceedit_bench.analysis.baselines import is_reference_editor
from faceedit_bench.leaderboard.entries import Entry
from faceedit_bench.report.measures import bounds_of
from faceedit_bench.report.versions import named_version

#: Step outcomes that are not failed attempts: a refusal and an answer without an image are the provider's
#: answers (each has its own column), a skipped step was never attempted.
NOT_FAILED = frozenset({"ok", "refused", "no_image", "skipped"})
ALL = "all"


def metric_infos(entries: list[Entry], registered: Mapping[str, Any]) -> list[MetricInfo]:
    """The metrics of a view, in order of first appearance; direction from the registry when the
    metric is registered here, else from the records (which must agree, or the metric is left out).
    A direction of None (the registration's or every record's: the ideal is the middle) is kept: such
    a metric is shown and never ranked."""
    seen: dict[str, list[Mapping[str, Any]]] = {}
    for e in entries:
        for name, m in e.record["metrics"].items():
            seen.setdefault(name, []).append(m)
    out = []
    for name, stated in seen.items():
        reg = registered.get(name)
        directions = {m["higher_is_better"] if isinstance(m.get("higher_is_better"), bool) else None for m in stated}
        hib: bool | None
        if reg is not None:
            hib = reg.higher_is_better if isinstance(getattr(reg, "higher_is_better", None), bool) else None
        elif len(directions) == 1:
            hib = directions.pop()
        else:
            continue  # contradictory statements and no registration: no direction to rank by
        measures = [m for e in entries if isinstance(m := (e.record.get("measures") or {}).get(name), dict)]
        label = next((str(m["label"]) for m in measures if m.get("label")), name)
        bounds = next((b for m in measures if (b := bounds_of(name, {name: m})) is not None), None)
        out.append(MetricInfo(name, stated[0]["unit"], hib, stated[0]["description"], label, bounds))
    return out


def rank_entries(entries: list[Entry], mean: Callable[[Entry], float | None],
                 higher_is_better: bool | None) -> tuple[list[Entry], dict[str, int | None]]:
    """Competition ranking ("1, 1, 3") by ``mean(entry)`` in the given direction; entries without a
    value, and entries whose verification failed, are listed last without a rank; baselines first.
    Verified entries are ranked before unverified ones, whatever their means (:func:`rank_cells` says so)."""
    def value(e: Entry) -> float | None:  # no better direction: nobody is ranked
        return None if e.status == "failed" or is_reference(e) or higher_is_better is None else mean(e)

    sign = -1.0 if higher_is_better else 1.0
    ranked = sorted(entries, key=lambda e: (not is_reference(e), value(e) is None, e.status != "verified",
                                            sign * (value(e) or 0.0), e.id))
    ranks: dict[str, int | None] = {}
    previous, position, i = None, 0, 0
    for e in ranked:
        m = value(e)
        if m is None:
            ranks[e.id] = None
            continue
        i += 1
        if (e.status, m) != previous:
            position, previous = i, (e.status, m)
        ranks[e.id] = position
    return ranked, ranks


#: Beside an unverified entry's rank where a verified entry is ranked: why it is below verified entries with
#: worse means.
UNVERIFIED_RANK = "unverified: ranked after the verified entries"
#: Beside the one entry with a value where no other has one: a rank "1 of 1" would claim a comparison.
NOTHING_TO_RANK_AGAINST = "nothing to rank against"


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
    ranked: bool = True  # False: fewer than two entries have a value to rank by (:func:`is_ranked`)


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


def is_ranked(ranks: Mapping[str, int | None]) -> bool:
    """Whether a table's ranks rank anything: two entries or more have one."""
    return sum(r is not None for r in ranks.values()) >= 2


def unranked_cell(ranks: Mapping[str, int | None], key: str) -> Cell | None:
    """The rank cell of an entry ranking says nothing about: without a rank, or the only one with a value."""
    if ranks.get(key) is None:
        return Cell("–", "")
    return None if is_ranked(ranks) else Cell("–", "", NOTHING_TO_RANK_AGAINST)


def rank_cells(entries: list[Entry], ranks: Mapping[str, int | None]) -> dict[str, Cell]:
    """Each entry's rank cell, worded for what the table holds: an unverified entry's rank says it comes after
    the verified ones only where a verified entry is ranked, and a lone entry with a value gets no rank."""
    verified = any(ranks.get(e.id) is not None and e.status == "verified" for e in entries)
    cells = {}
    for e in entries:
        rank = ranks.get(e.id)
        if is_reference(e):
            cells[e.id] = Cell("ref", "", cls="reference")
        elif (unranked := unranked_cell(ranks, e.id)) is not None:
            cells[e.id] = unranked
        elif e.status != "verified":
            cells[e.id] = Cell(str(rank), str(rank), UNVERIFIED_RANK if verified else "", cls="rank unverified")
        else:
            cells[e.id] = Cell(str(rank), str(rank))
    return cells


def editor_cell(e: Entry) -> Cell:
    editor = e.record["editor"]
    sub = e.id + (f" · by {e.record['submitter']}" if e.record.get("submitter") else "")
    if is_reference(e):
        sub = "reference: no edit · " + sub
    sub += "".join(f" · {note}" for note in endpoint_notes(e.record))
    return Cell(named_version(editor["name"], editor["version"]), editor["name"].lower(), sub)


def endpoint_notes(record: Mapping[str, Any]) -> list[str]:
    """"editor via 127.0.0.1:8000, not the provider's public host" for each hosted component whose calls went
    to another endpoint (a local server, a proxy): its description carries ``base_url`` only then
    (:func:`faceedit_bench.execution.endpoints.endpoint_identity`). Only the host is shown."""
    out = []
    for kind in ("editor", "judge"):
        url = ((record.get(kind) or {}).get("description") or {}).get("base_url")
        if isinstance(url, str) and url:
            host = urlsplit(url).netloc.rpartition("@")[2] or url[:80]
            out.append(f"{kind} via {host}, not the provider's public host")
    return out


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
