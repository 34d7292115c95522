"""Builtin judge metrics and their report sections: paper (a)'s semantic consistency and state tracker (with
the overediting matrix), and the instruction-rewrite prompt condition. Other protocols' metrics and sections come
from their packages (plugins/)."""

from __future__ import annotations

from typing import Any

from faceedit_bench import hookimpl

# Lazy ("module:attribute"), like the sections below: a command that asks no judge imports none of the
# judge's prompts and answer models.


@hookimpl
def faceedit_register_judge_metrics(register: Any) -> None:
    register("sc", "faceedit_bench.scoring.judge.standard:SC_METRIC",
             description="VIEScore 'tie' SC on (I_k-1, I_k, P_k), session mean x100.")
    register("state", "faceedit_bench.scoring.judge.standard:STATE_METRIC",
             description="State tracker on I_0..I_K: OER x100, overediting matrix.")


@hookimpl
def faceedit_register_sections(register: Any) -> None:
    # Lazy: a section's modules span analysis and report, which this registration layer does not import.
    register("overediting", "faceedit_bench.report.overediting_section:OVEREDITING",
             description="the state tracker's overediting matrix and frequent patterns (paper (a))")


@hookimpl
def faceedit_register_condition_templates(register: Any) -> None:
    register("instruction_rewrite", "faceedit_bench.scoring.judge.condition_templates:REWRITE_CONDITION",
             description="rewrite-then-edit: the judge rewrites each (source image, instruction)")
