"""Named leaderboard views, defined as data (docs/leaderboard_views.md), and their sections in one measurement's
table: a ranking by chosen values, one row per entry, ranked by the view's ``rank_by`` value in its stated
direction. The views are the registered report sections' (``ReportSection.views``) plus the core's own
(:data:`CORE_VIEWS`, none yet).

A value is found in a submission record by its :class:`~faceedit_bench.plugin.sections.ValueSpec`: a session
metric's summary (``record.metrics[name]``: mean, CI, n), or what the value's ``read`` finds in its section's
record part (``record[<section>]``), in the unit it is shown in.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from faceedit_bench.leaderboard.cells import (
    NOT_FAILED,
    Cell,
    Column,
    Plot,
    Row,
    Section,
    editor_cell,
    entry_labels,
    fmt_summary,
    is_ranked,
    is_reference,
    notes_cell,
    point,
    rank_cells,
    rank_entries,
    sort_value,
    status_cell,
)
from faceedit_bench.leaderboard.entries import Entry
from faceedit_bench.plugin.manager import sections_in_use
from faceedit_bench.plugin.sections import ReportSection, ValueSpec, ViewSpec
from faceedit_bench.report.measures import bounds_of

#: Views of the core's own quantities (the session metrics every protocol has); sections bring the others.
CORE_VIEWS: tuple[ViewSpec, ...] = ()


def view_specs(sections: Sequence[ReportSection] | None = None) -> tuple[ViewSpec, ...]:
    """The core's views, then each section's, in registration order (``sections``: default, those in use)."""
    return CORE_VIEWS + tuple(v for s in (sections_in_use() if sections is None else sections) for v in s.views)


def value_of(record: Mapping[str, Any], spec: ValueSpec) -> dict[str, Any] | None:
    """The value as a summary (``mean``, ``ci_low``, ``ci_high``, ``n``, maybe ``sub``) in the unit it is
    shown in, or None."""
    if spec.source == "metrics":
        s = (record.get("metrics") or {}).get(spec.name)
        return dict(s) if isinstance(s, Mapping) else None
    part = record.get(spec.source)
    if not isinstance(part, Mapping) or spec.read is None:
        return None
    found = spec.read(part)
    return dict(found) if isinstance(found, Mapping) else None


@dataclass(frozen=True)
class ValueInfo:
    spec: ValueSpec
    label: str
    unit: str
    higher_is_better: bool | None  # None: no registration or submission states it; shown, never ranked by
    description: str
    bounds: tuple[float, float] | None = None  # the range of its values as shown (percent: 0-100)


def _stated(entries: list[Entry], name: str) -> list[Mapping[str, Any]]:
    """What the submissions say about a quantity: their measures."""
    return [m for e in entries if isinstance(m := (e.record.get("measures") or {}).get(name), Mapping)]


def value_info(spec: ValueSpec, entries: list[Entry], registered: Mapping[str, Any]) -> ValueInfo:
    """How a column reads: the measure's label, unit, direction, description and bounds (the submissions'
    statement, else this installation's registration), with what the spec fixes for its column."""
    stated = _stated(entries, spec.name)
    reg = registered.get(spec.name)
    directions = {m["higher_is_better"] for m in stated if isinstance(m.get("higher_is_better"), bool)}
    if reg is not None and isinstance(getattr(reg, "higher_is_better", None), bool):
        hib: bool | None = reg.higher_is_better
    else:
        hib = directions.pop() if len(directions) == 1 else None
    first = stated[0] if stated else {}
    label = str(first.get("label") or getattr(reg, "label", "") or spec.name)
    unit = spec.unit if spec.unit is not None else str(first.get("unit") or getattr(reg, "unit", "") or "")
    if spec.bounds is not None:
        bounds: tuple[float, float] | None = spec.bounds
    else:
        bounds = bounds_of(spec.name, {spec.name: first}) or bounds_of(spec.name, {spec.name: {
            "bounds": getattr(reg, "bounds", None)}})
    if spec.higher_is_better is not None:  # fixed by the view (a gap between groups: lower is better)
        return ValueInfo(spec, spec.label.format(label=label) if spec.label else label, unit, spec.higher_is_better,
                         spec.description.format(label=label), bounds)
    about = {True: " Higher is better.", False: " Lower is better.", None: " No submission states its direction."}
    description = (spec.description.format(label=label) if spec.description
                   else str(first.get("description") or getattr(reg, "description", "") or "")) + about[hib]
    return ValueInfo(spec, spec.label.format(label=label) if spec.label else label, unit, hib, description.strip(),
                     bounds)


