"""Agreement of a metric with people (the layout of a metric paper's agreement table): given human scores and a metric's
scores per (system, item), how well does the metric follow the people?

- item level: Spearman's ρ and Kendall's τ-b over every (system, item) both scored;
- system level: the same over the systems' means (on the items both scored), at least 3 systems;
- pairwise accuracy of system rankings: the share of system pairs that the metric orders as the people do.
  Pairs the people tie are left out (counted); a pair the metric ties while the people do not is a miss.
- :func:`rank_table`: several metrics (SC, a question-answer score, human ...) ranking the same systems side by side;
- :func:`system_agreement`: a table of systems' scores (e.g. a paper's metric-vs-human table), each metric column against the
  human column at system level;
- :func:`average_correlation`: several correlations (one per system or task) as one, by the Fisher-z average
  (the default) or by a published rule (:data:`CORRELATION_AVERAGES`).

``same_direction=False`` says the metric reads the other way round from the human score (a metric where
lower is better against a human score where higher is better): its scores are negated before comparing,
so a metric that agrees with people always has positive correlations.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Hashable, Mapping, Sequence
from typing import Any

import numpy as np

#: (system, item) -> score
Scores = Mapping[tuple[Hashable, Hashable], float]
MIN_SYSTEMS = 3


def _finite(value: float) -> float | None:
    return float(value) if math.isfinite(value) else None


def correlations(x: Sequence[float], y: Sequence[float]) -> dict[str, Any]:
    """Spearman and Kendall (τ-b) between paired scores, with their p-values (scipy)."""
    from scipy import stats  # imported here: scipy.stats takes seconds to import
    n = len(x)
    if n < 3:
        return {"n": n, "spearman": None, "spearman_p": None, "kendall": None, "kendall_p": None,
                "reason": f"{n} pair(s); correlations need at least 3"}
    if np.ptp(x) == 0 or np.ptp(y) == 0:
        return {"n": n, "spearman": None, "spearman_p": None, "kendall": None, "kendall_p": None,
                "reason": "one side gives every pair the same score: no ranking to correlate"}
    rho, tau = stats.spearmanr(x, y), stats.kendalltau(x, y)
    return {"n": n, "spearman": _finite(rho.statistic), "spearman_p": _finite(rho.pvalue),
            "kendall": _finite(tau.statistic), "kendall_p": _finite(tau.pvalue)}


#: How :func:`average_correlation` averages: ``fisher_z``, tanh of the mean of artanh(r) (the proper average);
#: ``tanh_of_mean``, tanh of the mean of the r themselves, as VIEScore's analysis notebook does (its
#: ``average_correlation`` is handed correlations where its docstring expects Fisher-z scores). The two agree
#: for small r and part as r grows (VIEScore's SC over its seven tasks: 0.3322 published, 0.3757 by Fisher z).
CORRELATION_AVERAGES = ("fisher_z", "tanh_of_mean")


def average_correlation(values: Sequence[float], method: str = "fisher_z") -> float | None:
    """One correlation from several (None when there are none); ``method``: one of :data:`CORRELATION_AVERAGES`."""
    if method not in CORRELATION_AVERAGES:
        raise ValueError(f"method must be one of {CORRELATION_AVERAGES}, got {method!r}")
    r = np.asarray(values, dtype=float)
    if r.size == 0:
        return None
    return float(np.tanh(np.mean(np.arctanh(r) if method == "fisher_z" else r)))


def system_means(scores: Scores, keys: Sequence[tuple[Hashable, Hashable]]) -> dict[Hashable, float]:
    by_system: dict[Hashable, list[float]] = {}
    for key in keys:
        by_system.setdefault(key[0], []).append(scores[key])
    return {s: float(np.mean(v)) for s, v in sorted(by_system.items(), key=lambda kv: str(kv[0]))}


def pairwise_accuracy(human: Mapping[Hashable, float], metric: Mapping[Hashable, float]) -> dict[str, Any]:
    """Share of system pairs ordered alike; human ties left out, metric-only ties count as misses."""
    systems = [s for s in human if s in metric]
    agree = pairs = human_ties = metric_ties = 0
    for a, b in itertools.combinations(systems, 2):
        dh, dm = human[a] - human[b], metric[a] - metric[b]
        if dh == 0:
            human_ties += 1
            continue
        pairs += 1
        metric_ties += dm == 0
        agree += (dh > 0) == (dm > 0) and dm != 0
    return {"accuracy": agree / pairs if pairs else None, "agree": agree, "pairs": pairs,
            "human_ties_left_out": human_ties, "metric_ties": metric_ties,
            **({} if pairs else {"reason": "no pair of systems the people tell apart"})}


def metric_agreement(human: Scores, metric: Scores, *, same_direction: bool = True) -> dict[str, Any]:
    """Item-level and system-level correlations and pairwise accuracy of one metric against people."""
    sign = 1.0 if same_direction else -1.0
    oriented = {k: sign * v for k, v in metric.items()}
    keys = sorted((k for k in human if k in oriented), key=lambda k: (str(k[0]), str(k[1])))
    item = correlations([human[k] for k in keys], [oriented[k] for k in keys])
    people, machine = system_means(human, keys), system_means(oriented, keys)
    systems = list(people)
    system = correlations([people[s] for s in systems], [machine[s] for s in systems]) \
        if len(systems) >= MIN_SYSTEMS else {"n": len(systems), "spearman": None, "kendall": None,
                                             "reason": f"{len(systems)} system(s); system-level correlations "
                                                       f"need at least {MIN_SYSTEMS}"}
    return {"same_direction": same_direction, "items": len(keys), "systems": systems,
            "unmatched": {"human_only": sum(1 for k in human if k not in oriented),
                          "metric_only": sum(1 for k in oriented if k not in human)},
            "item_level": item, "system_level": system, "pairwise": pairwise_accuracy(people, machine),
            "system_means": {"human": {str(s): v for s, v in people.items()},
                             "metric": {str(s): sign * v for s, v in machine.items()}}}


def rank_table(means: Mapping[str, Mapping[Hashable, float]], higher_is_better: Mapping[str, bool | None],
               ) -> dict[str, Any]:
    """Rank 1 = best under each metric (ties share the average rank); systems any metric scores. A metric
    without a stated better direction (None or absent: its ideal is the middle, or nobody says) is not
    ranked: it is listed in ``not_ranked`` with the reason, never ranked as if higher (or lower) were better."""
    from scipy import stats  # imported here: scipy.stats takes seconds to import
    systems = sorted({s for m in means.values() for s in m}, key=str)
    table: dict[str, dict[str, Any]] = {}
    not_ranked: dict[str, str] = {}
    for name, values in means.items():
        direction = higher_is_better.get(name)
        if direction is None:
            not_ranked[name] = "no better direction is stated for this metric; its values are not ranked"
            continue
        present = [s for s in systems if s in values and values[s] is not None and math.isfinite(values[s])]
        sign = -1.0 if direction else 1.0
        ranks = stats.rankdata([sign * values[s] for s in present], method="average") if present else []
        table[name] = {str(s): {"value": float(values[s]), "rank": float(r)} for s, r in zip(present, ranks)}
    return {"systems": [str(s) for s in systems], "metrics": table, "not_ranked": not_ranked,
            "higher_is_better": {k: higher_is_better.get(k) for k in means}}



def system_agreement(table: Mapping[Hashable, Mapping[str, float]], human: str,
                     higher_is_better: Mapping[str, bool] | None = None) -> dict[str, Any]:
    """System-level agreement of every metric column of a table of systems' scores with its human column
    (e.g. several automatic scores against a human score over 5 editors):
    per metric Spearman's ρ and Kendall's τ-b over the systems (with p-values), the pairwise accuracy of
    their rankings, and every column's ranks (:func:`rank_table`). ``higher_is_better``: per metric,
    default True; a metric read the other way is negated before it is compared."""
    direction = dict(higher_is_better or {})
    columns = sorted({c for row in table.values() for c in row} - {human})
    people = {s: float(row[human]) for s, row in table.items() if row.get(human) is not None}
    out: dict[str, Any] = {}
    for column in columns:
        sign = 1.0 if direction.get(column, True) else -1.0
        machine = {s: sign * float(row[column]) for s, row in table.items()
                   if s in people and row.get(column) is not None}
        systems = [s for s in people if s in machine]
        out[column] = {**correlations([people[s] for s in systems], [machine[s] for s in systems]),
                       "pairwise": pairwise_accuracy({s: people[s] for s in systems}, machine)}
    means = {c: {s: float(row[c]) for s, row in table.items() if row.get(c) is not None} for c in [*columns, human]}
    return {"human": human, "systems": [str(s) for s in people], "metrics": out,
            "ranks": rank_table(means, {c: direction.get(c, True) for c in means})}
