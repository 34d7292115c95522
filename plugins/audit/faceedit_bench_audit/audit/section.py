"""Paper (b)'s audit as a report section (``report["audit"]``, docs/audit.md): collected from the ``rubric``
judge metric's answers, with its settings at ``analysis.audit``, tracker metrics, console table, page section,
the rates and disparities a leaderboard submission keeps, their verification and the leaderboard's view."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from faceedit_bench.api import SessionResult
from faceedit_bench.api.sections import (
    ReportSection,
    SectionHtml,
    SectionRun,
    ValueSpec,
    ViewSpec,
    load_schema,
    metric_key,
)
from faceedit_bench.api.sections import mostly_missing_warning as warning
from faceedit_bench_audit.audit.console import audit_tables
from faceedit_bench_audit.audit.items import RUBRIC, AuditCollector
from faceedit_bench_audit.audit.page import audit_context
from faceedit_bench_audit.audit.settings import AuditConf
from faceedit_bench_audit.audit.tables import audit_rules, audit_section
from faceedit_bench_audit.audit.tracking import audit_metrics

#: A rate as shown on the leaderboard (percent) and a gap between two of them (percentage points).
PERCENT = (0.0, 100.0)
#: The audit's rates are shares of judged edits (one point of a percentage); their gaps are in points.
RATE_TOLERANCE = 0.01
GAP_TOLERANCE = 1.0


class AuditSectionCollector:
    """The rubric's items of every session, and at the end the audit's tables (analysis/audit.py)."""

    def __init__(self, run: SectionRun) -> None:
        self.conf: AuditConf = run.settings
        audit_rules(self.conf)  # a threshold naming no rubric axis fails now, before any work
        self.run = run
        self.items = AuditCollector(tuple(self.conf.attributes))
        self.values = {v.name: v for v in run.judge_metrics[RUBRIC].values}  # direction, bounds, ideal per axis

    def add_session(self, result: SessionResult) -> None:
        self.items.add(result)

    def finish(self) -> dict[str, Any]:
        return audit_section(self.items, self.conf, confidence=self.run.confidence, n_resamples=self.run.n_resamples,
                             seed=self.run.seed, values=self.values)


def collector(run: SectionRun) -> AuditSectionCollector | None:
    return AuditSectionCollector(run) if RUBRIC in run.judge_metrics else None


def warnings(part: Mapping[str, Any]) -> list[dict[str, Any] | None]:
    if not part.get("items"):
        return []
    return [warning("audit_unscored", "rubric edits", "were not scored", part["items"], part.get("not_scored") or {},
                    verb="scored")]


def record(part: Mapping[str, Any]) -> dict[str, Any]:
    """What a submission keeps: the rates and their disparities (docs/leaderboard_views.md)."""
    return {key: part.get(key) or {} for key in ("rates", "disparity")}


def _number(value: Any) -> float | None:
    """A submission's value as a number; anything else (text from a stranger) as None."""
    return float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else None


def read_rate(name: str) -> Any:
    def read(part: Mapping[str, Any]) -> dict[str, Any] | None:
        r = (part.get("rates") or {}).get(name)
        if not isinstance(r, Mapping):
            return None
        scaled = {k: None if (v := _number(r.get(src))) is None else 100.0 * v
                  for k, src in (("mean", "rate"), ("ci_low", "ci_low"), ("ci_high", "ci_high"))}
        return {**scaled, "n": r.get("n")}

    return read


def read_gap(name: str, by: str) -> Any:
    def read(part: Mapping[str, Any]) -> dict[str, Any] | None:
        found = (part.get("disparity") or {}).get(name)
        for d in found if isinstance(found, list) else [found]:
            if isinstance(d, Mapping) and d.get("by") == by:
                return {"mean": _number(d.get("max_minus_min_pp")), "ci_low": _number(d.get("ci_low")),
                        "ci_high": _number(d.get("ci_high")), "n": None,
                        "sub": " vs ".join(str(d[g]) for g in ("max_group", "min_group") if d.get(g))}
        return None

    return read


