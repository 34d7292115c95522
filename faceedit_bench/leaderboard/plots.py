"""Forest plots (mean and confidence interval per entry) as inline SVG.

Written by hand rather than with a plotting library: the page must be byte-for-byte
reproducible and script-free, and every label (editor names come from strangers) is
escaped here. Colours are SVG attributes, never ``style``, so the page's Content Security
Policy needs no inline-style exception.
"""

from __future__ import annotations

import math

from markupsafe import Markup, escape

from faceedit_bench.leaderboard.views import Plot

WIDTH = 760
LEFT = 300  # room for labels
RIGHT = 20
TOP = 28
ROW = 22
SERIES_GAP = 6
PALETTE = ("#1f5fa8", "#c2410c", "#15803d", "#7e22ce", "#a16207", "#0e7490", "#be123c", "#4d7c0f")
MAX_LABEL = 48


def _n(x: float) -> str:
    return f"{x:.1f}"


def _nice_ticks(low: float, high: float, count: int = 5) -> list[float]:
    span = high - low
    step = 10 ** math.floor(math.log10(span / count))
    for factor in (1, 2, 5, 10):
        if span / (step * factor) <= count:
            step *= factor
            break
    first = math.ceil(low / step) * step
    ticks, t = [], first
    while t <= high + step * 1e-9:
        ticks.append(round(t, 12))
        t += step
    return ticks


def _range(plot: Plot) -> tuple[float, float]:
    values = [v for _, points in plot.rows for p in points for v in p if v is not None and math.isfinite(v)]
    if not values:
        return 0.0, 1.0
    low, high = min(values), max(values)
    pad = (high - low) * 0.05 or max(abs(high) * 0.05, 0.5)
    return low - pad, high + pad


def forest_svg(plot: Plot) -> Markup:
    """One row per entry; per series (group label) a dot at the mean and a bar over the CI."""
    low, high = _range(plot)
    n_series = len(plot.series)
    row_h = ROW + SERIES_GAP * (n_series - 1)
    legend_h = 18 if n_series > 1 else 0
    height = TOP + legend_h + row_h * len(plot.rows) + 30
    plot_w = WIDTH - LEFT - RIGHT

    def x(v: float) -> str:
        return _n(LEFT + (v - low) / (high - low) * plot_w)

    direction = {True: "higher is better", False: "lower is better", None: "neither direction is better"}[
        plot.higher_is_better]
    title = f"{plot.title} ({plot.unit}), mean and CI per entry; {direction}"
    out = [f'<svg xmlns="http://www.w3.org/2000/svg" class="forest" width="{WIDTH}" height="{height}" '
           f'viewBox="0 0 {WIDTH} {height}" role="img" aria-label="{escape(title)}">',
           f"<title>{escape(title)}</title>",
           f'<text x="{LEFT}" y="16" font-size="13" font-weight="bold">{escape(plot.title)} ({escape(plot.unit)}) '
           f"&#8212; {direction}</text>"]
    if n_series > 1:
        lx = LEFT
        for i, label in enumerate(plot.series):
            colour = PALETTE[i % len(PALETTE)]
            out.append(f'<circle cx="{lx + 5}" cy="{TOP + 4}" r="4" fill="{colour}"/>'
                       f'<text x="{lx + 13}" y="{TOP + 8}" font-size="11">{escape(label[:24])}</text>')
            lx += 20 + 7 * min(len(label), 24)
    base = TOP + legend_h
    axis_y = base + row_h * len(plot.rows) + 4
    for t in _nice_ticks(low, high):
        out.append(f'<line x1="{x(t)}" y1="{base}" x2="{x(t)}" y2="{_n(axis_y)}" stroke="#e5e7eb"/>'
                   f'<text x="{x(t)}" y="{_n(axis_y + 14)}" font-size="10" text-anchor="middle">{t:g}</text>')
    out.append(f'<line x1="{LEFT}" y1="{_n(axis_y)}" x2="{LEFT + plot_w}" y2="{_n(axis_y)}" stroke="#6b7280"/>')
    for r, (label, points) in enumerate(plot.rows):
        y0 = base + r * row_h + ROW / 2
        shown = label if len(label) <= MAX_LABEL else label[: MAX_LABEL - 1] + "…"
        out.append(f'<text x="{LEFT - 8}" y="{_n(y0 + 4)}" font-size="11" text-anchor="end">{escape(shown)}</text>')
        for i, (mean, lo, hi) in enumerate(points):
            y = _n(y0 + i * SERIES_GAP)
            colour = PALETTE[i % len(PALETTE)]
            if lo is not None and hi is not None and math.isfinite(lo) and math.isfinite(hi):
                out.append(f'<line x1="{x(lo)}" y1="{y}" x2="{x(hi)}" y2="{y}" stroke="{colour}" stroke-width="2"/>')
            if mean is not None and math.isfinite(mean):
                out.append(f'<circle cx="{x(mean)}" cy="{y}" r="4" fill="{colour}"/>')
    out.append("</svg>")
    return Markup("".join(out))
