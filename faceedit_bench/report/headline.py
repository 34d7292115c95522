"""The first screen of report.html: each protocol's main figures with their interval and n, the largest
disparity between groups, and the outcome counts. The details follow on the page.

The figures are the run's session metrics (Drop_FSS, SC, OER, a QA benchmark's scores: whatever it measured),
then each registered report section's own (:attr:`ReportSection.headline`; by default the values its
leaderboard views read from its record part, e.g. a protocol's rates and their gaps). Nothing is named here:
what a run did not measure is not shown, and a metric it skipped is listed with its reason.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

from faceedit_bench.analysis.multiplicity import (
    NO,
    NOT_TESTED,
    STATUS_TEXT,
    YES,
    bias_status,
    clustered_p,
    flag_count,
    not_tested_reason,
    paper_flag,
)
from faceedit_bench.plugin.manager import sections_in_use
from faceedit_bench.plugin.sections import ReportSection
from faceedit_bench.report.measures import declared_bounds, label_of, report_measures

DIRECTION = {True: "higher is better", False: "lower is better"}


def headline(report: Mapping[str, Any], sections: Sequence[ReportSection] | None = None) -> dict[str, Any]:
    """``{figures, skipped, disparity, outcomes}`` for the page's headline block."""
    measures = report_measures(report)
    metrics = [(name, m) for name, m in (report.get("metrics") or {}).items() if isinstance(m, Mapping)]
    # The protocol's own figures first; what the image metrics measured beside them after
    metrics.sort(key=lambda item: "image_metrics" in (item[1].get("requires") or ()))
    figures = [figure(label_of(name, measures), m, measures.get(name) or m) for name, m in metrics]
    for section in sections_in_use() if sections is None else sections:
        part = report.get(section.name)
        if isinstance(part, Mapping) and part:
            figures += section_figures(section, part, measures)
    return {"figures": figures,
            "skipped": [(label_of(n, measures), why) for n, why in (report.get("skipped_metrics") or {}).items()],
            "disparity": largest_disparity(report, measures), "outcomes": outcomes(report)}


def figure(label: str, summary: Mapping[str, Any], measure: Mapping[str, Any]) -> dict[str, Any]:
    """One headline figure: mean, interval, n, unit, direction and what its scale allows."""
    return {"label": label, "mean": summary.get("mean"), "ci_low": summary.get("ci_low"),
            "ci_high": summary.get("ci_high"), "n": summary.get("n"), "sub": summary.get("sub"),
            "n_identities": summary.get("n_identities"), "ci_reason": summary.get("ci_reason"),
            "unit": str(measure.get("unit") or ""), "direction": DIRECTION.get(measure.get("higher_is_better"), ""),
            "scale": scale_note(measure), "scale_why": scale_why(measure),
            "description": str(measure.get("description") or "")}


def scale_note(measure: Mapping[str, Any]) -> str:
    """The range a value can take: ``scale 0–100``, ``scale 0 and up, no upper bound``; empty when undeclared."""
    bounds = declared_bounds(measure.get("bounds"))
    if bounds is None:
        return ""
    low, high = bounds
    if high is None:
        return f"scale {low:g} and up, no upper bound"
    return f"scale {low:g}–{high:g}" if low is not None else f"scale up to {high:g}"


def scale_why(measure: Mapping[str, Any]) -> str:
    """Why a x100 quantity with no upper bound (OER) passes 100 legitimately: one item can count several times."""
    bounds = declared_bounds(measure.get("bounds"))
    if bounds is None or bounds[1] is not None or not str(measure.get("unit") or "").startswith("x100"):
        return ""
    return ("values above 100 are legitimate: an item can count more than once (e.g. several sub-axes changed "
            "in one edit)")


def section_figures(section: ReportSection, part: Mapping[str, Any],
                    measures: Mapping[str, Any]) -> list[dict[str, Any]]:
    """A section's headline figures: its own ``headline(part)``, else what its views read from its record."""
    if section.headline is not None:
        return [figure(str(f.get("label") or "?"), f, f) for f in section.headline(part) or ()]
    if section.record is None:
        return []
    record = section.record(part) or {}
    out = []
    for view in section.views[:1]:  # the first view is the section's main one; further views are variants
        for spec in view.values:
            if spec.source != section.name or spec.read is None:
                continue  # a session metric: already a figure
            value = spec.read(record)
            if not value or value.get("mean") is None:
                continue
            stated = dict(measures.get(spec.name) or {})
            label = label_of(spec.name, measures)
            meta = {**stated, "unit": spec.unit if spec.unit is not None else stated.get("unit"),
                    "bounds": spec.bounds or stated.get("bounds"),
                    "higher_is_better": spec.higher_is_better if spec.higher_is_better is not None
                    else stated.get("higher_is_better")}
            out.append(figure(spec.label.format(label=label) if spec.label else label, value, meta))
    return out


def largest_disparity(report: Mapping[str, Any], measures: Mapping[str, Any]) -> dict[str, Any] | None:
    """The contrast whose groups differ most: a flagged bias first, then the smallest corrected clustered p, then
    the largest WD relative to its threshold (WDs of different metrics are on different scales, so never compared
    raw). Its flag is the honest one (yes, no or not tested, with the reason); the paper's rule is beside it."""
    found = [d for d in report.get("disparity") or [] if isinstance(d, Mapping)]
    rows = [d for d in found if d.get("wd") is not None]
    if not rows:
        return None

    def rank(d: Mapping[str, Any]) -> tuple[float, float, float]:
        status = bias_status(d)
        p = next((q for q in (d.get("p_holm"), clustered_p(d), d.get("p_value")) if q is not None), None)
        threshold = d.get("threshold") or 0
        relative = d["wd"] / threshold if threshold else d["wd"]
        return ({YES: 0.0, NO: 1.0}.get(status, 2.0), p if isinstance(p, (int, float)) and math.isfinite(p) else 2.0,
                -relative)

    d = min(rows, key=rank)
    status = bias_status(d)
    return {"metric": label_of(str(d.get("metric")), measures), "contrast": d.get("contrast"), "wd": d["wd"],
            "p_value": d.get("p_value"), "p_clustered": clustered_p(d), "p_holm": d.get("p_holm"),
            "q_value": d.get("q_value"), "bias": status == YES, "status": STATUS_TEXT[status],
            "reason": not_tested_reason(d) if status == NOT_TESTED else None,
            "rule_flag": paper_flag(d), "identities": d.get("n_identities") or {},
            "worst": d.get("worst_group"), "best": d.get("best_group"), "of": len(found),
            "flags": flag_count(found)}


def outcomes(report: Mapping[str, Any]) -> dict[str, Any]:
    """Sessions included of planned, steps and judge answers by outcome (ok first)."""
    counts = report.get("counts") or {}
    steps = dict(counts.get("steps") or {})
    judge: dict[str, int] = {}
    for per in (counts.get("judge") or {}).values():
        for outcome, n in (per.items() if isinstance(per, Mapping) else ()):
            judge[outcome] = judge.get(outcome, 0) + int(n)
    order = lambda d: dict(sorted(d.items(), key=lambda kv: (kv[0] != "ok", -kv[1], kv[0])))  # noqa: E731
    sessions = counts.get("sessions") or {}
    return {"sessions": sessions.get("included"), "planned": sessions.get("planned"),
            "excluded": sum((sessions.get("excluded") or {}).values()), "steps": order(steps),
            "steps_total": sum(steps.values()), "judge": order(judge), "judge_total": sum(judge.values())}
