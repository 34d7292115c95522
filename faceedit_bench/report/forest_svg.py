"""Forest plots (mean and confidence interval per row) as inline SVG, for the leaderboard and ``compare --html``.

Written by hand rather than with a plotting library: the pages must be byte-for-byte reproducible and
script-free, and every label (editor names come from strangers) is escaped here. Colours are SVG attributes,
never ``style``, so a page's Content Security Policy needs no inline-style exception.

Honest axes: a metric with a declared range (``bounds``: SC 0-100, FSS 0-1, a 1-5 judge score) is drawn on its
whole range, and any other on a range that includes 0 (the no-edit baseline's Drop_FSS), widened only to show
a value outside it; so 8.5 against 9 never looks like a cliff, and no axis is cut. The axis range is on the ``<svg>`` as
``data-axis-low`` / ``data-axis-high``. Row labels are never cut: a long one wraps over lines.
"""

from __future__ import annotations

import math
import textwrap
from collections.abc import Sequence
from dataclasses import dataclass

from markupsafe import Markup, escape

WIDTH = 880
RIGHT = 24
PAD = 10  # between the axis' ends and its range: a dot or whisker at the end stays inside the axis
TOP = 28
LINE = 13  # one line of a row label
ROW = 22  # a row of one line and one series
SERIES_GAP = 6
PALETTE = ("#1f5fa8", "#c2410c", "#15803d", "#7e22ce", "#a16207", "#0e7490", "#be123c", "#4d7c0f")
#: Label column: characters per line, the width of a character of 11 px text (generous: wide letters, another
#: font), and the narrowest column.
LABEL_CHARS, CHAR_PX, MIN_LABEL_PX = 52, 7.0, 120

Point = tuple[float | None, float | None, float | None]  # mean, ci_low, ci_high


@dataclass
class Forest:
    title: str
    unit: str
    higher_is_better: bool | None
    series: list[str]  # group labels; [""] for one series
    rows: list[tuple[str, list[Point]]]  # label, one point per series
    bounds: tuple[float, float] | None = None  # the metric's declared range, drawn whole


def _n(x: float) -> str:
    return f"{x:.1f}"


def _finite(values: Sequence[float | None]) -> list[float]:
    return [float(v) for v in values if v is not None and math.isfinite(v)]


def axis_range(plot: Forest) -> tuple[float, float]:
    """The declared range, else a range through 0; widened to every value shown."""
    data = _finite([v for _, points in plot.rows for p in points for v in p])
    low, high = plot.bounds if plot.bounds is not None else (0.0, 0.0)
    low, high = min([low, *data]), max([high, *data])
    if high - low < 1e-12:
        high = low + 1.0  # every value 0: a unit axis, not a range of width zero
    return low, high


def nice_ticks(low: float, high: float, count: int = 5) -> list[float]:
    span = high - low
    step = 10 ** math.floor(math.log10(span / count))
    for factor in (1, 2, 5, 10):
        if span / (step * factor) <= count:
            step *= factor
            break
    ticks, t = [], math.ceil(low / step - 1e-9) * step
    while t <= high + step * 1e-9:
        ticks.append(round(t, 12))
        t += step
    return ticks


def _label_lines(label: str, chars: int) -> list[str]:
    return textwrap.wrap(label, chars, break_long_words=True, break_on_hyphens=False) or [""]


def _legend(series: Sequence[str], left: int) -> tuple[list[tuple[float, int, str]], int]:
    """(x, line, label) of each series' key, wrapped onto more lines where the width ends; and its height."""
    if len(series) < 2:
        return [], 0
    placed, lx, line = [], float(left), 0
    for label in series:
        width = 20 + 7 * len(label)
        if lx > left and lx + width > WIDTH - RIGHT:
            lx, line = float(left), line + 1
        placed.append((lx, line, label))
        lx += width
    return placed, 18 * (line + 1)


