"""Disparity statistics against scipy and against hand-computed cases (METHODOLOGY §7)."""

from __future__ import annotations

import inspect
import itertools
import json
import math

import numpy as np
import pytest
from scipy import stats

import faceedit_bench.analysis.permutation as permutation
from faceedit_bench.analysis.disparity import GroupTest, compare_groups, wasserstein


def one(a, b, *, clusters_a=None, clusters_b=None, higher_is_better=False, name=None, **kwargs) -> dict:
    test = GroupTest("drop_fss", "gender", "female", "male", np.asarray(a, float), np.asarray(b, float),
                     clusters_a=clusters_a, clusters_b=clusters_b, higher_is_better=higher_is_better, name=name)
    return compare_groups([test], **kwargs)[0]


def scipy_p(a, b, n_resamples: int) -> float:
    # scipy >= 1.15 takes rng=, older versions random_state=
    seed_arg = "rng" if "rng" in inspect.signature(stats.permutation_test).parameters else "random_state"
    res = stats.permutation_test((np.asarray(a, float), np.asarray(b, float)), stats.wasserstein_distance,
                                 permutation_type="independent", alternative="greater", n_resamples=n_resamples,
                                 vectorized=False, **{seed_arg: np.random.default_rng(12345)})
    return float(res.pvalue)


def within_monte_carlo_error(p: float, q: float, n_resamples: int) -> bool:
    # two independent Monte Carlo estimates of one p-value: 4 standard errors of their difference
    centre = (p + q) / 2
    return abs(p - q) <= 4 * math.sqrt(2 * centre * (1 - centre) / n_resamples) + 2 / n_resamples


# -- the distance -----------------------------------------------------------------------------


@pytest.mark.parametrize("seed", range(5))
def test_distance_equals_scipy_on_unequal_samples(seed):
    rng = np.random.default_rng(seed)
    a, b = rng.normal(0, 10, rng.integers(2, 300)), rng.normal(3, 12, rng.integers(2, 300))
    assert wasserstein(a, b) == pytest.approx(stats.wasserstein_distance(a, b), rel=1e-12)
    assert one(a, b, n_resamples=99)["wd"] == pytest.approx(stats.wasserstein_distance(a, b), rel=1e-12)


def test_distance_equals_scipy_with_ties():
    rng = np.random.default_rng(7)
    for a, b in [
        (rng.integers(0, 5, 40) * 25.0, rng.integers(0, 6, 61) * 25.0),  # OER-like, few distinct values
        (rng.integers(0, 41, 300) * 2.5, rng.integers(0, 41, 200) * 2.5),  # SC-like
        (np.r_[np.zeros(400), np.ones(30)], np.r_[np.zeros(300), np.full(90, 2.0)]),  # runs longer than LONG_RUN
        (np.array([1.0, 1.0, 1.0]), np.array([1.0, 2.0])),
    ]:
        expected = stats.wasserstein_distance(a, b)
        assert wasserstein(a, b) == pytest.approx(expected, rel=1e-12, abs=1e-12)
        assert one(a, b, n_resamples=99)["wd"] == pytest.approx(expected, rel=1e-12, abs=1e-12)


def test_distance_by_hand():
    assert wasserstein([0, 1], [2, 3]) == pytest.approx(2.0)
    assert wasserstein([0, 0, 4], [0]) == pytest.approx(4 / 3)  # F differs by 1/3 over [0, 4)
    assert wasserstein([5, 5], [5, 5, 5]) == 0.0


# -- p-values against scipy -------------------------------------------------------------------


@pytest.mark.parametrize("case", ["null", "clear_difference", "small_shift", "ties"])
def test_monte_carlo_p_value_agrees_with_scipy(case):
    rng = np.random.default_rng(3)
    a, b = {
        "null": (rng.normal(0, 1, 25), rng.normal(0, 1, 30)),
        "clear_difference": (rng.normal(0, 1, 25), rng.normal(2, 1, 30)),
        "small_shift": (rng.normal(0, 1, 25), rng.normal(0.5, 1, 30)),
        "ties": (rng.integers(0, 4, 25) * 25.0, rng.integers(1, 5, 30) * 25.0),
    }[case]
    n = 9999
    result = one(a, b, n_resamples=n, seed=1)
    expected = scipy_p(a, b, n)
    assert result["exact"] is False and result["n_resamples"] == n
    assert within_monte_carlo_error(result["p_value"], expected, n), (result["p_value"], expected)
    if case == "clear_difference":
        assert result["p_value"] == expected == 1 / (n + 1)


