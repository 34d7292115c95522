"""The public API, topic **statistics**: the tests and intervals the core's own tables use (docs/statistics.md
says which library computes each), a session metric, and reproductions of published numbers.

* summaries: :func:`summarize` (mean and interval, bounds- and cluster-aware), :class:`Threshold` (its
  ``rate``: the share of values meeting it, with a Wilson interval; ``rate_direction``: whether a higher rate is
  better);
* comparisons: :func:`paired_tests` (paired conditions, Wilcoxon + Holm across the family),
  :func:`compare_k_groups` (Kruskal-Wallis, max - min with a bootstrap CI; with ``focus``, that
  group against the rest pooled, Mann-Whitney U);
* agreement: :func:`reliability` (one ratings table's Fleiss' kappa or Krippendorff's alpha, the coefficient
  named), :func:`metric_agreement`, :func:`rank_table`;
* :func:`cached_statistic`: a pure, seeded statistic kept in the ledger during the report stage, by the hash of
  its arguments, so a killed report resumes and an unchanged one is read back;
* :class:`SessionMetric`: a number per session from the FSS and judge values (``faceedit_register_metrics``);
* :class:`Reproduction` (``faceedit_register_reproductions``): recomputed numbers beside the published ones (or a
  user's ``--expect`` CSV, checked before any work), the table, its JSON and the exit code.
"""

from __future__ import annotations

from faceedit_bench.analysis.cached import cached_statistic
from faceedit_bench.analysis.group_tests import compare_k_groups
from faceedit_bench.analysis.metric_agreement import metric_agreement, rank_table
from faceedit_bench.analysis.paired import paired_tests
from faceedit_bench.analysis.published import Reproduction
from faceedit_bench.analysis.rates import Threshold
from faceedit_bench.analysis.reliability import reliability
from faceedit_bench.analysis.session_metrics import SessionMetric
from faceedit_bench.analysis.statistics import summarize

__all__ = ["Reproduction", "SessionMetric", "Threshold", "cached_statistic", "compare_k_groups",
           "metric_agreement", "paired_tests", "rank_table", "reliability", "summarize"]
