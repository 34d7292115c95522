"""Does the ranking of editors differ between groups of faces? A stratified Bradley–Terry test.

H0: one set of strengths for every group. H1: each group has its own (group × editor interaction).
Statistic: the likelihood ratio LR = 2 (Σ_g ℓ(θ_g; W_g) − ℓ(θ; W)). Its p-value is a permutation test that
shuffles the group labels of *identities* (a person's faces stay together and keep one label), so the
dependence between battles of one face does not inflate significance; the asymptotic χ² p-value with
(G − 1)(K − 1) degrees of freedom, which assumes independent battles, is shown beside it for reference only.
"""

from __future__ import annotations

import math
from collections.abc import Mapping

import numpy as np
from scipy.stats import chi2

from faceedit_bench_arena import bradley_terry as bt

#: The level the test is read at: a split of identities into groups that has fewer than 1/ALPHA distinct
#: arrangements cannot give a permutation p below it (2 identities per group: 6 arrangements, p >= 1/6).
ALPHA = 0.05


def untestable(identities_per_group: Mapping[str, int]) -> str | None:
    """Why the test cannot be read at :data:`ALPHA` with these identities per group; None when it can."""
    counts = [n for n in identities_per_group.values() if n > 0]
    if len(counts) < 2:
        return f"not testable: identities in fewer than two groups ({dict(identities_per_group)})"
    arrangements = math.factorial(sum(counts)) // math.prod(math.factorial(n) for n in counts)
    if arrangements * ALPHA <= 1:
        return (f"not testable: identities per group {dict(identities_per_group)} allow {arrangements} distinct "
                f"arrangements of the group labels, so a permutation p cannot go below 1/{arrangements} "
                f"(at least {math.ceil(1 / ALPHA) + 1} are needed to read it at {ALPHA})")
    return None


def _group_wins(per_identity: np.ndarray, labels: np.ndarray, n_groups: int) -> np.ndarray:
    """(…, G, K, K) from labels (…, identities)."""
    onehot = (labels[..., None] == np.arange(n_groups)).astype(float)  # (…, n_ids, G)
    k = per_identity.shape[-1]
    flat = per_identity.reshape(per_identity.shape[0], k * k)
    return np.einsum("...ig,ij->...gj", onehot, flat).reshape(*labels.shape[:-1], n_groups, k, k)


def _split_ll(group_wins: np.ndarray, prior: float) -> np.ndarray:
    shape = group_wins.shape
    k = shape[-1]
    flat = group_wins.reshape(-1, k, k)
    theta = bt.fit_many(flat, prior)
    return bt.log_likelihood(flat, theta).reshape(shape[:-2]).sum(-1)


def interaction_test(per_identity: np.ndarray, labels: np.ndarray, n_permutations: int = 999, seed: int = 0,
                     prior: float = bt.DEFAULT_PRIOR, chunk: int = 250) -> dict:
    """Test of group × editor interaction; ``labels`` gives each identity's group (0..G-1)."""
    labels = np.asarray(labels, dtype=np.intp)
    if labels.shape != (per_identity.shape[0],):
        raise ValueError("labels must give one group per identity")
    n_groups, k = int(labels.max()) + 1, per_identity.shape[-1]
    if n_groups < 2:
        raise ValueError("the test needs at least two groups")
    pooled = per_identity.sum(0)
    ll0 = float(bt.log_likelihood(pooled, bt.fit(pooled, prior)))
    observed = 2.0 * (float(_split_ll(_group_wins(per_identity, labels[None], n_groups), prior)[0]) - ll0)
    rng = np.random.default_rng(seed)
    exceed = 0
    for start in range(0, n_permutations, chunk):
        size = min(chunk, n_permutations - start)
        perms = np.stack([rng.permutation(labels) for _ in range(size)])
        stats = 2.0 * (_split_ll(_group_wins(per_identity, perms, n_groups), prior) - ll0)
        exceed += int(np.sum(stats >= observed - 1e-9))
    df = (n_groups - 1) * (k - 1)
    return {"statistic": round(observed, 4), "df": df, "n_permutations": n_permutations,
            "p_value": (1 + exceed) / (n_permutations + 1),
            "p_value_chi2_independent": float(chi2.sf(max(observed, 0.0), df)),
            "method": "likelihood ratio, permutation of identity group labels"}
