"""The editors of several runs ranked by every metric they share (``faceedit-bench compare``): when two
metrics (SC, a question-answer score, a human score ...) rank the same editors, do they order them alike?

Ranks follow each metric's ``higher_is_better`` (1 = best, ties share the mean rank); Kendall's τ-b between
two metrics is computed on the ranks, so τ = 1 means the same order. Runs without a metric's mean are left
out of that metric's column.
"""

from __future__ import annotations

import itertools
from collections.abc import Mapping, Sequence
from typing import Any

from faceedit_bench.analysis.metric_agreement import MIN_SYSTEMS, rank_table


def metric_ranks(reports: Sequence[Mapping[str, Any]], labels: Sequence[str],
                 extra: Mapping[str, tuple[Mapping[str, float], bool]] | None = None) -> dict[str, Any] | None:
    """``extra``: more rankings by name, ``(value per run label, higher_is_better)`` (a report section's)."""
    means: dict[str, dict[str, float]] = {}
    directions: dict[str, bool | None] = {}
    for name, (values, hib) in (extra or {}).items():
        means[name], directions[name] = dict(values), hib
    for label, report in zip(labels, reports):
        for name, m in (report.get("metrics") or {}).items():
            if isinstance(m.get("mean"), (int, float)) and not isinstance(m.get("mean"), bool):
                means.setdefault(name, {})[label] = float(m["mean"])
                hib = m.get("higher_is_better")  # as the report states it; None: not ranked
                directions[name] = hib if isinstance(hib, bool) else None
    means = {n: v for n, v in means.items() if len(v) >= 2 and directions.get(n) is not None}
    if len(means) < 2:
        return None
    table = rank_table(means, directions)
    table["kendall"] = [_tau(a, b, table["metrics"]) for a, b in itertools.combinations(table["metrics"], 2)]
    return table


def _tau(a: str, b: str, metrics: Mapping[str, Mapping[str, Mapping[str, float]]]) -> dict[str, Any]:
    from scipy import stats  # imported here: scipy.stats takes seconds to import
    shared = [s for s in metrics[a] if s in metrics[b]]
    out: dict[str, Any] = {"a": a, "b": b, "systems": len(shared), "tau": None}
    if len(shared) < MIN_SYSTEMS:
        return {**out, "reason": f"{len(shared)} editor(s) ranked by both; Kendall's tau needs {MIN_SYSTEMS}"}
    x, y = [metrics[a][s]["rank"] for s in shared], [metrics[b][s]["rank"] for s in shared]
    if len(set(x)) < 2 or len(set(y)) < 2:
        return {**out, "reason": "one metric ties every editor"}
    return {**out, "tau": float(stats.kendalltau(x, y).statistic)}


def kendall_lines(ranks: Mapping[str, Any]) -> list[str]:
    """``Kendall tau sc vs human: 0.333`` for every two metrics (or why it is n/a)."""
    return [f"Kendall tau {t['a']} vs {t['b']}: " + (f"{t['tau']:.3f}" if t["tau"] is not None
                                                   else f"n/a ({t['reason']})") for t in ranks.get("kendall") or []]


def rank_text(cell: Mapping[str, float] | None) -> str:
    """``2 (61.25)``: a run's rank by a metric, with its mean."""
    return "n/a" if not cell else f"{cell['rank']:g} ({cell['value']:.4g})"
