"""Paper (a)'s overediting matrix as a report section (``report["overediting"]``): collected from the
``state`` judge metric's trackings, shown in report.html as a heatmap, its largest cells and the frequent
patterns (METHODOLOGY §2.5, §8.5; a reconstruction). Its leaderboard counts stay in the submission's own
``overediting`` field (:mod:`faceedit_bench.leaderboard.record`), where they are pooled across test sets."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from faceedit_bench.plugin.sections import ReportSection, SectionHtml, SectionRun, load_schema
from faceedit_bench.report import html_plots
from faceedit_bench.scoring.judge.standard import OvereditCollector

METRIC = "state"


def collector(run: SectionRun) -> OvereditCollector | None:
    return OvereditCollector(METRIC) if METRIC in run.judge_metrics else None


def overediting_view(report: Mapping[str, Any], store: Any = None) -> dict[str, Any] | None:
    section = report.get("overediting")
    if not section:
        return None
    categories, matrix = list(section.get("categories") or []), section.get("matrix") or []
    edits = list(section.get("edits_per_category") or section.get("edits") or [0] * len(categories))
    cells = sorted(((matrix[i][j], categories[i], categories[j]) for i in range(len(matrix))
                    for j in range(len(matrix[i])) if matrix[i][j]), key=lambda c: (-c[0], c[1], c[2]))
    return {"overediting": {
        "heatmap": html_plots.plot_uri(html_plots.plot_overediting, categories, matrix, edits), "cells": cells[:20],
        "total": sum(c[0] for c in cells), "edits": sum(edits), "patterns": section.get("patterns") or [],
        "plot_error": html_plots.plot_unavailable()}}


OVEREDITING = ReportSection(
    name="overediting", title="Overediting",
    schema=load_schema("faceedit_bench", "schemas/sections/overediting.schema.json"),
    collector=collector,
    html=SectionHtml("overediting.html.j2", "faceedit_bench.report", context=overediting_view, nav="overediting"),
    description="the state tracker's overediting matrix (intended x changed category) and frequent patterns")
