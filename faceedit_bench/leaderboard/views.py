"""The leaderboard's tables, independent of the output format: one view per measurement
protocol (test set x dataset x embedder x judge x limits), and in each a section for all
sessions, one per demographic contrast, one per named view its entries have values for
(the report sections' views: :mod:`~faceedit_bench.leaderboard.named_views`), the group tests and the judge
panel. Markdown and HTML render these same cells.

Metric directions come from the registered metric's ``higher_is_better`` (the report's own
statement for a metric this installation does not register), never from a list of names.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Mapping
from typing import Any

from faceedit_bench.analysis.multiplicity import (
    NOT_TESTED,
    STATUS_TEXT,
    YES,
    bias_status,
    clustered_p,
    not_tested_reason,
    paper_flag,
)
from faceedit_bench.leaderboard.across import build_across_views
from faceedit_bench.leaderboard.cells import (  # noqa: F401 - the cells are part of this module's interface
    ALL,
    NOT_FAILED,
    Cell,
    Column,
    MetricInfo,
    Plot,
    Row,
    Section,
    Table,
    View,
    direction_sentence,
    editor_cell,
    entry_labels,
    first_directed,
    fmt,
    fmt_summary,
    hib_text,
    is_ranked,
    is_reference,
    metric_infos,
    notes_cell,
    point,
    rank_cells,
    rank_entries,
    sort_value,
    status_cell,
)
from faceedit_bench.leaderboard.entries import Entry
from faceedit_bench.leaderboard.group_test_sections import group_tests_section, judge_panel_section
from faceedit_bench.leaderboard.named_views import named_view_sections
from faceedit_bench.leaderboard.references import with_references
from faceedit_bench.report.part_views import cost_of
from faceedit_bench.report.templates import fmt_p, fmt_p_equation


def _rank(entries: list[Entry], metric: MetricInfo | None) -> tuple[list[Entry], dict[str, int | None]]:
    """Ranked by the metric's mean in its direction (no metric: no ranks). Preliminary entries (too few
    identities) are kept apart, as LMArena keeps new models: listed after the ranked ones, without a rank."""
    if metric is None:
        return rank_entries(entries, lambda e: None, False)
    ordered, ranks = rank_entries(entries, lambda e: None if _preliminary(e) else
                                  e.record["metrics"].get(metric.name, {}).get("mean"), metric.higher_is_better)
    return sorted(ordered, key=_preliminary), ranks  # stable: the ranked order is kept


def _preliminary(e: Entry) -> bool:
    return bool((e.record.get("sample_size") or {}).get("preliminary"))


def _status(e: Entry) -> Cell:
    """The verification status, and "preliminary" with the run's identities where it rests on too few."""
    if not _preliminary(e):
        return status_cell(e)
    sample = e.record["sample_size"]
    return Cell(f"{e.status}, preliminary", e.status, f"{sample.get('reason')}; not ranked until it has more",
                cls=f"status {e.status} preliminary")


def _overall(view_entries: list[Entry], metrics: list[MetricInfo], ranks: dict[str, int | None]) -> Section:
    columns = [Column("rank", "num"), Column("editor", "text"), Column("status", "text")]
    columns += [Column(f"{m.name} ({m.unit})", "num", hib_text(m.higher_is_better),
                       f"{m.description} {direction_sentence(m.higher_is_better)}") for m in metrics]
    columns += [Column("sessions", "num", help="sessions included in the metrics / planned, and their identities"),
                Column("excluded", "num", help="sessions excluded from the metrics (a step without an image)"),
                Column("refused", "num", help="edit steps the provider refused"),
                Column("no image", "num", help="edit steps answered without an image (no refusal stated)"),
                Column("failed", "num", help="edit steps that failed: provider errors, failures, unreadable images"),
                Column("cost (USD)", "num", help="estimated cost of the run, as its report states it"),
                Column("notes", "text")]
    rows = []
    rank_of = rank_cells(view_entries, ranks)
    for e in view_entries:
        r, o = e.record, e.record["outcomes"]
        cells = [rank_of[e.id], editor_cell(e), _status(e)]
        for m in metrics:
            text, sub = fmt_summary(r["metrics"].get(m.name))
            cells.append(Cell(text, sort_value(r["metrics"].get(m.name, {}).get("mean")), sub, cls="num"))
        sessions = o["sessions"]
        excluded = sum(sessions["excluded"].values())
        failed = sum(n for outcome, n in o["steps"].items() if outcome not in NOT_FAILED)
        refused, no_image = o["steps"].get("refused", 0), o["steps"].get("no_image", 0)
        cost = cost_of(r).estimated_usd  # the record keeps a subset of the report's cost part
        ids = (r.get("sample_size") or {}).get("identities")
        cells += [Cell(f"{sessions['included']}/{sessions['planned']}", str(sessions["included"]),
                       "" if ids is None else f"{ids} identities", cls="num"),
                  Cell(str(excluded), str(excluded), _reasons(sessions["excluded"]), cls="num"),
                  Cell(str(refused), str(refused), cls="num"),
                  Cell(str(no_image), str(no_image), cls="num"),
                  Cell(str(failed), str(failed), _reasons({k: v for k, v in o["steps"].items() if k not in NOT_FAILED}),
                       cls="num"),
                  Cell("n/a" if cost is None else f"{cost:.4f}", sort_value(cost), cls="num"),
                  notes_cell(e)]
        rows.append(Row(e.id, e.status, cells, is_reference(e)))
    plots = [Plot(m.label or m.name, m.unit, m.higher_is_better, [""],
                  [(label, [point(e.record["metrics"].get(m.name))])
                   for label, e in zip(entry_labels(view_entries), view_entries)], m.bounds)
             for m in metrics]
    return Section(ALL, "all sessions", columns, rows, plots, ranked=is_ranked(ranks))


