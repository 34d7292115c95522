"""The report's cost section: estimated USD from recorded usage and each component's price
table, the projection to the whole dataset, and which components cost nothing per call."""

from __future__ import annotations

from typing import Any

from faceedit_bench.analysis.aggregate import Aggregator
from faceedit_bench.execution.calls import Executors
from faceedit_bench.plugin.protocols import capability
from faceedit_bench.run.engine import EngineStats


def cost_section(exp: Any, aggregator: Aggregator, judge_scorer: Any, executors: Executors,
                  stats: EngineStats) -> dict[str, Any]:
    """Estimated USD from recorded usage and each component's price table."""
    prices = {kind: dict(_prices(exp.components[kind], kind) or {})
              for kind in ("editor", "judge") if kind in exp.components}
    by_component = {"editor": aggregator.edit_cost_usd if prices.get("editor") else None}
    if judge_scorer is not None:
        by_component["judge"] = judge_scorer.service.run_cost_usd() if prices.get("judge") else None
    known = [v for v in by_component.values() if v is not None]
    estimated = sum(known) if known else None
    # Projection from what the faces run so far cost: run a few faces first to price the rest.
    faces_seen = len(aggregator.faces_seen)
    dataset_faces = exp.info.components["dataset"].description.get("n_faces")
    per_face = estimated / faces_seen if estimated is not None and faces_seen else None
    return {
        "estimated_usd": estimated,
        "per_face_usd": per_face,
        "projected_dataset_usd": per_face * dataset_faces
        if per_face is not None and isinstance(dataset_faces, int) else None,
        "new_usd": executors.budget.spent_usd,
        "by_component": by_component,
        "prices": prices,
        "budget_usd": executors.budget.limit_usd,
        "stopped_by_budget": stats.stopped is not None,
        "free": [kind for kind in ("editor", "judge") if kind in exp.components and _free(exp.components[kind])],
    }


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
