"""Metric formulas against hand-computed values, and the aggregation rules around them."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats

from faceedit_bench.analysis.aggregate import Aggregator
from faceedit_bench.analysis.session_metrics import SessionMetric, SessionScores, drop_fss
from faceedit_bench.analysis.statistics import summarize
from faceedit_bench.records import Face, ImageScore, Outcome, Session, SessionResult, Step
from faceedit_bench.report.run_report import metric_key, metrics_for_tracking


def test_drop_fss_by_hand():
    # FSS_0 = 0.8; drops of 0.1, 0.2, 0.4, 0.8 -> relative 0.125, 0.25, 0.5, 1.0 -> mean 0.46875
    assert drop_fss(SessionScores((0.8, 0.7, 0.6, 0.4, 0.0))) == pytest.approx(46.875)
    assert drop_fss(SessionScores((0.5, 0.5, 0.5, 0.5, 0.5))) == 0.0
    assert drop_fss(SessionScores((0.5, 0.6, 0.6, 0.6, 0.6))) == pytest.approx(-20.0)  # gains are kept, not clipped
    assert drop_fss(SessionScores((0.0, 0.1, 0.1, 0.1, 0.1))) is None  # undefined, not a number


def test_summary_matches_a_t_interval():
    values = [1.0, 2.0, 4.0, 7.0]
    s = summarize(values, 0.95)
    half = stats.t.ppf(0.975, 3) * stats.tstd(values) / math.sqrt(4)
    assert (s["n"], s["mean"]) == (4, 3.5)
    assert s["ci_low"] == pytest.approx(3.5 - half) and s["ci_high"] == pytest.approx(3.5 + half)
    assert summarize([2.0])["ci_low"] is None  # one value says nothing about spread
    assert summarize([])["mean"] is None


def session(face_id: str, gender: str | None, fss: tuple[float, ...] | None, excluded: str | None = None):
    face = Face(face_id, face_id, None, (), {"gender": gender, "age": "35"})  # type: ignore[arg-type]
    steps = tuple(Step(k, f"p{k}", "a", "c", "s", "x") for k in range(1, 5))
    scores = tuple(ImageScore(Outcome.OK, 1, v) for v in fss) if fss else ()
    return SessionResult(face, Session("s1", "t", steps), [], excluded=excluded, scores=scores)


def test_aggregation_per_group_with_exclusions_and_undefined_values():
    nan_metric = SessionMetric("broken", True, "", "", lambda s: float("nan"))
    drop = SessionMetric("drop_fss", False, "%", "", drop_fss)
    agg = Aggregator([drop, nan_metric], 0.95)
    agg.add(session("a", "male", (0.8, 0.7, 0.6, 0.4, 0.0)))  # 46.875
    agg.add(session("b", "male", (0.5, 0.5, 0.5, 0.5, 0.5)))  # 0
    agg.add(session("c", "female", (0.4, 0.3, 0.3, 0.3, 0.3)))  # 25
    agg.add(session("d", "female", None, excluded="step_refused"))
    agg.add(session("e", None, (0.5, 0.5, 0.5, 0.5, 0.5)))  # no gender label: not in any gender group
    out = agg.sections()
    assert out["counts"]["sessions"] == {"planned": 5, "included": 4, "excluded": {"step_refused": 1}}
    assert out["metrics"]["drop_fss"]["mean"] == pytest.approx((46.875 + 0 + 25 + 0) / 4)
    assert out["metrics"]["broken"]["n"] == 0 and out["metrics"]["broken"]["undefined_sessions"] == 4
    male, female = out["groups"]["gender"]["male"], out["groups"]["gender"]["female"]
    assert male["metrics"]["drop_fss"]["mean"] == pytest.approx(23.4375) and male["sessions_included"] == 2
    assert female["sessions_included"] == 1 and female["sessions_excluded"] == {"step_refused": 1}
    assert "age" not in out["groups"]  # numeric ages are not groups
    assert [p["mean"] for p in out["trajectory"]["fss"]][0] == pytest.approx((0.8 + 0.5 + 0.4 + 0.5) / 4)


def test_tracking_keys_are_snake_case():
    assert metric_key("gender", "Male", "drop_fss") == "gender_male_drop_fss"
    assert metric_key("age_bin", "20-29", "drop_fss", "ci_low") == "age_bin_20_29_drop_fss_ci_low"
    agg = Aggregator([SessionMetric("drop_fss", False, "%", "", drop_fss)], 0.95)
    agg.add(session("a", "male", (0.8, 0.7, 0.6, 0.4, 0.0)))
    report = {**agg.sections()}
    keys = metrics_for_tracking(report)
    assert all(k == metric_key(k) for k in keys)
    assert keys["drop_fss"] == pytest.approx(46.875)
    assert not [k for k in keys if k.startswith("fss_step")]


def test_semantic_consistency_by_hand():
    from faceedit_bench.analysis.session_metrics import semantic_consistency
    from faceedit_bench.scoring.judge.prompts import sc_from_answer

    # SC_k = min(success, overediting) / 10; session SC = 100 * mean_k
    steps = [sc_from_answer({"editing_success": s, "overediting": o, "reasoning": ""})
             for s, o in [(8, 6), (10, 10), (3, 9), (0, 7)]]
    assert steps == [0.6, 1.0, 0.3, 0.0]
    assert semantic_consistency(SessionScores((1.0,) * 5, sc=tuple(steps))) == pytest.approx(47.5)
    # one unusable judge answer leaves the session undefined, never a partial mean
    assert semantic_consistency(SessionScores((1.0,) * 5, sc=(0.6, None, 0.3, 0.0))) is None
    assert semantic_consistency(SessionScores((1.0,) * 5)) is None


def test_overediting_rate_by_hand():
    from faceedit_bench.analysis.session_metrics import overediting_rate
    from faceedit_bench.records import Step
    from faceedit_bench.scoring.overediting import session_oer

    keys = ("hair-color", "beard", "hats")
    base = {k: frozenset() for k in keys}
    states = [
        {**base, "hair-color": frozenset({"black hair"})},
        {**base, "hair-color": frozenset({"red hair"}), "beard": frozenset({"stubble"})},  # 1 overedit (beard)
        {**base, "hair-color": frozenset({"red hair", "brown hair"}), "beard": frozenset({"stubble"}),
         "hats": frozenset({"beret"})},  # hats added: 1; hair overlaps multi-label: no change (not the target)
        {**base, "hair-color": frozenset({"brown hair"}), "beard": frozenset({"stubble"}),
         "hats": frozenset({"beret"})},  # target change only
        {**base, "hair-color": frozenset({"gray hair"}), "hats": frozenset({"beret"})},  # beard removed: 1
    ]
    steps = [Step(1, "dye red", "crimson red hair", "red hair", "hair-color", "Hair"),
             Step(2, "add beret", "beret", "beret", "hats", "Accessories"),
             Step(3, "brown", "chestnut brown hair", "brown hair", "hair-color", "Hair"),
             Step(4, "gray", "silver hair", "gray hair", "hair-color", "Hair")]
    result = session_oer(states, steps)
    assert result.n_overedits == 2 and result.oer == 0.5
    assert overediting_rate(SessionScores((1.0,) * 5, oer=result.oer)) == 50.0
    # a missing tracked state: undefined, never "no overedits"
    missing = session_oer([states[0], None, *states[2:]], steps)
    assert missing.oer is None and overediting_rate(SessionScores((1.0,) * 5, oer=missing.oer)) is None


def test_k_group_and_one_vs_rest_tests_in_the_report_agree_with_scipy():
    """Race with four groups: Kruskal-Wallis across them and White vs the rest (Mann-Whitney U),
    on the sessions' Drop_FSS, equal scipy's on the same values."""
    from faceedit_bench.config import AnalysisConf

    rng = np.random.default_rng(3)
    races = ["White", "Black", "Indian", "East Asian"]
    agg = Aggregator([SessionMetric("drop_fss", False, "%", "", drop_fss)], 0.95,
                     analysis=AnalysisConf(n_resamples=199, one_vs_rest={"race": "White"}, intersections=[]))
    by_race: dict[str, list[float]] = {r: [] for r in races}
    for i in range(40):
        race = races[i % 4]
        fss = (0.9, *(0.9 - rng.uniform(0, 0.3) - 0.05 * (i % 4) for _ in range(4)))
        result = session(f"f{i}", "male", fss)
        result.face.demographics["race"] = race  # type: ignore[index]
        values = agg.add(result)
        by_race[race].append(values["drop_fss"])
    tests = agg.sections()["group_tests"]
    kruskal = tests["k_groups"]["race"]["drop_fss"]
    h, p = stats.kruskal(*(by_race[r] for r in sorted(races)))
    assert kruskal["kruskal"]["h"] == pytest.approx(h) and kruskal["kruskal"]["p_value"] == pytest.approx(p)
    assert kruskal["disparity"]["ci_low"] <= kruskal["disparity"]["value"] <= kruskal["disparity"]["ci_high"]
    versus = tests["one_vs_rest"]["race=White"]["drop_fss"]
    rest = [v for r in races if r != "White" for v in by_race[r]]
    u, p = stats.mannwhitneyu(by_race["White"], rest, alternative="two-sided")
    assert versus["u"] == pytest.approx(u) and versus["p_value"] == pytest.approx(p)
    assert "gender" not in tests["k_groups"]  # two groups: the WD tests cover them
