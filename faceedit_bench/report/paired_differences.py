"""Paired differences of two runs on the (face, session) units both included: mean, its interval (inside
±(high − low) of a bounded metric: docs/statistics.md), paired t-test p-value and a verdict."""

from __future__ import annotations

import csv
import math
from collections.abc import Mapping, Sequence
from itertools import combinations
from pathlib import Path
from typing import Any

import numpy as np

from faceedit_bench.analysis.statistics import cluster_robust_se, difference_bounds, summarize, t_two_sided_p
from faceedit_bench.report.comparability import pair_differences
from faceedit_bench.report.measures import declared_bounds
from faceedit_bench.report.tables import reference_condition


def _session_values(run_dir: Path, metrics: Sequence[str]) -> dict[tuple[str, str], dict[str, float]] | None:
    path = run_dir / "sessions.csv"
    if not path.is_file():
        return None
    out = {}
    with open(path, newline="", encoding="utf-8") as fh:
        rows = list(csv.DictReader(fh))
    # A run of several prompt conditions: compare what its main sections describe (baseline, else the first).
    reference = reference_condition(row.get("condition") or "" for row in rows)
    for row in rows:
        if row.get("excluded") or (row.get("condition") or "baseline") != reference:
            continue
        values = {}
        for m in metrics:
            try:
                v = float(row.get(m) or "nan")
            except ValueError:
                continue
            if math.isfinite(v):
                values[m] = v
        out[(row.get("face_id", ""), row.get("session_id", ""))] = values
    return out


def paired_difference(a: Sequence[float], b: Sequence[float], *, confidence: float = 0.95,
                      bounds: Any = None, clusters: Sequence[Any] | None = None) -> dict[str, Any]:
    """Mean of a - b over paired units with its interval (the metric's ``bounds`` bound the difference)
    and a two-sided paired t-test p-value; with ``clusters`` (each unit's face) both are clustered by face:
    the cluster-robust standard error on G - 1 degrees of freedom."""
    diffs = [x - y for x, y in zip(a, b, strict=True)]
    s = summarize(diffs, confidence, bounds=difference_bounds(bounds), clusters=clusters)
    p = None
    g = s["n_identities"] if s["n_identities"] is not None else s["n"]
    if s["n"] >= 2 and s["sd"] and g >= 2:
        x = np.asarray(diffs, dtype=float)
        se = (cluster_robust_se(x, np.unique(np.asarray(clusters), return_inverse=True)[1].reshape(-1))
              if g < s["n"] else s["sd"] / math.sqrt(s["n"]))
        p = t_two_sided_p(s["mean"] / se, g - 1) if se > 0 else None
    return {**s, "p_value": p}


def better_run(d: Mapping[str, Any], higher_is_better: bool | None) -> str | None:
    """``"a"`` or ``"b"``: the run the interval of the difference says is better; None when it does not."""
    if d["n"] < 2 or d["ci_low"] is None or higher_is_better is None or d["ci_low"] <= 0 <= d["ci_high"]:
        return None
    return "a" if (d["ci_low"] > 0) == higher_is_better else "b"


def verdict(d: Mapping[str, Any], a: str, b: str, higher_is_better: bool | None) -> str:
    """The verdict in words, naming the better run by ``a`` or ``b``."""
    if d["n"] < 2 or d["ci_low"] is None:
        return d.get("ci_reason") if d["n"] >= 2 and d.get("ci_reason") else "too few shared sessions for an interval"
    if higher_is_better is None:
        return "direction unknown"
    better = better_run(d, higher_is_better)
    if better is None:
        return "no clear difference (CI includes 0)"
    return f"{a if better == 'a' else b} better (CI excludes 0)"


def paired_comparisons(reports: Sequence[Mapping[str, Any]], run_dirs: Sequence[Path], labels: Sequence[str],
                       *, confidence: float = 0.95) -> list[dict[str, Any]]:
    """For every pair of runs: per metric, the mean paired difference (first minus second) over the
    (face, session) units included in both, or why it was not computed."""
    out = []
    for i, j in combinations(range(len(reports)), 2):
        entry: dict[str, Any] = {"a": labels[i], "b": labels[j], "metrics": [], "reason": None}
        out.append(entry)
        differs = pair_differences(reports[i], reports[j])
        if differs:
            entry["reason"] = f"not computed: the runs differ in {', '.join(differs)}"
            continue
        metrics = [m for m in reports[i].get("metrics") or {} if m in (reports[j].get("metrics") or {})]
        va, vb = _session_values(run_dirs[i], metrics), _session_values(run_dirs[j], metrics)
        if va is None or vb is None:
            missing = run_dirs[i] if va is None else run_dirs[j]
            entry["reason"] = f"not computed: no sessions.csv in {missing}"
            continue
        shared = sorted(set(va) & set(vb))
        entry.update(shared_sessions=len(shared), only_a=len(set(va) - set(vb)), only_b=len(set(vb) - set(va)))
        if not shared:
            entry["reason"] = "not computed: the runs share no included (face, session) unit"
            continue
        for m in metrics:
            units = [u for u in shared if m in va[u] and m in vb[u]]
            d = paired_difference([va[u][m] for u in units], [vb[u][m] for u in units], confidence=confidence,
                                  bounds=declared_bounds(reports[i]["metrics"][m].get("bounds")),
                                  clusters=[face for face, _ in units])  # a face's sessions are correlated
            hib = reports[i]["metrics"][m].get("higher_is_better")
            if hib != reports[j]["metrics"][m].get("higher_is_better"):
                hib = None
            entry["metrics"].append({"metric": m, "higher_is_better": hib, **d, "better": better_run(d, hib),
                                     "verdict": verdict(d, labels[i], labels[j], hib)})
    return out