def _has_any(entries: list[Entry], spec: ViewSpec) -> bool:
    return any(value_of(e.record, v) is not None for e in entries for v in spec.values)


def spec_section(spec: ViewSpec, entries: list[Entry], registered: Mapping[str, Any]) -> Section | None:
    """The view's section over one measurement's entries, or None when no entry has any of its values."""
    if not _has_any(entries, spec):
        return None
    infos = [value_info(v, entries, registered) for v in spec.values]
    ranker = next(i for i in infos if i.spec.column == spec.rank_by)

    def mean(e: Entry) -> float | None:
        return (value_of(e.record, ranker.spec) or {}).get("mean")

    ordered, ranks = rank_entries(entries, mean if ranker.higher_is_better is not None else (lambda e: None),
                                  bool(ranker.higher_is_better))
    columns = [Column("rank", "num"), Column("editor", "text"), Column("status", "text")]
    columns += [Column(f"{i.label} ({i.unit})" if i.unit else i.label, "num",
                       "" if i.higher_is_better is None else str(i.higher_is_better).lower(), i.description)
                for i in infos]
    columns += [Column("sessions", "num", help="sessions included / planned"),
                Column("refused", "num", help="edit steps the provider refused (hard refusals)"),
                Column("failed", "num", help="edit steps that failed (provider errors, unsupported requests ...)"),
                Column("notes", "text")]
    rows = []
    rank_of = rank_cells(ordered, ranks)
    for e in ordered:
        cells = [rank_of[e.id], editor_cell(e), status_cell(e)]
        for i in infos:
            s = value_of(e.record, i.spec)
            text, sub = fmt_summary(s)
            if s is not None and s.get("sub"):
                sub = s["sub"]
            cells.append(Cell(text if s is not None else "n/a", sort_value((s or {}).get("mean")),
                              sub if s is not None else "not in this run", cls="num"))
        o = e.record["outcomes"]
        sessions, steps = o["sessions"], o["steps"]
        failed = sum(n for outcome, n in steps.items() if outcome not in NOT_FAILED)
        cells += [Cell(f"{sessions['included']}/{sessions['planned']}", str(sessions["included"]), cls="num"),
                  Cell(str(steps.get("refused", 0)), str(steps.get("refused", 0)), cls="num"),
                  Cell(str(failed), str(failed), cls="num"), notes_cell(e)]
        rows.append(Row(e.id, e.status, cells, is_reference(e)))
    plots = [Plot(f"{i.label}", i.unit, i.higher_is_better, [""],
                  [(label, [point(value_of(e.record, i.spec))]) for label, e in zip(entry_labels(ordered), ordered)],
                  i.bounds) for i in infos]
    note = spec.description
    if ranker.higher_is_better is None:
        note += f" Not ranked: no submission states whether a higher {ranker.label} is better."
    return Section(spec.key, spec.title, columns, rows, plots, rank_by=ranker.label, note=note,
                   ranked=is_ranked(ranks))


def named_view_sections(entries: list[Entry], registered: Mapping[str, Any],
                  specs: tuple[ViewSpec, ...] | None = None) -> list[Section]:
    """The named views' sections (``specs``: default, the registered sections' and the core's)."""
    return [s for spec in (view_specs() if specs is None else specs)
            if (s := spec_section(spec, entries, registered)) is not None]
