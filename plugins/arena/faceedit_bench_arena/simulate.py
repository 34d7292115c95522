"""Synthetic arenas from known strengths: for the validity tests and the benchmark.

Outcomes follow the Bradley–Terry model with ties: with Δ = θ_left − θ_right and σ = σ(Δ),
P(tie) = 2·tie·σ(1 − σ), P(left wins) = σ − P(tie)/2. So E[left's score] = σ exactly and ties as half wins
estimate the true θ without bias. ``group_shift`` adds a per-group strength offset (G, K): a planted
group × editor interaction. ``nu`` draws outcomes from Davidson's tie model instead (tie parameter ν).
``face_sd`` gives each identity its own editor strengths, θ + N(0, face_sd²) per editor: battles on one face
are then correlated (an editor that suits a face wins all its battles there), as in real arenas.
"""

from __future__ import annotations

import numpy as np
from scipy.special import expit

from faceedit_bench_arena.ratings import Battles


def strengths(k: int, spread: float = 2.0) -> np.ndarray:
    """Evenly spaced true strengths (log-odds), strongest first."""
    return np.linspace(spread / 2.0, -spread / 2.0, k)


def outcomes(rng: np.random.Generator, delta: np.ndarray, tie: float) -> np.ndarray:
    sigma = expit(delta)
    p_tie = 2.0 * tie * sigma * (1.0 - sigma)
    u = rng.random(delta.shape)
    return np.where(u < sigma - p_tie / 2.0, 1.0, np.where(u < sigma + p_tie / 2.0, 0.5, 0.0))


def davidson_outcomes(rng: np.random.Generator, delta: np.ndarray, nu: float) -> np.ndarray:
    denom = 2.0 * np.cosh(delta / 2.0) + nu
    p_win, p_tie = np.exp(delta / 2.0) / denom, nu / denom
    u = rng.random(delta.shape)
    return np.where(u < p_win, 1.0, np.where(u < p_win + p_tie, 0.5, 0.0))


def arena(theta: np.ndarray, n_identities: int, battles_per_identity: int, seed: int, tie: float = 0.3,
          groups: np.ndarray | None = None, group_shift: np.ndarray | None = None,
          nu: float | None = None, face_sd: float = 0.0) -> Battles:
    """Battles between uniformly drawn pairs of editors, ``battles_per_identity`` per identity."""
    rng = np.random.default_rng(seed)
    k = len(theta)
    n = n_identities * battles_per_identity
    identity = np.repeat(np.arange(n_identities), battles_per_identity)
    left = rng.integers(0, k, n)
    right = (left + rng.integers(1, k, n)) % k
    th = np.broadcast_to(theta, (n, k)).copy()
    if group_shift is not None:
        th += group_shift[groups[identity]]
    if face_sd:
        th += rng.normal(0.0, face_sd, (n_identities, k))[identity]
    rows = np.arange(n)
    delta = th[rows, left] - th[rows, right]
    score = outcomes(rng, delta, tie) if nu is None else davidson_outcomes(rng, delta, nu)
    return Battles.of([f"e{i}" for i in range(k)], left, right, score, identity)
