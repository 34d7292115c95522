"""The permutation machinery behind :mod:`faceedit_bench.analysis.disparity`: the Wasserstein
distance of every resampled partition of a sorted pool, session-level and identity-clustered.
How and why it is fast is explained in the disparity module's docstring."""

from __future__ import annotations

import itertools
import sys
from typing import Any

import numpy as np

#: Resamples per chunk. Memory per running test is about 30 x BLOCK x CHUNK bytes (7 MiB).
CHUNK = 16384
#: The clustered analysis holds about this many (cluster, resample) cells at once, about 20 bytes
#: each (20 MiB per running test), whatever the number of clusters: its chunks hold
#: CLUSTER_CELLS // clusters resamples (at most CHUNK, at least MIN_CLUSTER_CHUNK).
CLUSTER_CELLS = 2**20
MIN_CLUSTER_CHUNK = 64
#: Sorted positions per block: the distance is accumulated once per block.
BLOCK = 16
#: Tie runs at least this long take one hypergeometric draw instead of one Bernoulli per session.
LONG_RUN = 256
_TWO_POW_32 = 2.0**32
_HIGH_HALF = 1 if sys.byteorder == "little" else 0  # of a uint64 viewed as two uint32


def _p_value(wd: np.ndarray, n_null: int, exact: bool) -> tuple[float, float]:
    """Column 0 is the observed partition, the others the null; scipy's tolerance and +1 rule."""
    observed, null = wd[0], wd[1:]
    hits = int(np.count_nonzero(null >= observed - 100 * np.finfo(float).eps * abs(observed)))
    p = hits / n_null if exact else (hits + 1) / (n_null + 1)
    return float(observed), min(p, 1.0)


# -- the pooled, sorted sample ----------------------------------------------------------------


class Pool:
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


def session_test(pool: Pool, n_resamples: int, rng: np.random.Generator) -> tuple[float, float, int, bool]:
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


def _enumerated_session_wd(pool: Pool) -> np.ndarray:
    chosen = np.array(list(itertools.combinations(range(pool.n), pool.n_a)), dtype=np.intp)
    labels = np.zeros((chosen.shape[0] + 1, pool.n), dtype=bool)
    labels[0] = pool.is_a
    labels[np.arange(1, labels.shape[0])[:, None], chosen] = True
    rem = pool.n_a - np.cumsum(labels, axis=1, dtype=np.int64)[:, pool.run_end - 1].T
    return _weighted_distance(rem - pool.expected_rem[:, None], pool.gap) * (pool.n / (pool.n_a * pool.n_b))


class _SessionSteps:
    """Sorted sessions as sampling steps: one per session, or one per long tie run."""

    def __init__(self, pool: Pool) -> None:
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


def _sampled_session_wd(pool: Pool, steps: _SessionSteps, n_cols: int, rng: np.random.Generator) -> np.ndarray:
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
    # the steps over long tie runs, by index: a set, not a list per step (memory grows with sessions)
    hypergeometric = set(np.flatnonzero(steps.hypergeometric).tolist())
    n_steps = steps.size.size
    for s in range(0, n_steps, BLOCK):
        block = slice(s, min(s + BLOCK, n_steps))
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
            if s + j in hypergeometric:
                good = prev.astype(np.int64)
                drawn = rng.hypergeometric(good, int(steps.left[s + j]) - good, int(steps.size[s + j]))
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


