"""Plots of the run report and of ``compare``: PNG bytes drawn by matplotlib's Agg canvas (no pyplot, so no
global backend is touched), or ``None`` when matplotlib is missing or there is nothing to draw.

Axes are chosen so that a flat line looks flat: a metric with bounds in its registration (the report's
``measures``: FSS 0–1, SC ×100 0–100) is drawn on at least its whole scale (wider only when a value
lies outside), and every other metric's axis (OER's, open above) includes 0. A zoomed axis would turn a 0.002
difference between two groups into a cliff.
"""

from __future__ import annotations

import base64
import importlib.util
import io
import math
from collections.abc import Callable, Mapping, Sequence
from typing import Any

PALETTE = ("#1f4e79", "#c2410c", "#15803d", "#7e22ce", "#a16207", "#0e7490", "#be123c", "#4d7c0f")
MARKERS = ("o", "s", "^", "D", "v", "P", "X", "*")
Bounds = Mapping[str, "tuple[float, float] | None"]


def available() -> bool:
    return importlib.util.find_spec("matplotlib") is not None


def figure(width: float, height: float) -> Any | None:
    """A matplotlib figure of ``width`` x ``height`` inches at 100 dpi, or None where matplotlib is missing."""
    if not available():
        return None
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    fig = Figure(figsize=(width, height), dpi=100)
    FigureCanvasAgg(fig)  # one renderer for tight_layout and the drawing: text is measured once, not twice
    return fig


