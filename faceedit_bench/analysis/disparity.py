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
import itertools
import math
import os
import sys
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any

import numpy as np

from faceedit_bench.analysis.statistics import summarize

#: Resamples per chunk. Memory per running test is about 30 x BLOCK x CHUNK bytes (7 MiB), plus
#: about 30 x clusters x CHUNK bytes for the clustered analysis.
CHUNK = 16384
#: Sorted positions per block: the distance is accumulated once per block.
BLOCK = 16
#: Tie runs at least this long take one hypergeometric draw instead of one Bernoulli per session.
LONG_RUN = 256
_TWO_POW_32 = 2.0**32
_HIGH_HALF = 1 if sys.byteorder == "little" else 0  # of a uint64 viewed as two uint32


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
    higher_is_better: bool = False
    name: str | None = None

    @property
    def key(self) -> str:
        return self.name or f"{self.metric}/{self.contrast}/{self.group_a}/{self.group_b}"


def wasserstein(values_a: np.ndarray, values_b: np.ndarray) -> float:
    """The 1-D Wasserstein-1 distance (equals ``scipy.stats.wasserstein_distance``)."""
    a, b = np.asarray(values_a, float), np.asarray(values_b, float)
    if a.size == 0 or b.size == 0:
        raise ValueError("the Wasserstein distance needs at least one value in each sample")
    pool = _Pool(a, b)
    rem = pool.n_a - np.cumsum(pool.is_a)[pool.run_end - 1]
    return float(pool.n / (pool.n_a * pool.n_b) * np.sum(pool.gap * np.abs(rem - pool.expected_rem)))


def compare_groups(tests: Sequence[GroupTest], *, n_resamples: int = 9999, seed: int = 0, threshold: float = 3.0,
                   alpha: float = 0.05, confidence: float = 0.95, workers: int | None = None) -> list[dict[str, Any]]:
    """WD, permutation p-values, bias flags and group summaries, one JSON-ready dict per test, in order.

    ``workers`` threads run tests in parallel (default: one per CPU); results do not depend on it.
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
    workers = max(1, min(len(tests), workers or os.cpu_count() or 1))
    if workers == 1:
        return [_compare(t, **settings) for t in tests]
    with ThreadPoolExecutor(max_workers=workers) as pool:  # numpy releases the GIL in the heavy loops
        return list(pool.map(lambda t: _compare(t, **settings), tests))


# -- one test ---------------------------------------------------------------------------------


def _compare(test: GroupTest, *, n_resamples: int, seed: int, threshold: float, alpha: float,
             confidence: float) -> dict[str, Any]:
    a, b = _values(test.values_a, test, "values_a"), _values(test.values_b, test, "values_b")
    result: dict[str, Any] = {
        "name": test.key, "metric": test.metric, "contrast": test.contrast,
        "groups": {test.group_a: summarize(a, confidence), test.group_b: summarize(b, confidence)},
        "wd": None, "p_value": None, "n_resamples": None, "exact": None, "bias": None,
        "worst_group": None, "best_group": None, "threshold": threshold, "alpha": alpha,
        "clustered": None, "clustered_reason": None, "seed": seed, "reason": None,
    }
    result["worst_group"], result["best_group"] = _direction(test, a, b)
    small = [f"{g} has {v.size} session(s)" for g, v in ((test.group_a, a), (test.group_b, b)) if v.size < 2]
    if small:
        result["reason"] = "; ".join(small) + "; a permutation test needs at least 2 per group"
        result["clustered_reason"] = result["reason"]
        return result
    naive_rng, cluster_rng = (np.random.Generator(np.random.SFC64(s)) for s in _seed_sequence(seed, test.key).spawn(2))
    pool = _Pool(a, b)
    wd, p, used, exact = _session_test(pool, n_resamples, naive_rng)
    result.update(wd=wd, p_value=p, n_resamples=used, exact=exact, bias=bool(wd > threshold and p < alpha))
    result["clustered"], result["clustered_reason"] = _clustered(test, pool, n_resamples, cluster_rng)
    return result


def _values(values: Any, test: GroupTest, field: str) -> np.ndarray:
    x = np.asarray(values, dtype=float).reshape(-1)
    if not np.isfinite(x).all():
        raise ValueError(f"{test.key}: {field} has non-finite values; leave sessions without a value out of the test "
                         f"(they are counted as exclusions, not as numbers)")
    return x


def _direction(test: GroupTest, a: np.ndarray, b: np.ndarray) -> tuple[str | None, str | None]:
    if a.size == 0 or b.size == 0 or a.mean() == b.mean():
        return None, None
    a_better = (a.mean() > b.mean()) == test.higher_is_better
    return (test.group_b, test.group_a) if a_better else (test.group_a, test.group_b)


def _seed_sequence(seed: int, key: str) -> np.random.SeedSequence:
    digest = hashlib.sha256(key.encode("utf-8")).digest()
    return np.random.SeedSequence([seed, *np.frombuffer(digest[:16], dtype=np.uint32).tolist()])


def _p_value(wd: np.ndarray, n_null: int, exact: bool) -> tuple[float, float]:
    """Column 0 is the observed partition, the others the null; scipy's tolerance and +1 rule."""
    observed, null = wd[0], wd[1:]
    hits = int(np.count_nonzero(null >= observed - 100 * np.finfo(float).eps * abs(observed)))
    p = hits / n_null if exact else (hits + 1) / (n_null + 1)
    return float(observed), min(p, 1.0)


