"""The audit's rates in the console summary: each rate with its Wilson CI and the headline max - min
disparity across groups (paper (b), ``report["audit"]``)."""

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
    return table
