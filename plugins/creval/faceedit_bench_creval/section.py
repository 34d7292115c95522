"""CREval's QA scores (METHODOLOGY §5, docs/creval.md) as report sections: ``creval`` (frozen question
sets) and ``creval_face`` (the taxonomy EXTENSION, §5.4), each collected from its judge metric's items, with
settings at ``analysis.creval`` (the failure rule), the binding of the metrics to the run's question sets,
tracker metrics, page section, its answers table in the run folder, its "mostly missing" warning and its
leaderboard view."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from faceedit_bench.api.sections import (
    ReportSection,
    SectionHtml,
    SectionRun,
    ValueSpec,
    ViewSpec,
    load_schema,
    metric_key,
    mostly_missing_warning,
)
from faceedit_bench_creval.answers_table import write_answer_table
from faceedit_bench_creval.binding import bind_questions
from faceedit_bench_creval.collector import CrevalCollector
from faceedit_bench_creval.settings import CrevalConf
from faceedit_bench_creval.view import creval_tracking, creval_view


class CrevalSectionCollector(CrevalCollector):
    def files(self, output_dir: Path) -> list[Path]:
        """``<metric>_answers.csv``: every question of every item with the judge's answer."""
        return [write_answer_table(output_dir / f"{self.metric}_answers.csv", self.items)]


def collector_of(name: str) -> Any:
    def collector(run: SectionRun) -> CrevalSectionCollector | None:
        metric = run.judge_metrics.get(name)
        if metric is None:
            return None
        return CrevalSectionCollector(name, extension=metric.extension, confidence=run.confidence,
                                      question_sets=list(metric.question_sets), on_failure=metric.on_failure,
                                      failed_items=metric.failed_items)

    return collector


def prepare(setup: Any) -> dict[str, Any] | None:
    """``creval`` bound to the run's question sets (``analysis.creval.questions=[...]``), both CREval metrics to
    the failure rule ``analysis.creval.on_failure``; a question set without ``creval``, or ``creval`` without
    one, is a ConfigError."""
    if not setup.judged:
        return None
    metrics, _ = bind_questions(setup.load, list(setup.judge_metrics.values()),
                                list(setup.settings.questions), setup.testset, setup.settings.on_failure)
    return {m.name: m for m in metrics}


def warnings_of(name: str) -> Any:
    def warnings(part: Mapping[str, Any]) -> list[dict[str, Any] | None]:
        items = part.get("items") or {}
        if not items.get("judged"):
            return []
        reasons = {f"{m} {o}": n for m, per in (items.get("outcomes") or {}).items() for o, n in per.items()
                   if o != "ok"}
        missing = items["judged"] - items.get("scored", 0)
        return [mostly_missing_warning(f"{name}_unscored", f"{name} items", "have no overall score", items["judged"],
                        reasons or {"a metric not scored": missing}, missing=missing, verb="scored")]

    return warnings


def _page(name: str) -> Any:
    def context(report: Mapping[str, Any], store: Any) -> dict[str, Any] | None:
        part = report.get(name)
        return {"creval": [creval_view(name, part, store)]} if isinstance(part, Mapping) else None

    return context


def section(name: str, title: str, view: ViewSpec, description: str) -> ReportSection:
    return ReportSection(
        name=name, title=title, schema=load_schema("faceedit_bench_creval", "schemas/creval.schema.json"),
        collector=collector_of(name), settings=CrevalConf if name == "creval" else None,
        prepare=prepare if name == "creval" else None,  # binds both CREval metrics
        tracking=lambda part: creval_tracking(name, part, metric_key),
        html=SectionHtml("creval.html.j2", "faceedit_bench_creval", folder="html", context=_page(name), nav=name),
        warnings=warnings_of(name), views=(view,), description=description)


CREVAL = section("creval", "QA scores (creval)", ViewSpec(
    key="creval", title="CREval: overall, IF, VC, VQ",
    description="QA-based scores (METHODOLOGY §5): the weighted share of a frozen question set answered as "
                "expected, per instruction following (IF), visual consistency (VC) and visual quality (VQ); "
                "overall = 0.4 IF + 0.4 VC + 0.2 VQ, 0-100.",
    values=tuple(ValueSpec(n) for n in ("creval", "creval_if", "creval_vc", "creval_vq")), rank_by="creval"),
    "CREval QA scores of frozen question sets: IF/VC/VQ/overall with CIs per category and dimension")

CREVAL_FACE = section("creval_face", "QA scores (creval_face): an extension", ViewSpec(
    key="creval_face", title="CREval on face sessions: overall, IF, VC, VQ",
    description="CREval's scoring on questions generated from the taxonomy of face sessions (an extension of "
                "METHODOLOGY §5.4): overall = 0.4 IF + 0.4 VC + 0.2 VQ, 0-100.",
    values=tuple(ValueSpec(n) for n in ("creval_face", "creval_face_if", "creval_face_vc", "creval_face_vq")),
    rank_by="creval_face"),
    "EXTENSION: CREval QA scores of taxonomy-bound face sessions with questions written from the taxonomy")
