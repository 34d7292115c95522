"""Two sections of a measurement's table that list several rows per entry: the group tests beyond two
groups (k groups, one vs rest, intersections: the run report's ``group_tests``) and the judge panel's
members, rule and disagreement flags (``judge_panel``). Both are read from the submissions."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from faceedit_bench.leaderboard.cells import (
    Cell,
    Column,
    Row,
    Section,
    editor_cell,
    fmt,
    is_reference,
    sort_value,
    status_cell,
)
from faceedit_bench.leaderboard.entries import Entry
from faceedit_bench.report.html import group_test_rows
from faceedit_bench.report.templates import fmt_p_equation

GROUP_TESTS = "group tests"
JUDGE_PANEL = "judge panel"


def _counts(counts: Mapping[str, Any] | None) -> str:
    return ", ".join(f"{k} {v}" for k, v in sorted((counts or {}).items()) if v) or "none"


def _groups(groups: Any) -> str:
    if not isinstance(groups, Mapping):
        return ""
    return "; ".join(f"{label} {fmt((s or {}).get('mean'))} (n={(s or {}).get('n', 0)})" for label, s in groups.items())


def group_tests_section(entries: list[Entry], label: Any) -> Section | None:
    """One row per entry x test x metric; None when no entry has group tests."""
    rows = []
    for e in entries:
        tests = e.record.get("group_tests")
        if not isinstance(tests, Mapping):
            continue
        for r in group_test_rows({"group_tests": tests}):
            low, high = r.get("spread_ci") or (None, None)
            spread = r.get("spread")
            spread_text = "n/a" if spread is None else fmt(spread) + (
                f" [{fmt(low)}, {fmt(high)}]" if low is not None and high is not None else "")
            p = r.get("p_value")
            cells = [editor_cell(e), status_cell(e), Cell(r["kind"], r["kind"]), Cell(str(r["what"]), str(r["what"])),
                     Cell(label(r["metric"]) if r["metric"] else "", str(r["metric"])),
                     Cell(r.get("statistic") or "n/a", "", r.get("reason") or ""),
                     Cell("n/a" if p is None else fmt_p_equation(p), sort_value(p), cls="num"),
                     Cell(spread_text, sort_value(spread), cls="num"),
                     Cell(str(r.get("worst") or ""), str(r.get("worst") or "")),
                     Cell(_groups(r.get("groups")), "")]
            rows.append(Row(e.id, e.status, cells, is_reference(e)))
    if not rows:
        return None
    columns = [Column("editor", "text"), Column("status", "text"), Column("test", "text"),
               Column("groups", "text", help="the attribute (k groups), the focus group (one vs rest) or the crossed "
                                             "attributes (intersection)"),
               Column("metric", "text"),
               Column("statistic", "text", help="Kruskal-Wallis H with its degrees of freedom, or Mann-Whitney U"),
               Column("p", "num", "false", "the test's p-value"),
               Column("spread [CI]", "num", "false", "k groups and intersections: max - min of the group means with "
                                                     "its bootstrap interval; one vs rest: the difference of means"),
               Column("worst", "text", help="the worst group in the metric's direction"),
               Column("group means", "text")]
    return Section(GROUP_TESTS, "group tests (k groups, one vs rest, intersections)", columns, rows,
                   note="Per metric, for every attribute with three or more groups, every one-vs-rest contrast and "
                        "every intersection the run configured (docs/statistics.md).")


def judge_panel_section(entries: list[Entry]) -> Section | None:
    """One row per entry x prompt template of a panel-judged run; None when no entry used a panel."""
    rows = []
    for e in entries:
        panel = e.record.get("judge_panel")
        if not isinstance(panel, Mapping):
            continue
        rule = panel.get("rule") or {}
        members = rule.get("members") or sorted({m for per in (panel.get("members") or {}).values() for m in per})
        rule_text = f"{rule.get('rule', '?')} (primary {rule.get('primary', '?')})"
        for template, statuses in sorted((panel.get("status") or {}).items()):
            per_member = (panel.get("members") or {}).get(template) or {}
            flags = (panel.get("flags") or {}).get(template) or {}
            flagged = sum(flags.values()) if isinstance(flags, Mapping) else 0
            cells = [editor_cell(e), status_cell(e), Cell(str(template), str(template)),
                     Cell(rule_text, rule_text, "members: " + ", ".join(map(str, members))),
                     Cell("; ".join(f"{m}: {_counts(c)}" for m, c in sorted(per_member.items())), ""),
                     Cell(_counts(statuses), ""),
                     Cell(str(flagged), str(flagged), _counts(flags) if flagged else "", cls="num"),
                     Cell(str(panel.get("flagged_items", 0)), str(panel.get("flagged_items", 0)), cls="num")]
            rows.append(Row(e.id, e.status, cells, is_reference(e)))
    if not rows:
        return None
    columns = [Column("editor", "text"), Column("status", "text"), Column("prompt template", "text"),
               Column("rule", "text", help="the combination rule and its primary member"),
               Column("member answers", "text", help="each member's answers by outcome (every answer is kept)"),
               Column("combined", "text", help="combined answers by rule status (agreed, disagreed, a member failed)"),
               Column("disagreement flags", "num", "false", "answer fields where the members disagreed"),
               Column("flagged answers", "num", "false", "answers flagged for review, over every template")]
    return Section(JUDGE_PANEL, "judge panel (members, rule, disagreement flags)", columns, rows,
                   note="Judge panels combine their members' answers by the rule shown; members' own answers and "
                        "the rule are part of the metric's identity.")
