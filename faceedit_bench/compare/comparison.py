"""``faceedit-bench compare``: several runs side by side, with what makes them incomparable stated loudly,
and paired differences on the (face, session) units two runs share ("is editor A better than B?").

The best value of a row follows the report's own ``higher_is_better``; it marks the best *mean*, not a
significant difference: the paired comparison (or overlapping intervals) says whether it is one.
"""

from __future__ import annotations

from collections.abc import Sequence
from itertools import combinations
from pathlib import Path
from typing import Any

from faceedit_bench.compare.across_testsets import across_testset_tables
from faceedit_bench.compare.rows import best_columns, cost_rows, fairness_rows, metric_rows, outcome_rows
from faceedit_bench.compare.section_ranks import rankable, ranking_rows, ranking_warnings, section_rankings
from faceedit_bench.report.comparability import comparability_warnings
from faceedit_bench.report.compared_runs import CompareError, is_reference_run, load_run, run_config, run_labels
from faceedit_bench.report.measures import merged_measures
from faceedit_bench.report.metric_ranks import metric_ranks
from faceedit_bench.report.paired_differences import paired_comparisons


def compare_runs(paths: Sequence[Path], *, confidence: float = 0.95) -> dict[str, Any]:
    """Side-by-side rows, comparability warnings and paired differences of two or more runs (JSON-safe)."""
    if len(paths) < 2:
        raise CompareError(f"compare needs at least two runs, got {len(paths)}: "
                           "faceedit-bench compare <run_dir> <run_dir> [...]")
    loaded = [load_run(p) for p in paths]
    reports, run_dirs = [r for r, _ in loaded], [d for _, d in loaded]
    configs = [run_config(d) for d in run_dirs]
    labels = run_labels(reports, configs)
    runs = [{"label": lab, "path": str(d), "name": (r.get("run") or {}).get("name"),
             "key": (r.get("run") or {}).get("key"), "created_at": (r.get("run") or {}).get("created_at"),
             "skipped_metrics": dict(r.get("skipped_metrics") or {}), "reference": is_reference_run(r)}
            for lab, r, d in zip(labels, reports, run_dirs)]
    references = {i for i, r in enumerate(reports) if is_reference_run(r)}
    rankings = section_rankings(reports, labels)
    rows = metric_rows(reports) + outcome_rows(reports) + fairness_rows(reports) + cost_rows(reports)
    for row in rows:
        row["best"] = best_columns(row["cells"], row["higher_is_better"], references)
    after_metrics = sum(row["section"] == "metrics" for row in rows)
    rows[after_metrics:after_metrics] = ranking_rows(rankings)  # a section's ranking beside the metrics
    keys = [r["key"] for r in runs]
    notes = [f"{runs[i]['label']} and {runs[j]['label']} have the same run key (the same experiment)"
             for i, j in combinations(range(len(runs)), 2) if keys[i] and keys[i] == keys[j]]
    return {
        "runs": runs,
        "warnings": comparability_warnings(reports, labels) + ranking_warnings(rankings),
        "notes": notes,
        "rows": rows,
        "paired": paired_comparisons(reports, run_dirs, labels, confidence=confidence),
        "across_testsets": across_testset_tables(reports, configs),
        "trajectories": [{"label": lab, "reference": is_reference_run(r), "series": dict(r.get("trajectory") or {})}
                         for lab, r in zip(labels, reports)],
        # the run's label last: a metric summary carries a "label" of its own (Drop_FSS) that must not win
        "summaries": {name: [{**dict((r.get("metrics") or {}).get(name) or {}), "label": lab}
                             for lab, r in zip(labels, reports) if name in (r.get("metrics") or {})]
                      for name in dict.fromkeys(n for r in reports for n in r.get("metrics") or {})},
        "measures": merged_measures(reports),
        "ranks": metric_ranks(reports, labels, rankable(rankings)),
        "confidence": confidence,
    }
