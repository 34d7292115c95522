"""Paired comparisons across prompt conditions (issue 12 item 6; METHODOLOGY §4.5–4.6).

The results of one (face, session, step) under two conditions (e.g. baseline and feature
prompt) form a pair. :func:`paired_comparison` reports the mean difference Δ = second − first
with a Student-t CI and the two-sided Wilcoxon signed-rank test (``scipy.stats.wilcoxon``).

Zero differences: scipy's default ``zero_method='wilcox'`` (Wilcoxon's own rule) drops pairs
whose difference is exactly 0 before ranking, so the test is on ``n_nonzero`` pairs; the
number of pairs and of zero differences are both reported. We keep that default because it is
what a plain ``scipy.stats.wilcoxon`` call (as METHODOLOGY §7 lists for paper (b)) gives, and
1–5 judge scores make zero differences common: 'pratt' or 'zsplit' would change p-values
against published ones. scipy's ``method='auto'``
picks the exact null distribution without ties or zeros and n ≤ 50, an exact sign-flip
permutation for n ≤ 13 with ties or zeros, and the normal approximation otherwise (scipy 1.17).
When every difference is 0 the test is undefined (scipy returns p = 1 with a warning); we
return no p-value and say why.

:func:`holm` corrects a family of p-values (e.g. the five axes of paper (b)) with Holm's
step-down method (the arithmetic of ``statsmodels.stats.multitest.multipletests(method='holm')``, which
also runs ``gc.collect()`` on every call: a tenth of a second and more per family in a full process);
:func:`paired_family` applies it to a list of paired comparisons; :func:`paired_tests` makes the comparisons and
corrects them (the public form, :mod:`faceedit_bench.api.statistics`).
"""

from __future__ import annotations

from collections.abc import Hashable, Mapping, Sequence
from typing import Any

import numpy as np

from faceedit_bench.analysis.cached import cached_statistic
from faceedit_bench.analysis.multiplicity import holm_step_down
from faceedit_bench.analysis.samples import check_confidence, keyed, number
from faceedit_bench.analysis.statistics import difference_bounds, summarize


def pair_up(first: Mapping[Hashable, float], second: Mapping[Hashable, float], *, what: str = "pairs"
            ) -> tuple[list[Hashable], np.ndarray, np.ndarray, tuple[int, int]]:
    """Keys present under both conditions (in ``first``'s order), their values, and the unpaired counts."""
    a, b = keyed(first, f"{what}, first condition"), keyed(second, f"{what}, second condition")
    keys = [k for k in a if k in b]
    return (keys, np.array([a[k] for k in keys], float), np.array([b[k] for k in keys], float),
            (len(a) - len(keys), len(b) - len(keys)))


@cached_statistic("paired_comparison")
def paired_comparison(first: Mapping[Hashable, float], second: Mapping[Hashable, float], *, name: str,
                      first_label: str = "baseline", second_label: str = "treatment",
                      higher_is_better: bool | None = None, confidence: float = 0.95,
                      bounds: Any = None) -> dict[str, Any]:
    """Mean Δ = second − first with its CI, and the two-sided Wilcoxon signed-rank p, over matched keys.

    ``bounds`` are the metric's (e.g. (0, 100)): each condition's interval stays inside them, and the
    Δ's inside ±(high − low) (:func:`faceedit_bench.analysis.statistics.summarize`).

    ``first`` and ``second`` map a pair key (e.g. ``(face_id, session, step)``) to the item's value
    under each condition; a key under one condition only is counted in ``unpaired``, never used.
    With ``higher_is_better`` given, ``direction`` says whether the mean Δ is an improvement.
    """
    if not isinstance(name, str) or not name:
        raise ValueError(f"name must be a non-empty string identifying the test, got {name!r}")
    if first_label == second_label:
        raise ValueError(f"{name}: the two conditions need distinct labels, both are {first_label!r}")
    check_confidence(confidence)
    _, a, b, (only_first, only_second) = pair_up(first, second, what=name)
    d = b - a
    delta = summarize(d, confidence, bounds=difference_bounds(bounds))
    n_zero = int(np.count_nonzero(d == 0))
    result: dict[str, Any] = {
        "name": name, "test": "paired", "first": first_label, "second": second_label, "delta": "second - first",
        "n_pairs": int(d.size), "unpaired": {first_label: only_first, second_label: only_second},
        "groups": {first_label: summarize(a, confidence, bounds=bounds),
                   second_label: summarize(b, confidence, bounds=bounds)},
        "mean_delta": delta["mean"], "sd_delta": delta["sd"], "ci_low": delta["ci_low"], "ci_high": delta["ci_high"],
        "ci_method": delta["ci_method"],
        "median_delta": float(np.median(d)) if d.size else None, "confidence": confidence,
        "statistic": None, "p_value": None, "alternative": "two-sided", "zero_method": "wilcox", "method": "auto",
        "n_zero": n_zero, "n_nonzero": int(d.size) - n_zero,
        "higher_is_better": higher_is_better, "direction": None, "reason": None,
    }
    if d.size and higher_is_better is not None:
        mean = float(d.mean())
        result["direction"] = ("unchanged" if mean == 0 else
                               "improved" if (mean > 0) == bool(higher_is_better) else "worsened")
    if d.size == 0:
        result["reason"] = "no key has a value under both conditions; nothing is paired"
    elif n_zero == d.size:
        result["reason"] = (f"all {d.size} paired differences are zero; the signed-rank test "
                            f"(zero_method='wilcox' drops zeros) has no pairs left")
    else:
        from scipy import stats  # imported here: scipy.stats takes seconds to import
        res = stats.wilcoxon(d, zero_method="wilcox", alternative="two-sided", method="auto")
        result.update(statistic=number(res.statistic), p_value=number(res.pvalue))
    return result


