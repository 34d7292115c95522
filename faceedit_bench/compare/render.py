"""A comparison written as text, Markdown or a self-contained HTML page with its plots."""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from markupsafe import Markup

from faceedit_bench.compare.across_testsets import ACROSS_LEGEND, PATTERNS_MISSING
from faceedit_bench.compare.rows import row_notes
from faceedit_bench.compare.text import compare_text, paired_line, skipped_notes
from faceedit_bench.report import plots
from faceedit_bench.report.compared_runs import CompareError
from faceedit_bench.report.forest_svg import Forest, forest_svg
from faceedit_bench.report.measures import bounds_of, label_of
from faceedit_bench.report.metric_ranks import kendall_lines
from faceedit_bench.report.templates import render

FORMATS = ("text", "markdown", "html")

BEST_LEGEND = ("best = best mean of the row (direction from the report); it does not say the difference is "
               "significant: see the paired differences")


def format_compare(result: Mapping[str, Any], fmt: str = "text") -> str:
    if fmt not in FORMATS:
        raise CompareError(f"unknown format {fmt!r}; use one of {', '.join(FORMATS)}")
    return {"text": _text, "markdown": _markdown, "html": _html}[fmt](result)


def _paired_line(m: Mapping[str, Any], measures: Mapping[str, Any] | None = None) -> str:
    return paired_line(m, measures, m["verdict"])


def _skipped_notes(result: Mapping[str, Any]) -> list[str]:
    return [*row_notes(result["rows"]), *skipped_notes(result)]


def _text(result: Mapping[str, Any]) -> str:
    return compare_text(result)


def _md(text: str) -> str:
    """Markdown-safe table cell: no HTML, no table breaks, no emphasis or links from data. Only a ``<`` that
    could open a tag or an autolink is escaped: ``p < 0.001`` and ``a -> b`` stay readable as text."""
    out = str(text).replace("\\", "\\\\")
    for ch in "|*_`[]":
        out = out.replace(ch, "\\" + ch)
    return re.sub(r"<(?=[A-Za-z/!?])", "&lt;", out).replace("\n", " ")


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
            lines += ["", f"{_md(label_of(t['metric'], result.get('measures')))} {_md(t['direction'])}", "",
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
    kendall = kendall_lines(result.get("ranks") or {})
    if kendall:
        lines += ["", "Rank agreement (Kendall's tau-b between the runs' rankings by two measures):", ""]
        lines += [f"- {_md(line)}" for line in kendall]
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
                  kendall=kendall_lines(result.get("ranks") or {}),
                  display=lambda name: label_of(name, result.get("measures")), across_legend=ACROSS_LEGEND, plots=compare_plots(result),
                  patterns_missing=PATTERNS_MISSING)


def compare_plots(result: Mapping[str, Any]) -> dict[str, Any]:
    """The comparison's plots as inline SVG: the runs' trajectories on one axis per series (FSS 0-1, SC 0-100),
    and per metric a forest plot of each run's mean and CI, one row per run named by its label (what differs
    between the runs), on the metric's whole range or an axis through 0."""
    measures = result.get("measures") or {}
    names = list(dict.fromkeys(n for run in result.get("trajectories") or [] for n in run["series"]))
    steps = {n: f"{label_of(n, measures)}_k" for n in names}
    panels = {steps[n]: {run["label"]: run["series"][n] for run in result["trajectories"]
                         if run["series"].get(n)} for n in names}
    lines = plots.trajectory_lines(panels, bounds={steps[n]: bounds_of(n, measures) for n in names}, fmt="svg")
    forests = []
    for name, rows in (result.get("summaries") or {}).items():
        m = measures.get(name) or {}
        forests.append(forest_svg(Forest(label_of(name, measures), str(m.get("unit") or ""),
                                         m.get("higher_is_better"), [""],
                                         [(row["label"], [(row.get("mean"), row.get("ci_low"), row.get("ci_high"))])
                                          for row in rows], bounds_of(name, measures))))
    return {
        "trajectories": None if lines is None else Markup(_inline_svg(lines)),
        "metrics": forests,
        "unavailable": None if plots.available() else "trajectory plots need matplotlib (pip install matplotlib)",
    }


def _inline_svg(data: bytes) -> str:
    """matplotlib's SVG without its XML prolog and doctype, to sit inside the page."""
    text = data.decode("utf-8")
    return text[text.index("<svg"):]
