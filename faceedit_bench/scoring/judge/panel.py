"""Judge panels: several judges asked the same question, their answers combined by a stated rule.

Each member is its own judge component (model, endpoint, limits, prices) with its own
:class:`~faceedit_bench.scoring.judge.service.JudgeService`, so every member's answer is stored in
the ledger under that member's own judgment key, and a member's answers are reused by any panel
(or single-judge run) that asks it the same question. The combination is recomputed from the
stored answers; the rule and the members are part of the panel's description and so of the run
key and of every judged row's label.

Rules, field by field over the answers' JSON (numbers; categorical fields are enums, lists of
enums and booleans; free text is the primary's and never compared):

* ``tolerance`` (the rule of a two-judge panel in METHODOLOGY §4.4): numbers within ``tolerance`` of each other
  (|g - o| <= 1 for two members) -> ``round(mean)`` (Python's round: half to even, as the authors'
  code; ``rounding: half_up`` or ``none`` (the unrounded mean) change only this step); otherwise the
  primary member's number and a disagreement flag. A failed secondary -> the primary's answer
  alone (status ``secondary_failed``, counted). A failed primary -> no answer (status
  ``primary_failed``: the outcome is the primary's, the values are undefined).
* ``mean`` / ``median``: of the members that answered; ``majority``: the most common value
  (ties go to the earliest member in panel order, the primary first). These need ``quorum``
  members with an ``ok`` answer (default: all); otherwise no answer (status ``too_few``).
  Numbers further apart than ``tolerance`` are flagged (the combined value is still the rule's).

Categorical fields (enums, lists of enums, booleans) follow ``categorical``: ``majority`` (the most
common value, ties: the primary; with two members that is the primary's) or ``agreement`` (the value
only when every answering member gives it; otherwise ``None``). Either way a difference is flagged
and counted.
"""

from __future__ import annotations

import asyncio
import math
import statistics
from collections import Counter, defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from faceedit_bench.keys import fingerprint
from faceedit_bench.records import JudgeAnswer, Outcome
from faceedit_bench.scoring.judge.service import JudgeService, PromptTemplate

RULES = ("tolerance", "mean", "median", "majority")
#: How the tolerance rule rounds the mean of agreeing members: Python's round (half to even, the authors' code),
#: half up, or not at all.
ROUNDINGS = ("half_even", "half_up", "none")
#: How categorical fields combine: the most common value (ties: the primary), or only a value all agree on.
CATEGORICAL = ("majority", "agreement")
#: Flagged items listed one by one in the report (all are counted).
MAX_LISTED_FLAGS = 500


@dataclass(frozen=True)
class PanelRule:
    rule: str
    members: tuple[str, ...]  # labels, in panel order
    primary: str
    tolerance: float = 1.0
    quorum: int | None = None  # mean/median/majority: ok answers needed (None: every member)
    rounding: str = "half_even"  # tolerance: how the mean of agreeing members is rounded (ROUNDINGS)
    categorical: str = "majority"  # CATEGORICAL

    def __post_init__(self) -> None:
        if self.rule not in RULES:
            raise ValueError(f"judge.params.rule={self.rule!r}; choose one of {', '.join(RULES)}")
        if len(self.members) < 2:
            raise ValueError("a judge panel needs at least two members (judge.params.members)")
        if self.primary not in self.members:
            raise ValueError(f"judge.params.primary={self.primary!r} is not a member; members: "
                             f"{', '.join(self.members)}")
        if self.tolerance < 0:
            raise ValueError("judge.params.tolerance must be >= 0")
        if self.quorum is not None and not 1 <= self.quorum <= len(self.members):
            raise ValueError(f"judge.params.quorum must be between 1 and {len(self.members)}")
        if self.rounding not in ROUNDINGS:
            raise ValueError(f"judge.params.rounding={self.rounding!r}; choose one of {', '.join(ROUNDINGS)}")
        if self.categorical not in CATEGORICAL:
            raise ValueError(f"judge.params.categorical={self.categorical!r}; choose one of {', '.join(CATEGORICAL)}")

    def describe(self) -> dict[str, Any]:
        out = {"rule": self.rule, "primary": self.primary, "tolerance": self.tolerance,
               "quorum": self.quorum if self.rule != "tolerance" else None, "members": list(self.members)}
        # Only when not the default, so that the identity of panels configured without them is unchanged.
        if self.rounding != "half_even":
            out["rounding"] = self.rounding
        if self.categorical != "majority":
            out["categorical"] = self.categorical
        return out

    def number(self, values: Sequence[float], rounding: str | None = None) -> tuple[float, bool]:
        """Paper (b)'s rule for one number, the primary's first: (the combined number, whether the members
        agreed). Within ``tolerance``: the mean, rounded as ``rounding`` says (default: the rule's own;
        ``half_even`` is Python's round, as the authors' code: 2.5 -> 2, 3.5 -> 4; ``half_up``: 2.5 -> 3;
        ``none``: the unrounded mean); otherwise the primary's number. A rule read from stored answers
        recombines them under another rounding with it."""
        rounding = self.rounding if rounding is None else rounding
        if max(values) - min(values) > self.tolerance:
            return values[0], False
        mean = sum(values) / len(values)
        if rounding == "half_even":
            return round(mean), True
        if rounding == "half_up":
            return math.floor(mean + 0.5), True
        return mean, True


