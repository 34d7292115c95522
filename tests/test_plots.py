"""Plot axes that do not turn a flat line into drama: FSS on 0-1, SC/OER on 0-100, other metrics from 0."""

from __future__ import annotations

import io

from PIL import Image

from faceedit_bench.report import plots


def test_fss_axis_spans_its_scale_even_when_every_value_is_the_same() -> None:
    low, high = plots.value_range("fss", [0.8012, 0.8011, 0.8013])
    assert low <= 0.0 and high >= 1.0  # a 0.0002 spread stays a flat line
    low, high = plots.value_range("fss", [-0.2, 0.9])
    assert low <= -0.2 and high >= 1.0  # widened to show a value outside 0-1, never narrowed


def test_x100_metrics_use_their_full_scale_and_others_include_zero() -> None:
    assert plots.value_range("sc", [61.0, 62.0])[0] <= 0.0 and plots.value_range("sc", [61.0, 62.0])[1] >= 100.0
    low, high = plots.value_range("drop_fss", [10.4, 10.5])
    assert low <= 0.0 and high >= 10.5
    low, high = plots.value_range("drop_fss", [0.0, 0.0])  # the identity baseline: a unit axis, not width 0
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
