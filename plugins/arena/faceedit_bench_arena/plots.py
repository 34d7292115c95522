"""The arena's plots: ratings with intervals, the win-rate heat map, ratings per group (shared axes)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from faceedit_bench.api.sections import plot_png


def _rated(ratings: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    return list(reversed(ratings["editors"]))  # best on top


def _scale_label(ratings: Mapping[str, Any]) -> str:
    anchor = ratings["scale"]["anchor"]
    return f"rating (Elo scale; {anchor} = 1000)" if anchor else "rating (Elo scale; mean = 1000)"


def ratings_png(ratings: Mapping[str, Any]) -> bytes | None:
    rows = [r for r in _rated(ratings) if r["rating"] is not None]  # an unrated editor has nothing to draw
    return plot_png(6.4, 0.45 * len(rows) + 1.2, _draw_ratings, ratings, rows)


def _draw_ratings(fig: Any, ratings: Mapping[str, Any], rows: list[Mapping[str, Any]]) -> None:
    ax = fig.add_subplot(1, 1, 1)
    y = np.arange(len(rows))
    mid = np.array([r["rating"] for r in rows])
    low, high = mid - [r["ci_low"] for r in rows], np.array([r["ci_high"] for r in rows]) - mid
    ax.errorbar(mid, y, xerr=[low, high], fmt="o", color="C0", capsize=3)
    ax.set_yticks(y, [r["editor"] for r in rows])
    ax.axvline(1000, color="0.7", linewidth=0.8, zorder=0)
    ax.set_xlabel(f"{_scale_label(ratings)}, {int(ratings['confidence'] * 100)}% interval")
    fig.tight_layout()


def win_rate_png(ratings: Mapping[str, Any]) -> bytes | None:
    names = ratings["order"]
    # tall enough for the y label beside even two editors' rows
    return plot_png(1.0 * len(names) + 2.4, max(3.6, 0.8 * len(names) + 1.4), _draw_win_rate, ratings)


def _draw_win_rate(fig: Any, ratings: Mapping[str, Any]) -> None:
    names = ratings["order"]
    rate = np.array([[np.nan if v is None else v for v in row] for row in ratings["win_rate"]], dtype=float)
    ax = fig.add_subplot(1, 1, 1)
    image = ax.imshow(np.ma.masked_invalid(rate), vmin=0.0, vmax=1.0, cmap="RdBu")
    battles = ratings["battles_per_pair"]
    for i in range(len(names)):
        for j in range(len(names)):
            if i != j:
                text = "–" if np.isnan(rate[i, j]) else f"{rate[i, j]:.2f}\nn={battles[i][j]}"
                dark = not np.isnan(rate[i, j]) and abs(rate[i, j] - 0.5) > 0.3
                ax.text(j, i, text, ha="center", va="center", fontsize=7, color="white" if dark else "black")
    labels = [n for n in names]
    ax.set_xticks(range(len(names)), labels, rotation=30, ha="right")
    ax.set_yticks(range(len(names)), labels)
    ax.set_xlabel("opponent")
    ax.set_ylabel("editor")
    fig.colorbar(image, ax=ax, fraction=0.046, label="row's share of wins\n(ties as half)")
    fig.tight_layout()


def per_group_png(groups: Mapping[str, Any], key: str, order: list[str] | None = None) -> bytes | None:
    """One row per editor, top to bottom in ``order`` (the overall ratings' order, best first; then any other by
    name), one marker per group value, on one shared rating axis."""
    rated = {value: part for value, part in groups.items() if "editors" in part}
    if not rated:
        return None
    found = {e["editor"] for part in rated.values() for e in part["editors"]}
    editors = [e for e in order or [] if e in found] + sorted(found - set(order or []))
    return plot_png(6.4, 0.5 * len(editors) + 1.4, _draw_per_group, rated, editors, key)


def _draw_per_group(fig: Any, rated: Mapping[str, Any], editors: list[str], key: str) -> None:
    ax = fig.add_subplot(1, 1, 1)
    step = 0.6 / max(len(rated), 1)
    for n, (value, part) in enumerate(sorted(rated.items())):
        by = {e["editor"]: e for e in part["editors"] if e["rating"] is not None}  # unrated: nothing to show
        ys = [i + (n - (len(rated) - 1) / 2) * step for i, e in enumerate(editors) if e in by]
        es = [by[e] for e in editors if e in by]
        mid = np.array([e["rating"] for e in es])
        ax.errorbar(mid, ys, xerr=[mid - [e["ci_low"] for e in es], np.array([e["ci_high"] for e in es]) - mid],
                    fmt="o", capsize=2, color=f"C{n}", label=value)
    ax.set_yticks(range(len(editors)), [e for e in editors])
    ax.invert_yaxis()  # the first editor on top
    ax.axvline(1000, color="0.7", linewidth=0.8, zorder=0)
    ax.set_xlabel(_scale_label(next(iter(rated.values()))))
    ax.legend(title=key, fontsize=8)
    fig.tight_layout()
