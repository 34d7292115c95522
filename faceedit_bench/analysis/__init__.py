"""Aggregating scores: from session results to the report's statistics.

* ``session_metrics``: a session's metrics from its steps; ``compact``: their compact storage;
  ``aggregate``: the aggregator (per test set, per group); ``cached``: statistics kept by their inputs' hash;
  ``free_memory``: memory handed back after the report stage.
* ``statistics``: summary statistics and intervals; ``rates``: threshold rates; ``baselines``: the reference
  editors that tables show but never rank.
* Groups: ``disparity`` (two groups) and ``permutation`` (its machinery), ``group_tests`` (more than two),
  ``intersections``, ``group_report`` (for the run report), ``samples`` (their shared input checks).
* Conditions and people: ``condition_results`` (results per prompt condition), ``paired`` (paired comparisons),
  ``reliability`` (inter-rater reliability), ``metric_agreement`` (a metric's agreement with people),
  ``identity_jackknife`` (delete-one-identity intervals of agreement statistics).
* ``multiplicity``: the run's family of disparity contrasts, Holm and Benjamini-Hochberg, three-way flags;
  ``section_collectors``: the report sections' collectors of a run.
* ``published``: published numbers beside recomputed ones (``faceedit-bench reproduce``).
* ``across_testsets``: editors across test sets.
"""
