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
  :class:`SectionCollector`, :class:`SectionRun`, :class:`SectionSetup`, :class:`SectionHtml`,
  :class:`ViewSpec`, :class:`ValueSpec`, :func:`load_schema`, :func:`run_report_schema`;
* judge metrics: :class:`JudgeMetric`, :class:`JudgeValue`, :class:`MetricJudgment`, :class:`Question`,
  :class:`NotAsked`, :func:`step_fields`, :class:`PromptTemplate`, :func:`parse_answer`,
  :class:`ParseFailure`, :class:`ConditionTemplate` (prompt conditions), :class:`SessionMetric`;
* what a metric, judge metric or section needs of the faces, checked before the first paid call: :class:`Needs`;
* what a collector sees: :class:`SessionResult`, :class:`Face`, :class:`Session`, :class:`Step`,
  :class:`JudgeAnswer`, :class:`Outcome`;
* statistics: :func:`cached_statistic` (a decorator: a pure, seeded statistic kept in the ledger during the
  report stage, by the hash of its arguments, so a killed report resumes and an unchanged one is read back),
  :func:`summarize` (mean and interval, bounds-aware), :class:`Threshold`,
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
  :func:`check_fraction`, :func:`check_positive`, :func:`check_flag`; and :func:`key_values`, a command's
  ``-p key=value`` options as a mapping (each value read as YAML);
