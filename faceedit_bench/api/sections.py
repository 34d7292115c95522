"""The public API, topic **sections**: a report section (one object: collector, ``report.json`` part and
schema, settings, MLflow metrics, console lines, report.html part, leaderboard record, verification and views;
docs/plugin_hooks.md shows one end to end), what its parts are built with, and what a command adds to a
finished run.

* a section: :class:`ReportSection`, :class:`SectionRun` (what its collector sees, the run's images and
  components included), :class:`SectionHtml`, :class:`ViewSpec`, :class:`ValueSpec`,
  :class:`Needs` (what it needs of the faces, checked before the first paid call), :func:`load_schema`;
* its settings dataclass checked: :func:`reject`, :func:`check_whole`, :func:`check_fraction`; a command's ``-p key=value`` options:
  :func:`key_values`;
* its parts: :func:`metric_key` (MLflow-safe names), :func:`mostly_missing_warning`, the number formats
  (:func:`fmt_num`, :func:`fmt_ci`, :func:`fmt_p`), console tables (:class:`Column`, :func:`fitted_tables`),
  plots (:func:`plot_png`, a drawing as PNG bytes; :func:`plot_uri`, as a data URI for a page; :data:`PALETTE`),
  :func:`render_template` (a package's own page);
* a finished run: :func:`load_run`, :func:`run_config`, its tables (:data:`SESSIONS_CSV`, :data:`STEPS_CSV`,
  :data:`DEMOGRAPHIC_KEYS`; its images are :meth:`faceedit_bench.api.images.RunImages.of_run`), :func:`attach_section` (a section
  into its report.json and report.html, kept by every later report of the run) and :func:`log_to_run` (metrics
  and files to its tracker); :func:`study_csv` (a human study's answers, ``study:<id>[@<workspace>]``, as the
  ratings or votes CSV a command reads; any other path unchanged).
"""

from __future__ import annotations

from faceedit_bench.api._plugin_set import log_to_run, render_template
from faceedit_bench.plugin.needs import Needs
from faceedit_bench.plugin.sections import (
    ReportSection,
    SectionHtml,
    SectionRun,
    ValueSpec,
    ViewSpec,
    load_schema,
)
from faceedit_bench.report.attached import attach_section
from faceedit_bench.report.compared_runs import load_run, run_config
from faceedit_bench.report.console import Column, fitted_tables
from faceedit_bench.report.html_plots import plot_uri
from faceedit_bench.report.plots import PALETTE
from faceedit_bench.report.plots import drawn_png as plot_png
from faceedit_bench.report.read_first import warning as mostly_missing_warning
from faceedit_bench.report.run_report import metric_key
from faceedit_bench.report.tables import DEMOGRAPHIC_KEYS, SESSIONS_CSV, STEPS_CSV
from faceedit_bench.report.templates import fmt_ci, fmt_num, fmt_p
from faceedit_bench.setting_checks import check_fraction, check_whole, key_values, reject
from faceedit_bench.studies.export import study_csv

__all__ = ["DEMOGRAPHIC_KEYS", "PALETTE", "SESSIONS_CSV", "STEPS_CSV", "Column", "Needs", "ReportSection",
           "SectionHtml", "SectionRun", "ValueSpec", "ViewSpec", "attach_section", "check_fraction",
           "check_whole",
           "fitted_tables", "fmt_ci", "fmt_num", "fmt_p", "key_values", "load_run", "load_schema", "log_to_run",
           "metric_key", "mostly_missing_warning", "plot_png", "plot_uri",
           "reject", "render_template", "run_config", "study_csv"]
