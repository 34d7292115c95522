"""The Wilson interval computed without statsmodels is statsmodels' own, to the last bit."""

from __future__ import annotations

import numpy as np
import pytest
from statsmodels.stats.proportion import proportion_confint

from faceedit_bench.analysis.statistics import wilson_interval


@pytest.mark.parametrize("confidence", [0.9, 0.95, 0.99])
def test_the_wilson_interval_is_statsmodels_bit_for_bit(confidence):
    rng = np.random.default_rng(7)
    nobs = np.concatenate([rng.integers(1, 500, 300).astype(float), rng.uniform(0.5, 80, 300)])  # effective n too
    shares = np.concatenate([rng.uniform(0, 1, 500), np.zeros(50), np.ones(50)])  # edges: none and all
    for count, n in zip(shares * nobs, nobs):
        expected = proportion_confint(count, n, alpha=1 - confidence, method="wilson")
        assert wilson_interval(count, n, confidence) == tuple(float(v) for v in expected), (count, n)


def test_the_kept_normal_quantiles_are_scipys():
    from scipy.special import ndtri

    from faceedit_bench.analysis.statistics import NORMAL_CRITICAL

    for confidence, critical in NORMAL_CRITICAL.items():
        assert critical == float(-ndtri((1 - confidence) / 2.0)), confidence
