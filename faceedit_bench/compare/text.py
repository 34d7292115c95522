"""``faceedit-bench compare`` in the terminal: fitted to its width (:mod:`faceedit_bench.report.console`).

Runs are columns named by a letter (A, B, ...), and a legend at the top says what each letter measured
(editor, version, judge, limits: what differs between the runs). A table with more runs than the width
holds is split into parts that repeat the row names; every value with its interval stays on one line.
"""

from __future__ import annotations

import string
from collections.abc import Mapping, Sequence
from typing import Any

from rich.padding import Padding
from rich.text import Text

from faceedit_bench.analysis.across_testsets import PATTERN_THRESHOLD
from faceedit_bench.compare.across_testsets import ACROSS_LEGEND, PATTERNS_MISSING
from faceedit_bench.compare.rows import row_notes
from faceedit_bench.report.console import Column, console_width, fitted_tables, render
from faceedit_bench.report.measures import label_of
from faceedit_bench.report.metric_ranks import kendall_lines, rank_text
from faceedit_bench.report.templates import fmt_ci, fmt_p_equation

#: Row names wrap at this width, so the run columns keep the room.
ROW_NAME_WIDTH = 34
#: The most frequent overediting patterns the terminal shows per editor (the other formats show all).
TOP_PATTERNS = 10


def letters(n: int) -> list[str]:
    """A, B, ... Z, AA, AB, ...: short column names for ``n`` runs."""
    out = []
    for i in range(n):
        name, i = "", i + 1
        while i:
            i, r = divmod(i - 1, 26)
            name = string.ascii_uppercase[r] + name
        out.append(name)
    return out


def paired_line(m: Mapping[str, Any], measures: Mapping[str, Any] | None, verdict: str) -> str:
    return (f"{label_of(m['metric'], measures)}: mean difference {fmt_ci(m)} n={m['n']}, "
            f"{fmt_p_equation(m['p_value'])}; {verdict}")


def _indented(text: str, indent: int = 2) -> Padding:
    return Padding(Text(text), (0, 0, 0, indent))  # a wrapped line keeps the indentation


def _runs(result: Mapping[str, Any], names: Sequence[str]) -> list[Any]:
    parts: list[Any] = [Text(f"Comparing {len(names)} runs")]
    for name, run in zip(names, result["runs"]):
        parts.append(_indented(f"{name}  {run['label']}"))
        parts.append(_indented(f"run {run['name']}, key {str(run['key'])[:12]}", 5))
        parts.append(Text("     " + run["path"], no_wrap=True, overflow="ignore"))  # a path to copy: never wrapped
    return parts


def _main_table(result: Mapping[str, Any], names: Sequence[str], width: int) -> list[Any]:
    rows = [[row["label"], *(c["text"] + (" *" if i in row["best"] else "") for i, c in enumerate(row["cells"]))]
            for row in result["rows"]]
    legend = ["* best mean of the row (direction from the report); it does not say the difference is "
              "significant: see the paired differences", *row_notes(result["rows"])]
    return fitted_tables([Column("", wrap=ROW_NAME_WIDTH)], [Column(n, True) for n in names], rows, width,
                         legend="\n".join(legend))


