"""The public API, topic **sections**: a report section (one object: collector, ``report.json`` part and
schema, settings, MLflow metrics, console lines, report.html part, leaderboard record, verification and views;
docs/plugin_hooks.md shows one end to end), what its parts are built with, and what a command adds to a
finished run.

* a section: :class:`ReportSection`, :class:`SectionRun` (what its collector sees, the run's images and
  components included), :class:`SectionHtml`, :class:`ViewSpec`, :class:`ValueSpec`,
  :class:`Needs` (what it needs of the faces, checked before the first paid call), :func:`load_schema`;
* its settings dataclass checked: :func:`reject`, :func:`check_number` (a whole number from a minimum, a fraction,
  ...); a command's ``-p key=value`` options:
  :func:`key_values`;
* its parts: :func:`metric_key` (MLflow-safe names), :func:`mostly_missing_warning`, :func:`fmt` (a number,
  interval or p-value in the pages' formats), console tables (:class:`Column`, :func:`fitted_tables`),
  plots (:func:`plot_png`, a drawing as PNG bytes in the report's colours, ``C0``, ``C1``, ..., kept by what it
  shows; a page's template shows them with ``{{ png | data_uri }}``),
  :func:`render_template` (a package's own page);
* a finished run: :class:`FinishedRun` (``FinishedRun.load(run_dir)``: its report, tables, config and tracker;
  ``attach`` a section into its report.json and report.html, kept by every later report of the run; ``log``
  metrics and files to its tracker run; its images are :meth:`faceedit_bench.api.images.RunImages.of_run`);
  :func:`study_csv` (a human study's answers, ``study:<id>[@<workspace>]``, as the ratings or votes CSV a command
  reads; any other path unchanged).
"""

from __future__ import annotations

from faceedit_bench.api._plugin_set import render_template
from faceedit_bench.plugin.needs import Needs
from faceedit_bench.plugin.sections import (
    ReportSection,
    SectionHtml,
    SectionRun,
    ValueSpec,
    ViewSpec,
    load_schema,
)
from faceedit_bench.report.console import Column, fitted_tables
from faceedit_bench.report.finished_run import FinishedRun
from faceedit_bench.report.plots import drawn_png as plot_png
from faceedit_bench.report.read_first import warning as mostly_missing_warning
from faceedit_bench.report.run_report import metric_key
from faceedit_bench.report.templates import fmt
from faceedit_bench.setting_checks import check_number, key_values, reject
from faceedit_bench.studies.export import study_csv

__all__ = ["Column", "FinishedRun", "Needs", "ReportSection", "SectionHtml", "SectionRun", "ValueSpec",
           "ViewSpec", "check_number", "fitted_tables", "fmt", "key_values", "load_schema",
           "metric_key", "mostly_missing_warning", "plot_png", "reject", "render_template", "study_csv"]
