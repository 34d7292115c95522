"""The per-step series MLflow draws as lines, from a report's trajectories (by hand)."""

from __future__ import annotations

from faceedit_bench_mlflow.series import series_for_tracking

from faceedit_bench.api.sections import metric_key


def test_each_trajectory_is_one_series_a_value_per_step_and_undefined_points_are_left_out():
    fss = [{"k": k, "mean": m, "ci_low": None if k == 0 else m - 0.1, "ci_high": m + 0.1}
           for k, m in enumerate((0.8, 0.7, 0.6, 0.4, 0.0))]
    report = {"metrics": {"sc": {"mean": 50.0}},
              "trajectory": {"fss": fss, "sc": [{"k": 1, "mean": 0.5}, {"k": 2, "mean": True}]},
              "groups": {"gender": {"Male": {"trajectory": {"fss": fss}}}, "race": {"x": {}}}}
    series = series_for_tracking(report)
    assert all(k == metric_key(k) for k in series)
    assert series["fss"] == [(0, 0.8), (1, 0.7), (2, 0.6), (3, 0.4), (4, 0.0)]
    assert [k for k, _ in series["fss_ci_low"]] == [1, 2, 3, 4]  # k = 0 has no interval
    assert series["sc_k"] == [(1, 0.5)]  # a session metric's trajectory is named apart; a bool is no number
    assert series["gender_male_fss"] == series["fss"]
    assert set(series) == {"fss", "fss_ci_low", "fss_ci_high", "sc_k", "gender_male_fss", "gender_male_fss_ci_low",
                           "gender_male_fss_ci_high"}