def _across(result: Mapping[str, Any], width: int) -> list[Any]:
    parts: list[Any] = []
    measures = result.get("measures")
    for group in result.get("across_testsets") or []:
        parts += [Text(""), Text(f"All test sets: {group['title']} ({ACROSS_LEGEND}; * best Avg.)")]
        for t in group["tables"]:
            title = label_of(t["metric"], measures) + (f" ({t['direction']})" if t["direction"] else "")
            rows = [[row["editor"], *(c["text"] for c in row["cells"]),
                     row["avg"]["text"] + (" *" if i in t["best"] else "")] for i, row in enumerate(t["rows"])]
            parts += [Text(""), *fitted_tables([Column("editor", wrap=ROW_NAME_WIDTH)],
                                               [*(Column(x, True) for x in t["testsets"]), Column("Avg.", True)],
                                               rows, width, title=title)]
        for p in group["patterns"]:
            parts += [Text(""), Text(f"Frequent overediting patterns of {p['editor']}, pooled over {p['testsets']} "
                                     "test set(s):")]
            if p["patterns"] is None:
                parts.append(_indented(PATTERNS_MISSING))
            shown = (p["patterns"] or [])[:TOP_PATTERNS]
            parts += [_indented(f"{x['attribute']} -> {x['category']}: {x['count']}/{x['edits']} "
                                f"({100 * x['share']:.1f}%)") for x in shown]
            if len(p["patterns"] or []) > len(shown):
                more = len(p["patterns"]) - len(shown)
                parts.append(_indented(f"... and {more} more (all of them: --format markdown, --html or --json)"))
            if p["patterns"] == []:
                parts.append(_indented(f"none reaches {PATTERN_THRESHOLD:.0%}"))
    return parts


def _ranks(result: Mapping[str, Any], by_label: Mapping[str, str], width: int) -> list[Any]:
    ranks = result.get("ranks")
    if not ranks:
        return []
    metrics = list(ranks["metrics"])
    rows = [[by_label.get(s, s), *(rank_text(ranks["metrics"][n].get(s)) for n in metrics)] for s in ranks["systems"]]
    parts: list[Any] = [Text(""), *fitted_tables([Column("run")], [Column(n, True) for n in metrics], rows, width,
                                                 title="Ranks of the runs per metric (1 = best; the metric's own "
                                                       "direction; the mean in brackets)")]
    return parts + [_indented(line) for line in kendall_lines(ranks)]


def _paired(result: Mapping[str, Any], by_label: Mapping[str, str]) -> list[Any]:
    parts: list[Any] = [Text(""), Text(f"Paired differences (first minus second, {result['confidence']:.0%} CI, "
                                       "shared included sessions):")]
    for p in result["paired"]:
        a, b = by_label.get(p["a"], p["a"]), by_label.get(p["b"], p["b"])
        if p["reason"]:
            parts.append(_indented(f"{a} - {b}: {p['reason']}"))
            continue
        parts.append(_indented(f"{a} - {b}: {p['shared_sessions']} shared sessions ({p['only_a']} only in {a}, "
                               f"{p['only_b']} only in {b})"))
        for m in p["metrics"]:
            better = {"a": a, "b": b}.get(m.get("better") or "")
            verdict = f"{better} better (CI excludes 0)" if better else m["verdict"]
            parts.append(_indented(paired_line(m, result.get("measures"), verdict), 4))
    return parts


def compare_text(result: Mapping[str, Any], width: int | None = None) -> str:
    width = width or console_width()
    names = letters(len(result["runs"]))
    by_label = {run["label"]: name for name, run in zip(names, result["runs"])}
    parts = _runs(result, names)
    if result["warnings"]:
        parts += [Text(""), Text("WARNING: these runs are NOT comparable on every row:")]
        parts += [_indented(f"! {w}") for w in result["warnings"]]
    parts += [Text(f"note: {n}") for n in result["notes"]]
    parts += [Text(""), *_main_table(result, names, width)]
    parts += [Text(line) for line in skipped_notes(result, by_label)]
    parts += _across(result, width) + _ranks(result, by_label, width) + _paired(result, by_label)
    return render(parts, width)


def skipped_notes(result: Mapping[str, Any], names: Mapping[str, str] | None = None) -> list[str]:
    """Why metrics were skipped, one line per (metric, reason) with the runs it applies to (by ``names``)."""
    runs: dict[tuple[str, str], list[str]] = {}
    for run in result["runs"]:
        for name, reason in run["skipped_metrics"].items():
            runs.setdefault((name, reason), []).append((names or {}).get(run["label"], run["label"]))
    everyone = len(result["runs"])
    return [f"{label_of(name, result.get('measures'))} skipped in "
            f"{'every run' if len(labels) == everyone else ', '.join(labels)}: {reason}"
            for (name, reason), labels in runs.items()]
