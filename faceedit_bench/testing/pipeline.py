"""Pieces of the run and report pipeline that a protocol package's tests build by hand or check against their
own data (served by :mod:`faceedit_bench.testing`):

* a collector's inputs without a run: :class:`StepState` (one step's outcome and stored images),
  :class:`JudgedSession` (a session's judge-metric judgments), and a judge panel's answer,
  :class:`PanelRule` with :func:`combine_panel`;
* a judge service on a workspace of the test's own: :class:`Executors`, :class:`Ledger`, :class:`ImageStore`
  (with :class:`~faceedit_bench.testing.JudgeService`);
* the run's rules a protocol's presets and test sets lean on: :class:`InputResolver` (a step's input faces),
  :func:`find_published` (a registered published sample), :func:`check_conditions`, :func:`build_conditions`
  and :func:`join_condition` (prompt conditions), :class:`TestSetError` (a bad test set);
* the comparisons and the leaderboard: :func:`worst_groups`, :func:`pairwise_accuracy`,
  :func:`system_agreement`, :func:`metric_ranks` and :func:`kendall_lines` (``faceedit-bench compare``),
  :func:`submit_run`, :func:`collect_submissions` and :func:`build_views` (``faceedit-bench leaderboard``).

They follow the core and are for tests, not for a plugin's own code (which imports :mod:`faceedit_bench.api`).
"""

from __future__ import annotations

from faceedit_bench.analysis.group_tests import worst_groups
from faceedit_bench.analysis.metric_agreement import pairwise_accuracy, system_agreement
from faceedit_bench.execution.calls import Executors
from faceedit_bench.leaderboard.entries import collect_submissions
from faceedit_bench.leaderboard.submit import submit as submit_run
from faceedit_bench.leaderboard.views import build_views
from faceedit_bench.records import StepState
from faceedit_bench.report.metric_ranks import kendall_lines, metric_ranks
from faceedit_bench.run.condition_prompts import build_conditions
from faceedit_bench.run.condition_prompts import join as join_condition
from faceedit_bench.run.inputs import InputResolver
from faceedit_bench.run.sampling import find_published
from faceedit_bench.scoring.judge.metrics import JudgedSession
from faceedit_bench.scoring.judge.panel import PanelRule
from faceedit_bench.scoring.judge.panel import combine as combine_panel
from faceedit_bench.setting_checks import check_conditions
from faceedit_bench.storage.ledger import Ledger
from faceedit_bench.storage.store import ImageStore
from faceedit_bench.testsets import TestSetError

__all__ = ["Executors", "ImageStore", "InputResolver", "JudgedSession", "Ledger", "PanelRule", "StepState",
           "TestSetError", "build_conditions", "build_views", "check_conditions", "collect_submissions",
           "combine_panel", "find_published", "join_condition", "kendall_lines", "metric_ranks",
           "pairwise_accuracy", "submit_run", "system_agreement", "worst_groups"]
