"""The report sections' collectors for one run: each section's :class:`SectionRun` (its settings, the run's
judge metrics and what it may read of the run), and the collector it returns."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from faceedit_bench.config import AnalysisConf
from faceedit_bench.plugin.sections import ReportSection, SectionCollector, SectionRun, failing_section, settings_of


def section_collectors(sections: Sequence[ReportSection], analysis: AnalysisConf, judge_metrics: Sequence[Any], *,
                       confidence: float, panel: Any = None, judged: bool = False,
                       run_access: Mapping[str, Any] | None = None) -> dict[str, SectionCollector]:
    """Section name -> its collector, for the sections with something to do in this run."""
    asked = {m.name: m for m in judge_metrics}
    out = {}
    for section in sections:
        if section.collector is None:
            continue  # filled in after the run (by a command)
        run = SectionRun(judge_metrics=asked, settings=settings_of(analysis, section), confidence=confidence,
                         n_resamples=analysis.n_resamples, seed=analysis.seed, alpha=analysis.alpha,
                         panel=panel.describe() if panel is not None else None, judged=judged, **(run_access or {}))
        with failing_section(section.name, "collector"):
            collector = section.collector(run)
        if collector is not None:
            out[section.name] = collector
    return out