def rate_values(*names: str, by: str) -> tuple[ValueSpec, ...]:
    """Each rate in percent, then each rate's max − min across the groups of ``by``, in percentage points."""
    rates = tuple(ValueSpec(n, "audit", read_rate(n), unit="%", bounds=PERCENT) for n in names)
    gaps = tuple(ValueSpec(n, "audit", read_gap(n, by), key=f"{n} max-min by {by}", label=f"{{label}} max−min by {by}",
                           unit="pp", bounds=PERCENT, higher_is_better=False,
                           description=f"The largest minus the smallest {by} group's {{label}}, in percentage points, "
                                       "with its bootstrap interval. Lower is better.") for n in names)
    return rates + gaps


VIEW = ViewSpec(
    key="audit", title="audit: soft erasure and race change",
    description="The demographic-misrepresentation audit (METHODOLOGY §4): the share of edits the judge panel "
                "rated as soft erasure (the edit silently not done) and as a change of the person's race, each "
                "with its Wilson interval, and each rate's max − min across races in percentage points with its "
                "bootstrap interval. Hard refusals are counted beside them.",
    values=rate_values("soft_erasure_rate", "race_change_rate", by="race"),
    rank_by="soft_erasure_rate")


def verify(c: Any, submitted: Mapping[str, Any] | None, reproduced: Mapping[str, Any] | None) -> None:
    """The rates within a point of a percentage and their disparities within a point, when the submission
    states them (``c``: the verification's comparer, with ``exact`` and ``close``)."""
    if submitted is None:
        return
    a_rates, b_rates = submitted.get("rates") or {}, (reproduced or {}).get("rates") or {}
    c.exact("audit.rates (names)", sorted(a_rates), sorted(b_rates))
    for name in sorted(set(a_rates) & set(b_rates)):
        c.exact(f"audit.rates.{name}.n", a_rates[name].get("n"), b_rates[name].get("n"))
        for stat in ("rate", "ci_low", "ci_high"):
            c.close(f"audit.rates.{name}.{stat}", _number(a_rates[name].get(stat)), _number(b_rates[name].get(stat)),
                    RATE_TOLERANCE)
    a_gaps, b_gaps = submitted.get("disparity") or {}, (reproduced or {}).get("disparity") or {}
    c.exact("audit.disparity (names)", sorted(a_gaps), sorted(b_gaps))
    for name in sorted(set(a_gaps) & set(b_gaps)):
        rows = [{str(r.get("by")): r for r in (g if isinstance(g, list) else [g]) if isinstance(r, Mapping)}
                for g in (a_gaps[name], b_gaps[name])]
        c.exact(f"audit.disparity.{name} (by)", sorted(rows[0]), sorted(rows[1]))
        for by in sorted(set(rows[0]) & set(rows[1])):
            c.close(f"audit.disparity.{name}.{by}", _number(rows[0][by].get("max_minus_min_pp")),
                    _number(rows[1][by].get("max_minus_min_pp")), GAP_TOLERANCE)


def _html_context(report: Mapping[str, Any], store: Any) -> dict[str, Any] | None:
    context = audit_context(report, store)
    return None if context is None else {"audit": context}


AUDIT = ReportSection(
    name="audit", title="Demographic audit (paper (b) rubric)",
    schema=load_schema("faceedit_bench_audit", "schemas/audit.schema.json"),
    collector=collector, settings=AuditConf,
    tracking=lambda part: audit_metrics(part, metric_key),
    console=audit_tables,
    html=SectionHtml("audit.html.j2", "faceedit_bench_audit", context=_html_context, nav="audit"),
    warnings=warnings, record=record, verify=verify, views=(VIEW,),
    description="paper (b)'s audit of the rubric judge metric: rates with Wilson CIs, per-group tables and "
                "disparities, panel sensitivity (docs/audit.md)")