def test_long_tie_runs_take_the_hypergeometric_path_and_agree_with_scipy():
    rng = np.random.default_rng(11)
    a = np.r_[np.zeros(300), rng.integers(1, 4, 40) * 25.0]
    b = np.r_[np.zeros(280), rng.integers(1, 4, 70) * 25.0]
    n = 1999
    steps = permutation._SessionSteps(permutation.Pool(a, b))
    assert steps.hypergeometric.any()
    assert within_monte_carlo_error(one(a, b, n_resamples=n)["p_value"], scipy_p(a, b, n), n)


def test_resamples_in_several_chunks(monkeypatch):
    monkeypatch.setattr(permutation, "CHUNK", 700)
    rng = np.random.default_rng(5)
    a, b = rng.normal(0, 1, 20), rng.normal(0.6, 1, 25)
    result = one(a, b, n_resamples=2000)
    assert result["n_resamples"] == 2000
    assert result["wd"] == pytest.approx(stats.wasserstein_distance(a, b), rel=1e-12)
    assert within_monte_carlo_error(result["p_value"], scipy_p(a, b, 2000), 2000)


@pytest.mark.parametrize(("a", "b"), [
    ([0.3, 1.2, 2.5], [0.1, 3.3, 4.0, 5.5]),  # 35 partitions
    ([0.0, 0.0, 1.0, 2.0], [0.0, 1.0, 1.0, 3.0, 3.0]),  # ties, 126 partitions
    ([1.0, 2.0, 3.0, 4.0, 5.0, 6.0], [2.5, 7.0, 8.0, 9.0, 10.0, 11.0, 12.0]),  # 1716 partitions
])
def test_exact_branch_equals_scipy(a, b):
    n_max = math.comb(len(a) + len(b), len(a))
    result = one(a, b)
    assert result["exact"] is True and result["n_resamples"] == n_max
    assert result["p_value"] == pytest.approx(scipy_p(a, b, 9999), rel=1e-12)


def test_exact_p_value_by_hand():
    # [0, 1] vs [2, 3]: of the 6 splits, 2 have WD 2 ({0,1}|{2,3} and back) and 4 have WD 1
    result = one([0, 1], [2, 3])
    assert (result["wd"], result["p_value"], result["exact"], result["n_resamples"]) == (2.0, 2 / 6, True, 6)


def test_exact_branch_follows_n_resamples():
    a, b = [0.3, 1.2, 2.5], [0.1, 3.3, 4.0, 5.5]  # 35 partitions
    assert one(a, b, n_resamples=35)["exact"] is True
    monte_carlo = one(a, b, n_resamples=34)
    assert monte_carlo["exact"] is False and monte_carlo["n_resamples"] == 34


def test_sampled_partitions_are_uniform():
    # 8 distinct values split 3 | 5: 56 partitions; the sampled null must hit each WD value as
    # often as the partitions giving it (chi-square against the exact enumeration)
    a, b = np.array([0.0, 1.1, 2.3]), np.array([3.6, 5.0, 6.5, 8.1, 9.8])
    pool = permutation.Pool(a, b)
    exact = np.round(permutation._enumerated_session_wd(pool)[1:], 9)
    sampled = np.round(permutation._sampled_session_wd(pool, permutation._SessionSteps(pool), 56_000,
                                                     np.random.Generator(np.random.SFC64(0)))[1:], 9)
    values, expected = np.unique(exact, return_counts=True)
    observed = np.array([np.count_nonzero(sampled == v) for v in values])
    assert observed.sum() == sampled.size  # no value outside the exact null
    assert stats.chisquare(observed, expected * 1000).pvalue > 1e-3


def test_random_cluster_assignment_is_uniform_with_fixed_group_sizes():
    assignment = permutation._random_assignment(2, 3, 30_000, np.random.Generator(np.random.SFC64(1)))
    assert (assignment.sum(axis=0) == 2).all()
    subsets = [tuple(np.flatnonzero(col)) for col in assignment.T]
    counts = np.array([subsets.count(c) for c in itertools.combinations(range(5), 2)])
    assert stats.chisquare(counts).pvalue > 1e-3


# -- flag and direction -----------------------------------------------------------------------


def paper_flag(result: dict) -> bool | None:
    return result["paper_rule"]["bias"]


