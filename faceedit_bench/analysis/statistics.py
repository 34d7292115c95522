"""Summary statistics: a mean with a confidence interval that stays inside its metric's range.

The interval's method follows the metric's declared ``bounds`` (its registration's: SC 0–100, a
1–5 judge score, OER 0 and up) and is stated next to every interval as ``ci_method``:

* ``wilson``: every value lies on one of two finite bounds (a 0/1 share, a 0/100 score): the
  mean is a proportion, and the Wilson score interval (statsmodels', :func:`wilson_interval`) is its
  interval, mapped back onto the bounds. It stays inside them and keeps its coverage near 0 and 1.
* ``bootstrap_percentile``: a bounded (or half-bounded) metric otherwise: the percentile interval
  of :data:`BOOTSTRAP_RESAMPLES` bootstrap means, seeded, so the same values give the same
  interval on every machine and in every order. Every resampled mean lies between the smallest
  and largest value, so the interval never leaves the metric's range.
* ``t``: an unbounded metric (Drop_FSS): mean ± t(1 − α/2, n − 1)·SD/√n.

The identity is the unit of replication. Given each value's identity (``clusters``), and when some
identity has several values (sessions of one person are correlated), the methods are clustered:

* ``cluster_t``: mean ± t(1 − α/2, G − 1)·SE, with SE the cluster-robust (CR1) standard error of the
  mean over G identities, clipped to the metric's bounds. It replaces the percentile bootstrap, whose
  coverage over few identities is far below nominal (a cluster bootstrap: 86 % at 10 identities).
* ``wilson_effective_n``: the Wilson interval at Kish's effective sample size n / design effect.

Every value the same on a bounded metric (six sessions all scoring 80) is no sign of precision: the
Wilson interval at that mean is used (a variable on [a, b] with mean μ has variance at most
(μ − a)(b − μ), the Bernoulli's, so the interval is conservative), never a zero-width bootstrap. A
metric not bounded on both sides (Drop_FSS, OER) with no spread gets no interval. Below :data:`MIN_INTERVAL_IDENTITIES` identities
there is no interval, and below :data:`PRELIMINARY_IDENTITIES` reports mark the figure preliminary.

No interval below two values: one session says nothing about spread. Percentile intervals are
too narrow at very small n (they cannot be wider than the data); docs/statistics.md says so.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np

from faceedit_bench.analysis.cached import cached_statistic

#: Bootstrap resamples of a bounded mean: at 95 % each end of the interval moves by about 3 % of its
#: width from one seed to another.
BOOTSTRAP_RESAMPLES = 2000
#: Identities an interval of a mean needs at all: with one person there is no spread between people.
MIN_INTERVAL_IDENTITIES = 2
#: Fewer identities than this make a run "preliminary": the clustered intervals covered 91.5-92.5 % of
#: simulated means at 8 identities, 93-96 % from 10 on (docs/statistics.md has the simulation).
PRELIMINARY_IDENTITIES = 10
#: Seed of every bootstrap summary (a summary depends on its values only, never on call order).
BOOTSTRAP_SEED = 20
#: Resampled values held at once: bounds the memory of a bootstrap over many sessions (16 MB of indices).
_BATCH_VALUES = 4_000_000
#: Up to this many distinct values the resamples are drawn as counts per value (multinomial): judge
#: scores, question-answer items and 0/25/50 OER values cost a few microseconds per resample whatever n is.
_FEW_DISTINCT = 64

Bounds = tuple[float | None, float | None]


def as_bounds(bounds: Any) -> Bounds | None:
    """``(low, high)`` with None for an open side, from a declaration (tuple, list or None)."""
    if bounds is None:
        return None
    low, high = bounds
    low = None if low is None or not math.isfinite(float(low)) else float(low)
    high = None if high is None or not math.isfinite(float(high)) else float(high)
    return None if low is None and high is None else (low, high)


def interval_method(values: Sequence[float] | np.ndarray, bounds: Any = None) -> str:
    """The interval :func:`summarize` gives ``values`` of a metric with these ``bounds``."""
    b = as_bounds(bounds)
    if b is None:
        return "t"
    x = np.asarray(values, dtype=float)
    if b[0] is not None and b[1] is not None and (np.all((x == b[0]) | (x == b[1])) or np.all(x == x.flat[0])):
        return "wilson"  # values on the two bounds, or all one value (module docstring)
    return "bootstrap_percentile"


@cached_statistic("summarize", version=2)
def summarize(values: Sequence[float] | np.ndarray, confidence: float = 0.95, *,
              bounds: Any = None, clusters: Sequence[Any] | np.ndarray | None = None) -> dict[str, Any]:
    """n, mean, SD and the interval of the mean at ``confidence``, with ``ci_method`` (module docstring).

    ``clusters`` labels each value with its identity (the person): the interval is then one of the
    clustered methods, ``n_identities`` is stated, and below :data:`MIN_INTERVAL_IDENTITIES` there is
    no interval (``ci_reason`` says why). Without labels ``n_identities`` is None: not known.
    """
    x = np.asarray(values, dtype=float).reshape(-1)
    n = int(x.size)
    units = _cluster_units(clusters, n)
    n_identities = None if units is None else int(units.max() + 1 if n else 0)
    out: dict[str, Any] = {"n": n, "n_identities": n_identities, "mean": None, "sd": None, "ci_low": None,
                           "ci_high": None, "ci_method": None, "ci_reason": None}
    if n == 0:
        return out
    out["mean"] = float(x.mean())
    if n < 2:
        out["ci_reason"] = "one value: an interval needs at least 2"
        return out
    out["sd"] = float(x.std(ddof=1))
    if n_identities is not None and n_identities < MIN_INTERVAL_IDENTITIES:
        out["ci_reason"] = (f"{n_identities} identity: an interval of a mean needs at least "
                            f"{MIN_INTERVAL_IDENTITIES} (the spread between people)")
        return out
    clustered = units is not None and n_identities < n  # one value per identity: the plain methods are the same
    method = interval_method(x, bounds)
    b = as_bounds(bounds)
    if method == "wilson":
        n_eff = effective_n(x, units) if clustered else float(n)
        low, high = _wilson(x, b, confidence, n_eff)  # type: ignore[arg-type]
        method = "wilson_effective_n" if clustered else method
    elif out["sd"] == 0:  # and not bounded on both sides (then it is Wilson's): never a zero-width interval
        out["ci_reason"] = ("every value is the same and the metric is not bounded on both sides: no spread to "
                            "make an interval from")
        return out
    elif method == "bootstrap_percentile" and not clustered:
        low, high = bootstrap_mean_interval(x, confidence)
    else:
        se, df = (cluster_robust_se(x, units), n_identities - 1) if clustered else (out["sd"] / math.sqrt(n), n - 1)
        half = t_quantile(0.5 + confidence / 2, df) * se
        low, high = out["mean"] - half, out["mean"] + half
        if b is not None:  # a bounded metric: the interval stays inside its range
            low, high = max(low, b[0]) if b[0] is not None else low, min(high, b[1]) if b[1] is not None else high
        method = "cluster_t" if clustered else method
    out.update(ci_low=low, ci_high=high, ci_method=method)
    return out


def _cluster_units(clusters: Any, n: int) -> np.ndarray | None:
    """Each value's identity as 0..G-1 codes, or None without labels."""
    if clusters is None:
        return None
    labels = np.asarray(clusters).reshape(-1)
    if labels.size != n:
        raise ValueError(f"got {n} values but {labels.size} identity labels; give one identity per value")
    return np.unique(labels, return_inverse=True)[1].reshape(-1) if n else np.zeros(0, dtype=np.intp)


