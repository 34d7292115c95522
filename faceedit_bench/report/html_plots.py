"""The run report's plots as PNG bytes, drawn by matplotlib without pyplot (no global backend touched);
none without matplotlib, and the page says why."""

from __future__ import annotations

import base64
import importlib.util
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from faceedit_bench.report import plots
from faceedit_bench.report.measures import FSS, Measures, bounds_of, label_of

MAX_ANNOTATED_CELLS = 400  # above this the heatmap's numbers would be unreadable; the cells table has them


def plot_unavailable() -> str | None:
    """Why plots are missing from the page, or ``None`` when they can be drawn."""
    if importlib.util.find_spec("matplotlib") is None:
        return "plots need matplotlib, which is not installed (pip install matplotlib); the tables have the numbers"
    return None


def plot_uri(draw: Callable[..., bytes | None], *args: Any) -> str | None:
    """A plot as a PNG data URI; none when plots cannot be drawn (asked here, so the page's note and its plots
    agree)."""
    if plot_unavailable():
        return None

    data = plots.kept_png(draw, {"args": list(args)}, lambda: draw(*args))
    return None if data is None else "data:image/png;base64," + base64.b64encode(data).decode("ascii")


def axis_label(name: str, measures: Measures) -> str:
    """``SC (x100)``: the metric's label and unit as its registration states them."""
    unit = str(((measures or {}).get(name) or {}).get("unit") or "")
    return f"{label_of(name, measures)} ({unit})" if unit else label_of(name, measures)


def plot_trajectories(series: Mapping[str, Sequence[Mapping[str, Any]]], measures: Measures) -> bytes | None:
    """One panel per trajectory (FSS_k, SC_k: different scales), mean per step with its CI as a band, each on
    its metric's full scale where its registration states one (FSS 0-1, SC 0-100), so a flat line looks flat."""
    if plot_unavailable():
        return None
    titles = {name: f"{label_of(name, measures)}_k" for name in series}
    panels = {titles[name]: {"all included sessions": points} for name, points in series.items()}
    return plots.trajectory_lines(panels, bounds={titles[n]: bounds_of(n, measures) for n in series},
                                  ylabels={titles[n]: axis_label(n, measures) for n in series})


def plot_group_trajectories(by_attribute: Mapping[str, Mapping[str, Sequence[Mapping[str, Any]]]],
                            measures: Measures) -> bytes | None:
    """FSS_k per demographic group, one panel per attribute, one line (with its CI band) per group."""
    if plot_unavailable():
        return None
    fss = {"fss": FSS, **(measures or {})}
    panels = {f"{label_of('fss', fss)}_k by {attribute}": lines for attribute, lines in by_attribute.items()}
    return plots.trajectory_lines(panels, bounds={title: bounds_of("fss", fss) for title in panels},
                                  ylabels={title: axis_label("fss", fss) for title in panels})


def plot_disparity_forest(rows: Sequence[Mapping[str, Any]], measures: Measures) -> bytes | None:
    """A forest plot per metric: per contrast, each group's mean with its CI; contrasts flagged as bias marked."""
    if plot_unavailable():
        return None
    panels: dict[str, list[tuple[str, list[tuple[str, Mapping[str, Any] | None]]]]] = {}
    metric_of: dict[str, str] = {}
    marked: dict[str, set[str]] = {}
    for d in rows:
        metric = str(d.get("metric", "?"))
        title = f"{label_of(metric, measures)} by group"
        metric_of[title] = metric
        groups = list((d.get("groups") or {}).items())
        panels.setdefault(title, []).append((str(d.get("contrast")), [(str(label), s) for label, s in groups]))
        if d.get("bias"):
            marked.setdefault(title, set()).add(str(d.get("contrast")))
    xlabels = {title: f"{axis_label(m, measures)}: each group's mean and CI" for title, m in metric_of.items()}
    return plots.forest(panels, bounds={t: bounds_of(m, measures) for t, m in metric_of.items()}, marked=marked,
                        xlabels=xlabels)


def plot_overediting(categories: Sequence[str], matrix: Sequence[Sequence[int]],
                     edits_per_category: Sequence[int]) -> bytes | None:
    """Heatmap of overedit counts [intended category][changed category], keeping only rows and columns with
    a count (35x35 mostly empty cells would be unreadable)."""
    n = len(matrix)
    rows = [i for i in range(n) if any(matrix[i])]
    cols = [j for j in range(n) if any(matrix[i][j] for i in range(n))]
    if not rows or (fig := plots.figure(max(4.0, 0.38 * len(cols) + 3.0), max(3.0, 0.32 * len(rows) + 2.2))) is None:
        return None
    values = [[matrix[i][j] for j in cols] for i in rows]
    with plots.no_mathtext():
        ax = fig.subplots()
        image = ax.imshow(values, cmap="Reds", aspect="auto", vmin=0)
        ax.set_xticks(range(len(cols)), [categories[j] for j in cols], rotation=60, ha="right", fontsize=8)
        edits = list(edits_per_category) + [0] * (n - len(edits_per_category))
        ax.set_yticks(range(len(rows)), [f"{categories[i]} ({edits[i]} edits)" for i in rows], fontsize=8)
        if len(rows) * len(cols) <= MAX_ANNOTATED_CELLS:
            top = max(max(r) for r in values)
            for y, row in enumerate(values):
                for x, v in enumerate(row):
                    if v:
                        ax.text(x, y, str(v), ha="center", va="center", fontsize=7,
                                color="white" if v > top / 2 else "black")
        ax.set_xlabel("changed category")
        ax.set_ylabel("intended category")
        fig.colorbar(image, ax=ax, label="overedits")
        fig.tight_layout()
        return plots.png_bytes(fig)
