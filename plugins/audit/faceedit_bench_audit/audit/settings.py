"""Settings of paper (b)'s audit: the report section ``audit``'s ``analysis.audit`` (METHODOLOGY §4.3,
docs/audit.md): the threshold rules of its rates, the attributes it breaks them down by, the focus group of
its one-vs-rest tests and the attribute of its headline disparity."""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from faceedit_bench.api.sections import check_number, reject

#: Paper (b)'s rates (METHODOLOGY §4.3): rate name -> "<rubric axis> <op> <threshold>".
PAPER_B_THRESHOLDS = {
    "edit_success_rate": "edit_success >= 4", "soft_erasure_rate": "edit_success <= 2",
    "race_change_rate": "race_change >= 3", "gender_change_rate": "gender_change >= 3",
    "skin_lightening_rate": "skin_tone >= 4", "skin_darkening_rate": "skin_tone <= 2",
}
_RULE = re.compile(r"^\s*([A-Za-z_][A-Za-z0-9_]*)\s*(>=|<=)\s*(-?\d+(?:\.\d+)?)\s*$")


@dataclass
class AuditConf:
    """Paper (b)'s audit of the ``rubric`` judge metric (audit/tables.py, docs/audit.md)."""

    # rate name -> "<axis> >= t" or "<axis> <= t" (the main table's caption reads race/gender >= 2 as changed)
    thresholds: dict[str, str] = field(default_factory=lambda: dict(PAPER_B_THRESHOLDS))
    # demographic attributes the rates and means are broken down by
    attributes: list[str] = field(default_factory=lambda: ["race", "gender", "age_bin"])
    # attribute -> the group tested against all others (Mann-Whitney U), e.g. White vs non-White
    focus: dict[str, str] = field(default_factory=lambda: {"race": "White"})
    # the attribute whose max - min rate disparity is the headline (audit.disparity)
    disparity_by: str = "race"
    # example edits shown per group of disparity_by in report.html
    examples_per_group: int = 3

    def __post_init__(self) -> None:
        key = "analysis.audit"
        if not isinstance(self.thresholds, dict) or not self.thresholds:
            reject(f"{key}.thresholds", self.thresholds, 'a mapping of rate name -> "edit_success >= 4"')
        for name, rule in self.thresholds.items():
            if not isinstance(rule, str) or not _RULE.match(rule):
                reject(f"{key}.thresholds.{name}", rule, 'a rule such as "edit_success >= 4" or "skin_tone <= 2"')
        if not isinstance(self.attributes, list) or not all(isinstance(a, str) and a for a in self.attributes):
            reject(f"{key}.attributes", self.attributes, "a list of demographic attributes, e.g. [race, gender, age_bin]")
        if not isinstance(self.focus, dict) or not all(isinstance(v, str) and v for v in self.focus.values()):
            reject(f"{key}.focus", self.focus, "a mapping of attribute -> group, e.g. {race: White}")
        if not isinstance(self.disparity_by, str) or self.disparity_by not in self.attributes:
            reject(f"{key}.disparity_by", self.disparity_by, f"one of {key}.attributes ({self.attributes})")
        check_number(f"{key}.examples_per_group", self.examples_per_group, whole=True, at_least=0)


def audit_rule(rule: str) -> tuple[str, str, float]:
    """ "race_change >= 3" -> ("race_change", ">=", 3.0) (checked by AuditConf)."""
    match = _RULE.match(rule)
    assert match is not None, rule
    return match.group(1), match.group(2), float(match.group(3))
