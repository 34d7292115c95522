"""Best and worst follow each metric's registered direction, everywhere (issue 20 item 17).

Edit success is higher-is-better, race change lower-is-better, and skin tone, age change and aging accuracy
have their ideal in the middle (3): they get no best or worst group, but each group's deviation from 3.
"""

from __future__ import annotations

import pytest
from faceedit_bench_audit.audit.items import AuditCollector, AuditItem
from faceedit_bench_audit.audit.rubric import RUBRIC_METRIC
from faceedit_bench_audit.audit.settings import AuditConf
from faceedit_bench_audit.audit.tables import audit_section

from faceedit_bench.api.statistics import (
    SessionMetric,
    Threshold,
    compare_k_groups,
    rank_table,
)
from faceedit_bench.testing import build_views, collect_submissions, metric_ranks, submit_run, worst_groups
from tests.test_leaderboard_support import write_fake_run

#: Per race: White's edits succeed (5), Black's are soft-erased (2); skin tone drifts lighter for Black (4 > 3).
SCORES = {"White": {"edit_success": 5, "skin_tone": 3, "race_change": 1, "gender_change": 1, "age_change": 3},
          "Black": {"edit_success": 2, "skin_tone": 4, "race_change": 3, "gender_change": 1, "age_change": 2},
          "Indian": {"edit_success": 3, "skin_tone": 2, "race_change": 2, "gender_change": 1, "age_change": 3}}


def audit() -> dict:
    collector = AuditCollector(("race",))
    for race, scores in SCORES.items():
        for n in range(4):  # a little spread, so the tests have something to test
            varied = {axis: float(v if n % 2 else min(5, max(1, v + (1 if n == 2 else 0))))
                      for axis, v in scores.items()}
            collector.items.append(AuditItem(f"{race}/{n}", {"race": race}, "O-01", 1, "O-01", "Occupational/x", "ok",
                                             scores={**varied, "aging_accuracy": None}))
    return audit_section(collector, AuditConf(attributes=["race"]), n_resamples=99)


def test_the_audit_names_the_best_and_worst_group_in_each_axis_registered_direction():
    a = audit()
    white = a["one_vs_rest"]["race=White"]
    # edit success: White scores highest, so White is the best group, never the worst
    assert white["edit_success"]["best_group"] == "White" and white["edit_success"]["worst_group"] == "non-White"
    assert white["edit_success"]["higher_is_better"] is True
    # race change: White changes least, and less is better
    assert white["race_change"]["best_group"] == "White"
    tests = a["groups"]["race"]["tests"]
    spread = tests["edit_success"]["mean_disparity"]
    assert (spread["best_group"], spread["worst_group"]) == ("White", "Black") == (spread["max_group"],
                                                                                   spread["min_group"])
    assert tests["race_change"]["mean_disparity"]["worst_group"] == "Black"
    # skin tone and age change: the ideal is 3, so no best or worst, and each group's deviation from it
    for axis in ("skin_tone", "age_change"):
        for found in (white[axis], tests[axis]["mean_disparity"]):
            assert found["best_group"] is None and found["worst_group"] is None, axis
        groups = a["groups"]["race"]["labels"]
        assert tests[axis]["mean_disparity"]["deviation_from_ideal"] == {
            g: pytest.approx(groups[g]["axes"][axis]["mean"] - 3) for g in SCORES}
    assert white["skin_tone"]["deviation_from_ideal"]["White"] == pytest.approx(a["groups"]["race"]["labels"][
        "White"]["axes"]["skin_tone"]["mean"] - 3)


def test_rates_carry_their_direction_and_the_rate_disparity_its_worst_group():
    a = audit()
    directions = {name: r["higher_is_better"] for name, r in a["rates"].items()}
    assert directions == {"edit_success_rate": True, "soft_erasure_rate": False, "race_change_rate": False,
                          "gender_change_rate": False, "skin_lightening_rate": False, "skin_darkening_rate": False}
    success = a["disparity"]["edit_success_rate"]
    assert (success["best_group"], success["worst_group"]) == ("White", "Black")
    assert a["disparity"]["soft_erasure_rate"]["worst_group"] == "Black"  # Black's edits are erased


@pytest.mark.parametrize(("rule", "axis", "expected"), [
    (">= 4", "edit_success", True), ("<= 2", "edit_success", False), (">= 3", "race_change", False),
    ("<= 1", "race_change", True), (">= 4", "skin_tone", False), ("<= 2", "skin_tone", False),
    (">= 3", "skin_tone", None)])
def test_a_rate_direction_follows_from_its_axis_and_rule(rule, axis, expected):
    value = next(v for v in RUBRIC_METRIC.values if v.name == axis)
    assert Threshold.parse(rule).rate_direction(value.higher_is_better, value.ideal) is expected


def test_no_caller_can_inherit_a_direction():
    with pytest.raises(TypeError, match="higher_is_better"):
        compare_k_groups({"a": [1.0, 2.0], "b": [2.0, 3.0]}, name="t")  # type: ignore[call-arg]
    with pytest.raises(TypeError, match="higher_is_better"):
        compare_k_groups({"a": [1.0, 2.0], "b": [2.0, 3.0]}, name="t", focus="a")  # type: ignore[call-arg]
    assert worst_groups({"a": {"mean": 1.0, "n": 2}, "b": {"mean": 2.0, "n": 2}}, higher_is_better=None)["groups"] == []


def test_ranks_never_rank_a_metric_whose_ideal_is_the_middle():
    table = rank_table({"edit_success": {"x": 4.0, "y": 2.0}, "skin_tone": {"x": 3.0, "y": 4.0}},
                       {"edit_success": True, "skin_tone": None})
    assert table["metrics"]["edit_success"]["x"]["rank"] == 1.0 and "skin_tone" not in table["metrics"]
    assert "skin_tone" in table["not_ranked"]
    reports = [{"metrics": {"skin_tone": {"mean": m, "higher_is_better": None},
                            "edit_success": {"mean": e, "higher_is_better": True},
                            "race_change": {"mean": r, "higher_is_better": False}}} for m, e, r in
               ((3.0, 4.0, 1.0), (4.5, 2.0, 2.0))]
    ranks = metric_ranks(reports, ["x", "y"])
    assert set(ranks["metrics"]) == {"edit_success", "race_change"}
    assert ranks["metrics"]["race_change"]["x"]["rank"] == 1.0


def test_the_leaderboard_neither_ranks_by_nor_sorts_a_middle_ideal_metric(tmp_path, plugins):
    for editor, values in (("a", (3.0, 3.1, 2.9, 3.0)), ("b", (4.0, 4.2, 4.1, 4.3))):
        run = write_fake_run(tmp_path / "ws", editor=editor, values=values, metric="skin_tone", hib=None)
        submit_run(str(run), out=tmp_path / "lb" / "submissions", plugins=plugins)
    entries = collect_submissions(tmp_path / "lb").entries
    registered = {"skin_tone": SessionMetric("skin_tone", None, "1-5", "test", lambda s: None, ideal=3.0)}
    for view in (build_views(entries, registered)[0], build_views(entries, {})[0]):
        assert view.rank_by is None
        assert [r.cells[0].text for r in view.sections[0].rows] == ["–", "–"]
        column = next(c for c in view.sections[0].columns if c.title.startswith("skin_tone"))
        assert column.hib == "" and "Neither direction is better" in column.help
