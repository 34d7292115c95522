"""Group statistics beyond the two-group WD tests, for the run report: k-group comparisons of
every attribute with three or more groups (race, age bins), one-vs-rest contrasts (e.g. White vs
non-White) and intersectional groups (e.g. gender × skin tone), per metric. The tests are those of
:mod:`faceedit_bench.analysis.group_tests` and :mod:`faceedit_bench.analysis.intersections`."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from faceedit_bench.analysis.group_tests import compare_k_groups, one_vs_rest
from faceedit_bench.analysis.intersections import intersectional_groups

#: An included session: its demographic labels and its metric values (None where undefined).
Row = tuple[Mapping[str, str | None], Mapping[str, float | None]]


def group_statistics(rows: Sequence[Row], metrics: Iterable[Any], analysis: Any, confidence: float) -> dict[str, Any]:
    metrics = list(metrics)
    common = {"confidence": confidence}
    boot = {"n_resamples": analysis.n_resamples, "seed": analysis.seed}
    attributes = sorted({key for labels, _ in rows for key, v in labels.items() if v is not None})
    k_groups: dict[str, dict[str, Any]] = {}
    for attribute in attributes:
        if len({labels.get(attribute) for labels, _ in rows} - {None}) < 3:
            continue  # two groups: the WD tests (disparity) cover them
        k_groups[attribute] = {m.name: compare_k_groups(_by(rows, attribute, m.name), name=f"{m.name}/{attribute}",
                                                        higher_is_better=m.higher_is_better, **common, **boot)
                               for m in metrics}
    versus: dict[str, dict[str, Any]] = {}
    for attribute, focus in analysis.one_vs_rest.items():
        groups = _by(rows, attribute, None)
        if focus not in groups:
            versus[f"{attribute}={focus}"] = {"reason": f"no included session has {attribute}={focus}"}
            continue
        versus[f"{attribute}={focus}"] = {
            m.name: one_vs_rest(_by(rows, attribute, m.name), focus, name=f"{m.name}/{attribute}/{focus}",
                                higher_is_better=m.higher_is_better, **common)
            for m in metrics}
    crossed: dict[str, dict[str, Any]] = {}
    for first, second in analysis.intersections:
        crossed[f"{first} x {second}"] = {m.name: _intersection(rows, first, second, m, common, boot) for m in metrics}
    return {"k_groups": k_groups, "one_vs_rest": versus, "intersections": crossed}


def _by(rows: Sequence[Row], attribute: str, metric: str | None) -> dict[str, list[float]]:
    """Values of ``metric`` per label of ``attribute`` (every label seen, when ``metric`` is None)."""
    groups: dict[str, list[float]] = {}
    for labels, values in rows:
        label = labels.get(attribute)
        if label is None:
            continue
        bucket = groups.setdefault(str(label), [])
        if metric is not None and values.get(metric) is not None:
            bucket.append(float(values[metric]))
    return dict(sorted(groups.items()))


def _intersection(rows: Sequence[Row], first: str, second: str, metric: Any, common: dict[str, Any],
                  boot: dict[str, Any]) -> dict[str, Any]:
    kept = [(labels, values[metric.name]) for labels, values in rows if values.get(metric.name) is not None]
    return intersectional_groups([v for _, v in kept], [lab.get(first) for lab, _ in kept],
                                 [lab.get(second) for lab, _ in kept], name=f"{metric.name}/{first}x{second}",
                                 higher_is_better=metric.higher_is_better, **common, **boot)