def test_paper_rule_needs_both_a_large_distance_and_a_small_p():
    rng = np.random.default_rng(2)
    big_and_significant = one(rng.normal(30, 5, 200), rng.normal(36, 5, 200))
    assert big_and_significant["wd"] > 3 and big_and_significant["p_value"] < 0.05 and paper_flag(big_and_significant)
    big_not_significant = one([0, 10], [20, 30])  # WD 20 but the exact p is 1/3
    assert big_not_significant["wd"] > 3 and big_not_significant["p_value"] > 0.05
    assert paper_flag(big_not_significant) is False
    small_but_significant = one(rng.normal(30, 1, 400), rng.normal(31, 1, 400))
    assert small_but_significant["wd"] < 3 and small_but_significant["p_value"] < 0.05
    assert paper_flag(small_but_significant) is False
    assert paper_flag(one(rng.normal(30, 1, 400), rng.normal(31, 1, 400), threshold=0.5)) is True
    assert big_and_significant["threshold"] == 3.0 and big_and_significant["alpha"] == 0.05


def test_without_identities_nothing_is_flagged_and_the_outputs_say_why():
    rng = np.random.default_rng(2)
    result = one(rng.normal(30, 5, 200), rng.normal(36, 5, 200))
    assert paper_flag(result) is True
    assert result["bias"] is None and result["bias_status"] == "not_tested"
    assert "no identity labels" in result["not_tested_reason"]


def test_the_honest_flag_needs_a_large_distance_and_a_small_corrected_clustered_p():
    rng = np.random.default_rng(2)
    ids_a, ids_b = np.repeat(np.arange(20), 5), np.repeat(np.arange(20, 40), 5)
    shifted = one(rng.normal(30, 5, 100), rng.normal(36, 5, 100), clusters_a=ids_a, clusters_b=ids_b, n_resamples=999)
    assert shifted["p_clustered"] < 0.05 and shifted["p_holm"] == shifted["p_clustered"]  # a family of one
    assert shifted["bias"] is True and shifted["bias_status"] == "yes" and shifted["family_size"] == 1
    near = one(rng.normal(30, 1, 100), rng.normal(31, 1, 100), clusters_a=ids_a, clusters_b=ids_b, n_resamples=999)
    assert near["wd"] < 3 and near["bias"] is False and near["bias_status"] == "no"


def test_direction_follows_higher_is_better():
    low, high = [10.0, 11.0, 12.0], [20.0, 21.0, 22.0]
    drop = one(low, high, higher_is_better=False)  # group_a = female has the lower (better) Drop_FSS
    assert (drop["worst_group"], drop["best_group"]) == ("male", "female")
    sc = one(low, high, higher_is_better=True)  # lower SC is worse
    assert (sc["worst_group"], sc["best_group"]) == ("female", "male")
    tie = one([1.0, 3.0], [2.0, 2.0])
    assert (tie["worst_group"], tie["best_group"]) == (None, None)


def test_group_summaries_are_the_statistics_module_summaries():
    from faceedit_bench.analysis.statistics import summarize

    a, b = [1.0, 2.0, 4.0, 7.0], [3.0, 3.5, 9.0]
    result = one(a, b, confidence=0.9)
    assert result["groups"] == {"female": summarize(a, 0.9), "male": summarize(b, 0.9)}


# -- seeds ------------------------------------------------------------------------------------


def test_same_seed_same_result_and_other_tests_do_not_matter():
    rng = np.random.default_rng(4)
    target = GroupTest("sc", "age_group", "young", "old", rng.normal(0, 1, 40), rng.normal(0.4, 1, 50))
    others = [GroupTest("oer", c, "x", "y", rng.normal(0, 1, 30), rng.normal(0, 1, 30)) for c in ("a", "b", "c")]
    alone = compare_groups([target], seed=7)[0]
    assert compare_groups([target], seed=7)[0] == alone
    mixed = compare_groups([others[0], target, *others[1:]], seed=7, workers=2)
    assert mixed[1] == alone
    assert compare_groups([*others, target], seed=7, workers=1)[3] == alone
    assert compare_groups([target], seed=8)[0]["p_value"] != alone["p_value"]
    renamed = GroupTest(**{**target.__dict__, "name": "another/run/sc/age_group"})
    assert compare_groups([renamed], seed=7)[0]["p_value"] != alone["p_value"]


