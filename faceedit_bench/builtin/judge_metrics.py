"""Builtin judge metrics and their report sections: paper (a)'s semantic consistency and state tracker (with
the overediting matrix); paper (b)'s rubric (with its audit), WinoBias, and the sections people's evaluations
add to a run's report after it."""

from __future__ import annotations

from typing import Any

from faceedit_bench import hookimpl
from faceedit_bench.scoring.judge.condition_templates import REWRITE_CONDITION
from faceedit_bench.scoring.judge.features import FEATURES_CONDITION
from faceedit_bench.scoring.judge.rubric import RUBRIC_METRIC
from faceedit_bench.scoring.judge.standard import SC_METRIC, STATE_METRIC
from faceedit_bench.scoring.judge.winobias import winobias_metric


@hookimpl
def faceedit_register_judge_metrics(register: Any) -> None:
    register("sc", SC_METRIC, description="VIEScore 'tie' SC on (I_k-1, I_k, P_k), session mean x100.")
    register("state", STATE_METRIC, description="State tracker on I_0..I_K: OER x100, overediting matrix.")
    register("rubric", RUBRIC_METRIC, description="Paper (b)'s 5-axis rubric + aging accuracy on (source, edit), 1-5.")
    register("winobias", winobias_metric(),
             description="WinoBias stereotype adherence of two-person edits (paper (b) §4.7), binomial test vs 0.5.")


@hookimpl
def faceedit_register_sections(register: Any) -> None:
    # Lazy: a section's modules span analysis and report, which this registration layer does not import.
    register("overediting", "faceedit_bench.report.overediting_section:OVEREDITING",
             description="the state tracker's overediting matrix and frequent patterns (paper (a))")
    register("audit", "faceedit_bench.report.audit_section:AUDIT",
             description="paper (b)'s audit of the rubric: rates, group tables, disparities (analysis.audit)")
    register("winobias", "faceedit_bench.report.winobias_section:WINOBIAS",
             description="WinoBias stereotype adherence: share, binomial test, undecided bounds")
    register("winobias_human", "faceedit_bench.report.winobias_section:WINOBIAS_HUMAN",
             description="people's WinoBias annotations (faceedit-bench human winobias)")
    register("human_agreement", "faceedit_bench.report.winobias_section:HUMAN_AGREEMENT",
             description="people's ratings of a run's outputs (faceedit-bench human report)")


@hookimpl
def faceedit_register_commands(register: Any) -> None:
    register("human", "faceedit_bench.report.human_cli:add_parser",
             description="people's ratings and WinoBias annotations of a run: export sheets, report agreement")


@hookimpl
def faceedit_register_condition_templates(register: Any) -> None:
    register("instruction_rewrite", REWRITE_CONDITION,
             description="rewrite-then-edit: the judge rewrites each (source image, instruction)")
    register("paper_b_features", FEATURES_CONDITION,
             description="paper (b)'s feature prompt: the judge describes the source portrait's features once")
