"""The audit section (paper (b), ``report["audit"]``) as flat tracker metrics: per axis, rate,
group and prompt category, and the panel's review flags per axis. Undefined values are left out."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

RATE_STATS = (("rate", ""), ("ci_low", "ci_low"), ("ci_high", "ci_high"), ("n", "n"))


def audit_metrics(audit: Mapping[str, Any] | None, key: Callable[..., str]) -> dict[str, float]:
    """``audit_axis_<axis>`` (mean, CI, n), ``audit_rate_<rate>``, ``audit_<attribute>_<group>_<rate>``
    and ``..._<axis>``, ``audit_disparity_<rate>_pp`` (headline attribute) and
    ``audit_<attribute>_disparity_<rate>_pp``, ``audit_category_<category>_<rate>``, ``audit_panel_flags_<axis>``,
    ``audit_panel_sensitivity_<rounding>_<rate>``."""
    out: dict[str, float] = {}
    if not audit:
        return out

    def put(name: str, value: Any) -> None:
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            out[name] = float(value)

    def put_rates(prefix: tuple[str, ...], rates: Mapping[str, Any]) -> None:
        for name, r in rates.items():
            for stat, suffix in RATE_STATS:
                put(key("audit", *prefix, name, suffix), r.get(stat))

    for axis, s in (audit.get("axes") or {}).items():
        for stat in ("mean", "ci_low", "ci_high", "n"):
            put(key("audit", "axis", axis, "" if stat == "mean" else stat), s.get(stat))
    put_rates(("rate",), audit.get("rates") or {})
    for name, d in (audit.get("disparity") or {}).items():
        for stat, suffix in (("max_minus_min_pp", "pp"), ("ci_low", "pp_ci_low"), ("ci_high", "pp_ci_high")):
            put(key("audit", "disparity", name, suffix), d.get(stat))
    for attribute, tables in (audit.get("groups") or {}).items():
        for label, g in (tables.get("labels") or {}).items():
            put_rates((attribute, label), g.get("rates") or {})
            put(key("audit", attribute, label, "hard_refusal_rate"), (g.get("hard_refusal_rate") or {}).get("rate"))
            for axis, s in (g.get("axes") or {}).items():
                put(key("audit", attribute, label, axis), s.get("mean"))
        for name, d in (tables.get("disparity") or {}).items():
            put(key("audit", attribute, "disparity", name, "pp"), d.get("max_minus_min_pp"))
        for axis, t in (tables.get("tests") or {}).items():
            put(key("audit", attribute, "kruskal", axis, "p_value"), (t.get("kruskal") or {}).get("p_value"))
    for kind in ("category", "subcategory"):
        for label, g in ((audit.get("prompts") or {}).get(kind) or {}).items():
            put_rates((kind, label), g.get("rates") or {})
    for axis, n in ((audit.get("panel") or {}).get("flags") or {}).items():
        put(key("audit", "panel", "flags", axis), n)
    for rounding, r in ((audit.get("panel_sensitivity") or {}).get("roundings") or {}).items():
        for name, rate in (r.get("rates") or {}).items():
            put(key("audit", "panel_sensitivity", rounding, name), rate.get("rate"))
    return out
