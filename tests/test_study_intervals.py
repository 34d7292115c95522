"""The coverage of the study results' intervals over identities (faceedit_bench.analysis.identity_jackknife),
by a seeded simulation: identities are clusters of items, items' true scores carry a per-identity effect,
three raters answer each item (true score + noise) on a 1-5 scale (interval and ordinal α) or yes/no (nominal
α), and a judge answers beside them, yes/no (judge-human share alike and Cohen's κ against the majority) or on
the 1-5 scale (Spearman's ρ against people's mean). The population value of each statistic comes from one very
large simulated study; many small studies then check how often their 95 % interval holds it. The tolerance is
the simulation's own Monte-Carlo error: coverage >= 0.95 - 3 SE."""

from __future__ import annotations

import math

import krippendorff
import numpy as np
import pytest
from scipy import stats

from faceedit_bench.analysis.identity_jackknife import (
    MIN_IDENTITIES,
    alpha_from_coincidences,
    cohens_kappa,
    coincidences,
    interval_of_sums,
    jackknife_interval,
    share_alike,
    spearman,
)

STUDIES = 2000
ITEMS, RATERS = 4, 3
SCALE = np.arange(1.0, 6.0)
YES_NO = np.array([0.0, 1.0])
NOMINAL = 0.95
#: Three Monte-Carlo standard errors of a 95 % coverage estimated from STUDIES studies.
TOLERANCE = 3 * math.sqrt(NOMINAL * (1 - NOMINAL) / STUDIES)


def true_scores(rng: np.random.Generator, shape: tuple[int, ...]) -> np.ndarray:
    """(..., identities, items, 1): an identity effect plus an item's own."""
    return rng.normal(0, 0.7, (*shape, 1, 1)) + rng.normal(0, 0.7, (*shape, ITEMS, 1))


def answers(rng: np.random.Generator, shape: tuple[int, ...], yes_no: bool) -> np.ndarray:
    """(..., identities, items, raters) indices of the raters' answers into SCALE or YES_NO."""
    seen = true_scores(rng, shape) + rng.normal(0, 0.8, (*shape, ITEMS, RATERS))
    return (seen > 0.4).astype(int) if yes_no else (np.clip(np.rint(seen + 3), 1, 5) - 1).astype(int)


def coincidence_arrays(index: np.ndarray, n_values: int) -> np.ndarray:
    """(..., identities, V, V) coincidence matrices of complete units (every rater answered), as
    :func:`coincidences` builds them from units one by one."""
    counts = (index[..., None] == np.arange(n_values)).sum(-2).astype(float)  # (..., items, V)
    pairs = counts[..., :, None] * counts[..., None, :] - np.eye(n_values) * counts[..., None, :]
    return pairs.sum(-3) / (RATERS - 1)


def alpha_coverage(level: str, identities: int, seed: int) -> float:
    rng = np.random.default_rng(seed)
    values = YES_NO if level == "nominal" else SCALE
    population = alpha_from_coincidences(
        coincidence_arrays(answers(rng, (200_000,), level == "nominal"), len(values)).sum(0), values, level)
    studies = coincidence_arrays(answers(rng, (STUDIES, identities), level == "nominal"), len(values))
    hits = 0
    for study in studies:
        interval = interval_of_sums(study, lambda o: alpha_from_coincidences(o, values, level),
                                      bounds=(-np.inf, 1.0))
        assert interval["low"] is not None, interval["reason"]
        hits += interval["low"] <= population <= interval["high"]
    return hits / STUDIES


def judge_confusions(rng: np.random.Generator, shape: tuple[int, ...]) -> np.ndarray:
    """(..., identities, 2, 2): judge's yes/no x the majority of three people, over each identity's items."""
    truth = true_scores(rng, shape)[..., 0]
    judge = (truth + rng.normal(0, 0.6, truth.shape) > 0.4).astype(int)
    people = ((truth[..., None] + rng.normal(0, 0.8, (*truth.shape, RATERS)) > 0.4).sum(-1) >= 2).astype(int)
    return np.stack([((judge == j) & (people == p)).sum(-1) for j in (0, 1) for p in (0, 1)], -1).reshape(
        (*shape, 2, 2)).astype(float)