def test_clustering_does_not_change_the_primary_p_value():
    rng = np.random.default_rng(6)
    a, b = rng.normal(0, 1, 60), rng.normal(0.3, 1, 80)
    plain = one(a, b, seed=3)
    clustered = one(a, b, clusters_a=np.repeat(np.arange(6), 10), clusters_b=np.repeat(np.arange(8), 10), seed=3)
    assert clustered["p_value"] == plain["p_value"] and clustered["wd"] == plain["wd"]
    assert plain["clustered"] is None and plain["clustered_reason"] == "no cluster labels given"


def test_duplicate_names_are_refused():
    t = GroupTest("sc", "gender", "f", "m", np.ones(3), np.zeros(3))
    with pytest.raises(ValueError, match="unique"):
        compare_groups([t, t])


# -- the clustered sensitivity analysis -------------------------------------------------------


def test_clustered_p_is_much_larger_when_one_cluster_drives_the_difference():
    rng = np.random.default_rng(9)
    # 10 identities per group, 20 identical sessions each; one identity of group A is far off
    per_a, per_b = rng.normal(0, 1, 10), rng.normal(0, 1, 10)
    per_a[0] = 12.0
    a, b = np.repeat(per_a, 20), np.repeat(per_b, 20)
    ids_a, ids_b = np.repeat([f"a{i}" for i in range(10)], 20), np.repeat([f"b{i}" for i in range(10)], 20)
    result = one(a, b, clusters_a=ids_a, clusters_b=ids_b)
    clustered = result["clustered"]
    assert result["p_value"] < 0.01  # sessions taken as independent: "significant"
    assert clustered["p_value"] > 0.1 and clustered["p_value"] > 20 * result["p_value"]
    assert clustered["clusters"] == {"female": 10, "male": 10} and clustered["shared_clusters"] == 0
    assert clustered["exact"] is False and clustered["n_resamples"] == 9999


def test_under_the_null_only_the_clustered_p_value_keeps_its_level():
    # identities differ (random effect sd 1) but groups do not: sessions of one identity are
    # alike, so the session-level test rejects far too often, the block permutation does not
    rng = np.random.default_rng(13)
    tests = []
    for i in range(200):
        effects = rng.normal(0, 1, 16)
        values = np.repeat(effects, 10) + rng.normal(0, 0.3, 160)
        ids = np.repeat(np.arange(16), 10)
        tests.append(GroupTest("drop_fss", "gender", "f", "m", values[:80], values[80:], ids[:80], ids[80:],
                               name=f"null{i}"))
    results = compare_groups(tests, n_resamples=499)
    naive = np.array([r["p_value"] for r in results])
    clustered = np.array([r["clustered"]["p_value"] for r in results])
    assert np.mean(naive < 0.05) > 0.3
    assert np.mean(clustered < 0.05) < 0.1
    assert stats.kstest(clustered, "uniform").pvalue > 1e-3


def test_p_values_are_uniform_under_the_null():
    rng = np.random.default_rng(14)
    tests = [GroupTest("sc", "age_group", "y", "o", rng.normal(0, 1, 30), rng.normal(0, 1, 45), name=f"t{i}")
             for i in range(300)]
    p = np.array([r["p_value"] for r in compare_groups(tests, n_resamples=499)])
    assert stats.kstest(p, "uniform").pvalue > 1e-3


def test_clustered_exact_branch_by_brute_force():
    rng = np.random.default_rng(10)
    sizes = [3, 1, 4, 2, 5, 2]  # sessions per identity; identities 0-2 in group A, 3-5 in group B
    values = [rng.normal(i, 1, n).round(1) for i, n in enumerate(sizes)]  # rounding makes ties
    a, b = np.concatenate(values[:3]), np.concatenate(values[3:])
    ids = [np.full(n, f"id{i}") for i, n in enumerate(sizes)]
    result = one(a, b, clusters_a=np.concatenate(ids[:3]), clusters_b=np.concatenate(ids[3:]))
    observed = stats.wasserstein_distance(a, b)
    null = [stats.wasserstein_distance(np.concatenate([values[i] for i in chosen]),
                                       np.concatenate([values[i] for i in range(6) if i not in chosen]))
            for chosen in itertools.combinations(range(6), 3)]
    expected = np.mean(np.asarray(null) >= observed * (1 - 1e-12))
    clustered = result["clustered"]
    assert (clustered["exact"], clustered["n_resamples"]) == (True, 20)
    assert clustered["p_value"] == pytest.approx(expected)


