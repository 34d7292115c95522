"""Statistics across more than two demographic groups (issue 12 item 6; METHODOLOGY §4.6, §7).

- :func:`compare_k_groups`: per-group means with Student-t CIs, the max − min disparity of the
  group means with a seeded bootstrap CI (resampling within groups), and the Kruskal–Wallis H
  test across groups (``scipy.stats.kruskal``, tie-corrected, chi-square p with k − 1 df).
- :func:`one_vs_rest`: one group against all others pooled (e.g. White vs non-White), the
  two-sided Mann–Whitney U test (``scipy.stats.mannwhitneyu``, method 'auto').
- :func:`worst_groups`: the n groups with the worst mean, given the metric's direction.

Every function takes the metric's direction as it is registered (``higher_is_better``; there is no
default, so no caller can inherit a wrong one). ``None`` means neither direction is better (a score
whose ideal is the middle, e.g. skin tone 3 = no change): no best or worst group is named, and with
``ideal`` each group's ``deviation_from_ideal`` (mean − ideal) is reported instead. ``bounds`` are
the metric's declared range, which every group's interval respects (:func:`summarize`).

Results are JSON-ready dicts. A value that is undefined is None with a ``reason``; no p-value is
ever produced for data that cannot give one (all values identical, too few groups or values).
The bootstrap generator is seeded from ``seed`` and the test's ``name`` (as the WD tests are),
so adding, removing or reordering tests never changes another test's interval.
"""

from __future__ import annotations

import warnings
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from faceedit_bench.analysis.cached import cached_statistic
from faceedit_bench.analysis.samples import (
    all_identical,
    as_groups,
    check_confidence,
    check_positive_int,
    check_seed,
    generator,
    number,
    rng_argument,
)
from faceedit_bench.analysis.statistics import summarize

#: Bootstrap interval methods of ``scipy.stats.bootstrap`` accepted for the max − min disparity.
CI_METHODS = ("percentile", "BCa", "basic")
#: Resamples per bootstrap batch, at most: memory is about 24 x n x batch bytes for n values.
BOOTSTRAP_BATCH = 1000
#: A bootstrap's batches hold about this many bytes, so memory does not grow with the sessions: up
#: to about 1,400 values a batch is BOOTSTRAP_BATCH resamples, beyond that fewer. The batch is a
#: function of n only, so the same seed gives the same interval on every machine.
BOOTSTRAP_BYTES = 32 * 2**20


