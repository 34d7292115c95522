"""The console summary printed at the end of a run: aligned tables (rich), rendered as plain text."""

from __future__ import annotations

import io
import shutil
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from rich import box
from rich.console import Console, Group
from rich.table import Table
from rich.text import Text

from faceedit_bench.report.audit_console import audit_table
from faceedit_bench.report.conditions_view import composition
from faceedit_bench.report.measures import bounds_of, label_of, report_measures
from faceedit_bench.report.read_first import warning_lines
from faceedit_bench.report.winobias_view import winobias_lines


def fmt_p(p: float | None) -> str:
    if p is None:
        return "n/a"
    return "< 0.001" if p < 0.001 else f"{p:.3f}"


def _ci(m: Mapping[str, Any], digits: int = 3) -> tuple[str, str]:
    """(mean, "[low, high]") of a summary; n/a when undefined."""
    if m.get("mean") is None:
        return "n/a", ""
    mean = f"{m['mean']:.{digits}f}"
    return mean, (f"[{m['ci_low']:.{digits}f}, {m['ci_high']:.{digits}f}]" if m.get("ci_low") is not None else "")


def counts(mapping: Mapping[str, Any], empty: str = "none") -> str:
    """``ok 58, refused 2`` for ``{"ok": 58, "refused": 2}``."""
    return ", ".join(f"{k} {v}" for k, v in mapping.items()) if mapping else empty


def _table(*columns: str, right: tuple[str, ...] = ()) -> Table:
    table = Table(box=box.SIMPLE_HEAD, pad_edge=False, show_edge=False)
    for c in columns:
        table.add_column(c, justify="right" if c in right else "left")
    return table


def _metrics(report: dict[str, Any]) -> Table:
    table = _table("metric", "n", "mean", "95% CI", "unit", "direction", right=("n", "mean"))
    for name, m in report["metrics"].items():  # by name: what metrics=[...] and rank_by are given
        mean, ci = _ci(m)
        table.add_row(name, str(m["n"]), mean, ci, m.get("unit") or "",
                      {True: "higher is better", False: "lower is better"}.get(m["higher_is_better"], "neither"))
    return table


def _trajectories(report: dict[str, Any]) -> Table:
    table = _table("trajectory", *(f"k={p['k']}" for p in report["trajectory"]["fss"]),
                   right=tuple(f"k={p['k']}" for p in report["trajectory"]["fss"]))
    width = len(report["trajectory"]["fss"])
    measures = report_measures(report)
    for series, points in report["trajectory"].items():
        bounds = bounds_of(series, measures)
        digits = 1 if bounds is not None and bounds[1] - bounds[0] >= 10 else 3  # x100 scales: one decimal
        cells = {p["k"]: _ci(p, digits)[0] for p in points}
        table.add_row(f"{label_of(series, measures)}_k mean",
                      *(cells.get(p["k"], "") for p in report["trajectory"]["fss"]))
    for key, labels in report["groups"].items():
        for label, g in labels.items():
            points = (g.get("trajectory") or {}).get("fss")
            if points:
                table.add_row(f"  FSS_k {key}={label}", *(_ci(p)[0] for p in points[:width]))
    return table


def _groups(report: dict[str, Any]) -> Table | None:
    names = list(report["metrics"])
    rows = [(key, label, g) for key, labels in report["groups"].items() for label, g in labels.items()]
    if not rows:
        return None
    table = _table("group", "included", "excluded", *names, right=("included", "excluded"))
    for key, label, g in rows:
        cells = [" ".join(x for x in _ci(g["metrics"][n]) if x) if n in g["metrics"] else "n/a" for n in names]
        table.add_row(f"{key}={label}", str(g["sessions_included"]), str(sum(g["sessions_excluded"].values())),
                      *cells)
    return table


def _disparity(report: dict[str, Any]) -> Table | None:
    rows = [r for r in report.get("disparity", []) if r.get("wd") is not None]
    if not rows:
        return None
    table = _table("disparity", "WD", "p", "worst group", "bias", right=("WD", "p"))
    for r in rows:
        table.add_row(f"{r['metric']} by {r['contrast']}", f"{r['wd']:.2f}", fmt_p(r.get("p_value")),
                      r.get("worst_group") or "-", "BIAS" if r.get("bias") else "no")
    return table


def _conditions(report: dict[str, Any]) -> Table | None:
    """Each condition paired with the reference, overall: Δ per metric with its CI, p and Holm's p."""
    comparisons = (report.get("conditions") or {}).get("comparisons") or {}
    if not comparisons:
        return None
    table = _table("condition - reference", "metric", "pairs", "dropped", "mean Δ", "95% CI", "p", "p Holm",
                   right=("pairs", "dropped", "mean Δ", "p", "p Holm"))
    for name, comparison in comparisons.items():
        for metric, t in (comparison.get("overall") or {}).get("metrics", {}).items():
            mean, ci = _ci({"mean": t.get("mean_delta"), "ci_low": t.get("ci_low"), "ci_high": t.get("ci_high")})
            table.add_row(f"{name} - {comparison.get('vs')}", metric, str(t["n_pairs"]), str(t["dropped"]), mean, ci,
                          fmt_p(t.get("p_value")), fmt_p(t.get("p_holm")) + (" *" if t.get("reject_holm") else ""))
    specs = (report.get("conditions") or {}).get("conditions") or {}
    told = [f"{name}: {how}" for name in comparisons if (how := composition(specs.get(name) or {}))]
    if told:
        table.caption, table.caption_justify = "\n".join(told), "left"
    return table


