"""Bradley–Terry strengths by maximum likelihood, from a matrix of (half-)wins.

Pure and I/O-free. ``wins[i, j]`` is the number of battles editor ``i`` won against editor ``j``; a tie counts
as half a win for each side (so ``wins + wins.T`` is the number of battles of each pair). The model is
P(i beats j) = σ(θ_i − θ_j). Ties as half wins keep the MLE of the plain Bradley–Terry model; Davidson's
tie model is :mod:`.davidson`.

``prior`` adds that many virtual ties to every pair (``prior / 2`` half-wins each way): it keeps the estimate
finite when an editor never wins or a pair was never played (the comparison graph need not be connected), and
shrinks all strengths slightly toward each other. With thousands of battles its effect is far below the
bootstrap interval; set it to 0 for the unregularised MLE (which then needs a strongly connected graph).

The point estimate is ``choix``'s iterative Luce spectral ranking (converges to the MLE); the bootstrap needs
thousands of fits, so :func:`fit_many` solves them together by Newton's method on the same likelihood
(tests check that both agree).
"""

from __future__ import annotations

import choix
import numpy as np
from scipy.special import expit, log_expit

#: Virtual ties added to every pair (see the module docstring).
DEFAULT_PRIOR = 0.01


def with_prior(wins: np.ndarray, prior: float) -> np.ndarray:
    """``wins`` (…, K, K) with ``prior`` virtual ties on every pair of distinct editors."""
    k = wins.shape[-1]
    return wins + (prior / 2.0) * (1.0 - np.eye(k))


def check_wins(wins: np.ndarray, prior: float) -> None:
    if wins.ndim < 2 or wins.shape[-1] != wins.shape[-2]:
        raise ValueError(f"wins must be a square matrix (…, K, K), got shape {wins.shape}")
    if np.any(wins < 0) or not np.all(np.isfinite(wins)):
        raise ValueError("wins must be finite and non-negative")
    if prior < 0:
        raise ValueError(f"prior must be >= 0, got {prior}")


def fit(wins: np.ndarray, prior: float = DEFAULT_PRIOR) -> np.ndarray:
    """Strengths θ (log scale, mean 0) of one matrix of wins, by choix (ILSR → the MLE)."""
    wins = np.asarray(wins, dtype=float)
    check_wins(wins, prior)
    if wins.shape[-1] < 2:
        return np.zeros(wins.shape[-1])
    theta = choix.ilsr_pairwise_dense(with_prior(wins, prior), tol=1e-10, max_iter=1000)
    return theta - theta.mean()


def fit_many(wins: np.ndarray, prior: float = DEFAULT_PRIOR, tol: float = 1e-9, max_iter: int = 200) -> np.ndarray:
    """Strengths of a stack of matrices (B, K, K) → (B, K), all solved at once by Newton's method.

    The log-likelihood is concave; each Newton step solves (I + 11ᵀ/K) δ = g with I the Fisher information
    (a weighted graph Laplacian, singular along 1), which fixes the gauge at mean 0. Steps are clipped to
    ±3 (log-odds) so that near-separated resamples converge instead of overshooting.
    """
    wins = np.asarray(wins, dtype=float)
    check_wins(wins, prior)
    w = with_prior(wins, prior)
    n = w + np.swapaxes(w, -1, -2)
    b, k = w.shape[0], w.shape[-1]
    theta = np.zeros((b, k))
    total_wins = w.sum(-1)
    gauge = np.full((k, k), 1.0 / k)
    idx = np.arange(k)
    for _ in range(max_iter):
        p = expit(theta[:, :, None] - theta[:, None, :])
        grad = total_wins - (n * p).sum(-1)
        h = n * p * (1.0 - p)
        info = -h
        info[:, idx, idx] = h.sum(-1)
        step = np.linalg.solve(info + gauge, grad[..., None])[..., 0]
        np.clip(step, -3.0, 3.0, out=step)
        theta += step
        theta -= theta.mean(-1, keepdims=True)
        if np.abs(step).max() < tol:
            break
    return theta


def log_likelihood(wins: np.ndarray, theta: np.ndarray) -> np.ndarray:
    """Σ_ij wins_ij · log σ(θ_i − θ_j), over the last two axes (ties count as half wins)."""
    return (wins * log_expit(theta[..., :, None] - theta[..., None, :])).sum((-1, -2))


def win_probability(theta: np.ndarray) -> np.ndarray:
    """Predicted P(i beats j) for every pair."""
    return expit(theta[..., :, None] - theta[..., None, :])
