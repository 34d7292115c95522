"""Ratings core: the fit, the scale, the matrices, and validity on synthetic arenas of known strengths."""

import numpy as np
import pytest
from faceedit_bench_arena import bradley_terry as bt
from faceedit_bench_arena import simulate
from faceedit_bench_arena.ratings import ELO_SCALE, Battles, rate, to_elo, wins_by_identity
from scipy.stats import kendalltau


def test_batched_newton_agrees_with_choix():
    rng = np.random.default_rng(3)
    wins = rng.integers(0, 60, (7, 7)).astype(float)
    np.fill_diagonal(wins, 0)
    for prior in (0.0, 0.01, 2.0):
        np.testing.assert_allclose(bt.fit_many(wins[None], prior)[0], bt.fit(wins, prior), atol=1e-7)


def test_prior_keeps_an_editor_that_never_wins_finite():
    wins = np.array([[0, 5, 5], [0, 0, 3], [0, 2, 0]], dtype=float)  # editor 0 never loses
    theta = bt.fit_many(wins[None])[0]
    assert np.all(np.isfinite(theta)) and theta[0] > theta[1] and theta[0] > theta[2]


def test_ties_count_as_half_wins():
    # a: 1 win, b: 1 win, 4 ties -> equal; a: 2 wins, b: 0 wins, 4 ties -> same as 4 wins to 2 battles
    battles = Battles.of(["a", "b"], [0] * 6, [1] * 6, [1, 0, 0.5, 0.5, 0.5, 0.5], range(6))
    r = rate(battles, n_resamples=50)
    assert r.elo[0] == pytest.approx(r.elo[1])
    battles = Battles.of(["a", "b"], [0] * 6, [1] * 6, [1, 1, 0.5, 0.5, 0.5, 0.5], range(6))
    r = rate(battles, n_resamples=50, prior=0.0)
    # half wins: a scored 4 of 6 -> odds 2:1
    assert r.elo[0] - r.elo[1] == pytest.approx(ELO_SCALE * np.log(2.0))


def test_matrices_and_anchor():
    battles = Battles.of(["identity", "x", "y"], [1, 1, 2, 0, 1], [0, 0, 0, 2, 2], [1, 0.5, 1, 0, 1], [0, 0, 1, 1, 2])
    r = rate(battles, anchor="identity", n_resamples=100)
    assert r.elo[0] == 1000.0 and r.ci_low[0] == r.ci_high[0] == 1000.0
    np.testing.assert_array_equal(r.battles, [[0, 2, 2], [2, 0, 1], [2, 1, 0]])
    assert r.win_rate[1, 0] == pytest.approx(0.75) and r.win_rate[0, 1] == pytest.approx(0.25)
    np.testing.assert_allclose(r.predicted + r.predicted.T, 1.0 - np.eye(3) + np.eye(3))
    part = r.to_json()
    assert [e["editor"] for e in part["editors"]] == part["order"] and part["editors"][0]["rank"] == 1
    assert part["battles_per_pair"][0][0] == 0


def test_bad_input_is_refused_with_what_is_wrong():
    with pytest.raises(ValueError, match="two different editors"):
        Battles.of(["a", "b"], [0], [0], [1], [0])
    with pytest.raises(ValueError, match="score must be"):
        Battles.of(["a", "b"], [0], [1], [0.7], [0])
    with pytest.raises(ValueError, match="anchor 'z'"):
        rate(Battles.of(["a", "b"], [0], [1], [1], [0]), anchor="z")


def test_enough_battles_recover_the_true_order():
    theta = simulate.strengths(8, spread=2.0)
    battles = simulate.arena(theta, n_identities=300, battles_per_identity=40, seed=11)
    r = rate(battles, n_resamples=200)
    assert kendalltau(r.elo, theta).statistic == pytest.approx(1.0)


def test_identity_bootstrap_intervals_cover_the_true_ratings_about_95_percent():
    theta = simulate.strengths(4, spread=1.5)
    truth = to_elo(theta, 0)
    covered = []
    for seed in range(200):
        battles = simulate.arena(theta, n_identities=40, battles_per_identity=15, seed=seed)
        r = rate(battles, anchor="e0", n_resamples=200, seed=seed)
        covered.extend((r.ci_low[1:] <= truth[1:]) & (truth[1:] <= r.ci_high[1:]))
    coverage = float(np.mean(covered))
    # 600 intervals (3 per arena): a 95% interval's coverage lies in this band unless the bootstrap is wrong
    assert 0.91 <= coverage <= 0.985, coverage


def test_wins_by_identity_sums_to_the_pooled_matrix():
    battles = simulate.arena(simulate.strengths(3), 5, 10, seed=0)
    per = wins_by_identity(battles)
    assert per.shape == (5, 3, 3) and per.sum() == pytest.approx(len(battles))