def _calls(report: dict[str, Any]) -> Table | None:
    calls = report.get("calls") or {}
    if not calls:
        return None
    table = _table("calls", "calls", "attempts", "retries", "gave up", "besides",
                   right=("calls", "attempts"))
    for provider, c in calls.items():
        table.add_row(provider, str(c["calls"]), str(c["attempts"]), counts(c["retries"]), counts(c["gave_up"]),
                      counts(c.get("other_requests") or {}, empty=""))
    return table


def cost_line(report: dict[str, Any]) -> str:
    """Each paid component's estimated cost, ``free`` for those that cost nothing per call."""
    cost = report.get("cost") or {}
    if not cost:
        return ""
    free, parts = set(cost.get("free") or ()), []
    components = report.get("components") or {}
    for kind in ("editor", "judge"):
        if kind not in (cost.get("by_component") or {}) and kind not in free:
            continue
        name = (components.get(kind) or {}).get("name", kind)
        usd = (cost.get("by_component") or {}).get(kind)
        if kind in free:
            parts.append(f"{kind} {name} free")
        elif usd is None:
            parts.append(f"{kind} {name} unknown (no price table)")
        else:
            parts.append(f"{kind} {name} {usd:.4f} USD")
    line = "Cost: " + "; ".join(parts)
    if cost.get("estimated_usd") is not None:
        line += f" (estimated total {cost['estimated_usd']:.4f} USD, {cost['new_usd']:.4f} USD new in this run)"
    return line


def _skipped(report: dict[str, Any]) -> list[str]:
    """``skipped oer, sc: <reason>`` once per reason."""
    by_reason: dict[str, list[str]] = {}
    for name, why in report.get("skipped_metrics", {}).items():
        by_reason.setdefault(why, []).append(name)
    return [f"Skipped {', '.join(names)}: {why}" for why, names in by_reason.items()]


def summary_renderables(report: dict[str, Any], output_dir: Path) -> list[Any]:
    run, testset, c = report["run"], report["testset"], report["counts"]
    s = c["sessions"]
    head = [
        f"Run {run['name']}  (key {run['key'][:12]}, {run['wall_time_s']:.1f} s)",
        f"Test set {testset['name']} v{testset['version']} ({testset['content_hash'][:12]}"
        + ("; reconstruction)" if testset.get("reconstruction") else ")"),
        f"Faces: {c['faces']['seen']} seen; excluded: {counts(c['faces']['excluded'])}",
        f"Sessions: {s['planned']} planned, {s['included']} included; excluded: {counts(s['excluded'])}",
        f"Steps: {counts(c['steps'])}; edited images without a face: {c['edited_images_without_face']}",
    ]
    parts: list[Any] = [Text("\n".join(["", *warning_lines(report), *head]))]  # mostly missing: said first
    if reference := (report.get("conditions") or {}).get("reference"):
        parts.append(Text(f"Prompt conditions: {', '.join(report['conditions']['order'])}; the tables describe "
                          f"{reference}, except the paired deltas"))
    for table in (_metrics(report), _trajectories(report), _groups(report), _disparity(report),
                  _conditions(report), audit_table(report)):
        if table is not None:
            parts += [Text(""), table]
    tail: list[str] = []
    if judge := c.get("judge"):
        tail += [f"Judge answers {template}: {counts(outcomes)}" for template, outcomes in judge.items()]
    if panel := report.get("judge_panel"):
        rule = panel.get("rule", {})
        tail.append(f"Judge panel {rule.get('rule')} (primary {rule.get('primary')}): "
                    + "; ".join(f"{t} {counts(by_outcome)}" for t, by_outcome in panel["status"].items()) + "; "
                    f"{panel['flagged_items']} answer(s) flagged for review")
        tail += [f"  member {member}: {counts(outcomes)}"
                 for member, outcomes in (c.get("judge_members") or {}).items()]
    if reliability := report.get("judge_reliability"):
        tail.append(f"Judge anchors: {reliability['passed']} passed, {reliability['failed']} failed"
                    + ("; DRIFT since the last check: " + ", ".join(f"{d['name']} {d['field']}"
                                                                     for d in reliability["drift"])
                       if reliability.get("drift") else ""))
    if line := cost_line(report):
        tail.append(line)
    tail += winobias_lines(report.get("winobias"))
    if calls := _calls(report):
        parts += [Text(""), calls]
    if not run.get("complete", True):
        tail.append(f"STOPPED: {run.get('stopped')}")
    tail.append(f"FSS scale: {report['scales']['fss']}")  # said once: it applies to every FSS number above
    tail += _skipped(report)
    # a dataset's own notes (e.g. empty cells of a portrait grid) qualify every number above
    dataset = ((report.get("components") or {}).get("dataset") or {}).get("description") or {}
    tail += [f"NOTE ({dataset.get('name')}): {n}" for n in dataset.get("notes") or []]
    parts += [Text(""), Text("\n".join(tail))]
    return parts


def format_summary(report: dict[str, Any], output_dir: Path, width: int | None = None) -> str:
    """The summary as plain text (for the console and the job log), at the terminal's width."""
    buffer = io.StringIO()
    width = width or max(100, shutil.get_terminal_size((120, 24)).columns)
    console = Console(file=buffer, width=width, no_color=True, highlight=False, emoji=False, markup=False)
    console.print(Group(*summary_renderables(report, output_dir)))
    # The run folder is a path to copy: printed as it is, never wrapped to the terminal's width.
    return buffer.getvalue().rstrip("\n") + f"\nArtifacts: {output_dir}"
