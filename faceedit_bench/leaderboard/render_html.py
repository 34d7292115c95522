"""The leaderboard page: one static HTML file, deterministic (same inputs, same bytes).

Jinja2 with autoescape renders every string; the only markup not escaped is this package's
own script, style and SVG forest plots (whose labels :mod:`faceedit_bench.report.forest_svg` escapes,
the same forest ``compare --html`` draws). A Content Security
Policy allows exactly that script and style by hash, so even markup that got past escaping
could not execute.
"""

from __future__ import annotations

import base64
import functools
import hashlib
import re
from importlib import resources
from typing import Any

from markupsafe import Markup

from faceedit_bench.leaderboard.cells import ALL, Cell, Column, Plot, Row, Section, View
from faceedit_bench.leaderboard.entries import Rejected
from faceedit_bench.report.forest_svg import Forest
from faceedit_bench.report.forest_svg import forest_svg as draw
from faceedit_bench.report.templates import stylesheet


def forest_svg(plot: Plot) -> Markup:
    """A view's :class:`~faceedit_bench.leaderboard.cells.Plot` as an SVG forest."""
    return draw(Forest(plot.title, plot.unit, plot.higher_is_better, plot.series, plot.rows, plot.bounds))


@functools.cache
def _asset(name: str) -> str:
    return (resources.files("faceedit_bench.leaderboard") / "templates" / name).read_text(encoding="utf-8")


@functools.cache
def _environment() -> Any:
    from jinja2 import Environment, PackageLoader, StrictUndefined

    return Environment(loader=PackageLoader("faceedit_bench.leaderboard", "templates"), autoescape=True,
                       undefined=StrictUndefined, trim_blocks=True, lstrip_blocks=True, keep_trailing_newline=True)


def view_anchor(view_key: str, contrast: str) -> str:
    """The URL fragment (and element id) of one view: ``#<measurement key>-<contrast>``, stable across builds
    (the key is the measurement's fingerprint), so a link to a view keeps pointing at it."""
    return f"v-{view_key[:12]}-" + re.sub(r"[^a-z0-9_]+", "_", contrast.lower())


#: The width a table may take (style.css: the body's 1200 px less its padding, and some to spare), and what a
#: character of the tables' 0.8rem text and a cell's padding take: so that a wide table is split, not scrolled.
TABLE_PX, CHAR_PX, CELL_PX = 1080, 7.5, 14
#: The columns every part of a split table repeats: which entry a row is.
KEY_COLUMNS = ("rank", "editor", "status")
#: A text column's width: it wraps, at most at its longest word (up to this many characters).
TEXT_CHARS = 16


def _column_px(column: Column, cells: list[Cell]) -> float:
    """About how wide a column is drawn: a number whole on its line (``td.num`` does not wrap), text wrapped at its
    longest word; a header wraps at spaces."""
    words = [len(w) for c in cells for w in (c.text.split() if column.kind != "num" else [c.text])]
    words += [min(len(w), TEXT_CHARS) for c in cells for w in c.sub.split()]
    if column.kind != "num":
        words = [min(w, TEXT_CHARS) for w in words]
    words += [len(w) for w in column.title.split()]
    return max(words, default=1) * CHAR_PX + CELL_PX


def table_parts(section: Section) -> list[dict[str, Any]]:
    """The section's table as parts that each fit :data:`TABLE_PX`: the key columns (rank, editor, status) in
    every part, the others in order, as many to a part as fit. One part where the whole table fits."""
    columns = section.columns
    keys = 0
    while keys < len(columns) and columns[keys].title in KEY_COLUMNS:
        keys += 1
    widths = [_column_px(c, [r.cells[i] for r in section.rows]) for i, c in enumerate(columns)]
    budget = TABLE_PX - sum(widths[:keys])
    chunks: list[list[int]] = []
    for i in range(keys, len(columns)):
        if chunks and sum(widths[j] for j in chunks[-1]) + widths[i] <= budget:
            chunks[-1].append(i)
        else:
            chunks.append([i])
    return [{"columns": [columns[i] for i in [*range(keys), *chunk]],
             "rows": [_part_row(r, [*range(keys), *chunk]) for r in section.rows]} for chunk in chunks or [[]]]


def _part_row(row: Row, indices: list[int]) -> Row:
    return Row(row.id, row.status, [row.cells[i] for i in indices], row.reference)


def _csp_hash(text: str) -> str:
    return "'sha256-" + base64.b64encode(hashlib.sha256(text.encode("utf-8")).digest()).decode() + "'"


def render_page(views: list[View], rejected: list[Rejected], *, n_submissions: int, n_runs: int) -> str:
    js, css = _asset("page.js"), stylesheet() + _asset("page.css")  # the shared look, then the board's own rules
    csp = (f"default-src 'none'; script-src {_csp_hash(js)}; style-src {_csp_hash(css)}; img-src data:; "
           "base-uri 'none'; form-action 'none'")
    titles = {s.contrast: s.title for v in views for s in v.sections}
    # all sessions, then the demographic contrasts, then the named views and the tests (sections with a note)
    named = {s.contrast for v in views for s in v.sections if s.note}
    contrasts = [(c, "all sessions" if c == ALL else titles[c]) for c in
                 [ALL] + sorted(set(titles) - named - {ALL}) + sorted(named - {ALL})]
    context_views = [
        {"key": v.key, "label": v.label, "details": v.details, "rank_by": v.rank_by, "notes": v.notes,
         "sections": [{"contrast": s.contrast, "title": s.title,
                       "anchor": view_anchor(v.key, s.contrast), "tables": s.tables, "note": s.note,
                       "rank_by": s.rank_by, "ranked": s.ranked, "parts": table_parts(s),
                       "plots": [forest_svg(p) for p in s.plots]}
                      for s in v.sections]}
        for v in views
    ]
    return _environment().get_template("page.html.j2").render(
        csp=Markup(csp), css=Markup(css), js=Markup(js), views=context_views, contrasts=contrasts, rejected=rejected,
        n_submissions=n_submissions, n_runs=n_runs,
        any_judge=any(dict(v.details).get("judge", "none") != "none" for v in views),
        statuses={r.status for v in views for s in v.sections for r in s.rows},
        any_reference=any(r.reference for v in views for s in v.sections for r in s.rows),
    )
