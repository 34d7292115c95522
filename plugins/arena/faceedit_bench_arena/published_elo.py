"""GenAI-Arena's published Elo method, ``l2_logistic``: a named option of the arena's ratings, for reproducing
its leaderboards (``faceedit-bench reproduce genai-arena``). The project's default stays :func:`.ratings.rate`.

What GenAI-Arena's ``arena_elo/elo_rating/elo_analysis.py`` (``compute_elo_mle_with_tie``, read at
TIGER-AI-Lab/GenAI-Arena @ a3221a7) does, restated:

* **Ties**: every battle is counted twice; a win is two wins, a tie one win for each side. That is the
  half-win Bradley–Terry likelihood of :mod:`.bradley_terry`, doubled.
* **Regularisation**: scikit-learn's ``LogisticRegression()`` with its defaults, an L2 penalty
  ``||β||² / (2C)`` with ``C = 1`` on the coefficients β of log10-odds, no intercept; Elo = 1000 + 400 β. The
  penalty pulls every rating toward 1000 (the mean is not fixed at 1000), and with few battles it is strong:
  it is not the project's 0.01 virtual ties per pair. The published numbers are its optimum as scikit-learn's
  L-BFGS left it (tolerance 1e-4); this module solves the same objective to convergence by Newton's method.
* **Bootstrap**: battles (not identities) drawn with replacement, 100 rounds, 2.5 and 97.5 percentiles. They
  draw with pandas' ``sample(frac=1, replace=True)`` after one ``numpy.random.seed(42)`` for the anonymous and
  then the full table; here each table draws from ``RandomState(seed)`` afresh (the published leaderboard
  prints no interval to compare with). It prints the point fit, not the bootstrap median.
"""

from __future__ import annotations

import numpy as np
from scipy.special import expit

from faceedit_bench_arena.ratings import Battles, Ratings

METHOD = "l2_logistic"
LOG10 = np.log(10.0)


def fit_l2_logistic(wins: np.ndarray, c: float = 1.0, tol: float = 1e-12, max_iter: int = 100) -> np.ndarray:
    """Elo ratings (K,) from a half-win matrix by GenAI-Arena's penalised logistic regression (module doc).

    Minimises 2 Σ_ij w_ij · −log σ(ln10 (β_i − β_j)) + ||β||² / (2c), strictly convex, by Newton's method."""
    w = np.asarray(wins, dtype=float)
    n = w + w.T
    k = w.shape[0]
    beta = np.zeros(k)
    for _ in range(max_iter):
        p = expit(LOG10 * (beta[:, None] - beta[None, :]))
        grad = -2.0 * LOG10 * (w - n * p).sum(1) + beta / c
        h = 2.0 * LOG10 ** 2 * n * p * (1.0 - p)
        hess = np.diag(h.sum(1)) - h + np.eye(k) / c
        step = np.linalg.solve(hess, grad)
        beta -= step
        if np.abs(step).max() < tol:
            break
    return 1000.0 + 400.0 * beta


def bootstrap_battles(battles: Battles, n_resamples: int, seed: int, c: float = 1.0) -> np.ndarray:
    """(n_resamples, K) Elo from battles drawn with replacement, in GenAI-Arena's draw order; an editor absent
    from a resample is NaN there (their fit leaves it out)."""
    rng = np.random.RandomState(seed)
    k, n = len(battles.editors), len(battles)
    out = np.full((n_resamples, k), np.nan)
    for r in range(n_resamples):
        drawn = battles.select(rng.choice(n, size=n, replace=True))
        present = np.zeros(k, dtype=bool)
        present[drawn.left] = present[drawn.right] = True
        wins = _wins(drawn)[np.ix_(present, present)]
        out[r, present] = fit_l2_logistic(wins, c)
    return out


def _wins(battles: Battles) -> np.ndarray:
    """The half-win matrix of all battles (identities play no part in this method)."""
    wins = np.zeros((len(battles.editors),) * 2)
    np.add.at(wins, (battles.left, battles.right), battles.score)
    np.add.at(wins, (battles.right, battles.left), 1.0 - battles.score)
    return wins


def rate_l2_logistic(battles: Battles, confidence: float = 0.95, n_resamples: int = 100, seed: int = 42,
                     c: float = 1.0) -> Ratings:
    """Ratings by GenAI-Arena's published method (module doc): the point fit, and percentile intervals from
    a bootstrap of battles. ``Ratings.prior`` is 0 (no virtual ties: the L2 penalty regularises)."""
    if len(battles) == 0:
        raise ValueError("no battles to rate")
    wins = _wins(battles)
    boot = bootstrap_battles(battles, n_resamples, seed, c)
    tail = (1.0 - confidence) / 2.0
    low, high = np.nanquantile(boot, [tail, 1.0 - tail], axis=0)
    return Ratings(battles.editors, fit_l2_logistic(wins, c), low, high, wins, None, confidence, n_resamples,
                   0.0, len(battles), "half_win")