def forest_svg(plot: Forest) -> Markup:
    """One row per label; per series a dot at the mean and a bar over the CI."""
    low, high = axis_range(plot)
    n_series = len(plot.series)
    longest = max((len(label) for label, _ in plot.rows), default=0)
    chars = min(longest, LABEL_CHARS)
    left = max(MIN_LABEL_PX, int(chars * CHAR_PX) + 16)
    lines = [_label_lines(label, chars) for label, _ in plot.rows]
    heights = [max(ROW + SERIES_GAP * (n_series - 1), LINE * len(ls) + 9) for ls in lines]
    legend, legend_h = _legend(plot.series, left)
    height = TOP + legend_h + sum(heights) + 30
    plot_w = WIDTH - left - RIGHT

    def x(v: float) -> str:
        return _n(left + PAD + (v - low) / (high - low) * (plot_w - 2 * PAD))

    direction = {True: "higher is better", False: "lower is better"}.get(plot.higher_is_better,
                                                                         "direction not stated")
    unit = f" ({plot.unit})" if plot.unit else ""
    scale = ("its whole range" if plot.bounds is not None and (low, high) == tuple(plot.bounds)
             else f"axis {low:g} to {high:g}")
    title = f"{plot.title}{unit}, mean and CI per row; {direction}; {scale}"
    out = [f'<svg xmlns="http://www.w3.org/2000/svg" class="forest" width="{WIDTH}" height="{height}" '
           f'viewBox="0 0 {WIDTH} {height}" role="img" aria-label="{escape(title)}" '
           f'data-axis-low="{low:g}" data-axis-high="{high:g}">',
           f"<title>{escape(title)}</title>",
           f'<text x="{left}" y="16" font-size="13" font-weight="bold">{escape(plot.title)}{escape(unit)} '
           f"&#8212; {direction}</text>"]
    for i, (lx, line, label) in enumerate(legend):
        y = TOP + 18 * line
        out.append(f'<circle cx="{_n(lx + 5)}" cy="{y + 4}" r="4" fill="{PALETTE[i % len(PALETTE)]}"/>'
                   f'<text class="series" x="{_n(lx + 13)}" y="{y + 8}" font-size="11">{escape(label)}</text>')
    base = TOP + legend_h
    axis_y = base + sum(heights) + 4
    for t in nice_ticks(low, high):
        out.append(f'<line x1="{x(t)}" y1="{base}" x2="{x(t)}" y2="{_n(axis_y)}" stroke="#e5e7eb"/>'
                   f'<text x="{x(t)}" y="{_n(axis_y + 14)}" font-size="10" text-anchor="middle">{t:g}</text>')
    out.append(f'<line class="axis" x1="{left}" y1="{_n(axis_y)}" x2="{left + plot_w}" y2="{_n(axis_y)}" '
               'stroke="#6b7280"/>')
    y_top = base
    for (label, points), label_lines, row_h in zip(plot.rows, lines, heights):
        y0 = y_top + row_h / 2
        first = y0 - (len(label_lines) - 1) * LINE / 2 + 4
        spans = "".join(f'<tspan x="{left - 8}" y="{_n(first + i * LINE)}">{escape(line)}</tspan>'
                        for i, line in enumerate(label_lines))
        out.append(f'<g class="row" data-label="{escape(label)}">'
                   f'<text class="label" font-size="11" text-anchor="end">{spans}</text>')
        offset = -(n_series - 1) * SERIES_GAP / 2
        for i, (mean, lo, hi) in enumerate(points):
            y = _n(y0 + offset + i * SERIES_GAP)
            colour = PALETTE[i % len(PALETTE)]
            if lo is not None and hi is not None and math.isfinite(lo) and math.isfinite(hi):
                out.append(f'<line class="ci" x1="{x(lo)}" y1="{y}" x2="{x(hi)}" y2="{y}" stroke="{colour}" '
                           'stroke-width="2"/>')
            if mean is not None and math.isfinite(mean):
                out.append(f'<circle class="mean" cx="{x(mean)}" cy="{y}" r="4" fill="{colour}"/>')
        out.append("</g>")
        y_top += row_h
    out.append("</svg>")
    return Markup("".join(out))
