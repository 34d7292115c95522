"""The leaderboard's forest plots: its :class:`~faceedit_bench.leaderboard.cells.Plot` drawn by the SVG forest
that ``compare --html`` draws too (:mod:`faceedit_bench.report.forest_svg`)."""

from __future__ import annotations

from markupsafe import Markup

from faceedit_bench.leaderboard.cells import Plot
from faceedit_bench.report.forest_svg import Forest
from faceedit_bench.report.forest_svg import forest_svg as draw


def forest_svg(plot: Plot) -> Markup:
    return draw(Forest(plot.title, plot.unit, plot.higher_is_better, plot.series, plot.rows, plot.bounds))