@dataclass(frozen=True)
class PanelAnswer(JudgeAnswer):
    """A combined answer, with every member's own answer and what the rule found."""

    members: Mapping[str, JudgeAnswer] = field(default_factory=dict)
    status: str = ""  # agreed | disagreed | secondary_failed | primary_failed | too_few
    flags: tuple[str, ...] = ()  # answer fields (dotted paths) where members disagreed
    failed: tuple[str, ...] = ()  # members without an ok answer
    rule: PanelRule | None = None  # the rule that combined them (for re-combining under another rounding)


class JudgePanel:
    """The ``judge=panel`` component: member judges (already created) and the rule."""

    def __init__(self, members: Mapping[str, Any], descriptions: Mapping[str, Mapping[str, Any]],
                 rule: PanelRule, notes: Sequence[str] = ()) -> None:
        self.members = dict(members)
        self.notes = tuple(notes)  # what a reader must know about the panel, e.g. where it differs from a paper
        self.descriptions = {k: dict(v) for k, v in descriptions.items()}
        self.rule = rule
        # Each member prices its own calls (its service charges them); listed per member for the report.
        self.prices = {m: dict(getattr(j, "prices", None) or {}) for m, j in self.members.items()
                       if getattr(j, "prices", None)}

    def describe(self) -> dict[str, Any]:
        models = ", ".join(f"{m}={d.get('model', d.get('version', d.get('name', '?')))}"
                           for m, d in self.descriptions.items())
        # "version": one line naming the rule and the members' models (leaderboards show it)
        return {"version": f"panel {self.rule.rule} ({models})", "panel": self.rule.describe(),
                "members": self.descriptions, **({"notes": list(self.notes)} if self.notes else {})}


# -- combining --------------------------------------------------------------------------------


def _resolve(schema: Mapping[str, Any], root: Mapping[str, Any]) -> Mapping[str, Any]:
    while "$ref" in schema:
        schema = root.get("$defs", {})[schema["$ref"].split("/")[-1]]
    return schema


def _is_number(v: Any) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool)


def _freeze(v: Any) -> Any:
    if isinstance(v, list):
        return tuple(sorted(map(repr, v)))
    if isinstance(v, dict):
        return tuple(sorted((k, _freeze(x)) for k, x in v.items()))
    return v


def _vote(values: Sequence[Any]) -> tuple[Any, bool]:
    """The most common value (ties: the earliest) and whether the members differed."""
    counts = Counter(_freeze(v) for v in values)
    best = max(counts.values())
    winner = next(v for v in values if counts[_freeze(v)] == best)
    return winner, len(counts) > 1


class _Combiner:
    def __init__(self, rule: PanelRule, root: Mapping[str, Any]) -> None:
        self.rule, self.root = rule, root
        self.flags: list[str] = []

    def value(self, values: Sequence[Any], schema: Mapping[str, Any], path: str) -> Any:
        """``values`` in panel order, the primary's first."""
        schema = _resolve(schema, self.root)
        if all(isinstance(v, dict) for v in values):
            props = schema.get("properties", {})
            return {k: self.value([v[k] for v in values if k in v], props.get(k, {}), f"{path}{k}.")
                    for k in values[0]}
        if all(_is_number(v) for v in values):
            return self.number(values, path[:-1])
        categorical = ("enum" in schema or "const" in schema or schema.get("type") == "boolean"
                       or "enum" in _resolve(schema.get("items", {}), self.root))
        if not categorical:
            return values[0]  # free text (reasoning): the primary's, never compared
        winner, differ = _vote(values)
        if differ:
            self.flags.append(path[:-1])
            if self.rule.categorical == "agreement":
                return None  # no value the members agree on: flagged and counted, never the primary's alone
        return winner

    def number(self, values: Sequence[float], path: str) -> float:
        spread = max(values) - min(values)
        rule = self.rule.rule
        if rule == "tolerance":
            number, agreed = self.rule.number(values)
            if not agreed:
                self.flags.append(path)
            return number
        if spread > self.rule.tolerance:
            self.flags.append(path)
        if rule == "mean":
            return statistics.fmean(values)
        if rule == "median":
            return statistics.median(values)
        return _vote(values)[0]


