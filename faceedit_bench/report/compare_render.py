"""A comparison written as text, Markdown or a self-contained HTML page with its plots."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from faceedit_bench.analysis.across_testsets import PATTERN_THRESHOLD
from faceedit_bench.report import plots
from faceedit_bench.report.compare_across_testsets import ACROSS_LEGEND, PATTERNS_MISSING
from faceedit_bench.report.compared_runs import CompareError
from faceedit_bench.report.measures import bounds_of
from faceedit_bench.report.metric_names import display_name
from faceedit_bench.report.metric_ranks import format_ranks
from faceedit_bench.report.templates import fmt_ci, fmt_p_equation, render

FORMATS = ("text", "markdown", "html")

BEST_LEGEND = ("best = best mean of the row (direction from the report); it does not say the difference is "
               "significant: see the paired differences")


def format_compare(result: Mapping[str, Any], fmt: str = "text") -> str:
    if fmt not in FORMATS:
        raise CompareError(f"unknown format {fmt!r}; use one of {', '.join(FORMATS)}")
    return {"text": _text, "markdown": _markdown, "html": _html}[fmt](result)


def _paired_line(m: Mapping[str, Any], measures: Mapping[str, Any] | None = None) -> str:
    return (f"{display_name(m['metric'], measures)}: mean difference {fmt_ci(m)} n={m['n']}, {fmt_p_equation(m['p_value'])}"
            f" -> {m['verdict']}")


def _skipped_notes(result: Mapping[str, Any]) -> list[str]:
    """Why metrics were skipped, one line per (metric, reason) with the runs it applies to."""
    runs: dict[tuple[str, str], list[str]] = {}
    for run in result["runs"]:
        for name, reason in run["skipped_metrics"].items():
            runs.setdefault((name, reason), []).append(run["label"])
    everyone = len(result["runs"])
    return [f"{display_name(name, result.get('measures'))} skipped in {'every run' if len(labels) == everyone else ', '.join(labels)}: "
            f"{reason}" for (name, reason), labels in runs.items()]


def _text(result: Mapping[str, Any]) -> str:
    labels = [r["label"] for r in result["runs"]]
    lines = [f"Comparing {len(labels)} runs"]
    lines += [f"  {r['label']}: {r['name']}  key {str(r['key'])[:12]}  {r['path']}" for r in result["runs"]]
    if result["warnings"]:
        lines += ["", "WARNING: these runs are NOT comparable on every row:"]
        lines += [f"  ! {w}" for w in result["warnings"]]
    lines += [f"note: {n}" for n in result["notes"]]
    table = [["", *labels]] + [
        [row["label"], *(c["text"] + (" *" if i in row["best"] else "") for i, c in enumerate(row["cells"]))]
        for row in result["rows"]]
    widths = [max(len(r[col]) for r in table) for col in range(len(table[0]))]
    lines.append("")
    for n, r in enumerate(table):
        lines.append("  ".join(cell.ljust(w) for cell, w in zip(r, widths)).rstrip())
        if n == 0:
            lines.append("  ".join("-" * w for w in widths))
    lines += ["", f"* {BEST_LEGEND}"]
    lines += _skipped_notes(result)
    for group in result.get("across_testsets") or []:
        lines += ["", f"All test sets: {group['title']} ({ACROSS_LEGEND}; * best Avg.)"]
        for t in group["tables"]:
            lines += ["", f"  {display_name(t['metric'], result.get('measures'))}" + (f" ({t['direction']})" if t["direction"] else "")]
            table = [["editor", *t["testsets"], "Avg."]] + [
                [row["editor"], *(c["text"] for c in row["cells"]), row["avg"]["text"] + (" *" if i in t["best"] else "")]
                for i, row in enumerate(t["rows"])]
            lines += ["  " + line for line in _aligned(table)]
        for p in group["patterns"]:
            lines += ["", f"  Frequent overediting patterns of {p['editor']}, pooled over {p['testsets']} test set(s):"]
            if p["patterns"] is None:
                lines.append(f"    {PATTERNS_MISSING}")
            lines += [f"    {x['attribute']} -> {x['category']}: {x['count']}/{x['edits']} ({100 * x['share']:.1f}%)"
                      for x in p["patterns"] or []]
            if p["patterns"] == []:
                lines.append(f"    none reaches {PATTERN_THRESHOLD:.0%}")
    lines += format_ranks(result.get("ranks"))
    lines += ["", f"Paired differences (first minus second, {result['confidence']:.0%} CI, shared included sessions):"]
    for p in result["paired"]:
        head = f"  {p['a']} - {p['b']}"
        if p["reason"]:
            lines.append(f"{head}: {p['reason']}")
            continue
        lines.append(f"{head}: {p['shared_sessions']} shared sessions ({p['only_a']} only in the first, "
                     f"{p['only_b']} only in the second)")
        lines += [f"    {_paired_line(m, result.get('measures'))}" for m in p["metrics"]]
    return "\n".join(lines)


def _aligned(table: list[list[str]]) -> list[str]:
    widths = [max(len(r[col]) for r in table) for col in range(len(table[0]))]
    lines = []
    for n, r in enumerate(table):
        lines.append("  ".join(cell.ljust(w) for cell, w in zip(r, widths)).rstrip())
        if n == 0:
            lines.append("  ".join("-" * w for w in widths))
    return lines


def _md(text: str) -> str:
    """Markdown-safe table cell: no HTML, no table breaks, no emphasis or links from data."""
    out = str(text).replace("\\", "\\\\")
    for ch in "|*_`[]":
        out = out.replace(ch, "\\" + ch)
    return out.replace("<", "&lt;").replace(">", "&gt;").replace("\n", " ")


def _markdown(result: Mapping[str, Any]) -> str:
    labels = [r["label"] for r in result["runs"]]
    lines = []
    if result["warnings"]:
        lines.append("> **WARNING: these runs are not comparable on every row:**")
        lines += [f"> - {_md(w)}" for w in result["warnings"]]
        lines.append("")
    lines += [f"- {_md(n)}" for n in result["notes"]]
    lines.append("| | " + " | ".join(_md(lab) for lab in labels) + " |")
    lines.append("|---|" + "---|" * len(labels))
    for row in result["rows"]:
        cells = [f"**{_md(c['text'])}**" if i in row["best"] else _md(c["text"]) for i, c in enumerate(row["cells"])]
        lines.append(f"| {_md(row['label'])} | " + " | ".join(cells) + " |")
    lines += ["", f"Bold: {_md(BEST_LEGEND)}."]
    lines += [f"- {_md(n)}" for n in _skipped_notes(result)]
    for group in result.get("across_testsets") or []:
        lines += ["", f"**All test sets: {_md(group['title'])}** ({_md(ACROSS_LEGEND)}; bold: best Avg.)"]
        for t in group["tables"]:
            lines += ["", f"{_md(display_name(t['metric'], result.get('measures')))} {_md(t['direction'])}", "",
                      "| editor | " + " | ".join(_md(x) for x in t["testsets"]) + " | Avg. |",
                      "|---|" + "---|" * (len(t["testsets"]) + 1)]
            for i, row in enumerate(t["rows"]):
                avg = _md(row["avg"]["text"])
                lines.append(f"| {_md(row['editor'])} | " + " | ".join(_md(c["text"]) for c in row["cells"])
                             + f" | {'**' + avg + '**' if i in t['best'] else avg} |")
        for p in group["patterns"]:
            lines += ["", f"Frequent overediting patterns of {_md(p['editor'])}, pooled over {p['testsets']} test set(s):"]
            if p["patterns"] is None:
                lines.append(f"- {_md(PATTERNS_MISSING)}")
            lines += [f"- {_md(x['attribute'])} → {_md(x['category'])}: {x['count']}/{x['edits']} "
                      f"({100 * x['share']:.1f}%)" for x in p["patterns"] or []]
    lines += ["", f"Paired differences (first minus second, {result['confidence']:.0%} CI, shared included sessions):",
              ""]
    for p in result["paired"]:
        head = f"**{_md(p['a'])} − {_md(p['b'])}**"
        if p["reason"]:
            lines.append(f"- {head}: {_md(p['reason'])}")
            continue
        lines.append(f"- {head}: {p['shared_sessions']} shared sessions")
        lines += [f"  - {_md(_paired_line(m, result.get('measures')))}" for m in p["metrics"]]
    return "\n".join(lines) + "\n"


def _html(result: Mapping[str, Any]) -> str:
    return render("compare.html.j2", result=result, legend=BEST_LEGEND, skipped=_skipped_notes(result),
                  display=lambda name: display_name(name, result.get("measures")), across_legend=ACROSS_LEGEND, plots=compare_plots(result),
                  patterns_missing=PATTERNS_MISSING)


def compare_plots(result: Mapping[str, Any]) -> dict[str, str | None]:
    """The comparison's plots as data URIs: the runs' trajectories on one axis per series (FSS 0-1, SC 0-100)
    and a forest plot of every metric (each run's mean and CI)."""
    import base64

    def uri(data: bytes | None) -> str | None:
        return None if data is None else "data:image/png;base64," + base64.b64encode(data).decode("ascii")

    measures = result.get("measures") or {}
    names = list(dict.fromkeys(n for run in result.get("trajectories") or [] for n in run["series"]))
    steps = {n: f"{display_name(n, measures)}_k" for n in names}
    panels = {steps[n]: {run["label"]: run["series"][n] for run in result["trajectories"]
                         if run["series"].get(n)} for n in names}
    summaries = result.get("summaries") or {}
    metrics = {n: display_name(n, measures) for n in summaries}
    forest_panels = {metrics[name]: [(row["label"], [("", row)]) for row in rows] for name, rows in summaries.items()}
    return {
        "trajectories": uri(plots.trajectory_lines(panels, bounds={steps[n]: bounds_of(n, measures) for n in names})),
        "metrics": uri(plots.forest(forest_panels, bounds={metrics[n]: bounds_of(n, measures) for n in summaries},
                                    xlabels={metrics[n]: f"{metrics[n]}: each run's mean and CI" for n in summaries})),
        "unavailable": None if plots.available() else "plots need matplotlib (pip install matplotlib)",
    }
