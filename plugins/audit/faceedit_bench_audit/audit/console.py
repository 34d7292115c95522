"""The audit's rates in the console summary: each rate with its Wilson CI and the headline max - min
disparity across groups (paper (b), ``report["audit"]``), and under the table the panel rule's
sensitivity line: the same rates under each rounding of the panel rule."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from faceedit_bench.api.sections import Column, fitted_tables


def _pct(value: float | None) -> str:
    return "n/a" if value is None else f"{100 * value:.1f}%"


def _spread(d: Mapping[str, Any]) -> str:
    gap = d.get("max_minus_min_pp")
    if gap is None:
        return "n/a"
    high, low = d.get("max_group"), d.get("min_group")
    return f"{gap:.1f}" + (f" ({high} - {low})" if high and low and high != low else "")


def audit_tables(audit: Mapping[str, Any], width: int) -> list[Any]:
    """The console table of ``report["audit"]`` at ``width`` columns (empty without rates)."""
    if not audit or not audit.get("rates"):
        return []
    by = next((d.get("by") for d in (audit.get("disparity") or {}).values() if d.get("by")), "group")
    rows = []
    for name, r in audit["rates"].items():
        interval = "" if r.get("ci_low") is None else f"[{_pct(r['ci_low'])}, {_pct(r['ci_high'])}]"
        rows.append([name, f"{r.get('axis')} {r.get('rule')}", _pct(r.get("rate")), interval, str(r.get("n")),
                     _spread((audit.get("disparity") or {}).get(name) or {})])
    level = f"{int(100 * audit.get('confidence', 0.95))}% CI"
    return fitted_tables([Column("rate")], [Column("rule"), Column("value", True), Column(level, True),
                                            Column("n", True), Column("max - min", True)], rows, width,
                         title=f"audit: {audit.get('scored')} of {audit.get('items')} judged edits scored; "
                               f"thresholds: {audit.get('thresholds_source')}",
                         legend=f"max - min: the largest rate by {by} minus the smallest, in percentage points "
                                "(highest - lowest group)"
                                + (f"\n{line}" if (line := sensitivity_line(audit)) else ""))


def sensitivity_line(audit: Mapping[str, Any]) -> str | None:
    """``panel rule sensitivity (...): soft_erasure_rate 39.7% | 33.8% | 33.8%; ...`` (the run's rounding first)."""
    s = audit.get("panel_sensitivity") or {}
    roundings = s.get("roundings") or {}
    if not roundings:
        return None
    labels = s.get("labels") or {}
    heads = " | ".join(f"{labels.get(r, r)}{' (this run)' if r == s.get('default') else ''}" for r in roundings)
    rates = "; ".join(f"{name} " + " | ".join(_pct(((roundings[r].get('rates') or {}).get(name) or {}).get("rate"))
                                              for r in roundings)
                      for name in (audit.get("rates") or {}))
    return f"panel rule sensitivity, the same answers recombined ({heads}): {rates}"