* leaderboard verification: :class:`Comparer` (what ``ReportSection.verify`` is handed);
* commands that add to a finished run (people's ratings, an arena): :func:`attach_section` (a section into the
  run's report.json and report.html, kept by every later report of the run), :func:`load_run`, :func:`run_config`,
  :func:`store_for_run_dir`, :func:`write_html_report`, :data:`SESSIONS_CSV`, :data:`STEPS_CSV`,
  :data:`DEMOGRAPHIC_KEYS` (the sessions table's label columns), :func:`study_csv` (a human study's answers,
  ``study:<id>[@<workspace>]``, as the ratings or votes CSV; any other path unchanged), :func:`log_run_metrics` and
  :func:`log_run_artifacts` (to the run's tracker), and :func:`registered` (a registered object by kind and
  name, e.g. a dataset factory);
* files: :func:`write_text` (atomic); a user's files read with size and depth caps and one-line errors
  (:func:`read_utf8`, :func:`read_json`, :func:`parse_json`, :func:`json_lines`, :func:`csv_rows`, :func:`csv_records`;
  :func:`file_under` refuses a listed file outside its folder);
  :func:`file_lock`, :func:`restore_replaced`, and
  :func:`fingerprint` (the sha256 of an object's canonical JSON, for content-derived identities);
* a protocol's own commands (questions written or answered outside a run, pairwise battles):
  :func:`create_registered` (a registered component made from command-line parameters, checked like a
  run's), :func:`key_values`
  (``-p key=value`` pairs), :func:`judge_session` and :class:`JudgeSession` (a judge asked with the run's
  service, ledger cache and image store, in a workspace of the command's own), :func:`load_testset` and
  :data:`TESTSET_NAMES` (the builtin test sets), :func:`load_taxonomy` and :class:`Taxonomy` (the edits'
  taxonomy the builtin test sets are bound to).
* added for protocol packages that ship their own test sets, panels and commands: :func:`kruskal_wallis`
  (a k-group test alone), :data:`PANEL_ROUNDINGS` and :func:`panel_number` (a judge panel's rule for one
  number, to recombine stored member answers), :func:`parse_testset` (a frozen test set's JSON, validated),
  :class:`PublishedSample` (the items a paper ran, for ``faceedit_register_samples``),
  :func:`write_bytes` (atomic).
* reproductions of published results (``faceedit-bench reproduce``, ``faceedit_register_reproductions``):
  :class:`PublishedNumber` (published value, ours, tolerance), :class:`PublishedFileError` (a published layout
  that cannot be read: exit code 2), :func:`read_expect` (a user's ``name,value`` CSV), :func:`with_expected`
  and :func:`report_reproduction` (the table, its JSON and the exit code).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from faceedit_bench.analysis.cached import cached_statistic
from faceedit_bench.analysis.group_tests import compare_k_groups, kruskal_wallis, one_vs_rest
from faceedit_bench.analysis.metric_agreement import metric_agreement, rank_table
from faceedit_bench.analysis.paired import paired_comparison, paired_family
from faceedit_bench.analysis.published import Number as PublishedNumber
from faceedit_bench.analysis.published import PublishedFileError, read_expect, with_expected
from faceedit_bench.analysis.published import report as report_reproduction
from faceedit_bench.analysis.rates import Threshold, rate_direction, threshold_rate
from faceedit_bench.analysis.reliability import fleiss_kappa, krippendorff_alpha
from faceedit_bench.analysis.session_metrics import SessionMetric
from faceedit_bench.analysis.statistics import summarize
from faceedit_bench.keys import fingerprint
from faceedit_bench.leaderboard.reproduction import Comparer
from faceedit_bench.plugin.needs import Needs
from faceedit_bench.plugin.sections import (
    ReportSection,
    SectionCollector,
    SectionHtml,
    SectionRun,
    SectionSetup,
    ValueSpec,
    ViewSpec,
    load_schema,
)
from faceedit_bench.records import Face, JudgeAnswer, Outcome, Session, SessionResult, Step
from faceedit_bench.report.attached import attach_section
from faceedit_bench.report.compared_runs import load_run, run_config
from faceedit_bench.report.console import Column, fitted_tables
from faceedit_bench.report.console import render as render_console
from faceedit_bench.report.html_file import store_for_run_dir, write_html_report
from faceedit_bench.report.html_plots import plot_uri
from faceedit_bench.report.plots import PALETTE
from faceedit_bench.report.plots import figure as plot_figure
from faceedit_bench.report.plots import no_mathtext as plot_no_mathtext
from faceedit_bench.report.plots import png_bytes as plot_png
from faceedit_bench.report.read_first import warning as mostly_missing_warning
from faceedit_bench.report.report_schema import run_report_schema
from faceedit_bench.report.run_report import metric_key
from faceedit_bench.report.tables import DEMOGRAPHIC_KEYS, SESSIONS_CSV, STEPS_CSV
from faceedit_bench.report.templates import fmt_ci, fmt_num, fmt_p, fmt_pct, fmt_value, package_environment
from faceedit_bench.run.sampling import PublishedSample
from faceedit_bench.scoring.judge.condition_templates import ConditionTemplate
from faceedit_bench.scoring.judge.declared import (
    JudgeMetric,
    JudgeValue,
    MetricJudgment,
    NotAsked,
    Question,
    step_fields,
)
from faceedit_bench.scoring.judge.outside_run import JudgeSession, judge_session
from faceedit_bench.scoring.judge.panel import ROUNDINGS as PANEL_ROUNDINGS
from faceedit_bench.scoring.judge.panel import tolerance_number as panel_number
from faceedit_bench.scoring.judge.service import ParseFailure, PromptTemplate, parse_answer
from faceedit_bench.setting_checks import check_flag, check_fraction, check_positive, check_whole, key_values, reject
from faceedit_bench.storage.atomic import write_bytes, write_text
from faceedit_bench.storage.first_time import restore_replaced
from faceedit_bench.storage.locks import file_lock
from faceedit_bench.storage.user_files import (
    csv_records,
    csv_rows,
    file_under,
    json_lines,
    parse_json,
    read_json,
    read_utf8,
)
from faceedit_bench.studies.export import study_csv
from faceedit_bench.taxonomy import Taxonomy, load_taxonomy
from faceedit_bench.testsets import TESTSET_NAMES, load_testset, parse_testset


def render_template(package: str, template: str, folder: str = "templates", **context: Any) -> str:
    """A template shipped in ``package``'s ``folder``, rendered with autoescape on and the pages' filters
    (``num``, ``ci``, ``p``, ``pct``, ``value``, ``usd``, ``version``) and ``kv`` (for a standalone page of a
    protocol's own; a section's part of report.html is :class:`SectionHtml`)."""
    return package_environment(package, folder).get_template(template).render(**context)


def registered(kind: str, name: str) -> Any:
    """The object registered as ``name`` of ``kind`` (``datasets``, ``judges``, ``question_sets`` ...) by the
    installed plugins; an unknown name raises a ConfigError listing the known ones."""
    from faceedit_bench.plugin.manager import get_plugins

    return get_plugins().registry.get(kind, name).load()


def create_registered(kind: str, name: str, params: Mapping[str, Any] | None = None) -> Any:
    """The component registered as ``name`` of ``kind`` (``judges``, ``datasets`` ...) made with ``params``, for a
    command outside a run (e.g. a judge from ``--judge openai -p model=gpt-4o``). The parameters are checked as
    a run checks ``<kind>.params``: an unknown one is a ConfigError naming the closest accepted name, and so is
    a required one left out."""
    from faceedit_bench.config import ComponentConf
    from faceedit_bench.run.components import check_params

    factory = registered(kind, name)
    given = dict(params or {})
    check_params(kind.removesuffix("s"), ComponentConf(name, given), factory)
    return factory(**given)


def log_run_metrics(tracking_uri: str, run_key: str, metrics: Mapping[str, float]) -> str | None:
    """Add ``metrics`` to the tracked run of ``run_key`` at ``tracking_uri`` (the ``faceedit_log_run_metrics``
    hook): that run's id, or None when no installed tracker reads the URI."""
    from faceedit_bench.plugin.manager import get_plugins

    return get_plugins().pm.hook.faceedit_log_run_metrics(tracking_uri=tracking_uri, run_key=run_key,
                                                          metrics=dict(metrics))


def log_run_artifacts(tracking_uri: str, run_key: str, files: Mapping[str, str]) -> str | None:
    """Add ``files`` (local path -> folder in the run's artifacts, "" for the top; a file of the same name there is
    replaced) to the tracked run of ``run_key`` at ``tracking_uri`` (the ``faceedit_log_run_artifacts`` hook):
    that run's id, or None when no installed tracker reads the URI."""
    from faceedit_bench.plugin.manager import get_plugins

    return get_plugins().pm.hook.faceedit_log_run_artifacts(tracking_uri=tracking_uri, run_key=run_key,
                                                            files={str(k): str(v) for k, v in files.items()})


__all__ = [
    "study_csv",
    "PublishedFileError",
    "PublishedNumber",
    "read_expect",
    "report_reproduction",
    "with_expected",
    "PANEL_ROUNDINGS",
    "attach_section",
    "PublishedSample",
    "key_values",
    "kruskal_wallis",
    "csv_records",
    "csv_rows",
    "file_under",
    "json_lines",
    "panel_number",
    "parse_testset",
    "write_bytes",
    "Column",
    "Comparer",
    "ConditionTemplate",
    "Face",
    "JudgeAnswer",
    "JudgeMetric",
    "JudgeSession",
    "JudgeValue",
    "MetricJudgment",
    "Needs",
    "NotAsked",
    "Outcome",
    "PALETTE",
    "ParseFailure",
    "PromptTemplate",
    "Question",
    "ReportSection",
    "DEMOGRAPHIC_KEYS",
    "SESSIONS_CSV",
    "STEPS_CSV",
    "SectionCollector",
    "SectionHtml",
    "SectionRun",
    "SectionSetup",
    "Session",
    "SessionMetric",
    "SessionResult",
    "Step",
    "TESTSET_NAMES",
    "Taxonomy",
    "Threshold",
    "ValueSpec",
    "ViewSpec",
    "check_flag",
    "check_fraction",
    "check_positive",
    "check_whole",
    "cached_statistic",
    "compare_k_groups",
    "create_registered",
    "file_lock",
    "fingerprint",
    "fitted_tables",
    "fleiss_kappa",
    "fmt_ci",
    "fmt_num",
    "fmt_p",
    "fmt_pct",
    "fmt_value",
    "judge_session",
    "krippendorff_alpha",
    "load_run",
    "load_schema",
    "load_taxonomy",
    "load_testset",
    "log_run_artifacts",
    "log_run_metrics",
    "metric_agreement",
    "metric_key",
    "mostly_missing_warning",
    "one_vs_rest",
    "paired_comparison",
    "paired_family",
    "parse_answer",
    "plot_figure",
    "plot_no_mathtext",
    "plot_png",
    "plot_uri",
    "rank_table",
    "rate_direction",
    "parse_json",
    "read_json",
    "read_utf8",
    "registered",
    "reject",
    "render_console",
    "render_template",
    "restore_replaced",
    "run_config",
    "run_report_schema",
    "step_fields",
    "store_for_run_dir",
    "summarize",
    "threshold_rate",
    "write_html_report",
    "write_text",
]
