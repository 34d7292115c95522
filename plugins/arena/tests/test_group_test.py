"""Group x editor interaction: a planted difference is found; none is reported at the stated rate when absent."""

import numpy as np
from faceedit_bench_arena import simulate
from faceedit_bench_arena.group_test import interaction_test
from faceedit_bench_arena.ratings import wins_by_identity

ALPHA = 0.05


def _p(seed, shift):
    theta = simulate.strengths(4, spread=1.5)
    groups = np.arange(60) % 2
    battles = simulate.arena(theta, 60, 20, seed, groups=groups, group_shift=shift)
    return interaction_test(wins_by_identity(battles), groups, n_permutations=99, seed=seed)["p_value"]


def test_no_planted_difference_is_rejected_at_about_the_stated_rate():
    rejections = np.mean([_p(seed, None) <= ALPHA for seed in range(200)])
    # binomial(200, 0.05): 99.9% of null runs reject at most 10% of the time
    assert rejections <= 0.10, rejections


def test_a_planted_rank_flip_in_one_group_is_detected():
    shift = np.zeros((2, 4))
    shift[1] = [0.0, 0.0, 0.0, 1.5]  # the weakest editor becomes the strongest for group 1
    detected = np.mean([_p(seed, shift) <= ALPHA for seed in range(20)])
    assert detected >= 0.9, detected