# -- the pooled, sorted sample ----------------------------------------------------------------


class _Pool:
    """The pooled values sorted once, as runs of tied values with the gap to the next run."""

    def __init__(self, a: np.ndarray, b: np.ndarray) -> None:
        self.n_a, self.n_b = a.size, b.size
        self.n = self.n_a + self.n_b
        pooled = np.concatenate([a, b])
        self.order = np.argsort(pooled, kind="stable")  # within a tie, group A first
        self.is_a = self.order < self.n_a
        ordered = pooled[self.order]
        starts = np.flatnonzero(np.r_[True, ordered[1:] != ordered[:-1]])
        self.run_start = starts
        self.run_end = np.r_[starts[1:], self.n]  # sessions up to and including the run
        self.gap = np.r_[np.diff(ordered[starts]), 0.0]  # to the next distinct value
        # |N c - n_a M| = N |rem - n_a (N - M) / N|, rem = A sessions after the run
        self.expected_rem = self.n_a * (self.n - self.run_end) / self.n


# -- session permutation (the primary test) ---------------------------------------------------


def _partitions(n: int, k: int, limit: int) -> int | None:
    """C(n, k) if it is at most limit, else None (without computing a huge binomial)."""
    count = 1
    for i in range(1, min(k, n - k) + 1):
        count = count * (n - i + 1) // i
        if count > limit:
            return None
    return count


def _session_test(pool: _Pool, n_resamples: int, rng: np.random.Generator) -> tuple[float, float, int, bool]:
    n_max = _partitions(pool.n, pool.n_a, n_resamples)
    if n_max is not None:  # scipy's exact branch: every partition once
        wd = _enumerated_session_wd(pool)
        observed, p = _p_value(wd, n_max, exact=True)
        return observed, p, n_max, True
    steps = _SessionSteps(pool)
    wds = [_sampled_session_wd(pool, steps, min(CHUNK, n_resamples - start), rng)
           for start in range(0, n_resamples, CHUNK)]
    wd = np.concatenate([wds[0], *(w[1:] for w in wds[1:])])  # one observed column
    observed, p = _p_value(wd, n_resamples, exact=False)
    return observed, p, n_resamples, False


def _enumerated_session_wd(pool: _Pool) -> np.ndarray:
    chosen = np.array(list(itertools.combinations(range(pool.n), pool.n_a)), dtype=np.intp)
    labels = np.zeros((chosen.shape[0] + 1, pool.n), dtype=bool)
    labels[0] = pool.is_a
    labels[np.arange(1, labels.shape[0])[:, None], chosen] = True
    rem = pool.n_a - np.cumsum(labels, axis=1, dtype=np.int64)[:, pool.run_end - 1].T
    return _weighted_distance(rem - pool.expected_rem[:, None], pool.gap) * (pool.n / (pool.n_a * pool.n_b))


class _SessionSteps:
    """Sorted sessions as sampling steps: one per session, or one per long tie run."""

    def __init__(self, pool: _Pool) -> None:
        sizes = np.diff(np.r_[pool.run_start, pool.n])
        long_run = sizes >= LONG_RUN
        per_run = np.where(long_run, 1, sizes)  # steps per run
        run_of_step = np.repeat(np.arange(sizes.size), per_run)
        last = np.zeros(run_of_step.size, bool)
        last[np.cumsum(per_run) - 1] = True
        self.size = np.where(long_run[run_of_step], sizes[run_of_step], 1)
        self.end = np.cumsum(self.size)  # sessions assigned after the step
        self.left = pool.n - self.end + self.size  # sessions not yet assigned before the step
        self.weight = np.where(last, pool.gap[run_of_step], 0.0)  # only a run's last step carries its gap
        self.expected_rem = pool.n_a * (pool.n - self.end) / pool.n
        obs_a = np.add.reduceat(pool.is_a.astype(np.int64), self.end - self.size)
        self.obs_a = obs_a  # observed A sessions per step
        self.hypergeometric = self.size > 1


