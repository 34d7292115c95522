"""The public API, topic **statistics**: the tests and intervals the core's own tables use (docs/statistics.md
says which library computes each), a session metric, and reproductions of published numbers.

* summaries: :func:`summarize` (mean and interval, bounds- and cluster-aware), :class:`Threshold` (its
  ``rate``: the share of values meeting it, with a Wilson interval; ``rate_direction``: whether a higher rate is
  better);
* comparisons: :func:`paired_comparison` and :func:`paired_family` (Wilcoxon + Holm), :func:`compare_k_groups`
  (Kruskal-Wallis, max - min with a bootstrap CI), :func:`kruskal_wallis` alone, :func:`one_vs_rest`
  (Mann-Whitney U);
* agreement: :func:`fleiss_kappa`, :func:`krippendorff_alpha`, :func:`metric_agreement`, :func:`rank_table`;
* :func:`cached_statistic`: a pure, seeded statistic kept in the ledger during the report stage, by the hash of
  its arguments, so a killed report resumes and an unchanged one is read back;
* :class:`SessionMetric`: a number per session from the FSS and judge values (``faceedit_register_metrics``);
* reproductions (``faceedit_register_reproductions``): :class:`PublishedNumber` (published value, ours,
  tolerance), :func:`read_expect` (a user's ``name,value`` CSV, checked before any work) and :func:`report_reproduction`
  (the table, compared with the published or the user's values, its JSON and the exit code).
"""

from __future__ import annotations

from faceedit_bench.analysis.cached import cached_statistic
from faceedit_bench.analysis.group_tests import compare_k_groups, kruskal_wallis, one_vs_rest
from faceedit_bench.analysis.metric_agreement import metric_agreement, rank_table
from faceedit_bench.analysis.paired import paired_comparison, paired_family
from faceedit_bench.analysis.published import Number as PublishedNumber
from faceedit_bench.analysis.published import read_expect
from faceedit_bench.analysis.published import report as report_reproduction
from faceedit_bench.analysis.rates import Threshold
from faceedit_bench.analysis.reliability import fleiss_kappa, krippendorff_alpha
from faceedit_bench.analysis.session_metrics import SessionMetric
from faceedit_bench.analysis.statistics import summarize

__all__ = ["PublishedNumber", "SessionMetric", "Threshold", "cached_statistic",
           "compare_k_groups", "fleiss_kappa", "krippendorff_alpha", "kruskal_wallis", "metric_agreement",
           "one_vs_rest", "paired_comparison", "paired_family", "rank_table", "read_expect",
           "report_reproduction", "summarize"]
