"""The identity baseline wherever its measurement matches (issue 25, item 15).

A reference run (the ``identity`` editor: no edit) measured without a judge, or with another judge, shares
everything that does not need a judge with the judged editors of the same test set, dataset, embedder and
limits: Drop_FSS of no edit is the same whoever judges. So it is shown as the reference row of their table
too, with only those metrics; the judged ones say how to measure them. A table that would then hold nothing
but borrowed references is not shown on its own, and a table without any reference row says in one command
how to get one.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace
from typing import Any

from faceedit_bench.keys import fingerprint
from faceedit_bench.leaderboard.cells import is_reference
from faceedit_bench.leaderboard.entries import Entry, protocol_of
from faceedit_bench.plugin.manager import sections_in_use
from faceedit_bench.report.measures import BEFORE_1_3

#: The core's record parts measured by a judge (or mixing judged and judge-free tests): a lent reference row has
#: none of them, nor of the report sections that need a judge (:func:`judged_parts`).
JUDGED_SECTIONS = ("judge_panel", "overediting", "group_tests")


def judged_parts() -> set[str]:
    return {*JUDGED_SECTIONS, *(s.name for s in sections_in_use() if s.needs_judge)}


def judge_free_key(entry: Entry) -> str:
    """The measurement without its judge: what a reference must share to lend its judge-free metrics."""
    return fingerprint({**protocol_of(entry.record), "judge": None})


def needs_judge(name: str, record: Mapping[str, Any]) -> bool:
    stated = (record.get("measures") or {}).get(name) or {}
    if "requires" in stated:
        return "judge" in (stated.get("requires") or [])
    return name in BEFORE_1_3 and name != "drop_fss"  # records before measures: SC and OER were judged


def _judge_free(record: Mapping[str, Any]) -> dict[str, Any]:
    keep = {n for n in record.get("metrics") or {} if not needs_judge(n, record)}
    groups = {attr: {label: {**g, "metrics": {n: m for n, m in (g.get("metrics") or {}).items() if n in keep}}
                     for label, g in labels.items()} for attr, labels in (record.get("groups") or {}).items()}
    judged = judged_parts()
    out = {k: v for k, v in record.items() if k not in judged}
    out.update(metrics={n: m for n, m in record["metrics"].items() if n in keep}, groups=groups,
               disparity=[d for d in record.get("disparity") or [] if d.get("metric") in keep])
    return out


def lent(entry: Entry, judge: Mapping[str, Any] | None) -> Entry:
    """``entry`` (a reference) as the reference row of a table judged by ``judge``: judge-free metrics only."""
    own = entry.record.get("judge")
    measured = "without a judge" if own is None else f"with judge {own.get('name')}"
    wanted = f"judge={judge.get('name')}" if judge else "no judge"
    note = (f"reference measured {measured}: only its metrics that need no judge are shown; for the others run "
            f"editor=identity with {wanted} and the same settings")
    return replace(entry, record=_judge_free(entry.record), status_note=f"{entry.status_note}; {note}")


def with_references(groups: dict[str, list[Entry]]) -> tuple[dict[str, list[Entry]], dict[str, str]]:
    """Each group of entries (one measurement) with a reference row lent where it has none of its own; and a
    note for each group left without one. A group of nothing but references is dropped where another group
    of the same judge-free measurement shows a reference row (lent or its own)."""
    references = [e for members in groups.values() for e in members if is_reference(e)]
    out: dict[str, list[Entry]] = {}
    notes: dict[str, str] = {}
    for key, members in groups.items():
        if any(is_reference(e) for e in members):
            out[key] = members
            continue
        base, judge = judge_free_key(members[0]), members[0].record.get("judge")
        matching = [r for r in references if judge_free_key(r) == base]
        out[key] = members + [lent(r, judge) for r in matching]
        if not matching:
            notes[key] = how_to_measure(members[0])
    shown_elsewhere = {judge_free_key(members[0]) for members in out.values()
                       if any(is_reference(e) for e in members) and not all(is_reference(e) for e in members)}
    dropped = [k for k, members in out.items()
               if all(is_reference(e) for e in members) and judge_free_key(members[0]) in shown_elsewhere]
    return {k: v for k, v in out.items() if k not in dropped}, notes


def how_to_measure(entry: Entry) -> str:
    """The one command that adds the missing reference row to a table."""
    r = entry.record
    limits = "".join(f" run.{k}={v}" for k, v in r["config"]["run"].items()
                     if k in ("max_faces", "max_sessions") and v is not None)
    judge = f" judge={r['judge']['name']}" if r.get("judge") else ""
    return ("No reference row: the identity editor (no edit) was not measured this way. Add it with "
            f"`faceedit-bench run editor=identity testset={r['testset']['name']} dataset={r['dataset']['name']} "
            f"embedder={r['embedder']['name']}{judge}{limits}` and the editors' other settings (dataset root, "
            "judge parameters), then submit that run.")