def bootstrap_batch(n_values: int) -> int:
    return max(1, min(BOOTSTRAP_BATCH, BOOTSTRAP_BYTES // (24 * max(1, n_values))))


@cached_statistic("compare_k_groups")
def compare_k_groups(groups: Mapping[str, Sequence[float]], *, name: str, higher_is_better: bool | None,
                     confidence: float = 0.95, n_resamples: int = 9999, seed: int = 0,
                     ci_method: str = "percentile", min_group_size: int = 2, bounds: Any = None,
                     ideal: float | None = None, focus: str | None = None,
                     rest_label: str | None = None) -> dict[str, Any]:
    """Means per group, the max − min disparity with a bootstrap CI, and Kruskal–Wallis across groups; with
    ``focus``, also that group against all the others pooled (``vs_rest``: :func:`one_vs_rest`, named
    ``<name>/<focus>``, every group taking part whatever its size).

    ``groups`` maps each group name to its per-item values (sessions, edits), in the order the
    report lists them. Groups with fewer than ``min_group_size`` values are summarised but left
    out of the disparity and the test, each with its reason under ``left_out``.

    Disparity: the largest group mean minus the smallest. Its CI is a bootstrap that resamples
    each group with replacement at its own size (so group sizes are fixed, as in the design),
    recomputes every group mean and takes max − min; ``ci_method`` is the interval of
    ``scipy.stats.bootstrap`` ('percentile' by default: the disparity is >= 0 and 'basic' can
    go below 0; note that max − min of noisy means is biased upwards when the true means are
    close, and the percentile interval inherits that bias). Groups are resampled in name order,
    so the interval does not depend on the order of ``groups``; a tie for max_group or
    min_group goes to the group listed first in ``groups``.
    """
    _check_name(name)
    check_confidence(confidence)
    check_positive_int(n_resamples, "n_resamples")
    check_seed(seed)
    check_positive_int(min_group_size, "min_group_size")
    if ci_method not in CI_METHODS:
        raise ValueError(f"ci_method must be one of {', '.join(CI_METHODS)}, got {ci_method!r}")
    samples = as_groups(groups, name)
    used = {g: x for g, x in samples.items() if x.size >= min_group_size}
    left_out = {g: _too_small(x.size, min_group_size) for g, x in samples.items() if x.size < min_group_size}
    result: dict[str, Any] = {
        "name": name, "test": "k_groups", "higher_is_better": higher_is_better, "confidence": confidence,
        "groups": {g: summarize(x, confidence, bounds=bounds) for g, x in samples.items()},
        "left_out": left_out,
        "n": int(sum(x.size for x in used.values())), "k": len(used),
        "disparity": _disparity(used, name=name, higher_is_better=higher_is_better, confidence=confidence,
                                n_resamples=n_resamples, seed=seed, ci_method=ci_method, ideal=ideal),
        "kruskal": kruskal_wallis(used),
    }
    if focus is not None:
        result["vs_rest"] = one_vs_rest(groups, focus, name=f"{name}/{focus}", higher_is_better=higher_is_better,
                                        confidence=confidence, rest_label=rest_label, bounds=bounds, ideal=ideal)
    return result


def kruskal_wallis(samples: Mapping[str, np.ndarray]) -> dict[str, Any]:
    """Kruskal–Wallis H across the given groups (``scipy.stats.kruskal``); p None with a reason if undefined.

    epsilon² = H / (n − 1) (Tomczak & Tomczak 2014) is the share of rank variance the groups
    explain, on [0, 1].
    """
    names = list(samples)
    out: dict[str, Any] = {"h": None, "df": None, "p_value": None, "epsilon_squared": None,
                           "groups": names, "n": int(sum(np.size(x) for x in samples.values())), "reason": None}
    empty = [g for g in names if np.size(samples[g]) == 0]
    if empty:
        raise ValueError(f"kruskal_wallis: groups {empty} have no values; leave them out")
    if len(names) < 2:
        out["reason"] = f"{len(names)} group(s) with enough values; Kruskal–Wallis needs at least 2"
        return out
    if all_identical(*samples.values()):
        out["reason"] = "all values are identical; a rank test across groups is undefined"
        return out
    from scipy import stats  # imported here: scipy.stats takes seconds to import
    h, p = stats.kruskal(*(samples[g] for g in names))
    out.update(h=number(h), df=len(names) - 1, p_value=number(p), epsilon_squared=number(h / (out["n"] - 1)))
    return out


@cached_statistic("one_vs_rest")
def one_vs_rest(groups: Mapping[str, Sequence[float]], focus: str, *, name: str, higher_is_better: bool | None,
                confidence: float = 0.95, rest_label: str | None = None, bounds: Any = None,
                ideal: float | None = None) -> dict[str, Any]:
    """``focus`` against all other groups pooled: two-sided Mann–Whitney U with group summaries.

    ``u`` is the focus group's U statistic (``scipy.stats.mannwhitneyu(focus, rest)``, method
    'auto': exact when one sample has at most 8 values and there are no ties, else the normal
    approximation with continuity and tie correction). The effect follows the test: ``rank_biserial`` = 2U/(n₁n₂) − 1
    is > 0 when the focus group's values tend to be higher, and ``higher_group``, ``best_group`` and
    ``worst_group`` (given ``higher_is_better``) come from its sign. ``mean_difference`` is focus −
    rest, for reading alongside; with ``higher_is_better`` None and an ``ideal``, ``deviation_from_ideal``
    gives each side's mean − ideal instead of a best and a worst group.
    """
    _check_name(name)
    check_confidence(confidence)
    samples = as_groups(groups, name)
    if focus not in samples:
        raise ValueError(f"{name}: the focus group {focus!r} is not among the groups {sorted(samples)}; "
                         f"name one of them")
    rest_label = rest_label or f"non-{focus}"
    if rest_label in samples:
        raise ValueError(f"{name}: rest_label {rest_label!r} is also a group name; choose another rest_label")
    rest_groups = [g for g in samples if g != focus]
    x = samples[focus]
    y = np.concatenate([samples[g] for g in rest_groups]) if rest_groups else np.array([])
    result: dict[str, Any] = {
        "name": name, "test": "one_vs_rest", "focus": focus, "rest": rest_label, "rest_groups": rest_groups,
        "higher_is_better": higher_is_better, "ideal": ideal,
        "groups": {focus: summarize(x, confidence, bounds=bounds), rest_label: summarize(y, confidence, bounds=bounds)},
        "u": None, "p_value": None, "alternative": "two-sided", "method": "auto", "rank_biserial": None,
        "mean_difference": None, "higher_group": None, "best_group": None, "worst_group": None,
        "deviation_from_ideal": _deviations({focus: x.mean() if x.size else None,
                                             rest_label: y.mean() if y.size else None}, higher_is_better, ideal),
        "reason": None,
    }
    empty = [g for g, s in ((focus, x), (rest_label, y)) if s.size == 0]
    if empty:
        result["reason"] = f"{' and '.join(empty)} has no values; Mann–Whitney U needs at least 1 per group"
        return result
    result["mean_difference"] = float(x.mean() - y.mean())
    if all_identical(x, y):
        result["reason"] = "all values are identical; a rank test between the groups is undefined"
        return result
    from scipy import stats  # imported here: scipy.stats takes seconds to import
    u, p = stats.mannwhitneyu(x, y, alternative="two-sided", method="auto")
    r = 2 * float(u) / (x.size * y.size) - 1
    result.update(u=number(u), p_value=number(p), rank_biserial=r)
    if r != 0:
        higher, lower = (focus, rest_label) if r > 0 else (rest_label, focus)
        result["higher_group"] = higher
        if higher_is_better is not None:  # None: no better direction, so no best or worst group
            result["best_group"], result["worst_group"] = (higher, lower) if higher_is_better else (lower, higher)
    return result


def worst_groups(summaries: Mapping[str, Mapping[str, Any]], *, n: int = 2,
                 higher_is_better: bool | None) -> dict[str, Any]:
    """The ``n`` groups with the worst mean (worst first), from summaries as :func:`summarize` gives them.

    Groups without a mean are not ranked. Ties keep the order of ``summaries``, and
    ``tie_at_cutoff`` says when the n-th worst mean is shared by a group left out, so a reader
    knows the choice among them was arbitrary. A metric without a better direction
    (``higher_is_better`` None) ranks nothing: ``groups`` is empty, with the reason.
    """
    check_positive_int(n, "n")
    if higher_is_better is None:
        return {"groups": [], "means": [], "n": {}, "higher_is_better": None, "tie_at_cutoff": False,
                "reason": "the metric has no better direction (its ideal is the middle): no group is the worst; "
                          "read each group's deviation from the ideal"}
    ranked = [(g, s["mean"]) for g, s in summaries.items() if s.get("mean") is not None]
    ranked.sort(key=lambda item: -item[1] if not higher_is_better else item[1])  # stable: ties keep order
    chosen = ranked[:n]
    out: dict[str, Any] = {
        "groups": [g for g, _ in chosen], "means": [float(m) for _, m in chosen],
        "n": {g: int(summaries[g]["n"]) for g, _ in chosen}, "higher_is_better": higher_is_better,
        "tie_at_cutoff": bool(len(ranked) > n and ranked[n][1] == chosen[-1][1]), "reason": None,
    }
    if len(ranked) < n:
        out["reason"] = f"only {len(ranked)} group(s) have values; asked for the {n} worst"
    return out


# -- the disparity and its bootstrap ----------------------------------------------------------


def _disparity(samples: dict[str, np.ndarray], *, name: str, higher_is_better: bool | None, confidence: float,
               n_resamples: int, seed: int, ci_method: str, ideal: float | None = None) -> dict[str, Any]:
    means = {g: float(x.mean()) for g, x in samples.items()}
    out: dict[str, Any] = {
        "statistic": "max_minus_min_of_means", "value": None, "max_group": None, "min_group": None,
        "best_group": None, "worst_group": None, "higher_is_better": higher_is_better, "ideal": ideal,
        "deviation_from_ideal": _deviations(means, higher_is_better, ideal),
        "ci_low": None, "ci_high": None, "standard_error": None,
        "ci_method": ci_method, "n_resamples": n_resamples, "seed": seed, "resampling": "within groups",
        "reason": None, "ci_reason": None,
    }
    if len(samples) < 2:
        out["reason"] = out["ci_reason"] = f"{len(samples)} group(s) with enough values; a disparity needs 2"
        return out
    max_group, min_group = max(means, key=means.__getitem__), min(means, key=means.__getitem__)
    out.update(value=means[max_group] - means[min_group], max_group=max_group, min_group=min_group)
    if means[max_group] != means[min_group] and higher_is_better is not None:  # None: no better direction
        out["best_group"], out["worst_group"] = (max_group, min_group) if higher_is_better else (min_group, max_group)
    if all(np.all(x == x[0]) for x in samples.values()):
        out["ci_reason"] = "every group's values are identical within the group; the bootstrap is degenerate"
        return out
    ordered = tuple(samples[g] for g in sorted(samples))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # a degenerate BCa interval comes back as NaN, reported below
        from scipy import stats  # imported here: scipy.stats takes seconds to import
        res = stats.bootstrap(ordered, _max_minus_min, n_resamples=n_resamples,
                              batch=bootstrap_batch(sum(x.size for x in ordered)),
                              vectorized=True, paired=False, confidence_level=confidence, method=ci_method,
                              **rng_argument(stats.bootstrap, generator(seed, f"bootstrap/{name}")))
    low, high = number(res.confidence_interval.low), number(res.confidence_interval.high)
    if low is None or high is None:
        out["ci_reason"] = f"scipy's {ci_method} bootstrap interval is undefined for these data"
        return out
    out.update(ci_low=low, ci_high=high, standard_error=number(res.standard_error))
    return out


def _deviations(means: Mapping[str, float | None], higher_is_better: bool | None,
                ideal: float | None) -> dict[str, float | None] | None:
    """Each group's mean − ideal, for a metric without a better direction; None otherwise."""
    if higher_is_better is not None or ideal is None:
        return None
    return {g: None if m is None else float(m) - ideal for g, m in means.items()}


def _max_minus_min(*samples: np.ndarray, axis: int = -1) -> np.ndarray:
    means = np.stack([s.mean(axis=axis) for s in samples])
    return means.max(axis=0) - means.min(axis=0)


def _too_small(size: int, minimum: int) -> str:
    return f"{size} value(s); at least {minimum} are needed for the disparity and the test"


def _check_name(name: str) -> None:
    if not isinstance(name, str) or not name:
        raise ValueError(f"name must be a non-empty string identifying the test (it seeds it), got {name!r}")
