"""The core's account of a launch as report sections, registered like any plugin's
(:mod:`faceedit_bench.builtin.report_parts`): ``cost``, ``calls``, ``performance``, ``prompts`` and
``judge_reliability``. Each collector reads what the launch did (:class:`~faceedit_bench.plugin.sections.RunLaunch`,
``run.launch()``) when it finishes; its schema, template, console lines and tracker metrics are the section's own,
so report.json, report.html, the console summary and MLflow are built from them as from every other section."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from faceedit_bench.plugin.launch import RunLaunch
from faceedit_bench.plugin.sections import ReportSection, SectionHtml, SectionRun, load_schema
from faceedit_bench.report.calls_view import call_sources, calls_metrics
from faceedit_bench.report.part_views import CostPart, run_of
from faceedit_bench.report.run_report import metric_key
from faceedit_bench.report.summary import cost_line
from faceedit_bench.report.summary_tables import calls_tables

PACKAGE = "faceedit_bench.report"


class LaunchCollector:
    """A section of the launch, not of the sessions: it counts none and finishes with ``part(launch)``."""

    def __init__(self, run: SectionRun, part: Any) -> None:
        self.run, self.part = run, part

    def add_session(self, result: Any) -> None:
        pass

    def finish(self) -> Mapping[str, Any] | None:
        launch = self.run.launch()
        return None if launch is None else self.part(launch)


def _collector(part: Any, *, judged: bool = False) -> Any:
    """A collector factory for ``part``; ``judged``: active only in a run with a judge."""
    return lambda run: LaunchCollector(run, part) if run.judged or not judged else None


def _schema(name: str) -> dict[str, Any]:
    return load_schema("faceedit_bench", f"schemas/sections/{name}.schema.json")


def _numbers(values: Mapping[str, Any]) -> dict[str, float]:
    return {k: float(v) for k, v in values.items() if isinstance(v, (int, float)) and not isinstance(v, bool)}


# -- cost ---------------------------------------------------------------------------------------------------

def cost_part(launch: RunLaunch) -> dict[str, Any]:
    """Estimated USD from recorded usage and each component's price table, and the projection to the whole
    dataset from what the faces run so far cost (run a few faces first to price the rest)."""
    known = [v for v in launch.cost_usd.values() if v is not None]
    estimated = sum(known) if known else None
    per_face = estimated / launch.faces_seen if estimated is not None and launch.faces_seen else None
    return {
        "estimated_usd": estimated,
        "per_face_usd": per_face,
        "projected_dataset_usd": per_face * launch.dataset_faces
        if per_face is not None and isinstance(launch.dataset_faces, int) else None,
        "new_usd": launch.spent_usd,
        "by_component": dict(launch.cost_usd),
        "prices": {kind: dict(table) for kind, table in launch.prices.items()},
        "budget_usd": launch.budget_usd,
        "stopped_by_budget": launch.stopped is not None,
        "free": list(launch.free),
    }


def cost_metrics(part: Mapping[str, Any]) -> dict[str, float]:
    cost = CostPart.of(part)
    out = _numbers({"cost_estimated_usd": cost.estimated_usd, "cost_new_usd": cost.new_usd})
    out.update(_numbers({metric_key("cost", kind, "usd"): usd for kind, usd in (cost.by_component or {}).items()}))
    return out


COST = ReportSection(
    name="cost", title="Cost", schema=_schema("cost"), collector=_collector(cost_part), tracking=cost_metrics,
    console=lambda report, width: [line] if (line := cost_line(dict(report))) else [], console_reads_report=True,
    html=SectionHtml("cost.html.j2", PACKAGE, nav="cost and calls", place="launch"), needs_judge=False,
    description="estimated USD of the run's calls, what this launch spent, the budget and the price tables")


# -- calls --------------------------------------------------------------------------------------------------

def call_rows(report: Mapping[str, Any], store: Any = None) -> dict[str, Any] | None:
    """One row per provider the run called, named by role, provider, model and endpoint host. ``waiting``: the
    rate-limit wait summed over calls divided by the run's wall time (calls wait side by side, so the sum alone
    can exceed the wall time many times over)."""
    wall = run_of(report).wall_time_s
    rows = [{**stats, "key": f"{source.role}: {source.name}",
             "gave_up_total": sum((stats.get("gave_up") or {}).values()),
             "retries_total": sum((stats.get("retries") or {}).values()),
             "waiting": stats["rate_wait_s"] / wall if isinstance(stats.get("rate_wait_s"), (int, float))
             and isinstance(wall, (int, float)) and wall > 0 else None}
            for source, stats in call_sources(report)]
    return {"calls": rows, "wall_time_s": wall} if rows else None


CALLS = ReportSection(
    name="calls", title="Calls", schema=_schema("calls"), collector=_collector(lambda launch: dict(launch.calls)),
    tracking=lambda part: calls_metrics({"calls": part}, metric_key),  # by role: no endpoint in a name
    console=lambda part, width: calls_tables({"calls": part}, width),
    html=SectionHtml("calls.html.j2", PACKAGE, context=call_rows, nav=None, place="launch"), needs_judge=False,
    description="provider calls by role: attempts, retries, give-ups and rate-limit waits")


# -- performance --------------------------------------------------------------------------------------------

def performance_part(launch: RunLaunch) -> dict[str, Any]:
    return {"edit_stage_s": round(launch.edit_stage_s, 3), "score_stage_s": round(launch.score_stage_s, 3),
            "new_edits": launch.new_edits,
            "edits_per_s": launch.new_edits / launch.edit_stage_s if launch.new_edits else None,
            "peak_gpu_mem_bytes": launch.peak_gpu_mem_bytes}


def _performance_view(report: Mapping[str, Any], store: Any = None) -> dict[str, Any] | None:
    part = report.get("performance")
    return {"section": part} if isinstance(part, Mapping) and part.get("new_edits") else None


PERFORMANCE = ReportSection(
    name="performance", title="Performance", schema=_schema("performance"),
    collector=_collector(performance_part),
    tracking=lambda part: _numbers({metric_key("perf", field): value for field, value in part.items()}),
    html=SectionHtml("performance.html.j2", PACKAGE, context=_performance_view, nav=None, place="launch"),
    needs_judge=False, description="how long this launch's edit and score stages took, and its edit rate")


# -- the judge's prompts and reliability ----------------------------------------------------------------------

def _prompt_rows(report: Mapping[str, Any], store: Any = None) -> dict[str, Any] | None:
    """The judge's prompt templates (name, version, hash), which decide SC and OER as much as the model."""
    rows = [{"use": use, **t} for use, t in (report.get("prompts") or {}).items() if isinstance(t, Mapping)]
    return {"prompts": rows} if rows else None


