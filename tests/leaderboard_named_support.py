"""Synthetic run directories for the named leaderboard views: the report of a run with the audit's rates
and disparities, CREval's values, a plugin metric, group tests and a judge panel, in the shapes the run
report states them (docs/run_report.md, docs/leaderboard_views.md). Their numbers are made up."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from faceedit_bench.analysis.statistics import summarize
from tests.test_leaderboard_support import write_fake_run

RACES = ("Black", "East Asian", "White")


def _rate(share: float, n: int = 40, **stated: Any) -> dict[str, Any]:
    return {"rate": share, "ci_low": max(0.0, share - 0.1), "ci_high": min(1.0, share + 0.1), "n": n, **stated}


def _metric(values: list[float], hib: bool, unit: str, label: str, bounds: list[float] | None = None) -> dict:
    return {"higher_is_better": hib, "unit": unit, "description": f"{label}, made up for tests", "label": label,
            "bounds": bounds, "requires": ["judge"], **summarize(values), "undefined_sessions": 0}


def write_named_run(workspace: Path, *, editor: str, soft_erasure: float | None = None,
                    race_change: float | None = None, gap: float = 10.0, creval: float | None = None,
                    plugin_score: float | None = None, panel: bool = False, group_tests: bool = False,
                    state_directions: bool = True, refused: int = 0) -> Path:
    """A run directory (see ``write_fake_run``) whose report has the audit's rates (``soft_erasure`` and
    ``race_change`` as shares), CREval's values (``creval`` overall; IF/VC/VQ around it), a plugin metric
    ``hat_present`` (1-5, higher is better), group tests and a two-member panel's counts."""
    run = write_fake_run(workspace, editor=editor, values=(1.0, 1.5, 2.0, 2.5), refused=refused,
                         schema_version="1.3")
    path = run / "report.json"
    report = json.loads(path.read_text())
    metrics = report["metrics"]
    metrics["drop_fss"].update(label="Drop_FSS", bounds=None, requires=["embedder"])  # as a 1.3 report states it
    if creval is not None:
        for name, offset, label in (("creval", 0.0, "CREval"), ("creval_if", -5.0, "CREval IF"),
                                    ("creval_vc", 3.0, "CREval VC"), ("creval_vq", 6.0, "CREval VQ")):
            metrics[name] = _metric([creval + offset + d for d in (-2.0, 0.0, 2.0)], True, "0-100", label,
                                    [0.0, 100.0])
    if plugin_score is not None:
        metrics["hat_present"] = _metric([plugin_score - 0.5, plugin_score, plugin_score + 0.5], True, "1-5",
                                         "Hat present", [1.0, 5.0])
    if soft_erasure is not None or race_change is not None:
        stated = ({"higher_is_better": False, "unit": "share", "description": "made-up audit rate"}
                  if state_directions else {})
        rates = {}
        if soft_erasure is not None:
            rates["soft_erasure_rate"] = _rate(soft_erasure, label="Soft erasure", **stated)
        if race_change is not None:
            rates["race_change_rate"] = _rate(race_change, label="Race change", **stated)
        report["audit"] = {
            "rates": rates,
            "disparity": {name: {"max_minus_min_pp": gap, "ci_low": gap / 2, "ci_high": gap * 1.5, "by": "race",
                                 "max_group": "White", "min_group": "Black"} for name in rates},
            "thresholds": {"soft_erasure_rate": {"axis": "edit_success", "rule": "<= 2"},
                           "race_change_rate": {"axis": "race_change", "rule": ">= 3"}},
        }
    if group_tests:
        groups = {race: summarize([1.0 + i, 2.0 + i, 3.0 + i]) for i, race in enumerate(RACES)}
        report["group_tests"] = {
            "k_groups": {"race": {"drop_fss": {
                "groups": groups, "left_out": {}, "n": 9, "k": 3,
                "disparity": {"value": 2.0, "ci_low": 0.5, "ci_high": 3.5, "worst_group": "White"},
                "kruskal": {"h": 5.6, "df": 2, "p_value": 0.061, "reason": None}}}},
            "one_vs_rest": {"race=White": {"drop_fss": {
                "groups": {"White": groups["White"], "rest": summarize([1.0, 2.0, 3.0, 2.0, 3.0, 4.0])},
                "u": 16.5, "p_value": 0.2, "mean_difference": 1.5, "worst_group": "White", "reason": None}}},
            "intersections": {"gender x skin_tone": {"reason": "no session has a skin_tone label"}},
        }
    if panel:
        report["judge_panel"] = {
            "rule": {"rule": "tolerance", "primary": "gemini", "tolerance": 1, "quorum": None,
                     "members": ["gemini", "gpt"]},
            "status": {"rubric@1": {"agreed": 30, "disagreed": 6, "secondary_failed": 2}},
            "members": {"rubric@1": {"gemini": {"ok": 38}, "gpt": {"ok": 36, "api_error": 2}}},
            "flags": {"rubric@1": {"scores.race_change": 4, "scores.skin_tone": 2}},
            "flagged_items": 6, "flagged": [{"face_id": "synthetic/0"}], "flagged_listed": 1,
        }
    report.pop("measures", None)  # rebuilt below from what the sections state, as the report writer does
    from faceedit_bench.report.measures import collect_measures

    report["measures"] = collect_measures(report)
    path.write_text(json.dumps(report, indent=2))
    return run
