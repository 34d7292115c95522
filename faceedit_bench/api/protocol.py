"""The public API for protocol authors: what a package that adds a benchmark protocol (a paper's judge
metrics, report sections, statistics, presets and commands) may import from the core.

Component authors (editors, judges, embedders, datasets, trackers) need only :mod:`faceedit_bench.api`.
A protocol package registers its parts through hooks (``faceedit_register_judge_metrics``,
``faceedit_register_sections``, ``faceedit_register_commands``, ``faceedit_register_condition_templates``,
``faceedit_config_searchpath`` for its presets) and imports from here and from :mod:`faceedit_bench.api` only;
every other core module is private. docs/plugin_hooks.md shows a section end to end.

What is here, by use:

* report sections: :class:`ReportSection` (one object: collector, ``report.json`` part and schema, settings,
  MLflow metrics, console lines, report.html template, leaderboard record, verification and views),
  :class:`SectionCollector`, :class:`SectionRun`, :class:`SectionHtml`, :class:`ViewSpec`, :class:`ValueSpec`,
  :func:`load_schema`, :func:`run_report_schema`;
* judge metrics: :class:`JudgeMetric`, :class:`JudgeValue`, :class:`MetricJudgment`, :class:`Question`,
  :class:`NotAsked`, :func:`step_fields`, :class:`PromptTemplate`, :func:`parse_answer`,
  :class:`ParseFailure`, :class:`ConditionTemplate` (prompt conditions), :class:`SessionMetric`;
* what a collector sees: :class:`SessionResult`, :class:`Face`, :class:`Session`, :class:`Step`,
  :class:`JudgeAnswer`, :class:`Outcome`;
* statistics: :func:`summarize` (mean and interval, bounds-aware), :class:`Threshold`,
  :func:`threshold_rate` (Wilson), :func:`rate_direction`, :func:`paired_comparison`, :func:`paired_family`
  (Wilcoxon + Holm), :func:`compare_k_groups` (Kruskal-Wallis, max - min with a bootstrap CI),
  :func:`one_vs_rest` (Mann-Whitney U), :func:`fleiss_kappa`, :func:`krippendorff_alpha`,
  :func:`metric_agreement`, :func:`rank_table`;
* report helpers: :func:`metric_key` (MLflow-safe names), :func:`mostly_missing_warning`, the number formats
  (:func:`fmt_num`, :func:`fmt_ci`, :func:`fmt_p`, :func:`fmt_pct`, :func:`fmt_value`), console tables
  (:class:`Column`, :func:`fitted_tables`, :func:`render_console`), plots (:func:`plot_figure`,
  :func:`plot_png`, :func:`plot_uri`, :data:`PALETTE`), :func:`render_template` (a package's template with the
  pages' filters);
* settings checks for a section's settings dataclass: :func:`reject`, :func:`check_whole`,
  :func:`check_fraction`, :func:`check_positive`, :func:`check_flag`;
* leaderboard verification: :class:`Comparer` (what ``ReportSection.verify`` is handed).
"""

from __future__ import annotations

from typing import Any

from faceedit_bench.analysis.group_tests import compare_k_groups, one_vs_rest
from faceedit_bench.analysis.metric_agreement import metric_agreement, rank_table
from faceedit_bench.analysis.paired import paired_comparison, paired_family
from faceedit_bench.analysis.rates import Threshold, rate_direction, threshold_rate
from faceedit_bench.analysis.reliability import fleiss_kappa, krippendorff_alpha
from faceedit_bench.analysis.session_metrics import SessionMetric
from faceedit_bench.analysis.statistics import summarize
from faceedit_bench.config import check_flag, check_fraction, check_positive, check_whole, reject
from faceedit_bench.leaderboard.reproduction import Comparer
from faceedit_bench.plugin.sections import (
    ReportSection,
    SectionCollector,
    SectionHtml,
    SectionRun,
    ValueSpec,
    ViewSpec,
    load_schema,
)
from faceedit_bench.records import Face, JudgeAnswer, Outcome, Session, SessionResult, Step
from faceedit_bench.report.console import Column, fitted_tables
from faceedit_bench.report.console import render as render_console
from faceedit_bench.report.html_plots import plot_uri
from faceedit_bench.report.plots import PALETTE
from faceedit_bench.report.plots import figure as plot_figure
from faceedit_bench.report.plots import png_bytes as plot_png
from faceedit_bench.report.read_first import warning as mostly_missing_warning
from faceedit_bench.report.report_schema import run_report_schema
from faceedit_bench.report.run_report import metric_key
from faceedit_bench.report.templates import fmt_ci, fmt_num, fmt_p, fmt_pct, fmt_value, package_environment
from faceedit_bench.scoring.judge.condition_templates import ConditionTemplate
from faceedit_bench.scoring.judge.declared import (
    JudgeMetric,
    JudgeValue,
    MetricJudgment,
    NotAsked,
    Question,
    step_fields,
)
from faceedit_bench.scoring.judge.service import ParseFailure, PromptTemplate, parse_answer


def render_template(package: str, template: str, folder: str = "templates", **context: Any) -> str:
    """A template shipped in ``package``'s ``folder``, rendered with autoescape on and the pages' filters
    (``num``, ``ci``, ``p``, ``pct``, ``value``, ``usd``, ``version``) and ``kv`` (for a standalone page of a
    protocol's own; a section's part of report.html is :class:`SectionHtml`)."""
    return package_environment(package, folder).get_template(template).render(**context)


__all__ = [
    "PALETTE",
    "Column",
    "Comparer",
    "ConditionTemplate",
    "Face",
    "JudgeAnswer",
    "JudgeMetric",
    "JudgeValue",
    "MetricJudgment",
    "NotAsked",
    "Outcome",
    "ParseFailure",
    "PromptTemplate",
    "Question",
    "ReportSection",
    "SectionCollector",
    "SectionHtml",
    "SectionRun",
    "Session",
    "SessionMetric",
    "SessionResult",
    "Step",
    "Threshold",
    "ValueSpec",
    "ViewSpec",
    "check_flag",
    "check_fraction",
    "check_positive",
    "check_whole",
    "compare_k_groups",
    "fitted_tables",
    "fleiss_kappa",
    "fmt_ci",
    "fmt_num",
    "fmt_p",
    "fmt_pct",
    "fmt_value",
    "krippendorff_alpha",
    "load_schema",
    "metric_agreement",
    "metric_key",
    "mostly_missing_warning",
    "one_vs_rest",
    "paired_comparison",
    "paired_family",
    "parse_answer",
    "plot_figure",
    "plot_png",
    "plot_uri",
    "rank_table",
    "rate_direction",
    "reject",
    "render_console",
    "render_template",
    "run_report_schema",
    "step_fields",
    "summarize",
    "threshold_rate",
]
