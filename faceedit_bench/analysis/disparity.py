"""Disparity between two demographic groups: Wasserstein distance, permutation p-values, bias flags.

METHODOLOGY §2.5 and §7. For each test (one metric, one contrast such as male vs female) the
per-session values of the two groups are compared by

- the 1-D Wasserstein-1 distance WD = ∫ |F_A - F_B| dt between their empirical CDFs. WD is in
  the metric's own units (Drop_FSS in %, SC x100, OER x100), so the bias threshold (3.0 by
  default, as in the paper) is in those units too;
- a permutation p-value, alternative 'greater' (WD >= 0; large values speak against H0 "both
  groups come from one distribution"), defined exactly as ``scipy.stats.permutation_test``
  defines it: Monte Carlo p = (#{null >= obs - gamma} + 1) / (R + 1) with
  gamma = 100 * eps * |obs|, or, when the number of distinct partitions C(n_a + n_b, n_a) is at
  most R, the exact test over all partitions (no +1);
- the bias flag WD > threshold and p < alpha, and the direction (worst / best group by mean,
  given whether higher is better): WD has no sign.

Identity-clustered sensitivity analysis. Sessions are not independent: one face gets many
sessions and one identity several faces. The primary p-value treats sessions as exchangeable,
as the paper does. With cluster labels (face identities) a second p-value comes from a block
permutation that moves whole clusters between the groups, keeping the number of clusters per
group, and recomputes WD on the session values. A cluster is taken per group: a label found in
both groups is two blocks, and their number is reported as ``shared_clusters``. It is a
sensitivity analysis, not the paper's test, and the bias flag never uses it.

How it is fast. Pooled values do not change under permutation, so they are sorted once; a
permutation is only an assignment of group labels along the sorted pool, and with c_i the number
of group-A sessions among the first i, WD = sum_i |N c_i - n_a i| * gap_i / (n_a n_b). The
labels are drawn position by position as Bernoulli(remaining A / remaining sessions), which gives
every partition the same probability, for all resamples at once (a vector per position), and
the distance is accumulated over blocks of positions. Long runs of tied values take one
hypergeometric draw instead. Each Bernoulli compares a 32-bit uniform integer, so a probability
is off by at most 2**-32; a whole resample's distribution by at most N * 2**-32 in total
variation, far below Monte Carlo error. The p-values are those of scipy's definition but not its
random stream: they agree with scipy's within Monte Carlo error, and exactly in the exact branch.

Seeds. Each test draws from its own generator, seeded from the base seed and a hash of the
test's name, so adding, removing or reordering tests never changes another test's p-value, and
results do not depend on the number of worker threads.
"""

from __future__ import annotations

import hashlib
import math
import os
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any

import numpy as np

from faceedit_bench.analysis.cached import cached_statistic, in_context
from faceedit_bench.analysis.multiplicity import NOT_TESTED, correct_family, untestable_reason
from faceedit_bench.analysis.permutation import Pool, clustered_test, session_test
from faceedit_bench.analysis.statistics import summarize

#: The tests running at once hold at most about this many sessions together (a test holds about
#: 130 bytes a session beyond its fixed buffers: the sorted pool, its sampling steps, the cluster
#: of each session), so a run's memory does not grow with its sessions by running tests side by
#: side: tests of more than half of it run one at a time. The default thread count only.
SESSIONS_IN_FLIGHT = 65536
#: The paper's flag, over sessions as if they were independent: reported beside the honest one, never heading it.
PAPER_RULE = "paper (a): WD > threshold and session-level permutation p < alpha, uncorrected"


@dataclass(frozen=True)
class GroupTest:
    """One comparison: the per-session values of two groups for one metric and one contrast.

    ``clusters_a`` / ``clusters_b`` label each session with its cluster (the face identity) for
    the clustered sensitivity analysis. ``name`` identifies the test for its seed and must be
    unique within one call; it defaults to ``metric/contrast/group_a/group_b``.
    """

    metric: str
    contrast: str
    group_a: str
    group_b: str
    values_a: np.ndarray
    values_b: np.ndarray
    clusters_a: np.ndarray | None = None
    clusters_b: np.ndarray | None = None
    #: The metric's registered direction; None (the default) names no best or worst group, never a guessed one.
    higher_is_better: bool | None = None
    name: str | None = None
    bounds: Any = None  # the metric's declared bounds: the group summaries' intervals stay inside them

    @property
    def key(self) -> str:
        return self.name or f"{self.metric}/{self.contrast}/{self.group_a}/{self.group_b}"


def wasserstein(values_a: np.ndarray, values_b: np.ndarray) -> float:
    """The 1-D Wasserstein-1 distance (equals ``scipy.stats.wasserstein_distance``)."""
    a, b = np.asarray(values_a, float), np.asarray(values_b, float)
    if a.size == 0 or b.size == 0:
        raise ValueError("the Wasserstein distance needs at least one value in each sample")
    pool = Pool(a, b)
    rem = pool.n_a - np.cumsum(pool.is_a)[pool.run_end - 1]
    return float(pool.n / (pool.n_a * pool.n_b) * np.sum(pool.gap * np.abs(rem - pool.expected_rem)))


