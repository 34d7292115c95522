"""Summary statistics with confidence intervals."""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np


def summarize(values: Sequence[float], confidence: float = 0.95) -> dict[str, float | int | None]:
    """Mean with a Student-t confidence interval (mean ± t * SD / sqrt(n)).

    The interval is ``None`` below two values: one session says nothing about spread.
    """
    x = np.asarray(values, dtype=float)
    n = int(x.size)
    if n == 0:
        return {"n": 0, "mean": None, "sd": None, "ci_low": None, "ci_high": None}
    mean = float(x.mean())
    if n < 2:
        return {"n": n, "mean": mean, "sd": None, "ci_low": None, "ci_high": None}
    sd = float(x.std(ddof=1))
    from scipy import stats  # imported here: scipy.stats takes seconds to import
    half = float(stats.t.ppf(0.5 + confidence / 2, df=n - 1)) * sd / math.sqrt(n)
    return {"n": n, "mean": mean, "sd": sd, "ci_low": mean - half, "ci_high": mean + half}
