"""The parts of a submission record beyond the session metrics (submission schema 1.2): how to read
every quantity (``measures``), the group tests, the judge panel's counts and what each report section keeps
of its part (its ``record``, under its name; null when the report has no such part).

They are copied from the run report, since the leaderboard renders from submissions and never from
this installation's registry. Submissions come from strangers: every copied value is plain JSON of
bounded depth, size and string length, with control characters removed.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping, Sequence
from typing import Any

from faceedit_bench.plugin.manager import sections_in_use
from faceedit_bench.plugin.sections import ReportSection
from faceedit_bench.report.measures import report_measures

MAX_DEPTH = 8
MAX_ITEMS = 200  # keys of one object, items of one list
MAX_TEXT = 4000
#: The judge panel's counts (its per-item flagged list names faces and stays in the run's report.json).
PANEL_FIELDS = ("rule", "status", "members", "flags", "flagged_items")
_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f]+")


def bounded(value: Any, depth: int = 0) -> Any:
    """``value`` as plain JSON: bounded, finite numbers only (a NaN or infinity becomes null)."""
    if isinstance(value, bool) or value is None:
        return value
    if isinstance(value, int):
        return value
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if isinstance(value, str):
        return _CONTROL.sub(" ", value)[:MAX_TEXT]
    if depth >= MAX_DEPTH:
        return None
    if isinstance(value, Mapping):
        return {_CONTROL.sub(" ", str(k))[:200]: bounded(v, depth + 1) for k, v in list(value.items())[:MAX_ITEMS]}
    if isinstance(value, (list, tuple)):
        return [bounded(v, depth + 1) for v in list(value)[:MAX_ITEMS]]
    return _CONTROL.sub(" ", str(value))[:MAX_TEXT]


def measures_of(report: Mapping[str, Any]) -> dict[str, Any]:
    """How to read each named quantity: the report's ``measures`` (1.3), or what an older report states."""
    fields = ("label", "higher_is_better", "unit", "description", "bounds", "requires", "section")
    return {name: {f: bounded(m.get(f)) for f in fields}
            for name, m in list(report_measures(report).items())[:MAX_ITEMS]}


def group_tests_of(report: Mapping[str, Any]) -> dict[str, Any] | None:
    section = report.get("group_tests")
    return bounded(section) if isinstance(section, Mapping) else None


def judge_panel_of(report: Mapping[str, Any]) -> dict[str, Any] | None:
    section = report.get("judge_panel")
    if not isinstance(section, Mapping):
        return None
    return {f: bounded(section.get(f)) for f in PANEL_FIELDS if f in section}


def section_record(section: ReportSection, report: Mapping[str, Any]) -> Any:
    """What a submission keeps of the section's part (its ``record``), bounded; None without the part."""
    part = report.get(section.name)
    if section.record is None or not isinstance(part, Mapping):
        return None
    kept = section.record(part)
    return bounded(kept) if isinstance(kept, Mapping) else None


def record_sections(report: Mapping[str, Any], sections: Sequence[ReportSection] | None = None) -> dict[str, Any]:
    """``sections``: the report sections whose record parts are kept (default: those in use)."""
    kept = {s.name: section_record(s, report) for s in (sections_in_use() if sections is None else sections)
            if s.record is not None}
    return {"measures": measures_of(report), "group_tests": group_tests_of(report),
            "judge_panel": judge_panel_of(report), **kept}
