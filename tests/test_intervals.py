"""Intervals stay inside their metric's range, and say how they were computed (issue 20 item 19)."""

from __future__ import annotations

import numpy as np
import pytest
from faceedit_bench_audit.audit.rubric import RUBRIC_METRIC
from faceedit_bench_audit.winobias.metric import VALUE as WINOBIAS_VALUE
from statsmodels.stats.proportion import proportion_confint

from faceedit_bench.analysis.paired import paired_comparison
from faceedit_bench.analysis.session_metrics import judge_metric_values
from faceedit_bench.analysis.statistics import summarize
from faceedit_bench.plugin.manager import load_plugins
from faceedit_bench.report.measures import bounds_of, measure
from faceedit_bench.scoring.judge.standard import SC_METRIC, STATE_METRIC


def registered_values() -> dict:
    table = load_plugins().registry["judge_metrics"]  # the builtins' and the installed packages' (plugins/audit)
    return {v.name: v for name in table.names() for v in table.get(name).load().values}


def test_each_metric_declares_its_true_bounds():
    values = registered_values()
    assert values["sc"].bounds == (0.0, 100.0)
    assert values["oer"].bounds == (0.0, None)  # several sub-axes changed in one edit: above 100 is valid
    assert all(values[a.name].bounds == (1.0, 5.0) for a in RUBRIC_METRIC.values)
    share = values[WINOBIAS_VALUE]
    assert share.bounds == (0.0, 1.0) and share.ideal == 0.5 and share.higher_is_better is None  # 0.5: no bias
    # a half-open declaration reaches the report, and is no plot axis
    oer = measure("oer", {"bounds": [0.0, None]}, "metrics")
    assert oer["bounds"] == [0.0, None] and bounds_of("oer", {"oer": oer}) is None
    assert judge_metric_values(STATE_METRIC)[0].bounds == (0.0, None)


@pytest.mark.parametrize("n", [2, 3, 5, 30, 500])
def test_bounded_intervals_never_leave_their_bounds_and_are_seeded(n):
    rng = np.random.default_rng(n)
    for bounds, sample in (((0.0, 100.0), rng.choice([0.0, 2.5, 50.0, 97.5, 100.0], n)),
                           ((1.0, 5.0), rng.integers(1, 6, n).astype(float)),
                           ((0.0, None), rng.choice([0.0, 25.0, 100.0, 518.0], n)),
                           ((0.0, 1.0), rng.uniform(0, 1, n) ** 8)):
        s = summarize(sample, bounds=bounds)
        low, high = bounds
        assert s["ci_low"] >= low and (high is None or s["ci_high"] <= high), (bounds, s)
        assert s["ci_low"] <= s["mean"] <= s["ci_high"]
        again = summarize(sample[::-1], bounds=bounds)  # the same values: the same interval, in any order
        assert (again["ci_low"], again["ci_high"], again["ci_method"]) == (s["ci_low"], s["ci_high"], s["ci_method"])
    assert summarize([1.0, 2.0, 9.0])["ci_method"] == "t" and summarize([1.0])["ci_method"] is None


def test_values_on_the_two_bounds_are_a_proportion_with_a_wilson_interval():
    s = summarize([0.0, 100.0, 100.0, 100.0], bounds=(0.0, 100.0))
    low, high = proportion_confint(3, 4, alpha=0.05, method="wilson")
    assert s["ci_method"] == "wilson" and (s["ci_low"], s["ci_high"]) == pytest.approx((100 * low, 100 * high))
    every = summarize([100.0] * 5, bounds=(0.0, 100.0))  # all at the top: still an interval below it
    assert every["ci_high"] == pytest.approx(100.0) and every["ci_low"] < 100.0


def test_a_paired_delta_of_a_bounded_metric_stays_within_its_range():
    first = {i: v for i, v in enumerate((0.0, 100.0, 50.0))}
    second = {i: v for i, v in enumerate((100.0, 0.0, 100.0))}
    result = paired_comparison(first, second, name="sc", bounds=SC_METRIC.values[0].bounds)
    assert -100 <= result["ci_low"] <= result["ci_high"] <= 100 and result["ci_method"] == "bootstrap_percentile"
    assert result["groups"]["treatment"]["ci_high"] <= 100