def holm(p_values: Mapping[str, float | None], *, alpha: float = 0.05) -> dict[str, Any]:
    """Holm's step-down correction over the named p-values that exist; None ones are left out, with a reason.

    ``p_adjusted`` is statsmodels' Holm-adjusted p (monotone, capped at 1); ``reject`` is Holm's
    step-down decision at ``alpha`` (equivalently p_adjusted <= alpha). The family size ``m``
    counts only defined p-values.
    """
    check_confidence(alpha, "alpha")
    defined = {k: float(p) for k, p in p_values.items() if p is not None}
    bad = {k: p for k, p in defined.items() if not 0 <= p <= 1}
    if bad:
        raise ValueError(f"p-values must lie in [0, 1], got {bad}")
    out: dict[str, Any] = {"method": "holm", "alpha": alpha, "m": len(defined), "tests": {},
                           "left_out": {k: "no p-value (see the test's reason)" for k, p in p_values.items()
                                        if p is None}}
    if defined:
        reject, adjusted = holm_step_down(np.array(list(defined.values())), alpha)
        out["tests"] = {k: {"p_value": p, "p_adjusted": float(q), "reject": bool(r)}
                        for (k, p), q, r in zip(defined.items(), adjusted, reject)}
    return out


def paired_family(comparisons: Sequence[Mapping[str, Any]], *, alpha: float = 0.05) -> dict[str, Any]:
    """Holm across a family of :func:`paired_comparison` results (e.g. one per axis).

    Returns ``{"tests": [copies with p_holm, reject_holm], "holm": holm(...)}``; a comparison
    without a p-value keeps p_holm None and stays out of the family size.
    """
    names = [c["name"] for c in comparisons]
    duplicates = sorted({n for n in names if names.count(n) > 1})
    if duplicates:
        raise ValueError(f"test names must be unique within a family; duplicated: {duplicates}")
    correction = holm({c["name"]: c["p_value"] for c in comparisons}, alpha=alpha)
    tests = []
    for c in comparisons:
        corrected = correction["tests"].get(c["name"])
        tests.append({**c, "p_holm": None if corrected is None else corrected["p_adjusted"],
                      "reject_holm": None if corrected is None else corrected["reject"], "holm_m": correction["m"]})
    return {"tests": tests, "holm": correction}


def paired_tests(pairs: Mapping[str, tuple[Mapping[Hashable, float], Mapping[Hashable, float]]], *,
                 first_label: str = "baseline", second_label: str = "treatment", higher_is_better: bool | None = None,
                 confidence: float = 0.95, bounds: Any = None, alpha: float = 0.05) -> dict[str, Any]:
    """:func:`paired_comparison` of each named pair of conditions (name -> (first, second)), Holm-corrected across
    them (:func:`paired_family`): ``{"tests": [...], "holm": ...}``. One pair is a family of one (its ``p_holm``
    is its p)."""
    return paired_family([paired_comparison(first, second, name=name, first_label=first_label,
                                            second_label=second_label, higher_is_better=higher_is_better,
                                            confidence=confidence, bounds=bounds)
                          for name, (first, second) in pairs.items()], alpha=alpha)
