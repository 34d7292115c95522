"""Group statistics beyond two groups (issue 12 item 6), against scipy/statsmodels called directly,
hand-computed cases and edge cases."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest
from scipy import stats
from statsmodels.stats.multitest import multipletests
from statsmodels.stats.proportion import proportion_confint

from faceedit_bench.analysis.group_tests import compare_k_groups, kruskal_wallis, one_vs_rest, worst_groups
from faceedit_bench.analysis.intersections import (
    GENDER_CODES,
    PAPER_A_CELLS,
    SKIN_CODES,
    intersect_labels,
    intersectional_groups,
)
from faceedit_bench.analysis.paired import holm, pair_up, paired_comparison, paired_family
from faceedit_bench.analysis.rates import Threshold, group_rates, threshold_rates
from faceedit_bench.analysis.samples import generator, rng_argument, split_by_label
from faceedit_bench.analysis.statistics import summarize

RACES = ("White", "Black", "East Asian", "Southeast Asian", "Indian", "Middle Eastern", "Latino")


def plain_json(value) -> None:
    """Only str/int/float/bool/None leaves (no numpy scalars), and no NaN."""
    json.dumps(value, allow_nan=False)

    def walk(v):
        if isinstance(v, dict):
            assert all(type(k) is str for k in v), v
            for item in v.values():
                walk(item)
        elif isinstance(v, list):
            for item in v:
                walk(item)
        else:
            assert v is None or type(v) in (str, int, float, bool), (v, type(v))

    walk(value)


def scores_by_race(seed: int, n: int = 240, shift: float = 0.0) -> dict[str, np.ndarray]:
    rng = np.random.default_rng(seed)
    return {race: np.clip(np.round(rng.normal(3 + shift * i / 6, 1.2, n)), 1, 5) for i, race in enumerate(RACES)}


# -- k groups ---------------------------------------------------------------------------------


@pytest.mark.parametrize("seed", range(3))
def test_kruskal_wallis_equals_scipy(seed):
    groups = scores_by_race(seed, n=int(np.random.default_rng(seed).integers(20, 80)), shift=0.8)
    result = compare_k_groups(groups, name="skin/race", n_resamples=99, higher_is_better=False)
    h, p = stats.kruskal(*groups.values())
    assert result["kruskal"]["h"] == pytest.approx(float(h), rel=1e-12)
    assert result["kruskal"]["p_value"] == pytest.approx(float(p), rel=1e-12)
    assert result["kruskal"]["df"] == 6
    assert result["kruskal"]["epsilon_squared"] == pytest.approx(float(h) / (result["n"] - 1))
    assert result["kruskal"]["groups"] == list(RACES)
    for race in RACES:
        assert result["groups"][race] == summarize(groups[race])
    plain_json(result)


def test_kruskal_wallis_detects_a_real_difference_and_not_a_null_one():
    shifted = compare_k_groups(scores_by_race(1, shift=1.5), name="t", n_resamples=99, higher_is_better=False)
    assert shifted["kruskal"]["p_value"] < 1e-6
    null = compare_k_groups(scores_by_race(1, shift=0.0), name="t", n_resamples=99, higher_is_better=False)
    assert null["kruskal"]["p_value"] > 0.01


def test_max_minus_min_by_hand():
    groups = {"a": [1.0, 2.0, 3.0], "b": [4.0, 6.0], "c": [0.0, 1.0]}  # means 2, 5, 0.5
    lower_better = compare_k_groups(groups, name="t", n_resamples=199, higher_is_better=False)["disparity"]
    assert lower_better["value"] == pytest.approx(4.5)
    assert (lower_better["max_group"], lower_better["min_group"]) == ("b", "c")
    assert (lower_better["best_group"], lower_better["worst_group"]) == ("c", "b")
    higher_better = compare_k_groups(groups, name="t", n_resamples=199, higher_is_better=True)["disparity"]
    assert (higher_better["best_group"], higher_better["worst_group"]) == ("b", "c")
    assert lower_better["ci_low"] <= lower_better["value"] <= lower_better["ci_high"]


def test_bootstrap_is_scipys_within_group_resampling_with_the_test_seed():
    groups = scores_by_race(4, n=50, shift=0.5)
    result = compare_k_groups(groups, name="skin/race", n_resamples=999, seed=11,
        confidence=0.9, higher_is_better=False)["disparity"]

    def max_minus_min(*samples, axis=-1):
        means = np.stack([s.mean(axis=axis) for s in samples])
        return means.max(axis=0) - means.min(axis=0)

    ordered = tuple(groups[g] for g in sorted(groups))
    expected = stats.bootstrap(ordered, max_minus_min, n_resamples=999, vectorized=True, paired=False,
                               confidence_level=0.9, method="percentile",
                               **rng_argument(stats.bootstrap, generator(11, "bootstrap/skin/race")))
    assert result["ci_low"] == pytest.approx(float(expected.confidence_interval.low), rel=1e-12)
    assert result["ci_high"] == pytest.approx(float(expected.confidence_interval.high), rel=1e-12)
    assert result["standard_error"] == pytest.approx(float(expected.standard_error), rel=1e-12)


def test_bootstrap_agrees_with_a_hand_written_within_group_bootstrap():
    groups = scores_by_race(5, n=40, shift=1.0)
    result = compare_k_groups(groups, name="t", n_resamples=4000, seed=3, higher_is_better=False)["disparity"]
    rng = np.random.default_rng(99)  # another stream: agreement within Monte Carlo error only
    draws = []
    for _ in range(4000):
        means = [rng.choice(x, x.size, replace=True).mean() for x in groups.values()]
        draws.append(max(means) - min(means))
    low, high = np.percentile(draws, [2.5, 97.5])
    assert result["ci_low"] == pytest.approx(low, abs=0.08)
    assert result["ci_high"] == pytest.approx(high, abs=0.08)


def test_bootstrap_is_reproducible_and_seeded_by_name_not_by_order():
    groups = scores_by_race(6, n=30, shift=0.5)
    first = compare_k_groups(groups, name="skin/race", n_resamples=499, seed=7, higher_is_better=False)
    compare_k_groups(groups, name="other", n_resamples=499,
        seed=7, higher_is_better=False)  # no shared state between calls
    again = compare_k_groups(groups, name="skin/race", n_resamples=499, seed=7, higher_is_better=False)
    assert first == again
    reversed_groups = dict(reversed(list(groups.items())))
    reordered = compare_k_groups(reversed_groups, name="skin/race", n_resamples=499,
        seed=7, higher_is_better=False)["disparity"]
    assert (reordered["ci_low"], reordered["ci_high"]) == (first["disparity"]["ci_low"], first["disparity"]["ci_high"])
    renamed = compare_k_groups(groups, name="race/skin", n_resamples=499, seed=7, higher_is_better=False)["disparity"]
    reseeded = compare_k_groups(groups, name="skin/race", n_resamples=499, seed=8, higher_is_better=False)["disparity"]
    assert (renamed["ci_low"], renamed["ci_high"]) != (first["disparity"]["ci_low"], first["disparity"]["ci_high"])
    assert (reseeded["ci_low"], reseeded["ci_high"]) != (first["disparity"]["ci_low"], first["disparity"]["ci_high"])


def test_groups_too_small_are_left_out_with_a_reason():
    groups = {"a": [1.0, 2.0, 3.0], "b": [2.0, 5.0, 4.0], "one": [9.0], "empty": []}
    result = compare_k_groups(groups, name="t", n_resamples=99, higher_is_better=False)
    assert set(result["left_out"]) == {"one", "empty"}
    assert "1 value(s)" in result["left_out"]["one"] and "0 value(s)" in result["left_out"]["empty"]
    assert result["groups"]["one"]["n"] == 1 and result["groups"]["empty"] == summarize([])
    assert result["kruskal"]["groups"] == ["a", "b"]
    h, p = stats.kruskal(groups["a"], groups["b"])
    assert result["kruskal"]["p_value"] == pytest.approx(float(p))
    assert result["disparity"]["value"] == pytest.approx(11 / 3 - 2)  # the single 9.0 is not the max
    assert (result["k"], result["n"]) == (2, 6)
    plain_json(result)


def test_fewer_than_two_usable_groups_gives_reasons_not_numbers():
    result = compare_k_groups({"a": [1.0, 2.0], "b": [3.0]}, name="t", n_resamples=99, higher_is_better=False)
    assert result["kruskal"]["p_value"] is None and "at least 2" in result["kruskal"]["reason"]
    assert result["disparity"]["value"] is None and result["disparity"]["reason"]
    assert result["disparity"]["ci_low"] is None and result["disparity"]["ci_reason"]
    nothing = compare_k_groups({}, name="t", n_resamples=99, higher_is_better=False)
    assert nothing["kruskal"]["reason"] and nothing["disparity"]["reason"] and nothing["n"] == 0
    plain_json(result)
    plain_json(nothing)


def test_all_identical_values_give_no_p_value():
    result = compare_k_groups({"a": [3.0] * 5, "b": [3.0] * 4, "c": [3.0, 3.0]}, name="t",
        n_resamples=99, higher_is_better=False)
    assert result["kruskal"]["h"] is None and result["kruskal"]["p_value"] is None
    assert "identical" in result["kruskal"]["reason"]
    disparity = result["disparity"]
    assert disparity["value"] == 0.0 and disparity["best_group"] is None and disparity["worst_group"] is None
    assert disparity["ci_low"] is None and "degenerate" in disparity["ci_reason"]
    constant_within = compare_k_groups({"a": [1.0, 1.0], "b": [2.0, 2.0]}, name="t",
        n_resamples=99, higher_is_better=False)
    assert constant_within["kruskal"]["p_value"] is not None  # the groups differ: the test is defined
    assert constant_within["disparity"]["value"] == 1.0 and constant_within["disparity"]["ci_low"] is None
    plain_json(result)


def test_kruskal_wallis_refuses_an_empty_group_passed_directly():
    with pytest.raises(ValueError, match="no values"):
        kruskal_wallis({"a": np.array([1.0, 2.0]), "b": np.array([])})


@pytest.mark.parametrize("method", ["BCa", "basic"])
def test_other_interval_methods(method):
    result = compare_k_groups(scores_by_race(2, n=40, shift=1.0), name="t", n_resamples=999,
        ci_method=method, higher_is_better=False)
    assert result["disparity"]["ci_method"] == method
    assert result["disparity"]["ci_low"] < result["disparity"]["ci_high"]


@pytest.mark.parametrize("kwargs, match", [
    ({"ci_method": "bca"}, "ci_method"), ({"n_resamples": 0}, "n_resamples"), ({"seed": -1}, "seed"),
    ({"confidence": 1.0}, "confidence"), ({"name": ""}, "name"), ({"min_group_size": 0}, "min_group_size"),
])
def test_bad_settings_are_clear_errors(kwargs, match):
    with pytest.raises(ValueError, match=match):
        compare_k_groups({"a": [1.0, 2.0], "b": [2.0, 3.0]}, **{"name": "t", **kwargs}, higher_is_better=False)


def test_missing_values_are_an_error_not_a_number():
    with pytest.raises(ValueError, match="non-finite"):
        compare_k_groups({"a": [1.0, float("nan")], "b": [2.0, 3.0]}, name="t", higher_is_better=False)
    with pytest.raises(ValueError, match="numbers"):
        compare_k_groups({"a": [1.0, None], "b": [2.0, 3.0]}, name="t", higher_is_better=False)
    with pytest.raises(ValueError, match="group names"):
        compare_k_groups({1: [1.0, 2.0]}, name="t", higher_is_better=False)


# -- one vs rest ------------------------------------------------------------------------------


@pytest.mark.parametrize("seed", range(3))
def test_one_vs_rest_equals_scipy_mann_whitney(seed):
    groups = scores_by_race(seed, n=30, shift=1.0)
    result = one_vs_rest(groups, "White", name="skin/White", higher_is_better=False)
    rest = np.concatenate([groups[r] for r in RACES[1:]])
    expected = stats.mannwhitneyu(groups["White"], rest, alternative="two-sided")
    assert result["u"] == pytest.approx(float(expected.statistic))
    assert result["p_value"] == pytest.approx(float(expected.pvalue), rel=1e-12)
    assert result["rest"] == "non-White" and result["rest_groups"] == list(RACES[1:])
    assert result["groups"]["non-White"] == summarize(rest)
    assert result["rank_biserial"] == pytest.approx(2 * expected.statistic / (30 * rest.size) - 1)
    assert result["mean_difference"] == pytest.approx(groups["White"].mean() - rest.mean())
    plain_json(result)


def test_one_vs_rest_small_exact_case_and_direction():
    groups = {"White": [1.0, 2.0, 3.0], "Black": [4.0, 6.0], "Indian": [5.0]}
    result = one_vs_rest(groups, "White", name="t", higher_is_better=True, rest_label="non-White")
    expected = stats.mannwhitneyu([1, 2, 3], [4, 6, 5], alternative="two-sided", method="exact")
    assert result["u"] == 0.0 and result["p_value"] == pytest.approx(float(expected.pvalue)) == pytest.approx(0.1)
    assert result["rank_biserial"] == -1.0 and result["higher_group"] == "non-White"
    assert (result["best_group"], result["worst_group"]) == ("non-White", "White")
    lower_better = one_vs_rest(groups, "White", name="t", higher_is_better=False)
    assert (lower_better["best_group"], lower_better["worst_group"]) == ("White", "non-White")


def test_one_vs_rest_edge_cases():
    identical = one_vs_rest({"White": [2.0, 2.0], "Black": [2.0]}, "White", name="t", higher_is_better=False)
    assert identical["p_value"] is None and "identical" in identical["reason"]
    assert identical["mean_difference"] == 0.0
    no_rest = one_vs_rest({"White": [1.0, 2.0]}, "White", name="t", higher_is_better=False)
    assert no_rest["p_value"] is None and "non-White has no values" in no_rest["reason"]
    empty_focus = one_vs_rest({"White": [], "Black": [1.0, 2.0]}, "White", name="t", higher_is_better=False)
    assert empty_focus["p_value"] is None and "White has no values" in empty_focus["reason"]
    with pytest.raises(ValueError, match="not among the groups"):
        one_vs_rest({"Black": [1.0]}, "White", name="t", higher_is_better=False)
    with pytest.raises(ValueError, match="rest_label"):
        one_vs_rest({"White": [1.0], "Black": [2.0]}, "White", name="t", rest_label="Black", higher_is_better=False)
    plain_json(identical)


# -- intersectional groups --------------------------------------------------------------------


def test_intersect_labels():
    gender = ["male", "female", None, "female", "male"]
    skin = ["dark", "light", "dark", None, "light"]
    assert intersect_labels(gender, skin) == ["male × dark", "female × light", None, None, "male × light"]
    coded = intersect_labels(gender, skin, first_codes=GENDER_CODES, second_codes=SKIN_CODES, sep="")
    assert coded == ["MD", "FL", None, None, "ML"]
    with pytest.raises(ValueError, match="no code"):
        intersect_labels(["Male"], ["dark"], first_codes=GENDER_CODES, second_codes=SKIN_CODES)
    with pytest.raises(ValueError, match="both labels"):
        intersect_labels(["male"], [])


def test_intersectional_cells_and_two_worst_by_hand():
    # OER-like, lower is better: MD worst (mean 40), then ML (30), FL 10, FD 20
    rows = [("male", "light", 20), ("male", "light", 40), ("male", "dark", 30), ("male", "dark", 50),
            ("female", "light", 0), ("female", "light", 20), ("female", "dark", 10), ("female", "dark", 30),
            ("female", None, 99), (None, "dark", 99)]
    values = [float(v) for _, _, v in rows]
    result = intersectional_groups(values, [g for g, _, _ in rows], [s for _, s, _ in rows], name="oer/gxs",
                                   first_codes=GENDER_CODES, second_codes=SKIN_CODES, sep="", cells=PAPER_A_CELLS,
                                   n_resamples=199, higher_is_better=False)
    assert list(result["groups"]) == list(PAPER_A_CELLS)
    assert {c: result["groups"][c]["mean"] for c in PAPER_A_CELLS} == {"ML": 30.0, "MD": 40.0, "FL": 10.0,
                                                                        "FD": 20.0}
    assert result["unlabelled"] == 2 and result["test"] == "intersectional"
    assert result["worst"]["groups"] == ["MD", "ML"] and result["worst"]["means"] == [40.0, 30.0]
    assert result["worst"]["tie_at_cutoff"] is False
    assert result["disparity"]["value"] == 30.0 and result["disparity"]["worst_group"] == "MD"
    h, p = stats.kruskal([20, 40], [30, 50], [0, 20], [10, 30])
    assert result["kruskal"]["p_value"] == pytest.approx(float(p))
    higher_better = intersectional_groups(values, [g for g, _, _ in rows], [s for _, s, _ in rows], name="x",
                                          first_codes=GENDER_CODES, second_codes=SKIN_CODES,
                                              sep="", n_resamples=99, higher_is_better=False)
    # without higher_is_better=True the direction is lower-is-better; with it, FL and FD are worst
    flipped = worst_groups(higher_better["groups"], n=2, higher_is_better=True)
    assert flipped["groups"] == ["FL", "FD"]
    plain_json(result)


def test_intersectional_fixed_cells_report_empty_cells_and_reject_unknown_ones():
    result = intersectional_groups([1.0, 2.0, 3.0, 4.0], ["male"] * 4, ["light", "light", "dark", "dark"],
                                   name="t", first_codes=GENDER_CODES, second_codes=SKIN_CODES, sep="",
                                   cells=PAPER_A_CELLS, n_resamples=99, higher_is_better=False)
    assert result["groups"]["FL"]["n"] == 0 and result["groups"]["FD"]["n"] == 0
    assert set(result["left_out"]) == {"FL", "FD"}
    assert result["worst"]["groups"] == ["MD", "ML"] and result["worst"]["reason"] is None
    with pytest.raises(ValueError, match="not among the expected cells"):
        intersectional_groups([1.0], ["male"], ["dark"], name="t", cells=PAPER_A_CELLS, higher_is_better=False)


def test_worst_groups_ties_and_shortfall():
    summaries = {"a": summarize([1.0, 1.0]), "b": summarize([3.0, 3.0]), "c": summarize([3.0]),
                 "d": summarize([])}
    tied = worst_groups(summaries, n=1, higher_is_better=False)
    assert tied["groups"] == ["b"] and tied["tie_at_cutoff"] is True  # c has the same mean
    assert worst_groups(summaries, n=2, higher_is_better=False)["tie_at_cutoff"] is False
    short = worst_groups(summaries, n=4, higher_is_better=False)
    assert short["groups"] == ["b", "c", "a"] and "only 3" in short["reason"]
    plain_json(short)


def test_split_by_label_counts_unlabelled():
    groups, unlabelled = split_by_label([1.0, 2.0, 3.0], ["a", None, "a"])
    assert groups == {"a": [1.0, 3.0]} and unlabelled == 1
    with pytest.raises(ValueError, match="one label per value"):
        split_by_label([1.0], [])


# -- paired comparisons -----------------------------------------------------------------------


def paired_scores(seed: int, n_faces: int = 12, effect: float = -0.4):
    rng = np.random.default_rng(seed)
    baseline, feature = {}, {}
    for face in range(n_faces):
        for session in range(3):
            key = (f"face{face}", session, 1)
            baseline[key] = float(rng.integers(1, 6))
            feature[key] = float(np.clip(baseline[key] + np.round(rng.normal(effect, 1.0)), 1, 5))
    return baseline, feature


@pytest.mark.parametrize("seed", range(3))
def test_paired_comparison_equals_scipy_wilcoxon(seed):
    baseline, feature = paired_scores(seed)
    result = paired_comparison(baseline, feature, name="race", first_label="baseline", second_label="feature",
                               higher_is_better=False)
    d = np.array([feature[k] - baseline[k] for k in baseline])
    expected = stats.wilcoxon(d, zero_method="wilcox", alternative="two-sided")
    assert result["p_value"] == pytest.approx(float(expected.pvalue), rel=1e-12)
    assert result["statistic"] == pytest.approx(float(expected.statistic))
    # the same test on the two arrays, as paper (b)'s scripts call it
    assert result["p_value"] == pytest.approx(float(stats.wilcoxon(list(feature.values()),
                                                                   list(baseline.values())).pvalue), rel=1e-12)
    s = summarize(d)
    assert (result["mean_delta"], result["ci_low"], result["ci_high"]) == (s["mean"], s["ci_low"], s["ci_high"])
    assert result["n_pairs"] == d.size and result["n_zero"] == int(np.sum(d == 0))
    assert result["n_nonzero"] == d.size - result["n_zero"] and result["n_zero"] > 0  # zeros occur and are dropped
    assert result["direction"] == ("improved" if d.mean() < 0 else "worsened")
    plain_json(result)


def test_pairs_are_matched_by_key_and_unpaired_items_counted():
    first = {("f1", 0, 1): 3.0, ("f2", 0, 1): 4.0, ("f3", 0, 1): 5.0, ("only_first", 0, 1): 1.0}
    second = {("f3", 0, 1): 2.0, ("f1", 0, 1): 1.0, ("f2", 0, 1): 4.5, ("x", 1, 1): 5.0, ("y", 1, 2): 5.0}
    keys, a, b, unpaired = pair_up(first, second)
    assert keys == [("f1", 0, 1), ("f2", 0, 1), ("f3", 0, 1)] and unpaired == (1, 2)
    result = paired_comparison(first, second, name="t")
    assert result["n_pairs"] == 3 and result["unpaired"] == {"baseline": 1, "treatment": 2}
    assert result["mean_delta"] == pytest.approx((-2 + 0.5 - 3) / 3)
    assert result["p_value"] == pytest.approx(float(stats.wilcoxon([-2.0, 0.5, -3.0]).pvalue))
    assert result["direction"] is None  # no direction asked for


@pytest.mark.parametrize("d", [
    [1.0, 2.0, -0.5, 3.0, 4.5],  # no ties or zeros: scipy's exact null distribution
    [1.0, 1.0, 0.0, -1.0, 2.0, 2.0, 0.0, 3.0],  # ties and zeros, n <= 13: scipy's exact sign-flip enumeration
])
def test_small_paired_samples_match_scipy_and_are_deterministic(d):
    first = {("f", i, 1): 3.0 for i in range(len(d))}
    second = {k: 3.0 + x for k, x in zip(first, d)}
    result = paired_comparison(first, second, name="t")
    assert result["p_value"] == pytest.approx(float(stats.wilcoxon(d).pvalue), rel=1e-12)
    assert paired_comparison(first, second, name="t") == result


def test_all_zero_differences_give_no_p_value():
    scores = {("f", s, 1): float(s % 5 + 1) for s in range(10)}
    result = paired_comparison(scores, dict(scores), name="t", higher_is_better=True)
    assert result["p_value"] is None and result["statistic"] is None
    assert "all 10 paired differences are zero" in result["reason"]
    assert (result["n_pairs"], result["n_zero"], result["n_nonzero"]) == (10, 10, 0)
    assert result["mean_delta"] == 0.0 and result["direction"] == "unchanged"
    plain_json(result)


def test_nothing_paired():
    result = paired_comparison({("a", 0, 1): 1.0}, {("b", 0, 1): 2.0}, name="t")
    assert result["n_pairs"] == 0 and result["p_value"] is None and "nothing is paired" in result["reason"]
    assert result["mean_delta"] is None and result["median_delta"] is None
    plain_json(result)


def test_paired_input_errors():
    with pytest.raises(ValueError, match="distinct labels"):
        paired_comparison({}, {}, name="t", first_label="x", second_label="x")
    with pytest.raises(ValueError, match="mapping from pair key"):
        paired_comparison([1.0], [2.0], name="t")
    with pytest.raises(ValueError, match="non-finite"):
        paired_comparison({"a": float("nan")}, {"a": 1.0}, name="t")


def test_holm_equals_statsmodels_and_leaves_undefined_out():
    p = {"edit_success": 1e-11, "skin": 0.04, "race": 0.012, "gender": 0.03, "age": 0.2, "none": None}
    result = holm(p, alpha=0.05)
    defined = [v for v in p.values() if v is not None]
    reject, adjusted, _, _ = multipletests(defined, alpha=0.05, method="holm")
    assert result["m"] == 5 and result["left_out"] == {"none": "no p-value (see the test's reason)"}
    assert [result["tests"][k]["p_adjusted"] for k in p if k != "none"] == pytest.approx(list(adjusted))
    assert [result["tests"][k]["reject"] for k in p if k != "none"] == list(reject)
    # by hand: sorted 1e-11, .012, .03, .04, .2 times 5, 4, 3, 2, 1, running max
    assert result["tests"]["race"]["p_adjusted"] == pytest.approx(0.048)
    assert result["tests"]["gender"]["p_adjusted"] == pytest.approx(0.09)
    assert result["tests"]["skin"]["p_adjusted"] == pytest.approx(0.09)
    assert holm({})["m"] == 0
    with pytest.raises(ValueError, match=r"\[0, 1\]"):
        holm({"a": 1.5})
    plain_json(result)


def test_paired_family_applies_holm_across_axes():
    comparisons = []
    for axis, seed in (("race", 0), ("gender", 1), ("skin", 2)):
        baseline, feature = paired_scores(seed)
        comparisons.append(paired_comparison(baseline, feature, name=axis))
    comparisons.append(paired_comparison({"k": 1.0}, {"k": 1.0}, name="age"))  # all zero: no p
    family = paired_family(comparisons)
    _, adjusted, _, _ = multipletests([c["p_value"] for c in comparisons[:3]], method="holm")
    assert [t["p_holm"] for t in family["tests"][:3]] == pytest.approx(list(adjusted))
    assert family["tests"][3]["p_holm"] is None and family["tests"][3]["reject_holm"] is None
    assert all(t["holm_m"] == 3 for t in family["tests"]) and family["holm"]["left_out"] == {
        "age": "no p-value (see the test's reason)"}
    assert comparisons[0].get("p_holm") is None  # inputs are not modified
    with pytest.raises(ValueError, match="unique"):
        paired_family([comparisons[0], comparisons[0]])
    plain_json(family)


# -- threshold rates --------------------------------------------------------------------------


def wilson_by_hand(count: int, n: int, confidence: float = 0.95) -> tuple[float, float]:
    z = stats.norm.ppf(0.5 + confidence / 2)
    p = count / n
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z / (1 + z * z / n) * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n))
    return centre - half, centre + half


def test_threshold_rate_by_hand_and_against_statsmodels():
    scores = [1, 2, 3, 4, 5, 4, 4, 2]
    at_least_4 = Threshold(">=", 4).rate(scores)
    assert (at_least_4["count"], at_least_4["n"], at_least_4["rate"], at_least_4["percent"]) == (4, 8, 0.5, 50.0)
    assert at_least_4["rule"] == ">= 4"
    at_most_2 = Threshold("<=", 2).rate(scores, confidence=0.9)
    assert (at_most_2["count"], at_most_2["rate"]) == (3, 0.375)
    for result, count, confidence in ((at_least_4, 4, 0.95), (at_most_2, 3, 0.9)):
        low, high = proportion_confint(count, 8, alpha=1 - confidence, method="wilson")
        assert (result["ci_low"], result["ci_high"]) == pytest.approx((low, high), rel=1e-12)
        assert (result["ci_low"], result["ci_high"]) == pytest.approx(wilson_by_hand(count, 8, confidence))
    plain_json(at_least_4)


def test_threshold_rate_edges():
    none_hit = Threshold(">=", 4).rate([1.0, 2.0, 3.0])
    assert none_hit["rate"] == 0.0 and none_hit["ci_low"] == pytest.approx(0.0, abs=1e-12)
    assert none_hit["ci_high"] == pytest.approx(wilson_by_hand(0, 3)[1])
    all_hit = Threshold(">=", 4).rate([4.0, 5.0])
    assert all_hit["rate"] == 1.0 and all_hit["ci_high"] == pytest.approx(1.0)
    empty = Threshold(">=", 4).rate([])
    assert empty["rate"] is None and empty["ci_low"] is None and empty["reason"] and empty["n"] == 0
    on_the_threshold = Threshold(">=", 4).rate([3.9999, 4.0, 4.0001])
    assert on_the_threshold["count"] == 2  # exact comparison, no tolerance
    with pytest.raises(ValueError, match="Threshold"):
        threshold_rates([1.0], {"success": ">= 4"})  # type: ignore[dict-item]
    plain_json(empty)


def test_threshold_parse_and_validation():
    assert Threshold.parse(">=4") == Threshold(">=", 4.0)
    assert Threshold.parse(" <= 2 ") == Threshold("<=", 2.0)
    assert Threshold.parse("≥ 3") == Threshold(">=", 3.0)
    for bad in ("> 4", ">= x", "4", ">= inf"):
        with pytest.raises(ValueError, match="threshold"):
            Threshold.parse(bad)
    with pytest.raises(ValueError, match="operator"):
        Threshold("==", 3)


def test_group_rates_and_percentage_point_disparity_by_hand():
    groups = {"Indian": [3, 4, 5, 1], "White": [1, 1, 2, 3], "Black": [4, 4, 5, 1], "Latino": []}
    result = group_rates(groups, Threshold(">=", 3), name="race_change/race")
    rates = {g: r["rate"] for g, r in result["groups"].items()}
    assert rates == {"Indian": 0.75, "White": 0.25, "Black": 0.75, "Latino": None}
    assert result["disparity"]["max_minus_min_pp"] == pytest.approx(50.0)
    assert (result["disparity"]["max_group"], result["disparity"]["min_group"]) == ("Indian", "White")
    assert result["left_out"] == {"Latino": "no items"}
    assert (result["overall"]["count"], result["overall"]["n"]) == (7, 12)
    one_group = group_rates({"a": [1.0], "b": []}, Threshold(">=", 3), name="t")
    assert one_group["disparity"]["max_minus_min_pp"] is None and one_group["disparity"]["reason"]
    plain_json(result)


def test_threshold_rates_from_a_list_of_scores():
    # 1,680 scores of one model on a 1-5 scale: 1,546 at >= 4 (92.0 %), 104 at <= 2 (6.2 %), 30 threes
    scores = [5] * 1000 + [4] * 546 + [3] * 30 + [2] * 54 + [1] * 50
    rules = {"high_rate": Threshold(">=", 4), "low_rate": Threshold("<=", 2)}
    rates = threshold_rates(scores, rules)
    assert set(rates) == {"high_rate", "low_rate"}
    assert round(rates["high_rate"]["percent"], 1) == 92.0
    assert round(rates["low_rate"]["percent"], 1) == 6.2
    plain_json(rates)