def cluster_robust_se(x: np.ndarray, units: np.ndarray) -> float:
    """The cluster-robust (CR1) standard error of the mean: sessions of one identity may be correlated."""
    g = int(units.max()) + 1
    residual_totals = np.bincount(units, weights=x - x.mean(), minlength=g)
    return math.sqrt(g / (g - 1) * float(np.sum(residual_totals**2))) / x.size


def effective_n(x: np.ndarray, units: np.ndarray) -> float:
    """Kish's effective sample size n / design effect, from the cluster-robust variance of the mean.

    With no spread (every value the same), or one identity, the correlation within identities cannot be
    estimated and is taken as complete: n² / Σ m_g², which is G for G identities of equal size."""
    sizes = np.bincount(units).astype(float)
    full_correlation = x.size**2 / float(np.sum(sizes**2))
    variance = float(np.mean((x - x.mean()) ** 2))
    if variance == 0 or sizes.size < 2:  # one identity: its values say nothing of the spread between people
        return full_correlation
    se = cluster_robust_se(x, units)
    return float(min(x.size, max(full_correlation, variance / se**2))) if se > 0 else float(x.size)


def t_quantile(q: float, df: int) -> float:
    """Student's t quantile: ``scipy.stats.t.ppf(q, df)``, the same function of ``scipy.special``, which a
    process imports in a third of the time (0.25 s against 0.6 s of CPU: every run summarises Drop_FSS)."""
    from scipy.special import stdtrit

    return float(stdtrit(df, q))


