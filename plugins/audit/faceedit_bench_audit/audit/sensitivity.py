"""How much paper (b)'s panel rule moves the audit's headline rates: the report's ``audit.panel_sensitivity``.

The authors' rule (METHODOLOGY §4.4) takes the mean of two judges that are at most one point apart and
rounds it with Python's ``round``, half to even: every 1-point disagreement lands on an even score
(2.5 -> 2, 3.5 -> 4), so "edit success 2 vs 3" counts as soft erasure and "race change 2 vs 3" does not.
The run keeps that rule. Here the same stored member answers are recombined with half-up rounding and
with the unrounded mean, and the threshold rates are computed from each, beside the default. Only the
rounding of agreeing members changes: a disagreement (the primary's score), a failed secondary (the
primary alone) and items judged by a single judge score the same under every rule.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import Any

from faceedit_bench.api.statistics import Threshold
from faceedit_bench_audit.audit.items import AuditItem
from faceedit_bench_audit.audit.rubric import VALUE_FIELDS

#: Each rounding of the panel rule's number (``PanelRule.number``, the rule an answer carries), and what it
#: means as the report prints it.
ROUNDING_LABELS = {"half_even": "round half to even (paper (b)'s code)", "half_up": "round half up",
                   "none": "unrounded mean"}
FIELDS = ("rate", "ci_low", "ci_high", "n", "count")


def recombined(item: AuditItem, rounding: str) -> dict[str, float | None]:
    """The item's scores with its panel's agreeing members recombined under ``rounding``."""
    rule = item.panel_rule
    scores = dict(item.scores)
    for value, current in item.scores.items():
        field = VALUE_FIELDS.get(value, value)
        members = [m.get(field) for m in item.member_scores]
        if current is None or not all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in members):
            continue
        scores[value] = float(rule.number(members, rounding)[0])
    return scores


def _rates(items: Sequence[AuditItem], rules: Mapping[str, tuple[str, Threshold]],
           confidence: float) -> dict[str, dict[str, Any]]:
    out = {}
    for name, (axis, threshold) in rules.items():
        values = [float(v) for i in items if (v := i.scores.get(axis)) is not None]
        r = threshold.rate(values, confidence=confidence, what=axis)
        out[name] = {k: r[k] for k in FIELDS}
    return out


def panel_sensitivity(scored: Sequence[AuditItem], rules: Mapping[str, tuple[str, Threshold]],
                      confidence: float) -> dict[str, Any]:
    """Every threshold rate under each rounding of paper (b)'s panel rule (the run's rule first), with how
    many items each rounding changes and the largest difference from the run's rate in percentage points."""
    panelled = [i for i in scored if len(i.member_scores) >= 2 and i.panel_rule is not None
                and i.panel_rule.rule == "tolerance"]
    recombine = {id(i) for i in panelled}
    if not panelled:
        return {"reason": "no edit was scored by a tolerance-rule judge panel with two answering members"}
    default = panelled[0].panel_rule.rounding
    out: dict[str, Any] = {"rule": "tolerance", "tolerance": panelled[0].panel_rule.tolerance, "default": default,
                           "labels": ROUNDING_LABELS,
                           "items_with_two_answers": len(panelled), "roundings": {}}
    base = _rates(scored, rules, confidence)
    for rounding in sorted(ROUNDING_LABELS, key=lambda r: r != default):
        if rounding == default:
            items, changed = list(scored), 0
        else:
            items, changed = [], 0
            for i in scored:
                if id(i) in recombine:
                    scores = recombined(i, rounding)
                    changed += scores != dict(i.scores)
                    i = replace(i, scores=scores)
                items.append(i)
        rates = base if rounding == default else _rates(items, rules, confidence)
        out["roundings"][rounding] = {
            "rates": rates, "items_changed": changed,
            "difference_pp": {name: (None if r["rate"] is None or base[name]["rate"] is None
                                     else 100.0 * (r["rate"] - base[name]["rate"])) for name, r in rates.items()}}
    return out
