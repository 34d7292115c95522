"""The per-step series of a run report that MLflow draws as lines (logged with ``step=k``)."""

from __future__ import annotations

from typing import Any

from faceedit_bench.api.sections import metric_key


def series_for_tracking(report: dict[str, Any]) -> dict[str, list[tuple[int, float]]]:
    """Per-step series for a tracker to log with ``step=k``, so they are drawn as lines: the test set's
    trajectories (``fss``, ``fss_ci_low``, ``fss_ci_high``; ``sc_k``... with a judge) and each
    demographic group's FSS trajectory (``gender_female_fss``...). Undefined points are left out."""
    out: dict[str, list[tuple[int, float]]] = {}

    def put(key: str, points: list[dict[str, Any]]) -> None:
        for stat, suffix in (("mean", ""), ("ci_low", "ci_low"), ("ci_high", "ci_high")):
            values = [(int(p["k"]), float(p[stat])) for p in points
                      if isinstance(p.get(stat), (int, float)) and not isinstance(p.get(stat), bool)]
            if values:
                out[metric_key(key, suffix)] = values

    metrics = report.get("metrics") or {}

    def name(series: str) -> str:  # SC is a session metric too (logged at step 0): its trajectory is sc_k
        return f"{series}_k" if series in metrics else series

    for series, points in (report.get("trajectory") or {}).items():
        put(name(series), points)
    for key, labels in (report.get("groups") or {}).items():
        for label, g in labels.items():
            for series, points in (g.get("trajectory") or {}).items():
                put(metric_key(key, label, name(series)), points)
    return out
