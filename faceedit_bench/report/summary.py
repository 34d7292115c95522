"""The console summary printed at the end of a run: what was run, the tables (fitted to the terminal's
width: :mod:`faceedit_bench.report.summary_tables`), each report section's own lines, then the notes that
qualify them, as plain text."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from rich.text import Text

from faceedit_bench.plugin.manager import sections_in_use
from faceedit_bench.plugin.sections import ReportSection
from faceedit_bench.records import version_text
from faceedit_bench.report.console import console_width, render
from faceedit_bench.report.measures import fss_measured
from faceedit_bench.report.part_views import cost_of
from faceedit_bench.report.preliminary import identities, preliminary_note
from faceedit_bench.report.read_first import warning_lines
from faceedit_bench.report.summary_tables import counts, fmt_p, summary_tables  # noqa: F401


def cost_line(report: dict[str, Any]) -> str:
    """Each paid component's estimated cost, ``free`` for those that cost nothing per call."""
    if not report.get("cost"):
        return ""
    cost = cost_of(report)
    free, by_component, parts = set(cost.free or ()), cost.by_component or {}, []
    components = report.get("components") or {}
    for kind in ("editor", "judge"):
        if kind not in by_component and kind not in free:
            continue
        name = (components.get(kind) or {}).get("name", kind)
        usd = by_component.get(kind)
        if kind in free:
            parts.append(f"{kind} {name} free")
        elif usd is None:
            parts.append(f"{kind} {name} unknown (no price table)")
        else:
            parts.append(f"{kind} {name} {usd:.4f} USD")
    line = "Cost: " + "; ".join(parts)
    if cost.estimated_usd is not None:
        line += f" (estimated total {cost.estimated_usd:.4f} USD, {cost.new_usd:.4f} USD new in this run)"
    return line


def _skipped(report: dict[str, Any]) -> list[str]:
    """``skipped oer, sc: <reason>`` once per reason."""
    by_reason: dict[str, list[str]] = {}
    for name, why in report.get("skipped_metrics", {}).items():
        by_reason.setdefault(why, []).append(name)
    return [f"Skipped {', '.join(names)}: {why}" for why, names in by_reason.items()]


def _head(report: dict[str, Any]) -> list[str]:
    run, testset, c = report["run"], report["testset"], report["counts"]
    s = c["sessions"]
    return [
        f"Run {run['name']}  (key {run['key'][:12]}, {run['wall_time_s']:.1f} s"
        + (f"; re-reported in {run['re_reported']['wall_time_s']:.1f} s)" if run.get("re_reported") else ")"),
        f"Test set {testset['name']} {version_text(testset['version'])} ({testset['content_hash'][:12]}"
        + ("; reconstruction)" if testset.get("reconstruction") else ")"),
        f"Faces: {c['faces']['seen']} seen; excluded: {counts(c['faces']['excluded'])}",
        f"Sessions: {s['planned']} planned, {s['included']} included; excluded: {counts(s['excluded'])}"
        + (f"; identities: {n}" if (n := identities(report)) is not None else ""),
        f"Steps: {counts(c['steps'])}; edited images without a face: {c['edited_images_without_face']}",
    ]


def _judge_lines(report: dict[str, Any]) -> list[str]:
    c, lines = report["counts"], []
    if judge := c.get("judge"):
        lines += [f"Judge answers {template}: {counts(outcomes)}" for template, outcomes in judge.items()]
    if panel := report.get("judge_panel"):
        rule = panel.get("rule", {})
        lines.append(f"Judge panel {rule.get('rule')} (primary {rule.get('primary')}): "
                     + ("; ".join(f"{t} {counts(by_outcome)}" for t, by_outcome in panel["status"].items())
                        or "no answers") + f"; {panel['flagged_items']} answer(s) flagged for review")
        lines += [f"  member {member} ({template}): {counts(outcomes)}"
                  for template, members in (c.get("judge_members") or {}).items()
                  for member, outcomes in members.items()]
    return lines


def section_renderables(report: Mapping[str, Any], width: int,
                        sections: Sequence[ReportSection] | None = None) -> list[Any]:
    """Each report section's console lines for its part of ``report`` (the whole report, for a section whose
    console reads it), a blank line before each."""
    parts: list[Any] = []
    for section in sections_in_use() if sections is None else sections:
        part = report.get(section.name)
        if section.console is not None and isinstance(part, Mapping) and part:
            shown = [Text(r) if isinstance(r, str) else r
                     for r in section.console(report if section.console_reads_report else part, width)]
            if shown:
                parts += [Text(""), *shown]
    return parts


def summary_renderables(report: dict[str, Any], output_dir: Path, width: int | None = None) -> list[Any]:
    width = width or console_width()
    run = report["run"]
    note = preliminary_note(report)
    parts: list[Any] = [Text("\n".join(["", *warning_lines(report), *([note] if note else []),  # mostly missing: first
                                         *_head(report)]))]
    if reference := (report.get("conditions") or {}).get("reference"):
        parts.append(Text(f"Prompt conditions: {', '.join(report['conditions']['order'])}; the tables describe "
                          f"{reference}, except the paired deltas"))
    for tables in summary_tables(report, width):
        if tables:
            parts += [Text(""), *tables]
    parts += section_renderables(report, width)
    tail = _judge_lines(report)
    if not run.get("complete", True):
        tail.append(f"STOPPED: {run.get('stopped')}")
    if fss_measured(report):  # said once: it applies to every FSS number above (none without identity)
        tail.append(f"FSS scale: {report['scales']['fss']}")
    tail += _skipped(report)
    # a dataset's own notes (e.g. empty cells of a portrait grid) qualify every number above
    dataset = ((report.get("components") or {}).get("dataset") or {}).get("description") or {}
    tail += [f"NOTE ({dataset.get('name')}): {n}" for n in dataset.get("notes") or []]
    parts += [Text(""), Text("\n".join(tail))]
    return parts


def format_summary(report: dict[str, Any], output_dir: Path, width: int | None = None) -> str:
    """The summary as plain text (for the console and the job log), at ``width`` columns (default: the
    terminal's, :func:`~faceedit_bench.report.console.console_width`)."""
    width = width or console_width()
    # The run folder is a path to copy: printed as it is, never wrapped to the terminal's width.
    return render(summary_renderables(report, output_dir, width), width) + f"\nArtifacts: {output_dir}"