def _reasons(counts: Mapping[str, int]) -> str:
    return ", ".join(f"{k} {v}" for k, v in sorted(counts.items()) if v)


def _disparity_row(e: Entry, metric: str, contrast: str) -> Mapping[str, Any] | None:
    for row in e.record.get("disparity") or []:
        if row["metric"] == metric and row["contrast"] == contrast:
            return row
    return None


def _flag_cell(d: Mapping[str, Any]) -> Cell:
    """Bias yes / no / not tested with its evidence: identities per group, the clustered and Holm p, the BH q and
    the paper's session-level rule; a contrast not tested says why and sorts with no value, never as a "no"."""
    status = bias_status(d)
    ids = "/".join(str(k) if k is not None else "?" for k in (d.get("n_identities") or {}).values())
    paper = paper_flag(d)
    rule = "" if paper is None else f"; paper's rule: {'BIAS' if paper else 'no'} ({fmt_p_equation(d.get('p_value'))})"
    if status == NOT_TESTED:
        return Cell("not tested", "", not_tested_reason(d) + rule)
    sub = (f"identities {ids}; " if ids else "") + f"Holm p {fmt_p(d.get('p_holm'))}, " \
        f"id p {fmt_p(clustered_p(d))}, q {fmt_p(d.get('q_value'))}" + rule
    if status == YES:
        sub += f"; worst: {d.get('worst_group')}"
    return Cell(STATUS_TEXT[status], "1" if status == YES else "0", sub, cls="bias" if status == YES else "")


def _k_groups(e: Entry, contrast: str, metric: str) -> Mapping[str, Any] | None:
    found = (((e.record.get("group_tests") or {}).get("k_groups") or {}).get(contrast) or {}).get(metric)
    return found if isinstance(found, Mapping) else None


def _k_group_cells(e: Entry, contrast: str, metric: str) -> list[Cell]:
    """max − min of the group means [bootstrap CI] and the Kruskal–Wallis p of a k-group attribute (race)."""
    t = _k_groups(e, contrast, metric)
    if t is None:
        return [Cell("not tested", ""), Cell("n/a", "")]
    d, kw = t.get("disparity") or {}, t.get("kruskal") or {}
    ci = f" [{fmt(d['ci_low'])}, {fmt(d['ci_high'])}]" if d.get("ci_low") is not None else ""
    spread = Cell(f"{fmt(d.get('value'))}{ci}", sort_value(d.get("value")),
                  f"worst: {d['worst_group']}" if d.get("worst_group") else str(d.get("reason") or ""), cls="num")
    p = kw.get("p_value")
    return [spread, Cell("n/a" if p is None else fmt_p_equation(p), sort_value(p),
                         f"H {fmt(kw.get('h'))}, df {kw.get('df')}" if kw.get("h") is not None
                         else str(kw.get("reason") or ""), cls="num")]


def _contrast(contrast: str, labels: list[str], view_entries: list[Entry], metrics: list[MetricInfo],
              ranks: dict[str, int | None]) -> Section:
    columns = [Column("editor", "text"), Column("status", "text")]
    k_groups = {m.name for m in metrics for e in view_entries if _k_groups(e, contrast, m.name) is not None}
    for m in metrics:
        columns += [Column(f"{m.name} · {label}", "num", hib_text(m.higher_is_better),
                           f"{m.name} ({m.unit}) of the {label} group")
                    for label in labels]
        columns += [Column(f"bias · {m.name}", "num", "false",
                           "bias flag: Wasserstein distance over the threshold and the identity-clustered "
                           "permutation p, Holm-corrected over the run's contrasts, under alpha; 'not tested' "
                           "with the reason when the run could not test it (too few identities)"),
                    Column(f"WD · {m.name}", "num", "false", "Wasserstein distance between the groups' values")]
        if m.name in k_groups:
            columns += [Column(f"max−min · {m.name}", "num", "false",
                               "the largest group mean minus the smallest, with its bootstrap interval"),
                        Column(f"Kruskal–Wallis · {m.name}", "num", "", "p-value of the Kruskal-Wallis test "
                                                                         "across the groups")]
    rows = []
    for e in view_entries:
        groups = e.record["groups"].get(contrast, {})
        cells = [editor_cell(e), _status(e)]
        for m in metrics:
            for label in labels:
                s = groups.get(label, {}).get("metrics", {}).get(m.name)
                text, sub = fmt_summary(s)
                cells.append(Cell(text, sort_value((s or {}).get("mean")), sub, cls="num"))
            d = _disparity_row(e, m.name, contrast)
            if d is None:
                cells += [Cell("not tested", ""), Cell("n/a", "")]
            else:
                cells += [_flag_cell(d), Cell(fmt(d["wd"]), sort_value(d["wd"]), cls="num")]
            if m.name in k_groups:
                cells += _k_group_cells(e, contrast, m.name)
        rows.append(Row(e.id, e.status, cells, is_reference(e)))
    plots = [Plot(f"{m.label or m.name} by {contrast}", m.unit, m.higher_is_better, labels,
                  [(row, [point(e.record["groups"].get(contrast, {}).get(label, {}).get("metrics", {})
                                .get(m.name)) for label in labels])
                   for row, e in zip(entry_labels(view_entries), view_entries)], m.bounds)
             for m in metrics]
    return Section(contrast, f"by {contrast}", columns, rows, plots, ranked=is_ranked(ranks))