def combine(template: PromptTemplate, answers: Mapping[str, JudgeAnswer], rule: PanelRule) -> PanelAnswer:
    """The panel's answer from its members' answers (keyed by member label)."""
    order = [rule.primary, *(m for m in rule.members if m != rule.primary)]
    ok = [m for m in order if answers[m].outcome is Outcome.OK and answers[m].value]
    failed = tuple(m for m in order if m not in ok)
    usage: dict[str, Any] = {}
    for m in order:
        for k, v in answers[m].usage.items():
            if _is_number(v):
                usage[k] = usage.get(k, 0) + v
    base = {"raw": None, "usage": usage, "template": f"{template.name}@{template.version}",
            "template_hash": template.hash, "resumed": all(a.resumed for a in answers.values()),
            "members": dict(answers), "failed": failed, "rule": rule}

    def undefined(status: str, member: str) -> PanelAnswer:
        a = answers[member]
        return PanelAnswer(a.outcome, None, reason=f"{status}: {member} {a.outcome.value} {a.reason}".strip(),
                           status=status, **base)

    if rule.rule == "tolerance":
        if rule.primary not in ok:
            return undefined("primary_failed", rule.primary)
        if len(ok) == 1:
            return PanelAnswer(Outcome.OK, answers[rule.primary].value, reason="secondary failed: primary alone",
                               status="secondary_failed", **base)
    elif len(ok) < (rule.quorum or len(order)):
        return undefined("too_few", failed[0])
    combiner = _Combiner(rule, template.json_schema)
    value = combiner.value([answers[m].value for m in ok], template.json_schema, "")
    status = "disagreed" if combiner.flags else "agreed"
    return PanelAnswer(Outcome.OK, value, reason="", status=status, flags=tuple(combiner.flags), **base)


class PanelService:
    """A :class:`JudgeService` look-alike for the scorers: asks every member, combines the answers."""

    def __init__(self, services: Mapping[str, JudgeService], rule: PanelRule, describe: Mapping[str, Any]) -> None:
        self.services = dict(services)
        self.rule = rule
        self.judge_fp = fingerprint(["panel", rule.describe(), {m: s.judge_fp for m, s in self.services.items()}])
        self.description = describe

    @property
    def calls_made(self) -> int:
        return sum(s.calls_made for s in self.services.values())

    def run_cost_usd(self) -> float:
        return sum(s.run_cost_usd() for s in self.services.values())

    def describe_judge(self) -> str:
        members = ", ".join(f"{m}={d.get('name', '?')} {d.get('model', d.get('version', '?'))}"
                            for m, d in self.description.get("members", {}).items())
        return f"panel({self.rule.rule}, primary {self.rule.primary}: {members})"

    async def ask(self, template: PromptTemplate, image_hashes: Sequence[str], seed: int = 0, *,
                  fresh: bool = False, image_labels: Sequence[str] = (), **fields: str) -> PanelAnswer:
        members = list(self.services)
        answers = await asyncio.gather(*(self.services[m].ask(template, image_hashes, seed, fresh=fresh,
                                                              image_labels=image_labels, **fields)
                                         for m in members))
        return combine(template, dict(zip(members, answers)), self.rule)


# -- reporting --------------------------------------------------------------------------------


class PanelTally:
    """Per-member outcomes, rule statuses and disagreement flags over a run's judged sessions."""

    def __init__(self) -> None:
        self.members: dict[str, dict[str, Counter[str]]] = defaultdict(lambda: defaultdict(Counter))
        self.status: dict[str, Counter[str]] = defaultdict(Counter)
        self.flags: dict[str, Counter[str]] = defaultdict(Counter)
        self.flagged: list[dict[str, Any]] = []
        self.n_flagged = 0

    def __bool__(self) -> bool:
        return bool(self.status)

    def add(self, face_id: str, session_id: str, judged: Any) -> None:
        for metric, judgment in judged.metrics.items():
            for k, answer in zip(judgment.ks, judgment.answers):
                if not isinstance(answer, PanelAnswer):
                    continue
                for member, a in answer.members.items():
                    self.members[answer.template][member][a.outcome.value] += 1
                self.status[answer.template][answer.status] += 1
                for path in answer.flags:
                    self.flags[answer.template][path] += 1
                if answer.flags:
                    self.n_flagged += 1
                    if len(self.flagged) < MAX_LISTED_FLAGS:
                        self.flagged.append({
                            "face_id": face_id, "session_id": session_id, "metric": metric, "k": k,
                            "fields": list(answer.flags),
                            "members": {m: _at(a.value, answer.flags) for m, a in answer.members.items()},
                            "kept": _at(answer.value, answer.flags)})

    def member_counts(self) -> dict[str, dict[str, dict[str, int]]]:
        return {t: {m: dict(sorted(c.items())) for m, c in members.items()} for t, members in sorted(self.members.items())}

    def section(self, rule: Mapping[str, Any] | None = None) -> dict[str, Any]:
        return {
            **({"rule": dict(rule)} if rule else {}),
            "status": {t: dict(sorted(c.items())) for t, c in sorted(self.status.items())},
            "members": self.member_counts(),
            "flags": {t: dict(sorted(c.items())) for t, c in sorted(self.flags.items())},
            "flagged_items": self.n_flagged,
            "flagged": self.flagged,
            "flagged_listed": len(self.flagged),
        }


def _at(value: Mapping[str, Any] | None, paths: Sequence[str]) -> dict[str, Any] | None:
    if value is None:
        return None
    out = {}
    for path in paths:
        v: Any = value
        for part in path.split("."):
            v = v.get(part) if isinstance(v, dict) else None
        out[path] = v
    return out
