"""The side-by-side rows of a comparison: metrics, outcome rates, bias flags and cost, with the best value
of each row."""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from faceedit_bench.analysis.multiplicity import NO, NOT_TESTED, YES, bias_status
from faceedit_bench.report.measures import label_of, merged_measures
from faceedit_bench.report.part_views import cost_of
from faceedit_bench.report.templates import fmt_ci, fmt_num, fmt_usd

USABLE_OR_UNATTEMPTED = ("ok", "skipped")  # every other step outcome is an attempt without a usable image



def cell(value: float | None, text: str | None = None) -> dict[str, Any]:
    return {"value": value, "text": text if text is not None else fmt_num(value)}


def best_columns(cells: Sequence[Mapping[str, Any]], higher_is_better: bool | None, exclude: set[int]) -> list[int]:
    """The columns with the row's best value; reference runs (no edit) compete for nothing."""
    values = [None if i in exclude else c["value"] for i, c in enumerate(cells)]
    present = [v for v in values if v is not None and math.isfinite(v)]
    if higher_is_better is None or len(present) < 2 or len(set(present)) == 1:
        return []
    target = max(present) if higher_is_better else min(present)
    return [i for i, v in enumerate(values) if v == target]


def _row(label: str, cells: list[dict[str, Any]], higher_is_better: bool | None,
         section: str) -> dict[str, Any]:
    return {"label": label, "section": section, "higher_is_better": higher_is_better, "cells": cells,
            "best": best_columns(cells, higher_is_better, set())}


def direction_text(higher_is_better: bool | None) -> str:
    return "" if higher_is_better is None else ("higher better" if higher_is_better else "lower better")


def metric_rows(reports: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    measures = merged_measures(reports)
    names: list[str] = []
    for r in reports:
        names += [n for n in list(r.get("metrics") or {}) + list(r.get("skipped_metrics") or {}) if n not in names]
    rows = []
    for name in names:
        found = [r["metrics"][name] for r in reports if name in (r.get("metrics") or {})]
        directions = {m.get("higher_is_better") for m in found}
        hib = directions.pop() if len(directions) == 1 else None
        unit = next((m.get("unit") for m in found if m.get("unit")), "")
        cells = []
        for r in reports:
            m = (r.get("metrics") or {}).get(name)
            if m is None:
                skipped = name in (r.get("skipped_metrics") or {})
                cells.append(cell(None, "skipped" if skipped else "absent"))
            else:
                cells.append(cell(m.get("mean"), f"{fmt_ci(m)} n={m.get('n')}"))
        about = ", ".join(x for x in (unit, direction_text(hib)) if x)
        label = f"{label_of(name, measures)} ({about})" if about else label_of(name, measures)
        rows.append(_row(label, cells, hib, "metrics"))
    return rows


def _rate(report: Mapping[str, Any], numerator: Callable[[Mapping[str, Any]], float | None],
          denominator: Callable[[Mapping[str, Any]], float | None]) -> dict[str, Any]:
    num, den = numerator(report), denominator(report)
    if num is None or not den:
        return cell(None)
    return cell(100.0 * num / den, f"{100.0 * num / den:.1f}% ({fmt_num(num)}/{fmt_num(den)})")


def outcome_rows(reports: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    def steps(r: Mapping[str, Any]) -> dict[str, int]:
        return dict((r.get("counts") or {}).get("steps") or {})

    def attempted(r: Mapping[str, Any]) -> int:
        return sum(n for o, n in steps(r).items() if o != "skipped")

    def sessions(r: Mapping[str, Any]) -> dict[str, Any]:
        return (r.get("counts") or {}).get("sessions") or {}

    def count(value: Any) -> dict[str, Any]:
        return cell(float(value) if value is not None else None, fmt_num(value))

    return [
        _row("sessions included", [count(sessions(r).get("included")) for r in reports], None, "outcomes"),
        _row("sessions excluded (% of planned, lower better)",
             [_rate(r, lambda r: sum((sessions(r).get("excluded") or {}).values()),
                    lambda r: sessions(r).get("planned")) for r in reports], False, "outcomes"),
        _row("steps refused (% of attempted, lower better)",
             [_rate(r, lambda r: steps(r).get("refused", 0), attempted) for r in reports], False, "outcomes"),
        _row("steps without a usable image (% of attempted, lower better)",
             [_rate(r, lambda r: sum(n for o, n in steps(r).items() if o not in USABLE_OR_UNATTEMPTED),
                    attempted) for r in reports], False, "outcomes"),
        _row("faces excluded", [count(sum((((r.get("counts") or {}).get("faces") or {}).get("excluded")
                                             or {}).values())) for r in reports], None, "outcomes"),
    ]


def fairness_rows(reports: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """Flags of the testable contrasts, and the contrasts not testable apart: an untested contrast is never a "no"."""
    def flags(r: Mapping[str, Any]) -> dict[str, Any]:
        rows = r.get("disparity")
        if rows is None:
            return cell(None, "not computed")
        status = [bias_status(d) for d in rows]
        testable = status.count(YES) + status.count(NO)
        if not testable:  # nothing tested is no evidence of fairness: no value to compare
            return cell(None, "none testable")
        return cell(float(status.count(YES)), f"{status.count(YES)} of {testable}")

    def untested(r: Mapping[str, Any]) -> dict[str, Any]:
        rows = r.get("disparity")
        return cell(None, "not computed") if rows is None else \
            cell(float(sum(bias_status(d) == NOT_TESTED for d in rows)))

    def preliminary(r: Mapping[str, Any]) -> dict[str, Any]:
        sample = r.get("sample_size") or {}
        if "identities" not in sample:
            return cell(None, "not counted")
        n = int(sample["identities"])
        return cell(float(n), f"{n}, PRELIMINARY" if sample.get("preliminary") else str(n))

    return [_row("bias flags of testable contrasts (lower better)", [flags(r) for r in reports], False, "fairness"),
            _row("contrasts not testable", [untested(r) for r in reports], None, "fairness"),
            _row("identities", [preliminary(r) for r in reports], None, "fairness")]


def cost_rows(reports: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    def total(r: Mapping[str, Any]) -> dict[str, Any]:
        if r.get("cost") is None:
            return cell(None, "not recorded")
        cost = cost_of(r)
        components = set(cost.by_component or {})
        if cost.estimated_usd is None and components and components <= set(cost.free or []):
            return cell(None, "free")  # not ranked against prices; the row's note says what free means
        return cell(cost.estimated_usd, fmt_usd(cost.estimated_usd))

    def per_session(r: Mapping[str, Any]) -> dict[str, Any]:
        usd = cost_of(r).estimated_usd
        included = ((r.get("counts") or {}).get("sessions") or {}).get("included")
        if usd is None or not included:
            return cell(None)
        return cell(usd / included, fmt_usd(usd / included))

    costs = _row("estimated cost (USD, lower better)", [total(r) for r in reports], False, "cost")
    if any(c["text"] == "free" for c in costs["cells"]):
        costs["note"] = "free: no per-call price (a local model's GPU time is not priced)"
    return [costs,
            _row("estimated cost per included session (USD, lower better)", [per_session(r) for r in reports],
                 False, "cost")]


def row_notes(rows: Sequence[Mapping[str, Any]]) -> list[str]:
    """What a row's words mean where a cell says it in one word (``free``)."""
    return [row["note"] for row in rows if row.get("note")]