def t_two_sided_p(t: float, df: int) -> float:
    """The two-sided p-value of a t statistic: ``2 * scipy.stats.t.sf(|t|, df)`` (see :func:`t_quantile`)."""
    from scipy.special import stdtr

    return float(2 * stdtr(df, -abs(t)))


#: ``-scipy.special.ndtri((1 - confidence) / 2)`` of the usual confidence, as SciPy gives it (compared in
#: tests/test_wilson_interval.py): a rerun, whose other statistics are all read back, imports no scipy.special for it
#: (0.13 s of CPU).
NORMAL_CRITICAL = {0.95: 1.959963984540054}


def _normal_critical(confidence: float) -> float:
    from scipy.special import ndtri

    return float(-ndtri((1 - confidence) / 2.0))  # scipy.stats.norm.isf(alpha / 2)


def wilson_interval(count: float, nobs: float, confidence: float) -> tuple[float, float]:
    """The Wilson score interval of ``count`` successes in ``nobs`` trials (either may be fractional):
    ``statsmodels.stats.proportion.proportion_confint(count, nobs, alpha=1 - confidence, method="wilson")``,
    operation for operation, without importing statsmodels (it imports pandas: a second of CPU at every launch)."""
    count_a, nobs_a = np.asarray(count, dtype=np.double), np.asarray(nobs, dtype=np.double)
    q_ = count_a / nobs_a
    crit = NORMAL_CRITICAL.get(confidence) or _normal_critical(confidence)
    crit2 = crit**2
    denom = 1 + crit2 / nobs_a
    center = (q_ + crit2 / (2 * nobs_a)) / denom
    dist = crit * np.sqrt(q_ * (1.0 - q_) / nobs_a + crit2 / (4.0 * nobs_a**2))
    dist /= denom
    return float(np.clip(center - dist, 0, 1)), float(np.clip(center + dist, 0, 1))


def _wilson(x: np.ndarray, bounds: tuple[float, float], confidence: float, n_eff: float) -> tuple[float, float]:
    low, high = bounds
    share = (float(x.mean()) - low) / (high - low)  # the mean as a proportion of the range
    p_low, p_high = wilson_interval(share * n_eff, n_eff, confidence)
    p_low, p_high = min(float(p_low), share), max(float(p_high), share)  # a fractional count: no rounding past it
    return low + (high - low) * float(p_low), low + (high - low) * float(p_high)


def bootstrap_mean_interval(x: np.ndarray, confidence: float, *, resamples: int = BOOTSTRAP_RESAMPLES,
                            seed: int = BOOTSTRAP_SEED) -> tuple[float, float]:
    """The percentile interval of ``resamples`` bootstrap means of ``x`` (seeded, vectorised)."""
    x = np.sort(np.asarray(x, dtype=float))  # sorted: the interval depends on the values, not on their order
    rng = np.random.default_rng(seed)
    support, counts = np.unique(x, return_counts=True)
    if support.size == 1:
        return float(support[0]), float(support[0])
    if support.size <= _FEW_DISTINCT:
        drawn = rng.multinomial(x.size, counts / x.size, size=resamples)
        means = drawn @ support / x.size
    else:
        per_batch = max(1, _BATCH_VALUES // x.size)
        means = np.concatenate([
            x[rng.integers(0, x.size, size=(min(per_batch, resamples - start), x.size), dtype=np.int32)].mean(axis=1)
            for start in range(0, resamples, per_batch)])
    alpha = 1 - confidence
    low, high = np.quantile(means, [alpha / 2, 1 - alpha / 2])
    # the resampled means lie in [min, max] of x up to rounding: so does the interval
    return float(max(low, support[0])), float(min(high, support[-1]))


def difference_bounds(bounds: Any) -> Bounds | None:
    """The range of a difference of two values of a metric with ``bounds`` (a paired Δ): ±(high − low)."""
    b = as_bounds(bounds)
    if b is None or b[0] is None or b[1] is None:
        return None
    return (b[0] - b[1], b[1] - b[0])


def sample_size(sessions: int, identities: np.ndarray) -> dict[str, Any]:
    """The run's sessions and identities, and whether its figures are preliminary (too few identities)."""
    n = int(np.unique(identities[identities >= 0]).size)
    preliminary = n < PRELIMINARY_IDENTITIES
    return {"sessions": sessions, "identities": n, "preliminary": preliminary,
            "preliminary_below_identities": PRELIMINARY_IDENTITIES,
            "reason": (f"{n} identities, fewer than {PRELIMINARY_IDENTITIES}: intervals and flags rest on few people"
                       if preliminary else None)}

