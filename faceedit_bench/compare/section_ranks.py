"""What report sections rank the compared runs by (``ReportSection.ranking``): a row of the side-by-side table
and a column of the rank table, so that Kendall's tau says whether a section's ranking (e.g. a rating from
pairwise battles) orders the editors as the session metrics do.

Values are ranked together only within one ``scope`` (the same battles, the same voters ...): runs whose
values come from different scopes are shown but not ranked, with a warning.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

from faceedit_bench.compare.rows import best_columns, cell, direction_text
from faceedit_bench.plugin.manager import sections_in_use
from faceedit_bench.plugin.sections import ReportSection
from faceedit_bench.report.templates import fmt_ci


def section_rankings(reports: Sequence[Mapping[str, Any]], labels: Sequence[str],
                     sections: Sequence[ReportSection] | None = None) -> list[dict[str, Any]]:
    """Per ranked value: ``{name, label, higher_is_better, values: {run label: value}, scopes, cells}``."""
    found: dict[str, dict[str, Any]] = {}
    for section in sections_in_use() if sections is None else sections:
        if section.ranking is None:
            continue
        for label, report in zip(labels, reports):
            part = report.get(section.name)
            value = section.ranking(part) if isinstance(part, Mapping) and part else None
            if not value or not _finite(value.get("value")):
                continue
            entry = found.setdefault(str(value["name"]), {
                "name": str(value["name"]), "label": str(value.get("label") or value["name"]),
                "section": section.name, "higher_is_better": value.get("higher_is_better"), "runs": {}})
            entry["runs"][label] = dict(value)
    out = []
    for entry in found.values():
        runs = entry.pop("runs")
        scopes = sorted({str(v.get("scope")) for v in runs.values() if v.get("scope") is not None})
        entry["scopes"] = scopes
        entry["values"] = {lab: float(v["value"]) for lab, v in runs.items()}
        entry["cells"] = [_cell(runs.get(lab)) for lab in labels]
        out.append(entry)
    return out


def _finite(v: Any) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v)


def _cell(value: Mapping[str, Any] | None) -> dict[str, Any]:
    if value is None:
        return cell(None, "absent")
    n = f" n={value['n']}" if value.get("n") is not None else ""
    return cell(float(value["value"]), fmt_ci({"mean": value["value"], "ci_low": value.get("ci_low"),
                                               "ci_high": value.get("ci_high")}) + n)


def ranking_rows(rankings: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """One side-by-side row per ranked value; no best is marked across scopes."""
    rows = []
    for r in rankings:
        hib = r["higher_is_better"] if isinstance(r["higher_is_better"], bool) else None
        about = direction_text(hib)
        rows.append({"label": f"{r['label']} ({about})" if about else r["label"], "section": r["section"],
                     "higher_is_better": hib, "cells": r["cells"],
                     "best": best_columns(r["cells"], hib, set()) if len(r["scopes"]) <= 1 else []})
    return rows


def ranking_warnings(rankings: Sequence[Mapping[str, Any]]) -> list[str]:
    return [f"{r['label']}: the runs' values come from {len(r['scopes'])} different {r['section']} results "
            f"({', '.join(s[:12] for s in r['scopes'])}); they are shown but not ranked together"
            for r in rankings if len(r["scopes"]) > 1]


def rankable(rankings: Sequence[Mapping[str, Any]]) -> dict[str, tuple[dict[str, float], bool]]:
    """The values the rank table takes: one scope, a stated direction."""
    return {r["name"]: (r["values"], r["higher_is_better"]) for r in rankings
            if len(r["scopes"]) <= 1 and isinstance(r["higher_is_better"], bool)}
