"""Group statistics beyond the two-group WD tests, for the run report: k-group comparisons of
every attribute with three or more groups (race, age bins), one-vs-rest contrasts (e.g. White vs
non-White) and intersectional groups (e.g. gender × skin tone), per metric. The tests are those of
:mod:`faceedit_bench.analysis.group_tests` and :mod:`faceedit_bench.analysis.intersections`."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import numpy as np

from faceedit_bench.analysis.compact import SessionRows
from faceedit_bench.analysis.group_tests import compare_k_groups, one_vs_rest
from faceedit_bench.analysis.intersections import intersectional_groups

#: An included session: its demographic labels and its metric values (None where undefined).
Row = tuple[Mapping[str, str | None], Mapping[str, float | None]]


def group_statistics(rows: Sequence[Row], metrics: Iterable[Any], analysis: Any, confidence: float) -> dict[str, Any]:
    rows = SessionRows.of(rows)  # columns: no dict per session, whatever the number of sessions
    metrics = list(metrics)
    common = {"confidence": confidence}
    boot = {"n_resamples": analysis.n_resamples, "seed": analysis.seed}
    k_groups: dict[str, dict[str, Any]] = {}
    for attribute in rows.attributes():
        codes, _ = rows.codes(attribute)
        if np.unique(codes[codes >= 0]).size < 3:
            continue  # two groups: the WD tests (disparity) cover them
        k_groups[attribute] = {m.name: compare_k_groups(_by(rows, attribute, m.name), name=f"{m.name}/{attribute}",
                                                        **_reading(m), **common, **boot)
                               for m in metrics}
    versus: dict[str, dict[str, Any]] = {}
    for attribute, focus in analysis.one_vs_rest.items():
        groups = _by(rows, attribute, None)
        if focus not in groups:
            versus[f"{attribute}={focus}"] = {"reason": f"no included session has {attribute}={focus}"}
            continue
        versus[f"{attribute}={focus}"] = {
            m.name: one_vs_rest(_by(rows, attribute, m.name), focus, name=f"{m.name}/{attribute}/{focus}",
                                **_reading(m), **common)
            for m in metrics}
    crossed: dict[str, dict[str, Any]] = {}
    for first, second in analysis.intersections:
        crossed[f"{first} x {second}"] = {m.name: _intersection(rows, first, second, m, common, boot) for m in metrics}
    return {"k_groups": k_groups, "one_vs_rest": versus, "intersections": crossed}


def _by(rows: SessionRows, attribute: str, metric: str | None) -> dict[str, list[float]]:
    """Values of ``metric`` per label of ``attribute`` (every label seen, when ``metric`` is None)."""
    codes, names = rows.codes(attribute)
    values = rows.values(metric) if metric is not None else None
    groups: dict[str, list[float]] = {}
    for code in np.unique(codes[codes >= 0]).tolist():
        in_group = codes == code
        picked = values[in_group & ~np.isnan(values)] if values is not None else values
        groups[names[code]] = [] if picked is None else picked.tolist()
    return dict(sorted(groups.items()))


def _intersection(rows: SessionRows, first: str, second: str, metric: Any, common: dict[str, Any],
                  boot: dict[str, Any]) -> dict[str, Any]:
    values = rows.values(metric.name)
    kept = np.flatnonzero(~np.isnan(values)).tolist()
    first_labels, second_labels = rows.labels(first), rows.labels(second)
    return intersectional_groups(values[kept].tolist(), [first_labels[i] for i in kept],
                                 [second_labels[i] for i in kept], name=f"{metric.name}/{first}x{second}",
                                 **_reading(metric), **common, **boot)


def _reading(metric: Any) -> dict[str, Any]:
    """How the tests read a metric, from its registration: direction, declared bounds, ideal."""
    return {"higher_is_better": metric.higher_is_better, "bounds": metric.bounds,
            "ideal": getattr(metric, "ideal", None)}
