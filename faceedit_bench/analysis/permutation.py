"""The permutation machinery behind :mod:`faceedit_bench.analysis.disparity`: the Wasserstein
distance of every resampled partition of a sorted pool, session-level and identity-clustered.
How and why it is fast is explained in the disparity module's docstring."""

from __future__ import annotations

import itertools
import sys
from typing import Any

import numpy as np

#: Resamples per chunk. Memory per running test is about 30 x BLOCK x CHUNK bytes (7 MiB), plus
#: about 30 x clusters x CHUNK bytes for the clustered analysis.
CHUNK = 16384
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


def _cluster_wd(pool: Pool, units: np.ndarray, assignment: np.ndarray) -> np.ndarray:
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
