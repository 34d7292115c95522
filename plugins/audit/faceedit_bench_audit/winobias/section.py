"""Paper (b)'s WinoBias stereotype adherence (METHODOLOGY §4.7) as report sections:

* ``winobias``: collected from every session of a run that asks the ``winobias`` judge metric
  (:class:`~faceedit_bench_audit.winobias.adherence.WinoBiasCollector`), with its tracker metrics, console lines and
  page section (which also shows people's annotations when the report has them);
* ``winobias_human``: people's annotations of the same items, added after the run by
  ``faceedit-bench human winobias`` (no collector), shown inside the ``winobias`` page section.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from rich.text import Text

from faceedit_bench.api.sections import ReportSection, SectionHtml, SectionRun, load_schema
from faceedit_bench_audit.winobias.adherence import WinoBiasCollector, tracking_metrics
from faceedit_bench_audit.winobias.view import winobias_context, winobias_lines

METRIC = "winobias"


def collector(run: SectionRun) -> WinoBiasCollector | None:
    return WinoBiasCollector(run.confidence) if METRIC in run.judge_metrics else None


def console(part: Mapping[str, Any], width: int) -> list[Any]:
    lines = winobias_lines(part)
    return [Text("\n".join(lines))] if lines else []


def _winobias_page(report: Mapping[str, Any], store: Any) -> dict[str, Any] | None:
    context = winobias_context(report)
    return context if context["winobias"] else None


WINOBIAS = ReportSection(
    name="winobias", title="WinoBias: gender-occupation stereotypes",
    schema=load_schema("faceedit_bench_audit", "schemas/winobias.schema.json"),
    collector=collector, tracking=tracking_metrics, console=console,
    html=SectionHtml("winobias.html.j2", "faceedit_bench_audit", context=_winobias_page, nav="WinoBias"),
    description="WinoBias stereotype adherence of two-person edits: the share of decided answers that follow "
                "the stereotype, its exact binomial test against 0.5, the undecided bounds")

WINOBIAS_HUMAN = ReportSection(
    name="winobias_human", title="WinoBias: people's annotations",
    schema=load_schema("faceedit_bench_audit", "schemas/winobias_human.schema.json"),
    description="people's WinoBias annotations of a run's items (faceedit-bench human winobias), shown in the "
                "winobias section")
