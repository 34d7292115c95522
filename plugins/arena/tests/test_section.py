"""The arena section passes the section contract on a real arena part."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest
from faceedit_bench_arena.arena import ArenaSettings, rate_arena
from faceedit_bench_arena.pairwise_judge import position_bias
from faceedit_bench_arena.section import ARENA, record, tracking

from faceedit_bench.api.testing import SectionContract

sys.path.insert(0, str(Path(__file__).parent))
from test_verify import LOG_ROWS  # noqa: E402


@pytest.fixture
def section():
    return ARENA


@pytest.fixture
def report_part():
    settings = ArenaSettings(n_resamples=100, n_permutations=19, min_group_battles=2)
    editors = ["a", "b", "c"]
    part = {"editors": editors, "runs": [{"editor": e, "run_key": e, "folder": e} for e in editors],
            "testset_hash": "t", "template": {"name": "arena-pairwise"}, "policy": "loss",
            "settings": settings.__dict__, "editor": "b",
            "sampling": {"stop": "budget", "rounds": 1, "calls_planned": 56, "calls_made": 56, "budget_calls": 56},
            "counts": {"judged": 28, "decided": 28, "incomplete": 0, "position_inconsistent": 0, "one_sided": 1,
                       "both_failed": 0, "available": 40},
            "position_bias": position_bias([]),
            **rate_arena(editors, LOG_ROWS, settings)}
    return json.loads(json.dumps(part))


class TestArenaSection(SectionContract):
    pass


def test_tracking_and_record_are_this_runs_editor(report_part):
    metrics = tracking(report_part)
    mine = next(e for e in report_part["criteria"]["overall"]["ratings"]["editors"] if e["editor"] == "b")
    assert metrics["arena_rating"] == mine["rating"] and metrics["arena_rank"] == mine["rank"]
    assert record(report_part)["editor"] == "b" and record(report_part)["rating"] == mine["rating"]


def _drawn(monkeypatch, draw, *args):
    """The matplotlib figure ``draw`` makes, laid out as its PNG is."""
    from faceedit_bench_arena import plots
    from matplotlib.figure import Figure

    figures = []

    def drawn(width, height, paint, *args):
        fig = Figure(figsize=(width, height), dpi=100)
        paint(fig, *args)
        figures.append(fig)
        return b"png"

    monkeypatch.setattr(plots, "plot_png", drawn)
    assert draw(*args) == b"png"
    (fig,) = figures
    from matplotlib.backends.backend_agg import FigureCanvasAgg

    FigureCanvasAgg(fig).draw()  # the canvas a PNG is drawn on
    return fig


def test_the_heat_maps_labels_are_inside_the_picture(monkeypatch):
    """Two editors make a short picture: its y label, once longer than the picture is high, was cut off."""
    from faceedit_bench_arena import plots

    settings = ArenaSettings(n_resamples=100, n_permutations=19, min_group_battles=2)
    two = rate_arena(["a", "b"], [r for r in LOG_ROWS if {r["x"], r["y"]} <= {"a", "b"}], settings)
    ratings = json.loads(json.dumps(two))["criteria"]["overall"]["ratings"]
    fig = _drawn(monkeypatch, plots.win_rate_png, ratings)
    renderer, frame = fig.canvas.get_renderer(), fig.bbox
    labels = [fig.axes[0].yaxis.label, fig.axes[0].xaxis.label, fig.axes[1].yaxis.label]  # and the colour bar's
    for label in labels:
        box = label.get_window_extent(renderer)
        assert box.x0 >= 0 and box.y0 >= 0 and box.x1 <= frame.x1 and box.y1 <= frame.y1, (label.get_text(), box)
    assert all(label.get_text() for label in labels)


def test_the_per_group_plot_lists_the_editors_top_down_as_the_ratings_do(report_part, monkeypatch):
    from faceedit_bench_arena import plots

    ratings = report_part["criteria"]["overall"]["ratings"]
    order = [e["editor"] for e in ratings["editors"]]
    (key, groups), *_ = report_part["per_group"].items()
    fig = _drawn(monkeypatch, plots.per_group_png, groups, key, order)
    renderer = fig.canvas.get_renderer()
    ticks = sorted(fig.axes[0].get_yticklabels(), key=lambda t: -t.get_window_extent(renderer).y0)  # top first
    assert [t.get_text() for t in ticks] == [e for e in order if any(
        e == x["editor"] for part in groups.values() if "editors" in part for x in part["editors"])]
    assert len(ticks) > 1
