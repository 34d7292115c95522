"""The leaderboard's "all test sets" views: per (dataset, embedder, judge, limits), each editor's mean on every
test set and paper (a)'s Avg. column (Tables 1, 2 and 4), ranked by Avg., and Table 3's frequent overediting
patterns pooled over the test sets.

Only entries measured the same way apart from the test set share a view. Per editor and test set one entry is
used: verified before unverified, then the newest; entries whose verification failed are left out.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Mapping
from typing import Any

from faceedit_bench.analysis.across_testsets import PATTERN_THRESHOLD, EditorAcross, across_testsets, pooled_patterns
from faceedit_bench.keys import fingerprint
from faceedit_bench.leaderboard.cells import (
    ALL,
    Cell,
    Column,
    MetricInfo,
    Row,
    Section,
    Table,
    View,
    first_directed,
    fmt,
    hib_text,
    is_ranked,
    is_reference,
    metric_infos,
    sort_value,
    unranked_cell,
)
from faceedit_bench.leaderboard.entries import Entry
from faceedit_bench.leaderboard.record import overedit_counts

PREFERENCE = {"verified": 0, "unverified": 1}


def _testset_label(e: Entry) -> str:
    t = e.record["testset"]
    return f"{t['name']} {t['version']}"


def _editor_key(e: Entry) -> str:
    editor = e.record["editor"]
    return f"{editor['name']} {editor['version']}"


def _pooled_key(e: Entry) -> str:
    protocol = dict(e.protocol)
    protocol.pop("testset")
    return "all-" + fingerprint(protocol)


def _chosen(members: list[Entry]) -> list[Entry]:
    """One entry per (editor, test set): verified first, then the newest; failed verifications never."""
    usable = [e for e in members if e.status in PREFERENCE]
    usable.sort(key=lambda e: (PREFERENCE[e.status], _negated(e.record.get("created_at") or ""), e.id))
    seen, out = set(), []
    for e in usable:
        key = (_editor_key(e), _testset_label(e), e.record["testset"]["content_hash"])
        if key not in seen:
            seen.add(key)
            out.append(e)
    return out


def _negated(text: str) -> tuple[int, ...]:
    return tuple(-ord(ch) for ch in text)  # newest first in an ascending sort


def _table_rows(chosen: list[Entry], metric: MetricInfo) -> tuple[list[str], list[EditorAcross]]:
    return across_testsets((_editor_key(e), e.record["editor"]["name"], _testset_label(e),
                            e.record["metrics"].get(metric.name), f"{e.id} ({e.status})") for e in chosen)


def _ranks(rows: list[EditorAcross], testsets: list[str], metric: MetricInfo | None) -> dict[str, int | None]:
    def avg(r: EditorAcross) -> float | None:
        return None if metric is None or r.reference else r.average(testsets)

    if metric is not None and metric.higher_is_better is None:
        metric = None  # no better direction: nobody is ranked
    sign = -1.0 if metric is not None and metric.higher_is_better else 1.0
    ordered = sorted((r for r in rows if avg(r) is not None), key=lambda r: (sign * avg(r), r.editor))  # type: ignore[operator]
    ranks: dict[str, int | None] = {r.editor: None for r in rows}
    previous, position = None, 0
    for i, r in enumerate(ordered, start=1):
        if avg(r) != previous:
            position, previous = i, avg(r)
        ranks[r.editor] = position
    return ranks


def _section(chosen: list[Entry], metrics: list[MetricInfo], ranker: MetricInfo | None,
             judged: bool) -> tuple[Section, list[str]]:
    tables = {m.name: _table_rows(chosen, m) for m in metrics}
    testsets = sorted({_testset_label(e) for e in chosen})
    editors = list(dict.fromkeys(_editor_key(e) for e in chosen))
    by_editor = {m.name: {r.editor: r for r in tables[m.name][1]} for m in metrics}
    ranks = _ranks(list(by_editor[ranker.name].values()), testsets, ranker) if ranker else {}
    reference = {e: any(is_reference(x) for x in chosen if _editor_key(x) == e) for e in editors}
    sign = -1.0 if ranker is not None and ranker.higher_is_better else 1.0

    def order(editor: str) -> tuple[Any, ...]:
        avg = by_editor[ranker.name][editor].average(testsets) if ranker else None
        return (not reference[editor], ranks.get(editor) is None, sign * (avg or 0.0), editor)

    columns = [Column("rank", "num", help=f"by the Avg. of {ranker.name}" if ranker else ""), Column("editor", "text")]
    for m in metrics:
        hib = hib_text(m.higher_is_better)
        columns += [Column(f"{m.name} · {t}", "num", hib, f"{m.name} ({m.unit}) on test set {t}: mean (n sessions)")
                    for t in testsets]
        columns.append(Column(f"{m.name} · Avg.", "num", hib,
                              f"unweighted mean of the {len(testsets)} test-set means of {m.name}, as paper (a)'s "
                              "Avg.; only when the editor has every test set; no interval"))
    rows = []
    for editor in sorted(editors, key=order):
        rank = ranks.get(editor)
        cells = [Cell("ref", "", cls="reference") if reference[editor] else
                 unranked_cell(ranks, editor) or Cell(str(rank), str(rank)),
                 Cell(editor, editor.lower(), "reference: no edit" if reference[editor] else "")]
        for m in metrics:
            row = by_editor[m.name].get(editor) or EditorAcross(editor, "")
            for t in testsets:
                s = row.cells.get(t)
                mean = (s or {}).get("mean")
                cells.append(Cell(fmt(mean), sort_value(mean), f"n={(s or {}).get('n', 0)} · {row.sources.get(t, '')}"
                                  if t in row.cells else "no entry", cls="num"))
            avg = row.average(testsets)
            cells.append(Cell(fmt(avg) if avg is not None else "n/a", sort_value(avg),
                              "" if avg is not None else f"{row.covered(testsets)} of {len(testsets)} test sets",
                              cls="num avg"))
        rows.append(Row(editor, "reference" if reference[editor] else "", cells, reference[editor]))
    section = Section(ALL, "all test sets: mean per test set and Avg.", columns, rows, ranked=is_ranked(ranks))
    if judged:
        section.tables.append(_patterns_table(chosen, editors, reference))
    return section, testsets


def _patterns_table(chosen: list[Entry], editors: list[str], reference: Mapping[str, bool]) -> Table:
    rows, missing = [], []
    for editor in editors:
        mine = [e for e in chosen if _editor_key(e) == editor]
        patterns = pooled_patterns(overedit_counts(e.record) for e in mine)
        if patterns is None:
            missing.append(editor)
            continue
        for p in patterns:
            rows.append(Row(editor, "reference" if reference[editor] else "", [
                Cell(editor, editor.lower()), Cell(p["attribute"], p["attribute"].lower()),
                Cell(p["category"], p["category"].lower()),
                Cell(f"{p['count']} / {p['edits']}", str(p["count"]), cls="num"),
                Cell(f"{100 * p['share']:.1f}%", repr(p["share"]), f"over {len(mine)} test set(s)", cls="num")],
                reference[editor]))
    note = (f"Attribute → category changes in at least {PATTERN_THRESHOLD:.0%} of the editor's state-tracked "
            "edits asking for that attribute, counted over all its test sets together.")
    if missing:
        note += (f" Not available for {', '.join(missing)}: an entry of it has no per-attribute counts (a run "
                 "report before 1.2); rerun to add them.")
    columns = [Column("editor", "text"), Column("intended attribute", "text"), Column("changed category", "text"),
               Column("overedits / edits", "num"), Column("share", "num")]
    return Table("Frequent overediting patterns, pooled over test sets (Table 3)", columns, rows, note)


def _details(first: Entry, testsets: list[str]) -> list[tuple[str, str]]:
    r = first.record
    run, judge = r["config"]["run"], r["judge"]
    limits = ", ".join(f"{k}={run[k]}" for k in ("max_faces", "max_sessions") if run[k] is not None) or "none"
    return [
        ("test sets", ", ".join(testsets)),
        ("dataset", r["dataset"]["name"]),
        ("embedder", f"{r['embedder']['name']} {r['embedder']['version']}: {r['embedder']['similarity']}"),
        ("judge", "none" if judge is None else f"{judge['name']} {judge['version']}"),
        ("limits", limits),
        ("Avg.", "the unweighted mean of an editor's test-set means (paper (a), Tables 1, 2, 4), only when it has "
                 "an entry on every test set listed; per editor and test set the verified entry is used, else the "
                 "newest; entries whose verification failed are left out"),
    ]


def build_across_views(entries: list[Entry], registered: Mapping[str, Any], rank_by: str | None = None) -> list[View]:
    """One "all test sets" view per measurement that was run on two or more test sets."""
    groups: dict[str, list[Entry]] = defaultdict(list)
    for e in entries:
        groups[_pooled_key(e)].append(e)
    views = []
    for key, members in groups.items():
        chosen = _chosen(members)
        if len({_testset_label(e) for e in chosen}) < 2:
            continue
        metrics = metric_infos(chosen, registered)
        by_name = {m.name: m for m in metrics}
        ranker = by_name.get(rank_by) if rank_by else first_directed(metrics)
        first = chosen[0]
        section, testsets = _section(chosen, metrics, ranker, first.record["judge"] is not None)
        judge = first.record["judge"]
        label = (f"all test sets · {first.record['dataset']['name']} · {first.record['embedder']['name']} "
                 f"{first.record['embedder']['version']} · {'no judge' if judge is None else 'judge ' + judge['name']}")
        limits = first.record["config"]["run"]
        label += "".join(f" · {k}={limits[k]}" for k in ("max_faces", "max_sessions") if limits[k] is not None)
        notes = sorted({n for e in chosen for n in e.record["report_notes"]})
        views.append(View(key, label, _details(first, testsets), metrics, ranker.name if ranker else None,
                          [section], notes))
    return views
