"""The items of paper (b)'s audit, collected from session results as they stream past.

An item is one edit the ``rubric`` judge metric was asked about: the face's labels, the
prompt's id and category, the judge's outcome, the (panel-combined) score per axis, the axes a
panel flagged for review, and the hashes of the source and edited images (for the report's
example grid). Every edit is also counted per group by outcome, so hard refusals
(``refused``) stand next to soft erasure (an image came back, the edit did not happen).
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from faceedit_bench.api import Outcome, SessionResult

RUBRIC = "rubric"


@dataclass(frozen=True)
class AuditItem:
    """One judged edit. ``scores`` holds every axis (None where the answer was not ``ok`` or the
    axis does not apply, e.g. aging accuracy outside the aging prompt)."""

    face_id: str
    labels: Mapping[str, str | None]
    session_id: str
    k: int
    prompt_id: str | None
    prompt_category: str | None
    outcome: str
    reason: str = ""
    scores: Mapping[str, float | None] = field(default_factory=dict)
    flags: tuple[str, ...] = ()  # axes the panel flagged (members more than the tolerance apart)
    panel_status: str = ""
    source_hash: str | None = None
    output_hash: str | None = None
    #: A panel's ok member answers' scores by axis, the primary's first, and its rule (for recombining the
    #: same answers under another rounding: the audit's sensitivity line); empty for a single judge.
    member_scores: tuple[Mapping[str, Any], ...] = ()
    panel_rule: Any = None


@dataclass
class AuditCollector:
    """Feed it every session result (:meth:`add`); it keeps the audit's items and edit counts."""

    attributes: tuple[str, ...]
    metric: str = RUBRIC
    items: list[AuditItem] = field(default_factory=list)
    # attribute -> label -> step outcome -> count (every edit, judged or not)
    edits: dict[str, dict[str, Counter[str]]] = field(default_factory=lambda: defaultdict(lambda: defaultdict(Counter)))
    # prompt id -> step outcome -> count
    edits_by_prompt: dict[str, Counter[str]] = field(default_factory=lambda: defaultdict(Counter))
    unlabelled: Counter[str] = field(default_factory=Counter)  # attribute -> edits without that label

    def add(self, result: SessionResult) -> None:
        labels = result.face.demographics
        for state in result.steps:
            step = result.session.steps[state.k - 1]
            self.edits_by_prompt[step.prompt_id or result.session.session_id][state.outcome.value] += 1
            for attribute in self.attributes:
                label = labels.get(attribute)
                if label is None:
                    self.unlabelled[attribute] += 1
                else:
                    self.edits[attribute][str(label)][state.outcome.value] += 1
        judged = result.judged
        judgment = judged.metrics.get(self.metric) if judged is not None else None
        if judgment is None:
            return
        hashes = result.image_hashes
        for k, answer, points in zip(judgment.ks, judgment.answers, judgment.points):
            step = result.session.steps[k - 1]
            self.items.append(AuditItem(
                face_id=result.face.face_id, labels=dict(labels), session_id=result.session.session_id, k=k,
                prompt_id=step.prompt_id, prompt_category=step.prompt_category, outcome=answer.outcome.value,
                reason=answer.reason, scores=dict(points), flags=_axes(getattr(answer, "flags", ())),
                panel_status=getattr(answer, "status", ""),
                source_hash=hashes[0] if hashes else None,
                output_hash=hashes[k] if len(hashes) > k else None,
                member_scores=_member_scores(answer), panel_rule=getattr(answer, "rule", None)))

    @property
    def judged_ok(self) -> list[AuditItem]:
        return [i for i in self.items if i.outcome == Outcome.OK.value]

    def describe_edits(self) -> dict[str, Any]:
        return {"by_group": {a: {label: dict(sorted(c.items())) for label, c in sorted(per.items())}
                             for a, per in sorted(self.edits.items())},
                "by_prompt": {p: dict(sorted(c.items())) for p, c in sorted(self.edits_by_prompt.items())},
                "unlabelled": dict(sorted(self.unlabelled.items()))}


def _member_scores(answer: Any) -> tuple[Mapping[str, Any], ...]:
    """The ``scores`` of a panel answer's ok members, in panel order with the primary first."""
    rule, members = getattr(answer, "rule", None), getattr(answer, "members", None)
    if rule is None or not members:
        return ()
    order = [rule.primary, *(m for m in rule.members if m != rule.primary)]
    return tuple(dict(members[m].value.get("scores") or {}) for m in order
                 if m in members and members[m].outcome is Outcome.OK and members[m].value)


def _axes(flags: Any) -> tuple[str, ...]:
    """Panel flag paths ("scores.race_change") -> the axes ("race_change"); text fields are never compared."""
    return tuple(sorted({str(f).split(".")[-1] for f in flags if str(f).startswith("scores.")}))