def _sampled_session_wd(pool: _Pool, steps: _SessionSteps, n_cols: int, rng: np.random.Generator) -> np.ndarray:
    """WD of n_cols random partitions, plus the observed one as column 0."""
    cols = n_cols + 1
    acc = np.zeros(cols)
    rem = np.full(cols, pool.n_a, dtype=np.int32)  # A sessions not yet placed, per column
    scratch = np.empty(cols, dtype=np.int32)
    rows = np.empty((BLOCK, cols), dtype=np.int32)
    uniform = np.empty((BLOCK, cols), dtype=np.int32)
    wide = np.empty((BLOCK, cols), dtype=np.uint64)
    distance = np.empty((BLOCK, cols))
    row_views, uniform_views = list(rows), list(uniform)  # made once: the loop below is hot
    hypergeometric, size, left = steps.hypergeometric.tolist(), steps.size.tolist(), steps.left.tolist()
    for s in range(0, len(size), BLOCK):
        block = slice(s, min(s + BLOCK, len(size)))
        p = block.stop - s
        # u = (32 random bits * left) >> 32 is uniform on [0, left) to within 2**-32 per value,
        # so u < rem happens with probability rem / left: the next session is in group A
        raw = rng.bit_generator.random_raw((p * cols + 1) // 2).view(np.uint32)[: p * cols].reshape(p, cols)
        np.multiply(raw, steps.left[block, None].astype(np.uint64), out=wide[:p])
        np.copyto(uniform[:p], wide[:p].view(np.uint32)[:, _HIGH_HALF::2], casting="unsafe")  # the high 32 bits
        uniform[:p, 0] = np.where(steps.obs_a[block] > 0, -1, steps.left[block])  # column 0 replays the observation
        prev = rem
        for j in range(p):
            out = row_views[j]
            if hypergeometric[s + j]:
                good = prev.astype(np.int64)
                drawn = rng.hypergeometric(good, left[s + j] - good, size[s + j])
                drawn[0] = steps.obs_a[s + j]
                np.subtract(prev, drawn, out=out, casting="unsafe")
            else:  # rem - (u < rem), branch-free: (u - rem) >> 31 is -1 when u < rem, else 0
                np.subtract(uniform_views[j], prev, out=scratch)
                np.right_shift(scratch, 31, out=scratch)
                np.add(prev, scratch, out=out)
            prev = out
        rem = rows[p - 1].copy()
        weighted = np.flatnonzero(steps.weight[block])
        if weighted.size:
            picked = rows[:p] if weighted.size == p else rows[weighted]
            differences = distance[: weighted.size]
            np.subtract(picked, steps.expected_rem[s + weighted, None], out=differences)
            acc += _weighted_distance(differences, steps.weight[s + weighted])
    return acc * (pool.n / (pool.n_a * pool.n_b))


def _weighted_distance(differences: np.ndarray, weight: np.ndarray) -> np.ndarray:
    """sum_i weight_i |differences_i| per column (overwrites differences).

    einsum, not BLAS: the same summation order in every column (equal partitions give equal
    distances), and no BLAS thread pool competing with the worker threads.
    """
    np.abs(differences, out=differences)
    return np.einsum("i,ij->j", weight, differences)


# -- cluster (identity) permutation: the sensitivity analysis ---------------------------------


def _clustered(test: GroupTest, pool: _Pool, n_resamples: int,
               rng: np.random.Generator) -> tuple[dict[str, Any] | None, str | None]:
    missing = [g for g, c in ((test.group_a, test.clusters_a), (test.group_b, test.clusters_b)) if c is None]
    if missing:
        return None, "no cluster labels given" + ("" if len(missing) == 2 else f" for group {missing[0]}")
    labels_a, labels_b = np.asarray(test.clusters_a).reshape(-1), np.asarray(test.clusters_b).reshape(-1)
    for g, labels, n in ((test.group_a, labels_a, pool.n_a), (test.group_b, labels_b, pool.n_b)):
        if labels.size != n:
            raise ValueError(f"{test.key}: group {g} has {n} values but {labels.size} cluster labels; "
                             f"give one cluster label (face identity) per session")
    names_a, units_a = np.unique(labels_a, return_inverse=True)
    names_b, units_b = np.unique(labels_b, return_inverse=True)
    k_a, k_b = names_a.size, names_b.size
    clusters = {test.group_a: int(k_a), test.group_b: int(k_b)}
    if k_a < 2 or k_b < 2:
        return None, f"clusters per group {clusters}; a cluster permutation needs at least 2 per group"
    units = np.concatenate([units_a, units_b + k_a])[pool.order]  # unit of each sorted session
    n_max = _partitions(k_a + k_b, k_a, n_resamples)
    exact = n_max is not None
    observed = (np.arange(k_a + k_b) < k_a).astype(float)
    if exact:
        chosen = np.array(list(itertools.combinations(range(k_a + k_b), k_a)), dtype=np.intp)
        assignment = np.zeros((k_a + k_b, n_max + 1))
        assignment[:, 0] = observed
        assignment[chosen, np.arange(1, n_max + 1)[:, None]] = 1.0
        wd = _cluster_wd(pool, units, assignment)
    else:
        parts = []
        for start in range(0, n_resamples, CHUNK):
            assignment = _random_assignment(k_a, k_b, min(CHUNK, n_resamples - start) + 1, rng)
            assignment[:, 0] = observed
            parts.append(_cluster_wd(pool, units, assignment))
        wd = np.concatenate([parts[0], *(w[1:] for w in parts[1:])])
    used = n_max if exact else n_resamples
    _, p = _p_value(wd, used, exact)
    shared = int(np.intersect1d(names_a, names_b).size)
    return {"p_value": p, "n_resamples": used, "exact": exact,
            "clusters": clusters, "shared_clusters": shared}, None


def _random_assignment(k_a: int, k_b: int, cols: int, rng: np.random.Generator) -> np.ndarray:
    """(k_a + k_b, cols) 0/1: each column puts a uniformly random k_a of the units in group A."""
    k = k_a + k_b
    raw = rng.bit_generator.random_raw((k * cols + 1) // 2).view(np.uint32)[: k * cols].reshape(k, cols)
    u = ((raw * (k - np.arange(k, dtype=np.uint64))[:, None]) >> np.uint64(32)).astype(np.int32)
    out = np.empty((k, cols), dtype=np.int32)
    remaining = np.full(cols, k_a, dtype=np.int32)
    for i in range(k):  # unit i joins A with probability (A places left) / (units left), as for sessions
        np.subtract(u[i], remaining, out=out[i])
        np.right_shift(out[i], 31, out=out[i])
        np.add(remaining, out[i], out=remaining)
    return -out


def _cluster_wd(pool: _Pool, units: np.ndarray, assignment: np.ndarray) -> np.ndarray:
    """WD of each column's partition, where assignment[u, col] = 1 puts unit u in group A."""
    cols = assignment.shape[1]
    n_units = assignment.shape[0]
    unit_sizes = np.bincount(units, minlength=n_units)
    in_a = assignment.astype(np.int64)
    n_a = np.einsum("u,uc->c", unit_sizes, in_a)  # group sizes change with the clusters moved
    # y = N c - n_a M (c: A sessions so far, M: sessions so far) grows by step[unit] per session;
    # |y| <= N**2, exact in int32 for all but huge tests
    exact_type = np.int32 if pool.n**2 < 2**31 else np.float64
    step = (pool.n * in_a - n_a).astype(exact_type)
    del in_a
    # per run of tied values: its units (few sessions) or its session count per unit (many)
    per_run = [units[a:b].tolist() if b - a <= 8 else np.bincount(units[a:b], minlength=n_units).astype(exact_type)
               for a, b in zip(pool.run_start.tolist(), pool.run_end.tolist())]
    acc = np.zeros(cols)
    y = np.zeros(cols, dtype=exact_type)
    rows = np.empty((BLOCK, cols), dtype=exact_type)
    row_views = list(rows)
    for s in range(0, len(per_run), BLOCK):
        p = min(BLOCK, len(per_run) - s)
        prev = y
        for j in range(p):
            run, out = per_run[s + j], row_views[j]
            if isinstance(run, list):
                np.add(prev, step[run[0]], out=out)
                for unit in run[1:]:
                    out += step[unit]
            else:
                np.add(prev, np.einsum("u,uc->c", run, step), out=out)
            prev = out
        y = rows[p - 1].copy()
        acc += _weighted_distance(rows[:p], pool.gap[s:s + p])
    return acc / (n_a * (pool.n - n_a))
