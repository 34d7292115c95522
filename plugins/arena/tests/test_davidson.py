"""Davidson's tie model: the batched Newton fit agrees with L-BFGS, recovers a known tie parameter and known
strengths on synthetic arenas, and its intervals cover them."""

import numpy as np
import pytest
from faceedit_bench_arena import davidson, simulate
from faceedit_bench_arena.arena import ArenaSettings
from faceedit_bench_arena.ratings import ELO_SCALE, Battles, outcomes_by_identity, rate
from faceedit_bench_arena.stored_runs import ArenaError
from scipy.stats import kendalltau


def test_batched_newton_agrees_with_lbfgs():
    rng = np.random.default_rng(4)
    decisive = rng.integers(0, 40, (6, 6)).astype(float)
    np.fill_diagonal(decisive, 0)
    ties = rng.integers(0, 20, (6, 6)).astype(float)
    ties = np.triu(ties, 1) + np.triu(ties, 1).T
    for prior in (0.01, 2.0):
        theta, nu = davidson.fit(decisive, ties, prior)
        many_theta, many_nu = davidson.fit_many(decisive[None], ties[None], prior)
        np.testing.assert_allclose(many_theta[0], theta, atol=1e-5)
        assert many_nu[0] == pytest.approx(nu, rel=1e-5)


def test_ties_and_decisive_battles_are_told_apart():
    battles = Battles.of(["a", "b"], [0, 0, 1, 0], [1, 1, 0, 1], [1.0, 0.5, 1.0, 0.0], [0, 0, 1, 1])
    decisive, ties = outcomes_by_identity(battles)
    np.testing.assert_array_equal(decisive.sum(0), [[0, 1], [2, 0]])  # a beat b once; b beat a twice
    np.testing.assert_array_equal(ties.sum(0), [[0, 1], [1, 0]])


@pytest.mark.parametrize("nu", [0.4, 1.5])
def test_a_known_tie_parameter_and_known_strengths_are_recovered(nu):
    theta = simulate.strengths(5, 2.0)
    battles = simulate.arena(theta, 300, 40, seed=7, nu=nu)
    r = rate(battles, ties="davidson", n_resamples=300, seed=1)
    estimate, low, high = r.nu
    assert low <= nu <= high and abs(estimate - nu) < 0.1 * nu
    fitted = (r.elo - r.elo.mean()) / ELO_SCALE
    np.testing.assert_allclose(fitted, theta, atol=0.1)
    assert kendalltau(fitted, theta).statistic == pytest.approx(1.0)
    assert np.all((r.ci_low <= r.elo) & (r.elo <= r.ci_high))
    part = r.to_json()
    assert part["scale"]["ties"] == "davidson"
    assert part["scale"]["tie_parameter"]["nu"] == pytest.approx(estimate, abs=1e-4)
    # the half-win model on the same Davidson data shrinks the strengths (ties pull toward 1/2): the order is the same
    half = rate(battles, n_resamples=50)
    assert list(half.order()) == list(r.order())
    assert np.ptp(half.elo) < np.ptp(r.elo)


def test_davidson_intervals_cover_the_true_strengths_in_most_arenas():
    theta = simulate.strengths(4, 1.5)
    covered = []
    for seed in range(40):
        r = rate(simulate.arena(theta, 40, 15, seed=seed, nu=1.0), ties="davidson", n_resamples=200, seed=seed)
        true = 1000.0 + ELO_SCALE * (theta - theta.mean())
        covered += list((r.ci_low <= true + (r.elo.mean() - 1000.0)) & (true + (r.elo.mean() - 1000.0) <= r.ci_high))
    assert 0.85 <= np.mean(covered) <= 1.0


def test_an_unknown_tie_model_is_refused():
    with pytest.raises(ArenaError, match="ties must be one of"):
        ArenaSettings(ties="rao_kupper").check(["a", "b"])


def test_an_arena_rated_with_davidson_says_so_everywhere_and_verify_recomputes_it_alike():
    from faceedit_bench_arena.arena import rate_arena
    from faceedit_bench_arena.pairwise_judge import CRITERIA

    battles = simulate.arena(simulate.strengths(3, 1.5), 40, 10, seed=3, nu=1.0)
    log = [{"x": int(x), "y": int(y), "identity": int(i), "labels": {"gender": "female" if i % 2 else "male"},
            "k": 1, "one_sided": False, "verdicts": {c: {"score": float(s)} for c in CRITERIA}}
           for x, y, s, i in zip(battles.left, battles.right, battles.score, battles.identity)]
    settings = ArenaSettings(ties="davidson", n_resamples=50, n_permutations=19, min_group_battles=10)
    part = rate_arena(list(battles.editors), log, settings)
    assert part["criteria"]["overall"]["ratings"]["scale"]["ties"] == "davidson"
    assert part["per_group"]["gender"]["male"]["scale"]["tie_parameter"]["nu"] > 0
    assert rate_arena(list(battles.editors), log, ArenaSettings(**vars(settings))) == part