def compare_groups(tests: Sequence[GroupTest], *, n_resamples: int = 9999, seed: int = 0, threshold: float = 3.0,
                   alpha: float = 0.05, confidence: float = 0.95, workers: int | None = None) -> list[dict[str, Any]]:
    """WD, permutation p-values, bias flags and group summaries, one JSON-ready dict per test, in order.

    ``workers`` threads run tests in parallel (default: one per CPU, fewer when the tests are large:
    :data:`SESSIONS_IN_FLIGHT`); results do not depend on it.
    """
    if isinstance(n_resamples, bool) or not isinstance(n_resamples, int) or n_resamples < 1:
        raise ValueError(f"n_resamples must be a positive integer, got {n_resamples!r}")
    if isinstance(seed, bool) or not isinstance(seed, int) or seed < 0:
        raise ValueError(f"seed must be a non-negative integer, got {seed!r}")
    for label, value in (("alpha", alpha), ("confidence", confidence)):
        if not 0 < value < 1:
            raise ValueError(f"{label} must lie strictly between 0 and 1, got {value!r}")
    if not math.isfinite(threshold) or threshold < 0:
        raise ValueError(f"threshold must be a finite distance >= 0 in the metric's units, got {threshold!r}")
    keys = [t.key for t in tests]
    duplicates = sorted({k for k in keys if keys.count(k) > 1})
    if duplicates:
        raise ValueError(f"test names must be unique within one call (they seed the tests); duplicated: "
                         f"{duplicates}. Give each GroupTest a distinct name=")
    settings = dict(n_resamples=n_resamples, seed=seed, threshold=threshold, alpha=alpha, confidence=confidence)
    if workers is None:
        largest = max((np.size(t.values_a) + np.size(t.values_b) for t in tests), default=1)
        workers = min(os.cpu_count() or 1, SESSIONS_IN_FLIGHT // max(1, largest))
    workers = max(1, min(len(tests), workers))
    if workers == 1:
        results = [_compare(t, **settings) for t in tests]
    else:
        with ThreadPoolExecutor(max_workers=workers) as pool:  # numpy releases the GIL in the heavy loops
            # each test is kept (when a statistics cache is in use) as soon as it is done: a killed report resumes
            results = list(pool.map(in_context(lambda t: _compare(t, **settings)), tests))
    return correct_family(results, alpha=alpha)


# -- one test ---------------------------------------------------------------------------------


@cached_statistic("disparity.group_test", version=2)
def _compare(test: GroupTest, *, n_resamples: int, seed: int, threshold: float, alpha: float,
             confidence: float) -> dict[str, Any]:
    a, b = _values(test.values_a, test, "values_a"), _values(test.values_b, test, "values_b")
    result: dict[str, Any] = {
        "name": test.key, "metric": test.metric, "contrast": test.contrast,
        "groups": {test.group_a: summarize(a, confidence, bounds=test.bounds, clusters=test.clusters_a),
                   test.group_b: summarize(b, confidence, bounds=test.bounds, clusters=test.clusters_b)},
        "wd": None, "p_value": None, "n_resamples": None, "exact": None, "bias": None,
        "worst_group": None, "best_group": None, "threshold": threshold, "alpha": alpha,
        "clustered": None, "clustered_reason": None, "seed": seed, "reason": None,
        "p_clustered": None, "p_holm": None, "q_value": None, "bias_status": NOT_TESTED, "not_tested_reason": None,
    }
    result["worst_group"], result["best_group"] = _direction(test, a, b)
    result["n_identities"] = {g: None if c is None else int(np.unique(np.asarray(c)).size)
                              for g, c in ((test.group_a, test.clusters_a), (test.group_b, test.clusters_b))}
    result["paper_rule"] = {"rule": PAPER_RULE, "bias": None}
    small = [f"{g} has {v.size} session(s)" for g, v in ((test.group_a, a), (test.group_b, b)) if v.size < 2]
    if small:
        result["reason"] = "; ".join(small) + "; a permutation test needs at least 2 per group"
        result["clustered_reason"] = result["not_tested_reason"] = result["reason"]
        return result
    naive_rng, cluster_rng = (np.random.Generator(np.random.SFC64(s)) for s in _seed_sequence(seed, test.key).spawn(2))
    pool = Pool(a, b)
    wd, p, used, exact = session_test(pool, n_resamples, naive_rng)
    result.update(wd=wd, p_value=p, n_resamples=used, exact=exact)
    result["paper_rule"]["bias"] = bool(wd > threshold and p < alpha)
    result["clustered"], result["clustered_reason"] = clustered_test(test, pool, n_resamples, cluster_rng)
    result["p_clustered"] = result["clustered"]["p_value"] if result["clustered"] else None
    result["not_tested_reason"] = (untestable_reason(result["n_identities"], alpha, n_resamples)
                                   or result["clustered_reason"])
    return result


def _values(values: Any, test: GroupTest, field: str) -> np.ndarray:
    x = np.asarray(values, dtype=float).reshape(-1)
    if not np.isfinite(x).all():
        raise ValueError(f"{test.key}: {field} has non-finite values; leave sessions without a value out of the test "
                         f"(they are counted as exclusions, not as numbers)")
    return x


def _direction(test: GroupTest, a: np.ndarray, b: np.ndarray) -> tuple[str | None, str | None]:
    if a.size == 0 or b.size == 0 or a.mean() == b.mean() or test.higher_is_better is None:
        return None, None  # no difference, or no better direction (a score whose ideal is the middle)
    a_better = (a.mean() > b.mean()) == test.higher_is_better
    return (test.group_b, test.group_a) if a_better else (test.group_a, test.group_b)


def _seed_sequence(seed: int, key: str) -> np.random.SeedSequence:
    digest = hashlib.sha256(key.encode("utf-8")).digest()
    return np.random.SeedSequence([seed, *np.frombuffer(digest[:16], dtype=np.uint32).tolist()])


