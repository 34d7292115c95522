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

from faceedit_bench.leaderboard.cells import ALL, Plot, View
from faceedit_bench.leaderboard.entries import Rejected
from faceedit_bench.report.forest_svg import Forest
from faceedit_bench.report.forest_svg import forest_svg as draw


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


def _csp_hash(text: str) -> str:
    return "'sha256-" + base64.b64encode(hashlib.sha256(text.encode("utf-8")).digest()).decode() + "'"


def render_page(views: list[View], rejected: list[Rejected], *, n_submissions: int, n_runs: int) -> str:
    js, css = _asset("page.js"), _asset("page.css")
    csp = (f"default-src 'none'; script-src {_csp_hash(js)}; style-src {_csp_hash(css)}; img-src data:; "
           "base-uri 'none'; form-action 'none'")
    titles = {s.contrast: s.title for v in views for s in v.sections}
    # all sessions, then the demographic contrasts, then the named views and the tests (sections with a note)
    named = {s.contrast for v in views for s in v.sections if s.note}
    contrasts = [(c, "all sessions" if c == ALL else titles[c]) for c in
                 [ALL] + sorted(set(titles) - named - {ALL}) + sorted(named - {ALL})]
    context_views = [
        {"key": v.key, "label": v.label, "details": v.details, "rank_by": v.rank_by, "notes": v.notes,
         "sections": [{"contrast": s.contrast, "title": s.title, "columns": s.columns, "rows": s.rows,
                       "anchor": view_anchor(v.key, s.contrast), "tables": s.tables, "note": s.note,
                       "rank_by": s.rank_by, "plots": [forest_svg(p) for p in s.plots]} for s in v.sections]}
        for v in views
    ]
    return _environment().get_template("page.html.j2").render(
        csp=Markup(csp), css=Markup(css), js=Markup(js), views=context_views, contrasts=contrasts, rejected=rejected,
        n_submissions=n_submissions, n_runs=n_runs,
        any_judge=any(dict(v.details).get("judge", "none") != "none" for v in views),
    )