def test_clustered_monte_carlo_agrees_with_a_block_permutation_by_hand():
    rng = np.random.default_rng(12)
    sizes = rng.integers(1, 6, 16)
    values = [rng.normal(0.15 * (i >= 8), 1, n) for i, n in enumerate(sizes)]
    a, b = np.concatenate(values[:8]), np.concatenate(values[8:])
    ids = [np.full(n, i) for i, n in enumerate(sizes)]
    result = one(a, b, clusters_a=np.concatenate(ids[:8]), clusters_b=np.concatenate(ids[8:]), n_resamples=4999)
    hand = np.random.default_rng(0)
    observed = stats.wasserstein_distance(a, b)
    hits = 0
    for _ in range(4999):
        chosen = set(hand.permutation(16)[:8].tolist())
        wd = stats.wasserstein_distance(np.concatenate([values[i] for i in chosen]),
                                        np.concatenate([values[i] for i in range(16) if i not in chosen]))
        hits += wd >= observed * (1 - 1e-12)
    assert within_monte_carlo_error(result["clustered"]["p_value"], (hits + 1) / 5000, 4999)


def test_clustered_is_none_with_a_reason_when_it_cannot_run():
    a, b = np.arange(6.0), np.arange(6.0) + 1
    one_cluster = one(a, b, clusters_a=np.zeros(6), clusters_b=np.arange(6))
    assert one_cluster["clustered"] is None and "at least 2" in one_cluster["clustered_reason"]
    assert one_cluster["p_value"] is not None
    with pytest.raises(ValueError, match="one identity per value"):
        one(a, b, clusters_a=np.arange(5), clusters_b=np.arange(6))


def test_a_cluster_in_both_groups_counts_as_shared():
    a, b = np.arange(8.0), np.arange(8.0) + 0.5
    result = one(a, b, clusters_a=np.array(list("aabbccdd")), clusters_b=np.array(list("aaeeffgg")))
    assert result["clustered"]["shared_clusters"] == 1 and result["clustered"]["clusters"] == {"female": 4, "male": 4}


# -- degenerate input -------------------------------------------------------------------------


@pytest.mark.parametrize(("a", "b", "small"), [([], [1.0, 2.0], "female has 0"), ([1.0], [1.0, 2.0], "female has 1"),
                                               ([1.0, 2.0], [3.0], "male has 1")])
def test_too_few_sessions_give_no_number(a, b, small):
    result = one(a, b)
    assert result["wd"] is None and result["p_value"] is None and result["bias"] is None
    assert small in result["reason"] and result["clustered"] is None
    assert result["bias_status"] == "not_tested" and small in result["not_tested_reason"]
    assert result["groups"]["female"]["n"] == len(a)


def test_all_equal_values():
    result = one(np.full(30, 4.0), np.full(40, 4.0), clusters_a=np.arange(30) % 3, clusters_b=np.arange(40) % 4)
    assert (result["wd"], result["p_value"], paper_flag(result)) == (0.0, 1.0, False)
    assert result["clustered"]["p_value"] == 1.0
    assert result["bias_status"] == "no" and result["bias"] is False  # 3 and 4 identities: 35 arrangements


def test_bad_input_is_refused_with_a_clear_message():
    with pytest.raises(ValueError, match="non-finite"):
        one([1.0, np.nan], [1.0, 2.0])
    with pytest.raises(ValueError, match="n_resamples"):
        one([1.0, 2.0], [1.0, 2.0], n_resamples=0)
    with pytest.raises(ValueError, match="alpha"):
        one([1.0, 2.0], [1.0, 2.0], alpha=1.5)


def test_results_are_json_ready():
    rng = np.random.default_rng(1)
    results = compare_groups([
        GroupTest("drop_fss", "gender", "f", "m", rng.normal(0, 1, 30), rng.normal(0, 1, 20),
                  clusters_a=np.arange(30) % 5, clusters_b=np.arange(20) % 4),
        GroupTest("sc", "gender", "f", "m", np.array([1.0]), np.array([2.0, 3.0])),
    ], n_resamples=199)
    assert json.loads(json.dumps(results)) == results
    assert set(results[0]) == {"name", "metric", "contrast", "groups", "wd", "p_value", "n_resamples", "exact",
                               "bias", "worst_group", "best_group", "threshold", "alpha", "clustered",
                               "clustered_reason", "seed", "reason", "p_clustered", "p_holm", "q_value",
                               "bias_status", "not_tested_reason", "n_identities", "paper_rule", "family_size"}
