"""Plot axes that do not turn a flat line into drama: a metric's registered bounds (FSS 0-1, SC/OER 0-100), other
metrics from 0."""

from __future__ import annotations

import io
from typing import Any

from PIL import Image

from faceedit_bench.report import plots
from faceedit_bench.report.measures import FSS, bounds_of, report_measures
from faceedit_bench.scoring.judge.standard import SC_METRIC

FSS_BOUNDS = bounds_of("fss", {"fss": FSS})


def test_fss_axis_spans_its_scale_even_when_every_value_is_the_same() -> None:
    low, high = plots.value_range([0.8012, 0.8011, 0.8013], FSS_BOUNDS)
    assert low <= 0.0 and high >= 1.0  # a 0.0002 spread stays a flat line
    low, high = plots.value_range([-0.2, 0.9], FSS_BOUNDS)
    assert low <= -0.2 and high >= 1.0  # widened to show a value outside 0-1, never narrowed


def test_x100_metrics_use_their_registered_scale_and_others_include_zero() -> None:
    sc_bounds = SC_METRIC.values[0].bounds  # the registration states it; the report carries it
    assert sc_bounds == (0.0, 100.0)
    assert plots.value_range([61.0, 62.0], sc_bounds)[0] <= 0.0 and plots.value_range([61.0, 62.0], sc_bounds)[1] >= 100.0
    old = report_measures({"metrics": {"sc": {"higher_is_better": True, "unit": "x100"}}})  # a 1.2 report
    assert bounds_of("sc", old) == (0.0, 100.0) and old["sc"]["label"] == "SC"
    low, high = plots.value_range([10.4, 10.5])
    assert low <= 0.0 and high >= 10.5
    low, high = plots.value_range([0.0, 0.0])  # the identity baseline: a unit axis, not width 0
    assert low <= 0.0 and high >= 1.0


def test_plots_are_pngs_and_empty_input_draws_nothing() -> None:
    points = [{"k": k, "n": 3, "mean": 0.8, "ci_low": 0.79, "ci_high": 0.81} for k in range(5)]
    png = plots.trajectory_lines({"FSS_k by gender": {"female": points, "male": points}})
    assert Image.open(io.BytesIO(png)).format == "PNG"
    assert plots.trajectory_lines({"FSS_k": {"x": [{"k": 0, "mean": None}]}}) is None
    assert plots.forest({"Drop_FSS": [("gender", [("female", None)])]}) is None
    png = plots.forest({"Drop_FSS": [("gender", [("female", {"mean": 1.0, "ci_low": 0.5, "ci_high": 1.5, "n": 4}),
                                                 ("male", {"mean": 2.0, "ci_low": None, "ci_high": None})])]},
                       marked={"Drop_FSS": {"gender"}})
    assert Image.open(io.BytesIO(png)).format == "PNG"


def test_a_title_placed_without_measuring_sits_where_matplotlib_places_it() -> None:
    """plots.titled pins a title at the top of its axes only where matplotlib's own placement puts it there; where
    the y axis shows an offset text ("1e6") above it, matplotlib still moves the title up."""

    def drawn(title: Any, ylim: tuple[float, float], labels: bool) -> bytes:
        fig = plots.figure(3.0, 2.0)
        ax = fig.subplots()
        ax.plot([0, 1], ylim)
        if labels:
            ax.set_yticks([ylim[0], ylim[1]], ["low", "high"])
        ax.set_ylim(*ylim)
        title(ax, "a title as wide as the axes it is over", fontsize=10)
        fig.tight_layout()
        return plots.png_bytes(fig)

    for ylim, labels in (((-0.03, 1.03), False), ((0.0, 250.0), False), ((5e5, 3e6), False), ((1e6, 2e6), True),
                         ((0.0, 2e-6), False)):
        assert drawn(plots.titled, ylim, labels) == drawn(lambda ax, text, **kw: ax.set_title(text, **kw), ylim,
                                                          labels), ylim