def png_bytes(fig: Any) -> bytes:
    """The figure as a PNG of 256 colours: a plot's lines, text and bands look the same, in about a third of the
    bytes (report pages embed every plot).

    Drawn once on an Agg canvas and quantized from its pixels: ``savefig`` would draw the figure a second time
    to lay it out again after ``tight_layout`` (about a fifth of a plot's CPU) and encode a full-colour PNG only for
    it to be read back; the bytes are the same."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from PIL import Image

    canvas = fig.canvas if isinstance(fig.canvas, FigureCanvasAgg) else FigureCanvasAgg(fig)
    canvas.draw()
    image = Image.frombuffer("RGBA", canvas.get_width_height(physical=True), canvas.buffer_rgba(), "raw", "RGBA", 0, 1)
    out = io.BytesIO()
    image.quantize(256, method=Image.Quantize.FASTOCTREE).save(out, format="PNG")
    return out.getvalue()


def image_bytes(fig: Any, fmt: str = "png") -> bytes:
    """The figure as PNG, or as SVG whose text stays text (selectable, readable by a browser test) and whose
    bytes do not change between identical drawings."""
    if fmt == "png":
        return png_bytes(fig)
    from matplotlib import rc_context
    from matplotlib.layout_engine import PlaceHolderLayoutEngine

    if isinstance(fig.get_layout_engine(), PlaceHolderLayoutEngine):
        fig.set_layout_engine(None)  # laid out by tight_layout: savefig would draw the figure again to redo it
    buf = io.BytesIO()
    with rc_context({"svg.fonttype": "none", "svg.hashsalt": "faceedit_bench"}):
        fig.savefig(buf, format="svg", metadata={"Date": None})
    return buf.getvalue()


def drawn_png(width: float, height: float, draw: Callable[..., None], *args: Any) -> bytes | None:
    """A plot as PNG bytes (:func:`png_bytes`): ``draw(fig, *args)`` draws on a figure of ``width`` x ``height``
    inches, with labels as given (a ``$`` is not LaTeX math) and the report's colours as matplotlib's colour
    cycle (``"C0"``, ``"C1"``, ...: the core plots' :data:`PALETTE`); None where matplotlib is missing.

    A module-level ``draw`` is kept by what it shows, as statistics are (its name, the size and ``args``): an
    unchanged report's plots are not drawn again. A lambda or closure (what it draws is not all in ``args``) is
    drawn each time. A page shows the bytes with the ``data_uri`` filter."""
    if not available():
        return None  # asked first: a missing matplotlib is never kept as "no plot"
    return kept_png(draw, {"size": [width, height], "args": list(args)}, lambda: _drawn_png(width, height, draw, args))


def kept_png(draw: Callable[..., Any], arguments: Mapping[str, Any], make: Callable[[], bytes | None]) -> bytes | None:
    """``make()``'s PNG, kept by what it shows, as statistics are (the module-level function ``draw`` and the
    ``arguments`` it draws from): an unchanged report's plots are not drawn again. A lambda or a closure (what it
    draws is not all in its arguments) is drawn each time."""
    if "<" in draw.__qualname__:
        return make()
    from faceedit_bench.analysis.cached import lookup_or_compute

    def encoded() -> str | None:
        data = make()
        return None if data is None else base64.b64encode(data).decode("ascii")

    kept = lookup_or_compute(f"png:{draw.__module__}.{draw.__qualname__}", arguments, encoded)
    return None if kept is None else base64.b64decode(kept)


def _drawn_png(width: float, height: float, draw: Callable[..., None], args: Sequence[Any]) -> bytes | None:
    fig = figure(width, height)
    if fig is None:
        return None
    from matplotlib import cycler, rc_context

    with no_mathtext(), rc_context({"axes.prop_cycle": cycler(color=PALETTE)}):
        draw(fig, *args)
        return png_bytes(fig)


def no_mathtext() -> Any:
    """A context in which text is drawn as given: a ``$`` in a label is not read as LaTeX math."""
    # Labels are data (editor names, group labels): a "$" in them must not be parsed as LaTeX math.
    from matplotlib import rc_context

    return rc_context({"text.parse_math": False, "text.usetex": False})


def wrapped(text: str, width: int) -> str:
    """A label over lines of about ``width`` characters, whole: runs whose labels differ only at the end
    (``... · judge gemini`` and ``... · judge none``) must stay told apart, so nothing is cut."""
    import textwrap

    return "\n".join(textwrap.wrap(text, width, break_long_words=True, break_on_hyphens=False)) or text


def titled(ax: Any, text: str, **kwargs: Any) -> None:
    """``ax.set_title`` for axes whose limits and ticks are set: at the top of the axes, where matplotlib puts it
    unless an x tick label at the top or the y axis' offset text ("1e6") is in the way. Looking for them measures
    every tick of the axes, at the layout and again at the drawing (about a tenth of a plot's CPU): it is left to
    matplotlib only where the y axis may need an offset text (a range away from 0, or too large or small for
    plain numbers)."""
    from matplotlib.ticker import FixedFormatter

    low, high = ax.get_ylim()
    top = max(abs(low), abs(high))
    plain = isinstance(ax.yaxis.get_major_formatter(), FixedFormatter) or (min(low, high) <= 0 <= max(low, high)
                                                                         and 1e-3 <= top < 1e5)
    ax.set_title(text, y=1.0 if plain and ax.xaxis.get_ticks_position() == "bottom" else None, **kwargs)


def _finite(values: Sequence[Any]) -> list[float]:
    return [float(v) for v in values if isinstance(v, (int, float)) and math.isfinite(v)]


def value_range(values: Sequence[Any], bounds: tuple[float, float] | None = None) -> tuple[float, float]:
    """An axis range: the metric's full scale where it has ``bounds`` (FSS 0–1, SC 0–100), widened only to
    show a value outside it; otherwise the data's range extended to 0."""
    data = _finite(values)
    if bounds is not None:
        low, high = bounds
    else:
        low, high = min([0.0, *data]), max([0.0, *data])
        if high - low < 1e-9:
            high = low + 1.0  # every value 0: a unit axis, not a range of width zero
    if data:
        low, high = min(low, *data), max(high, *data)
    pad = 0.03 * (high - low)
    return low - pad, high + pad


def _summary_points(points: Sequence[Mapping[str, Any]]) -> list[Mapping[str, Any]]:
    return [p for p in points if p.get("mean") is not None]


def _band(ax: Any, points: Sequence[Mapping[str, Any]], colour: str) -> None:
    band = [p for p in points if p.get("ci_low") is not None and p.get("ci_high") is not None]
    if band:
        ax.fill_between([p["k"] for p in band], [p["ci_low"] for p in band], [p["ci_high"] for p in band],
                        alpha=0.18, color=colour, linewidth=0)


def _values(points: Sequence[Mapping[str, Any]]) -> list[Any]:
    return [v for p in points for v in (p.get("mean"), p.get("ci_low"), p.get("ci_high"))]


def trajectory_lines(panels: Mapping[str, Mapping[str, Sequence[Mapping[str, Any]]]], *,
                     ylabels: Mapping[str, str] | None = None, bounds: Bounds | None = None,
                     title_suffix: str = "", fmt: str = "png") -> bytes | None:
    """One panel per key of ``panels`` ({panel title: {line label: points k, mean, ci_low, ci_high}}), one line
    per label with its CI as a band, the labels whole in a legend under the panel. ``bounds`` gives a panel's
    metric's scale (its axis: FSS 0–1, SC 0–100). ``fmt``: png or svg."""
    usable = {title: {label: pts for label, p in lines.items() if (pts := _summary_points(p))}
              for title, lines in panels.items()}
    usable = {title: lines for title, lines in usable.items() if lines}
    if not usable:
        return None
    n = len(usable)
    shown = {title: {label: wrapped(label + (f" (n={pts[0].get('n')})" if pts[0].get("n") is not None
                                             and len(lines) > 1 else ""), 40) for label, pts in lines.items()}
             for title, lines in usable.items()}
    legend_lines = max(sum(s.count("\n") + 1 for s in labels.values()) for labels in shown.values())
    fig = figure(min(4.6 * n, 14.0), 3.5 + 0.15 * legend_lines)
    if fig is None:
        return None
    with no_mathtext():
        axes = fig.subplots(1, n, squeeze=False)[0]
        for ax, (title, lines) in zip(axes, usable.items()):
            ks: set[int] = set()
            for i, (label, points) in enumerate(lines.items()):
                colour = PALETTE[i % len(PALETTE)]
                ks.update(p["k"] for p in points)
                ax.plot([p["k"] for p in points], [p["mean"] for p in points], marker=MARKERS[i % len(MARKERS)],
                        color=colour, label=shown[title][label])
                _band(ax, points, colour)
            ax.set_ylim(*value_range([v for pts in lines.values() for v in _values(pts)], (bounds or {}).get(title)))
            ax.set_xticks(sorted(ks))
            ax.set_xlabel("step k")
            titled(ax, f"{title}{title_suffix}", fontsize=10)
            ax.set_ylabel((ylabels or {}).get(title, title))
            ax.grid(axis="y", color="#e5e7eb")
            ax.legend(loc="upper center", bbox_to_anchor=(0.5, -0.2), fontsize=7, frameon=False)
        fig.tight_layout()
        return image_bytes(fig, fmt)


def forest(panels: Mapping[str, Sequence[tuple[str, Sequence[tuple[str, Mapping[str, Any] | None]]]]], *,
           bounds: Bounds | None = None, xlabels: Mapping[str, str] | None = None,
           marked: Mapping[str, set[str]] | None = None) -> bytes | None:
    """Forest plots, one panel per key: rows (label, [(series label, summary with mean/ci_low/ci_high/n)]), a
    dot at each series' mean and a bar over its CI. Rows named in ``marked[panel]`` get a "BIAS" tag."""
    def points(series: Sequence[tuple[str, Mapping[str, Any] | None]]) -> list[tuple[str, Mapping[str, Any]]]:
        return [(name, s) for name, s in series if s and s.get("mean") is not None]

    usable = {title: [(label, pts) for label, series in rows if (pts := points(series))]
              for title, rows in panels.items()}
    usable = {title: rows for title, rows in usable.items() if rows}
    if not usable:
        return None
    height = sum(0.5 + 0.42 * sum(max(1, len(pts)) for _, pts in rows) for rows in usable.values())
    fig = figure(8.0, max(2.4, height + 0.4 * len(usable)))
    if fig is None:
        return None
    with no_mathtext():
        axes = fig.subplots(len(usable), 1, squeeze=False,
                            height_ratios=[sum(max(1, len(p)) for _, p in rows) + 1 for rows in usable.values()])
        for ax, (title, rows) in zip(axes[:, 0], usable.items()):
            series_names = list(dict.fromkeys(name for _, pts in rows for name, _ in pts))
            y, ticks, labels = 0.0, [], []
            for label, pts in rows:
                tag = " (BIAS)" if label in (marked or {}).get(title, set()) else ""
                for name, s in pts:
                    i = series_names.index(name)
                    colour = PALETTE[i % len(PALETTE)]
                    lo, hi = s.get("ci_low"), s.get("ci_high")
                    if lo is not None and hi is not None:
                        ax.plot([lo, hi], [y, y], color=colour, linewidth=2)
                    ax.plot([s["mean"]], [y], marker=MARKERS[i % len(MARKERS)], color=colour, linestyle="none")
                    n = f" n={s['n']}" if s.get("n") is not None else ""
                    ticks.append(y)
                    labels.append(wrapped(f"{label}{tag}: {name}{n}" if name else f"{label}{tag}{n}", 44))
                    y += 1
                y += 0.6
            ax.set_yticks(ticks, labels, fontsize=8)
            ax.invert_yaxis()
            values = [v for _, pts in rows for _, s in pts for v in (s.get("mean"), s.get("ci_low"), s.get("ci_high"))]
            ax.set_xlim(*value_range(values, (bounds or {}).get(title)))
            ax.set_xlabel((xlabels or {}).get(title, title), fontsize=9)
            titled(ax, title, fontsize=10)
            ax.grid(axis="x", color="#e5e7eb")
        fig.tight_layout()
        return png_bytes(fig)
