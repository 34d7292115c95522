"""Davidson's (1970) tie model for Bradley–Terry: ties are a third outcome with their own parameter ν.

    P(i beats j) = π_i / (π_i + π_j + ν·√(π_i π_j)),   P(tie) = ν·√(π_i π_j) / (same),   π = e^θ

With d = θ_i − θ_j the log-likelihood of a pair depends on d alone:

    (D_ij − D_ji)·d/2 + T_ij·log ν − N_ij·log(2·cosh(d/2) + ν)

(D: decisive wins, T: ties, N = D_ij + D_ji + T_ij). ν = 0 is no ties at all; ν = 2 makes a tie as likely as
either win between equals. Pure and I/O-free. :func:`fit_many` solves a stack of matrices at once (the
bootstrap) by Newton's method on (θ, log ν), θ at mean 0; :func:`fit` is the same maximum by L-BFGS, the
reference the tests hold it to. ``prior`` virtual ties per pair keep the estimate finite, as in
:mod:`.bradley_terry`.
"""

from __future__ import annotations

import numpy as np
from scipy.optimize import minimize

from faceedit_bench_arena import bradley_terry as bt


def _pairs(k: int) -> tuple[np.ndarray, np.ndarray]:
    return np.triu_indices(k, 1)


def _negative_ll(params: np.ndarray, net: np.ndarray, ties: np.ndarray, n: np.ndarray,
                 iu: tuple[np.ndarray, np.ndarray], k: int) -> tuple[float, np.ndarray]:
    theta, log_nu = params[:k], params[k]
    nu = np.exp(log_nu)
    d = theta[iu[0]] - theta[iu[1]]
    denom = 2.0 * np.cosh(d / 2.0) + nu
    ll = (net * d / 2.0 + ties * log_nu - n * np.log(denom)).sum()
    dd = net / 2.0 - n * np.sinh(d / 2.0) / denom  # dL/dd per pair
    g_theta = np.zeros(k)
    np.add.at(g_theta, iu[0], dd)
    np.add.at(g_theta, iu[1], -dd)
    g_lognu = ties.sum() - (n * nu / denom).sum()
    return -ll, -np.append(g_theta, g_lognu)


def fit(decisive: np.ndarray, ties: np.ndarray, prior: float = bt.DEFAULT_PRIOR,
        start: np.ndarray | None = None) -> tuple[np.ndarray, float]:
    """(θ with mean 0, ν) from decisive wins ``decisive[i, j]`` (i beat j) and ties ``ties`` (symmetric)."""
    decisive, ties = np.asarray(decisive, float), np.asarray(ties, float)
    bt.check_wins(decisive, prior)
    bt.check_wins(ties, prior)
    k = decisive.shape[-1]
    if k < 2:
        return np.zeros(k), float("nan")
    iu = _pairs(k)
    t = ties[iu] + prior  # virtual ties on every pair
    net = decisive[iu] - decisive.T[iu]
    n = decisive[iu] + decisive.T[iu] + t
    x0 = start if start is not None else np.zeros(k + 1)
    found = minimize(_negative_ll, x0, args=(net, t, n, iu, k), jac=True, method="L-BFGS-B",
                     options={"maxiter": 1000, "gtol": 1e-9})
    theta = found.x[:k] - found.x[:k].mean()
    return theta, float(np.exp(found.x[k]))


def fit_many(decisive: np.ndarray, ties: np.ndarray, prior: float = bt.DEFAULT_PRIOR, tol: float = 1e-9,
             max_iter: int = 200) -> tuple[np.ndarray, np.ndarray]:
    """(B, K) θ and (B,) ν of a stack (B, K, K) of decisive-win and tie matrices, by Newton's method."""
    decisive, ties = np.asarray(decisive, float), np.asarray(ties, float)
    bt.check_wins(decisive, prior)
    bt.check_wins(ties, prior)
    b, k = decisive.shape[0], decisive.shape[-1]
    off = 1.0 - np.eye(k)
    t = (ties + prior) * off
    net = decisive - np.swapaxes(decisive, -1, -2)
    n = (decisive + np.swapaxes(decisive, -1, -2)) * off + t
    x = np.zeros((b, k + 1))
    x[:, k] = np.log(np.maximum(t.sum((-1, -2)), 1e-3) / np.maximum(n.sum((-1, -2)) - t.sum((-1, -2)), 1e-3))
    gauge = np.zeros((k + 1, k + 1))
    gauge[:k, :k] = 1.0 / k
    idx = np.arange(k)
    for _ in range(max_iter):
        theta, nu = x[:, :k], np.exp(x[:, k])[:, None, None]
        half = (theta[:, :, None] - theta[:, None, :]) / 2.0
        ch, sh = np.cosh(half), np.sinh(half)
        denom = 2.0 * ch + nu
        grad = np.empty((b, k + 1))
        grad[:, :k] = (net / 2.0 - n * sh / denom).sum(-1)
        grad[:, k] = 0.5 * (t - n * nu / denom).sum((-1, -2))
        info = np.zeros((b, k + 1, k + 1))
        w = n * (1.0 + 0.5 * nu * ch) / denom**2  # the θ block: a weighted graph Laplacian
        info[:, :k, :k] = -w
        info[:, idx, idx] = w.sum(-1)
        cross = -(n * nu * sh / denom**2).sum(-1)
        info[:, :k, k] = info[:, k, :k] = cross
        info[:, k, k] = 0.5 * (n * 2.0 * nu * ch / denom**2).sum((-1, -2))
        step = np.linalg.solve(info + gauge, grad[..., None])[..., 0]
        np.clip(step, -3.0, 3.0, out=step)
        x += step
        x[:, :k] -= x[:, :k].mean(-1, keepdims=True)
        if np.abs(step).max() < tol:
            break
    return x[:, :k], np.exp(x[:, k])


def split(per_identity_decisive: np.ndarray, per_identity_ties: np.ndarray, weights: np.ndarray
          ) -> tuple[np.ndarray, np.ndarray]:
    """The decisive and tie matrices of one resample (identity weights)."""
    return (np.tensordot(weights, per_identity_decisive, 1), np.tensordot(weights, per_identity_ties, 1))


def win_probability(theta: np.ndarray, nu: float) -> np.ndarray:
    """Predicted P(i beats j) + P(tie)/2 for every pair: comparable to the observed win rate (ties as half)."""
    d = theta[..., :, None] - theta[..., None, :]
    denom = 2.0 * np.cosh(d / 2.0) + nu
    return (np.exp(d / 2.0) + nu / 2.0) / denom
