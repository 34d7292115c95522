"""Human evaluation (METHODOLOGY §4.6): per-output scores as the mean of their raters, reliability per
axis, the tests on the human scores, and how the VLM judge's scores compare (paper (b) Table 5).

- ``axes``: per axis, the human mean with its CI overall and per condition and editor, Fleiss' κ and
  Krippendorff's α (interval) (:mod:`faceedit_bench.analysis.reliability`);
- ``vlm_vs_human``: per axis, VLM − human mean difference over the outputs both scored, with a paired CI
  and Wilcoxon p, and the Table 5 layout (VLM and human means per editor and axis, same outputs);
- ``group_tests``: Kruskal–Wallis across races and White vs non-White Mann–Whitney on the human scores,
  per axis and condition (:mod:`faceedit_bench.analysis.group_tests`);
- ``paired``: baseline vs each other condition on the same (editor, item), per axis: mean Δ with CI and the
  two-sided Wilcoxon signed-rank p, Holm-corrected across axes (:mod:`faceedit_bench.analysis.paired`).

An output is the unit (editor, item, condition); its score is the mean of its raters' scores.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Mapping
from typing import Any

import numpy as np

from faceedit_bench.api.statistics import (
    compare_k_groups,
    paired_tests,
    reliability,
    summarize,
)
from faceedit_bench_audit.audit.tables import REGISTERED
from faceedit_bench_audit.human.ratings import BASELINE, Ratings

Unit = tuple[str, str, str]  # (editor, item, condition)
#: (editor, item, condition, axis) -> the VLM judge's score of that output
VlmScores = Mapping[tuple[str, str, str, str], float]
WHITE = "White"


def unit_ratings(ratings: Ratings, axis: str) -> dict[Unit, dict[str, float]]:
    units: dict[Unit, dict[str, float]] = defaultdict(dict)
    for r in ratings.rows:
        if r.axis == axis:
            units[r.unit][r.rater] = r.score
    return dict(units)


def unit_means(ratings: Ratings, axis: str) -> dict[Unit, float]:
    return {u: float(np.mean(list(s.values()))) for u, s in unit_ratings(ratings, axis).items()}


def unit_groups(ratings: Ratings, column: str) -> dict[tuple[str, str], str]:
    """(editor, item) -> its label in a group column (race ...), where the CSV gives one."""
    return {(r.editor, r.item): label for r in ratings.rows for c, label in r.groups if c == column}


def human_agreement(ratings: Ratings, vlm: VlmScores | None = None, *, confidence: float = 0.95,
                    alpha: float = 0.05) -> dict[str, Any]:
    means = {axis: unit_means(ratings, axis) for axis in ratings.axes}
    section: dict[str, Any] = {
        "source": ratings.source, "scale": list(ratings.scale), "confidence": confidence,
        "counts": {"ratings": len(ratings.rows), "raters": len({r.rater for r in ratings.rows}),
                   "items": len({(r.editor, r.item) for r in ratings.rows}),
                   "outputs": len({r.unit for r in ratings.rows}), "editors": ratings.editors,
                   "conditions": ratings.conditions, "axes": ratings.axes},
        "aggregation": "each output's score is the mean of its raters' scores",
        "axes": {axis: _axis(ratings, axis, means[axis], confidence) for axis in ratings.axes},
        "group_tests": _group_tests(ratings, means, confidence),
        "paired": _paired(ratings, means, confidence, alpha),
    }
    if vlm is not None:
        section["vlm_vs_human"] = vlm_vs_human(means, vlm, ratings.editors, confidence, bounds=ratings.scale)
    return section


def _axis(ratings: Ratings, axis: str, means: Mapping[Unit, float], confidence: float) -> dict[str, Any]:
    units = unit_ratings(ratings, axis)
    by = defaultdict(list)
    for (editor, _, condition), v in means.items():
        by[("condition", condition)].append(v)
        by[("editor", editor)].append(v)
    return {"outputs": len(units), "ratings": sum(len(s) for s in units.values()),
            "human": summarize(list(means.values()), confidence, bounds=ratings.scale),
            "by_condition": {c: summarize(by[("condition", c)], confidence, bounds=ratings.scale)
                             for c in ratings.conditions},
            "by_editor": {e: summarize(by[("editor", e)], confidence, bounds=ratings.scale) for e in ratings.editors},
            "fleiss_kappa": reliability(units, "fleiss_kappa"),
            "krippendorff_alpha": reliability(units, "krippendorff_alpha")}


def _group_tests(ratings: Ratings, means: Mapping[str, Mapping[Unit, float]], confidence: float,
                 ) -> list[dict[str, Any]]:
    races = unit_groups(ratings, "race")
    if not races:
        return []
    tests = []
    for axis, values in means.items():
        for condition in ratings.conditions:
            groups: dict[str, list[float]] = defaultdict(list)
            for (editor, item, c), v in values.items():
                if c == condition and (editor, item) in races:
                    groups[races[(editor, item)]].append(v)
            groups = dict(sorted(groups.items()))
            # people rate paper (b)'s axes: the registered axis of that name gives the direction (none: no best or
            # worst group is named)
            registered = REGISTERED.get(axis)
            direction = getattr(registered, "higher_is_better", None)
            # Kruskal–Wallis across every group with a value: the k-group test's (its disparity is not reported here)
            k_groups = compare_k_groups(groups, name=f"{axis}_{condition}_race", higher_is_better=direction,
                                        confidence=confidence, min_group_size=1, bounds=ratings.scale,
                                        ideal=getattr(registered, "ideal", None),
                                        focus=WHITE if WHITE in groups else None)
            row: dict[str, Any] = {"axis": axis, "condition": condition, "by": "race",
                                   "groups": {g: summarize(v, confidence, bounds=ratings.scale)
                                              for g, v in groups.items()},
                                   "kruskal": k_groups["kruskal"]}
            if WHITE in groups:
                row["white_vs_rest"] = k_groups["vs_rest"]
            tests.append(row)
    return tests


def _paired(ratings: Ratings, means: Mapping[str, Mapping[Unit, float]], confidence: float, alpha: float,
            ) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    if BASELINE not in ratings.conditions:
        return out  # nothing to pair the conditions with
    for condition in (c for c in ratings.conditions if c != BASELINE):
        pairs = {axis: ({(e, i): v for (e, i, c), v in values.items() if c == BASELINE},
                        {(e, i): v for (e, i, c), v in values.items() if c == condition})
                 for axis, values in means.items()}
        family = paired_tests(pairs, first_label=BASELINE, second_label=condition, confidence=confidence,
                              bounds=ratings.scale, alpha=alpha)
        out.append({"baseline": BASELINE, "condition": condition, "tests": family["tests"], "holm": family["holm"]})
    return out


def vlm_vs_human(means: Mapping[str, Mapping[Unit, float]], vlm: VlmScores, editors: list[str],
                 confidence: float = 0.95, bounds: Any = None) -> dict[str, Any]:
    """VLM − human per axis over the outputs both scored, and the Table 5 layout: editor -> condition ->
    axis -> VLM and human means on the same outputs."""
    by_axis: dict[str, Any] = {}
    table: dict[str, dict[str, Any]] = {e: {} for e in editors}
    for axis, values in means.items():
        matched = {u: (vlm[(*u, axis)], h) for u, h in values.items() if vlm.get((*u, axis)) is not None}
        pairs = np.asarray(list(matched.values()), dtype=float).reshape(-1, 2)
        human, judged = {u: p[1] for u, p in matched.items()}, {u: p[0] for u, p in matched.items()}
        (comparison,) = paired_tests({axis: (human, judged)}, first_label="human", second_label="vlm",
                                     confidence=confidence, bounds=bounds)["tests"]
        by_axis[axis] = {"n": len(matched), "unmatched": len(values) - len(matched),
                         "vlm": summarize(pairs[:, 0], confidence, bounds=bounds),
                         "human": summarize(pairs[:, 1], confidence, bounds=bounds),
                         "difference": comparison["mean_delta"], "ci_low": comparison["ci_low"],
                         "ci_high": comparison["ci_high"], "p_value": comparison["p_value"],
                         "reason": comparison["reason"]}
        cells: dict[tuple[str, str], list[tuple[float, float]]] = defaultdict(list)
        for (editor, _, condition), pair in matched.items():
            cells[(editor, condition)].append(pair)
        for (editor, condition), mine in sorted(cells.items()):
            v, h = np.asarray(mine, dtype=float).T
            table.setdefault(editor, {}).setdefault(condition, {})[axis] = {
                "n": len(mine), "vlm": float(v.mean()), "human": float(h.mean()), "difference": float(v.mean() - h.mean())}
    return {"difference": "vlm - human", "by_axis": by_axis, "by_editor": table}
