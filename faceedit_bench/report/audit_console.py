"""The audit's rates in the console summary: each rate with its Wilson CI and the headline max - min
disparity across groups (paper (b), ``report["audit"]``), and under the table the panel rule's
sensitivity line: the same rates under each rounding of the panel rule."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from rich import box
from rich.table import Table


def _pct(value: float | None) -> str:
    return "n/a" if value is None else f"{100 * value:.1f}%"


def audit_table(report: Mapping[str, Any]) -> Table | None:
    audit = report.get("audit")
    if not audit or not audit.get("rates"):
        return None
    by = next((d.get("by") for d in (audit.get("disparity") or {}).values() if d.get("by")), "group")
    table = Table(box=box.SIMPLE_HEAD, pad_edge=False, show_edge=False,
                  title=f"audit ({audit.get('scored')} of {audit.get('items')} judged edits scored; "
                        f"thresholds: {audit.get('thresholds_source')})", title_justify="left")
    for column in ("rate", "rule", "value", f"{int(100 * audit.get('confidence', 0.95))}% CI", "n",
                   f"max - min by {by} (pp)"):
        table.add_column(column, justify="left" if column in ("rate", "rule") else "right")
    for name, r in audit["rates"].items():
        d = (audit.get("disparity") or {}).get(name) or {}
        gap = d.get("max_minus_min_pp")
        spread = "n/a" if gap is None else f"{gap:.1f} ({d.get('max_group')} - {d.get('min_group')})"
        ci = "" if r.get("ci_low") is None else f"[{_pct(r['ci_low'])}, {_pct(r['ci_high'])}]"
        table.add_row(name, f"{r.get('axis')} {r.get('rule')}", _pct(r.get("rate")), ci, str(r.get("n")), spread)
    line = sensitivity_line(audit)
    if line:
        table.caption, table.caption_justify = line, "left"
    return table


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