def clustered_test(test: Any, pool: Pool, n_resamples: int,
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
    observed = (np.arange(k_a + k_b) < k_a).astype(np.int32)
    if exact:
        chosen = np.array(list(itertools.combinations(range(k_a + k_b), k_a)), dtype=np.intp)
        assignment = np.zeros((k_a + k_b, n_max + 1), dtype=np.int32)
        assignment[:, 0] = observed
        assignment[chosen, np.arange(1, n_max + 1)[:, None]] = 1
        wd = _cluster_wd(pool, units, assignment)
    else:
        chunk = cluster_chunk(k_a + k_b)
        parts = []
        for start in range(0, n_resamples, chunk):
            assignment = _random_assignment(k_a, k_b, min(chunk, n_resamples - start) + 1, rng)
            assignment[:, 0] = observed
            parts.append(_cluster_wd(pool, units, assignment))
            del assignment
        wd = np.concatenate([parts[0], *(w[1:] for w in parts[1:])])
    used = n_max if exact else n_resamples
    _, p = _p_value(wd, used, exact)
    shared = int(np.intersect1d(names_a, names_b).size)
    return {"p_value": p, "n_resamples": used, "exact": exact,
            "clusters": clusters, "shared_clusters": shared}, None


def cluster_chunk(n_clusters: int) -> int:
    """Resamples per chunk of the clustered analysis: a function of the number of clusters only
    (never of the machine), so the same seed gives the same p-value everywhere. Up to about 100
    clusters this is the session test's CHUNK (9,999 resamples in one chunk)."""
    return max(MIN_CLUSTER_CHUNK, min(CHUNK, CLUSTER_CELLS // max(1, n_clusters)))


def _random_assignment(k_a: int, k_b: int, cols: int, rng: np.random.Generator) -> np.ndarray:
    """(k_a + k_b, cols) int32 0/1: each column puts a uniformly random k_a of the units in group A."""
    k = k_a + k_b
    raw = rng.bit_generator.random_raw((k * cols + 1) // 2).view(np.uint32)[: k * cols].reshape(k, cols)
    out = np.empty((k, cols), dtype=np.int32)
    remaining = np.full(cols, k_a, dtype=np.int32)
    u = np.empty(cols, dtype=np.uint64)
    for i in range(k):  # unit i joins A with probability (A places left) / (units left), as for sessions
        np.multiply(raw[i], np.uint64(k - i), out=u)  # uniform on [0, k - i) in the high 32 bits
        np.right_shift(u, np.uint64(32), out=u)
        np.subtract(u, remaining, out=out[i], casting="unsafe")
        np.right_shift(out[i], 31, out=out[i])
        np.add(remaining, out[i], out=remaining)
    del raw
    return np.negative(out, out=out)


def _cluster_wd(pool: Pool, units: np.ndarray, assignment: np.ndarray) -> np.ndarray:
    """WD of each column's partition, where assignment[u, col] = 1 puts unit u in group A.

    Sorted sessions are taken in blocks: the running sum y below over a block is one gather and
    one cumulative sum, exact in integers, read at the ends of the tie runs; those are weighted in
    groups of BLOCK runs, so the result does not depend on the block size. Memory: the assignment,
    one step per (unit, column), and a block of about CLUSTER_CELLS cells."""
    cols = assignment.shape[1]
    n_units = assignment.shape[0]
    unit_sizes = np.bincount(units, minlength=n_units)
    n_a = np.einsum("u,uc->c", unit_sizes, assignment.astype(np.int64, copy=False))  # group sizes move with clusters
    # y = N c - n_a M (c: A sessions so far, M: sessions so far) grows by step[unit] per session;
    # |y| <= N**2, exact in int32 for all but huge tests
    exact_type = np.int32 if pool.n**2 < 2**31 else np.float64
    step = assignment.astype(exact_type)
    step *= pool.n
    step -= n_a.astype(exact_type)
    sessions_per_block = max(BLOCK, CLUSTER_CELLS // cols)
    run_end, gap = pool.run_end, pool.gap
    acc = np.zeros(cols)
    y = np.zeros(cols, dtype=exact_type)
    rows = np.empty((BLOCK, cols), dtype=exact_type)  # y after each run of the current group of BLOCK runs
    filled, next_run = 0, 0
    for first in range(0, pool.n, sessions_per_block):
        last = min(pool.n, first + sessions_per_block)
        block = np.take(step, units[first:last], axis=0)
        np.cumsum(block, axis=0, dtype=exact_type, out=block)
        block += y
        y = block[-1].copy()
        ends = int(np.searchsorted(run_end, last, side="right"))
        for r in range(next_run, ends):  # runs ending in this block, in order
            rows[filled] = block[run_end[r] - 1 - first]
            filled += 1
            if filled == BLOCK or r == gap.size - 1:
                group = r + 1 - filled
                acc += _weighted_distance(rows[:filled], gap[group:r + 1])
                filled = 0
        next_run = ends
        del block
    return acc / (n_a * (pool.n - n_a))