PROMPTS = ReportSection(
    name="prompts", title="Judge prompt templates", schema=_schema("prompts"),
    collector=_collector(lambda launch: launch.prompts, judged=True),
    html=SectionHtml("prompts.html.j2", PACKAGE, context=_prompt_rows, nav=None, place="components"),
    description="the judge's prompt template of each judge metric: name, version and hash")


def anchor_lines(part: Mapping[str, Any], width: int = 0) -> Sequence[str]:
    """``Judge anchors: 1 passed, 2 failed; DRIFT since the last check: ...``."""
    drift = part.get("drift")
    return [f"Judge anchors: {part.get('passed')} passed, {part.get('failed')} failed"
            + ("; DRIFT since the last check: " + ", ".join(f"{d['name']} {d['field']}" for d in drift)
               if drift else "")]


def _reliability_view(report: Mapping[str, Any], store: Any = None) -> dict[str, Any] | None:
    """The anchors; with a judge whose anchors were not asked, a line that says so."""
    part = report.get("judge_reliability")
    if isinstance(part, Mapping) and part:
        return {"section": part}
    return {"section": None} if "judge" in (report.get("components") or {}) else None


JUDGE_RELIABILITY = ReportSection(
    name="judge_reliability", title="Judge reliability", schema=_schema("judge_reliability"),
    collector=_collector(lambda launch: launch.judge_reliability, judged=True), console=anchor_lines,
    html=SectionHtml("judge_reliability.html.j2", PACKAGE, context=_reliability_view, anchor="judge",
                     nav="judge reliability", place="launch"),
    description="the judge's anchors (known edits it must score in a known range), drift and agreement")