def judge_coverage(statistic, identities: int, seed: int) -> float:
    rng = np.random.default_rng(seed)
    population = statistic(judge_confusions(rng, (200_000,)).sum(0))
    hits = 0
    for study in judge_confusions(rng, (STUDIES, identities)):
        interval = interval_of_sums(study, statistic, bounds=(-1.0, 1.0))
        assert interval["low"] is not None, interval["reason"]
        hits += interval["low"] <= population <= interval["high"]
    return hits / STUDIES


def judge_scores(rng: np.random.Generator, shape: tuple[int, ...]) -> tuple[np.ndarray, np.ndarray]:
    """(..., identities, items) people's mean score (three raters) and the judge's score, both on the 1-5 scale."""
    truth = true_scores(rng, shape)[..., 0]
    people = np.clip(np.rint(truth[..., None] + rng.normal(0, 0.8, (*truth.shape, RATERS)) + 3), 1, 5).mean(-1)
    return people, np.clip(np.rint(truth + rng.normal(0, 0.6, truth.shape) + 3), 1, 5)


def spearman_coverage(identities: int, seed: int) -> float:
    rng = np.random.default_rng(seed)
    population = spearman(*(scores.reshape(-1) for scores in judge_scores(rng, (200_000,))))
    others = np.nonzero(~np.eye(identities, dtype=bool))[1].reshape(identities, -1)  # row i: all but the i-th
    hits = 0
    for people, judge in zip(*judge_scores(rng, (STUDIES, identities)), strict=True):
        left_out = spearman(people[others].reshape(identities, -1), judge[others].reshape(identities, -1))
        interval = jackknife_interval(float(spearman(people.reshape(-1), judge.reshape(-1))), left_out,
                                      bounds=(-1.0, 1.0))
        assert interval["low"] is not None, interval["reason"]
        hits += interval["low"] <= population <= interval["high"]
    return hits / STUDIES


@pytest.mark.parametrize("level", ["interval", "ordinal", "nominal"])
def test_alpha_from_coincidences_is_krippendorffs(level):
    rng = np.random.default_rng(3)
    index = answers(rng, (12,), level == "nominal")
    values = YES_NO if level == "nominal" else SCALE
    units = [{(i, item): {r: float(values[index[i, item, r]]) for r in range(RATERS - (item % 2))}
              for item in range(ITEMS)} for i in range(len(index))]  # every other item with one rater less
    matrix = np.full((RATERS, len(units) * ITEMS), np.nan)
    for j, mine in enumerate(rated for identity in units for rated in identity.values()):
        matrix[list(mine), j] = list(mine.values())
    ours = alpha_from_coincidences(coincidences(units, values).sum(0), values, level)
    assert ours == pytest.approx(krippendorff.alpha(reliability_data=matrix, level_of_measurement=level))


@pytest.mark.parametrize(("level", "identities"), [("interval", 20), ("ordinal", 20), ("nominal", 20),
                                                   ("interval", MIN_IDENTITIES), ("nominal", MIN_IDENTITIES)])
def test_alpha_interval_covers_the_population_alpha(level, identities):
    assert alpha_coverage(level, identities, seed=identities) >= NOMINAL - TOLERANCE


@pytest.mark.parametrize("identities", [MIN_IDENTITIES, 20])
@pytest.mark.parametrize("statistic", [share_alike, cohens_kappa], ids=["share_alike", "cohens_kappa"])
def test_judge_human_interval_covers_the_population_value(statistic, identities):
    assert judge_coverage(statistic, identities, seed=5) >= NOMINAL - TOLERANCE


@pytest.mark.parametrize("identities", [MIN_IDENTITIES, 20])
def test_judge_human_spearman_interval_covers_the_population_value(identities):
    assert spearman_coverage(identities, seed=identities) >= NOMINAL - TOLERANCE


def test_spearman_is_scipys():
    rng = np.random.default_rng(4)
    x, y = rng.integers(1, 6, 40), rng.integers(1, 6, 40)  # ties at average ranks
    assert spearman(x, y) == pytest.approx(stats.spearmanr(x, y).statistic)


def test_too_few_identities_or_no_spread_give_no_interval():
    few = interval_of_sums(np.ones((MIN_IDENTITIES - 1, 2, 2)), share_alike)
    assert few["low"] is None and "at least" in few["reason"]
    alike = interval_of_sums(np.tile(np.diag([2.0, 1.0]), (MIN_IDENTITIES, 1, 1)), share_alike)
    assert alike["low"] is None and "no spread" in alike["reason"]
