"""What a launch did, for the report's launch sections (:class:`~faceedit_bench.plugin.sections.RunLaunch`):
its calls and their roles, what it spent, each component's estimated cost from recorded usage and its price
table, which components cost nothing per call, its stages' times and the judge's prompts and anchors."""

from __future__ import annotations

from typing import Any

from faceedit_bench.analysis.aggregate import Aggregator
from faceedit_bench.execution.calls import Executors
from faceedit_bench.plugin.launch import RunLaunch
from faceedit_bench.plugin.protocols import capability
from faceedit_bench.run.call_roles import call_roles, calls_section
from faceedit_bench.run.engine import EngineStats


def launch_account(exp: Any, aggregator: Aggregator, judge_scorer: Any, executors: Executors,
                   stats: EngineStats) -> RunLaunch:
    """What this launch did, once its work is done (``aggregator``: every condition's sessions)."""
    prices = {kind: dict(_prices(exp.components[kind], kind) or {})
              for kind in ("editor", "judge") if kind in exp.components}
    cost_usd = {"editor": aggregator.edit_cost_usd if prices.get("editor") else None}
    if judge_scorer is not None:
        cost_usd["judge"] = judge_scorer.service.run_cost_usd() if prices.get("judge") else None
    return RunLaunch(
        stopped=stats.stopped, edit_stage_s=stats.edit_stage_s, score_stage_s=stats.score_stage_s,
        new_edits=stats.new_edit_calls, peak_gpu_mem_bytes=stats.peak_gpu_mem_bytes,
        calls=calls_section(executors.stats(), call_roles(exp.components, exp.info.components, exp.conditions.judges)),
        spent_usd=executors.budget.spent_usd, budget_usd=executors.budget.limit_usd, cost_usd=cost_usd,
        prices=prices, free=tuple(k for k in ("editor", "judge") if k in exp.components and _free(exp.components[k])),
        faces_seen=len(aggregator.faces_seen),
        dataset_faces=exp.info.components["dataset"].description.get("n_faces"),
        prompts=judge_scorer.describe() if judge_scorer is not None else None,
        judge_reliability=stats.judge_reliability if judge_scorer is not None else None)


def _prices(component: Any, kind: str) -> Any:
    """An editor's optional price table, as declared; a judge's own (a panel lists its members')."""
    return capability(component, "editor", "prices") if kind == "editor" else getattr(component, "prices", None)


def _free(component: Any) -> bool:
    """Costs nothing per call: makes no provider calls (no price table at all, like ``identity``), or runs a
    local model. A hosted component without a price table is unknown, never free."""
    if not hasattr(component, "prices"):
        return True
    provider_key = str(getattr(getattr(component, "limits", None), "provider_key", ""))
    return provider_key.startswith("local:") and not component.prices