def _details(entry: Entry) -> list[tuple[str, str]]:
    r = entry.record
    t, run = r["testset"], r["config"]["run"]
    judge = r["judge"]
    limits = ", ".join(f"{k}={run[k]}" for k in ("max_faces", "max_sessions") if run[k] is not None) or "none"
    return [
        ("test set", f"{t['name']} {t['version']} (content hash {t['content_hash'][:12]}"
                     f"{', reconstruction' if t['reconstruction'] else ''})"),
        ("dataset", r["dataset"]["name"]),
        ("embedder", f"{r['embedder']['name']} {r['embedder']['version']}: {r['embedder']['similarity']}"),
        ("judge", "none" if judge is None else f"{judge['name']} {judge['version']}"),
        ("limits", limits),
        # each metric's method is its run report's (t, Wilson, bootstrap: docs/statistics.md), not one for all
        ("intervals", f"{round(run['confidence'] * 100, 3):g}% confidence, by each metric's own method"),
    ]


def _further_sections(entries: list[Entry], metrics: list[MetricInfo], registered: Mapping[str, Any]) -> list[Section]:
    """The named views (the report sections'), the group tests and the judge panel, where entries have them."""
    labels = {m.name: m.label or m.name for m in metrics}
    found = [group_tests_section(entries, lambda name: labels.get(name, name)), judge_panel_section(entries)]
    return named_view_sections(entries, registered) + [s for s in found if s is not None]


def build_views(entries: list[Entry], registered: Mapping[str, Any], rank_by: str | None = None) -> list[View]:
    """Group entries by protocol and lay out each group's sections (references lend them reference rows), then
    the views across test sets."""
    groups: dict[str, list[Entry]] = defaultdict(list)
    for e in entries:
        groups[e.protocol_key].append(e)
    lent, missing_reference = with_references(dict(groups))
    views = []
    for key, members in lent.items():
        members.sort(key=lambda e: e.id)
        metrics = metric_infos(members, registered)
        by_name = {m.name: m for m in metrics}
        ranker = by_name.get(rank_by) if rank_by else first_directed(metrics)
        ordered, ranks = _rank(members, ranker)
        sections = [_overall(ordered, metrics, ranks)]
        contrasts: dict[str, set[str]] = defaultdict(set)
        for e in members:
            for attribute, labels in e.record["groups"].items():
                contrasts[attribute].update(labels)
        for attribute in sorted(contrasts):
            sections.append(_contrast(attribute, sorted(contrasts[attribute]), ordered, metrics, ranks))
        sections += _further_sections(ordered, metrics, registered)
        first = next((e for e in members if e.protocol_key == key), members[0])  # not a lent reference
        t, judge = first.record["testset"], first.record["judge"]
        label = (f"{t['name']} {t['version']} · {first.record['dataset']['name']} · "
                 f"{first.record['embedder']['name']} {first.record['embedder']['version']} · "
                 f"{'no judge' if judge is None else 'judge ' + judge['name']}")
        limits = first.record["config"]["run"]
        label += "".join(f" · {k}={limits[k]}" for k in ("max_faces", "max_sessions") if limits[k] is not None)
        notes = sorted({n for e in members for n in e.record["report_notes"]})
        notes += [missing_reference[key]] if key in missing_reference else []
        views.append(View(key, label, _details(first), metrics, ranker.name if ranker else None, sections, notes))
    views.sort(key=lambda v: (v.label, v.key))
    views += sorted(build_across_views(entries, registered, rank_by), key=lambda v: (v.label, v.key))
    labels = [v.label for v in views]
    for v in views:
        if labels.count(v.label) > 1:  # same names, different content (hashes, limits): say which
            v.label = f"{v.label} · {v.key[:8]}"
    return views
