"""Adaptive sampling: stop reasons, determinism, budget, and fewer battles than uniform to a target width."""

from __future__ import annotations

import hashlib

import numpy as np
import pytest
from faceedit_bench_arena import adaptive, simulate
from faceedit_bench_arena.adaptive import Plan, allocate


def scenario(k: int, spread: float, seed: int, inputs: int = 3000, fail_every: int = 0):
    """Editors of known strengths; a battle's outcome is fixed by its pair and input (as a cached judge's is)."""
    theta = simulate.strengths(k, spread)
    editors = [f"e{i}" for i in range(k)]
    pool = {(i, j): [(n % 100, f"in{n}") for n in range(inputs)] for i in range(k) for j in range(i + 1, k)}
    asked = []

    def judge(chosen):
        asked.extend(chosen)
        out = []
        for (i, j), (_, key) in chosen:
            if fail_every and int(key[2:]) % fail_every == 0:
                out.append(None)
                continue
            rng = np.random.default_rng(int(hashlib.sha256(f"{seed}|{i}|{j}|{key}".encode()).hexdigest()[:15], 16))
            out.append(float(simulate.outcomes(rng, np.array(theta[i] - theta[j]), 0.3)))
        return out

    return editors, pool, judge, asked


def test_allocate_splits_by_largest_remainder():
    assert allocate({"a": 1.0, "b": 1.0, "c": 1.0}, 10) == {"a": 4, "b": 3, "c": 3}
    assert allocate({"a": 3.0, "b": 0.0}, 5) == {"a": 5}
    assert allocate({"a": 0.0}, 5) == {}


def test_adaptive_reaches_a_target_width_with_fewer_battles_than_uniform():
    used = {"adaptive": 0, "uniform": 0}
    for seed in range(3):
        for strategy in used:
            editors, pool, judge, _ = scenario(8, 4.0, seed)
            result = adaptive.run(editors, pool, judge, Plan(budget_calls=200_000, batch=50, warmup=5, target_width=100,
                                                             strategy=strategy, stop_on_separation=False, seed=seed))
            assert result.stop == "target_width"
            assert np.max(result.ratings.ci_high - result.ratings.ci_low) <= 100
            used[strategy] += len(result.battles)
    # measured: about 0.70 (3,470 vs 4,970 battles); 12 editors over a wider spread: 0.20
    assert used["adaptive"] < 0.85 * used["uniform"], used


def test_same_seed_and_answers_pick_the_same_battles():
    picks = []
    for _ in range(2):
        editors, pool, judge, asked = scenario(5, 2.0, seed=1)
        adaptive.run(editors, pool, judge, Plan(budget_calls=1200, batch=40, warmup=5, target_width=60, seed=7))
        picks.append(asked)
    assert picks[0] == picks[1] and len(picks[0]) > 0


def test_budget_stops_it_and_is_never_passed():
    editors, pool, judge, asked = scenario(5, 1.0, seed=2)
    result = adaptive.run(editors, pool, judge, Plan(budget_calls=300, batch=40, warmup=5, target_width=1.0))
    assert result.stop == "budget" and result.calls_planned <= 300 and len(asked) * 2 == result.calls_planned


def test_separation_stops_it():
    editors, pool, judge, _ = scenario(4, 8.0, seed=3)
    assert adaptive.run(editors, pool, judge, Plan(budget_calls=100_000, batch=40, warmup=20)).stop == "separated"


def test_an_exhausted_pool_stops_it_and_incomplete_battles_are_counted_not_rated():
    editors, pool, judge, asked = scenario(4, 0.0, seed=4, inputs=30, fail_every=5)
    result = adaptive.run(editors, pool, judge, Plan(budget_calls=100_000, batch=40, warmup=5, target_width=1.0))
    assert result.stop == "exhausted" and len(asked) == 6 * 30
    assert result.incomplete == 6 * 6 and len(result.battles) == 6 * 24


def test_bad_plans_are_refused():
    with pytest.raises(ValueError, match="strategy"):
        Plan(budget_calls=10, strategy="greedy")
    with pytest.raises(ValueError, match="budget_calls"):
        Plan(budget_calls=1)
