"""The all-test-sets tables of a comparison: per shared measurement, each editor's mean on every test set,
the Avg. over them (paper (a)'s Tables 1, 2, 4) and the pooled overediting patterns."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from faceedit_bench.analysis.across_testsets import across_testsets, pooled_patterns
from faceedit_bench.compare.rows import best_columns, cell, direction_text
from faceedit_bench.report.comparability import comparability_aspects, describe_aspect
from faceedit_bench.report.compared_runs import editor_label, run_limits
from faceedit_bench.report.templates import fmt_num


def across_testset_tables(reports: Sequence[Mapping[str, Any]],
                          configs: Sequence[Mapping[str, Any] | None] | None = None) -> list[dict[str, Any]]:
    """Per measurement that several test sets share (dataset, embedder, judge, limits): per metric, each editor's
    mean on every test set and the Avg. over them (see :mod:`faceedit_bench.analysis.across_testsets`)."""
    groups: dict[Any, list[Mapping[str, Any]]] = {}
    for r, config in zip(reports, configs if configs is not None else [None] * len(reports)):
        aspects = comparability_aspects(r)
        key = (*(repr(aspects[a][1]) for a in ("dataset", "embedder", "judge")), run_limits(config))
        groups.setdefault(key, []).append(r)
    out = []
    for members in groups.values():
        testsets = {f"{(r.get('testset') or {}).get('name')} {(r.get('testset') or {}).get('version')}" for r in members}
        if len(testsets) < 2:
            continue
        first = members[0]
        names = list(dict.fromkeys(n for r in members for n in r.get("metrics") or {}))
        tables = []
        for name in names:
            order, rows = across_testsets(
                (editor_label(r), ((r.get("components") or {}).get("editor") or {}).get("name", ""),
                 f"{(r.get('testset') or {}).get('name')} {(r.get('testset') or {}).get('version')}",
                 (r.get("metrics") or {}).get(name), (r.get("run") or {}).get("key", "")[:12]) for r in members)
            order = sorted(order)
            hib = {m["metrics"][name].get("higher_is_better") for m in members if name in (m.get("metrics") or {})}
            direction = hib.pop() if len(hib) == 1 else None
            table_rows = [{"editor": row.editor + (" (reference: no edit)" if row.reference else ""),
                           "reference": row.reference,
                           "cells": [cell((row.cells.get(t) or {}).get("mean"),
                                           fmt_num((row.cells.get(t) or {}).get("mean")) if t in row.cells
                                           else "no run") for t in order],
                           "avg": cell(row.average(order), fmt_num(row.average(order)) if row.average(order) is not None
                                        else f"n/a ({row.covered(order)} of {len(order)} test sets)")}
                          for row in rows]
            avgs = [row["avg"] for row in table_rows]
            best = best_columns(avgs, direction, {i for i, row in enumerate(table_rows) if row["reference"]})
            tables.append({"metric": name, "testsets": order, "rows": table_rows, "best": best,
                           "direction": direction_text(direction)})
        comps = first.get("components") or {}
        judge = comps.get("judge")
        patterns = []
        if judge:  # Table 3 over the test sets: every per-attribute count summed, then the threshold
            editors: dict[str, list[Mapping[str, Any]]] = {}
            for r in members:
                editors.setdefault(editor_label(r), []).append(r)
            patterns = [{"editor": editor, "testsets": len(runs), "patterns": pooled_patterns(
                (r.get("overediting") or {}).get("attribute_changes") for r in runs)} for editor, runs in editors.items()]
        out.append({"title": f"{(comps.get('dataset') or {}).get('name')} · {describe_aspect('embedder', first)} · "
                             f"{'judge ' + str(judge.get('name')) if judge else 'no judge'}", "tables": tables,
                    "patterns": patterns})
    return out


PATTERNS_MISSING = "not available: a run's report has no per-attribute overedit counts (before report 1.2); rerun it"
ACROSS_LEGEND = ("Avg. = unweighted mean of the test-set means (paper (a), Tables 1, 2, 4), only when an editor was "
                 "run on every test set of the table; no interval")
