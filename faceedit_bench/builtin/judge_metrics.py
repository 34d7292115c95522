"""Builtin judge metrics: paper (a)'s semantic consistency and state tracker; paper (b)'s rubric and WinoBias."""

from __future__ import annotations

from typing import Any

from faceedit_bench import hookimpl
from faceedit_bench.analysis.winobias import WinoBiasReport
from faceedit_bench.scoring.judge.rubric import RUBRIC_METRIC
from faceedit_bench.scoring.judge.standard import SC_METRIC, STATE_METRIC
from faceedit_bench.scoring.judge.winobias import winobias_metric


@hookimpl
def faceedit_register_judge_metrics(register: Any) -> None:
    register("sc", SC_METRIC, description="VIEScore 'tie' SC on (I_k-1, I_k, P_k), session mean x100.")
    register("state", STATE_METRIC, description="State tracker on I_0..I_K: OER x100, overediting matrix.")
    register("rubric", RUBRIC_METRIC, description="Paper (b)'s 5-axis rubric + aging accuracy on (source, edit), 1-5.")
    register("winobias", winobias_metric(report=WinoBiasReport),
             description="WinoBias stereotype adherence of two-person edits (paper (b) §4.7), binomial test vs 0.5.")
