"""Judge panels in the arena: ``--judge panel --judge-param 'members={gpt: {name: openai, params: {...}},
gem: {name: gemini}}'``, members given as for pointwise panels (``judge=panel``, ``judge.params.members``).

Each member is its own judge, asked through its own judge session: its answers are cached in the ledger under
the identity it has alone, so a panel reuses a single-judge arena's answers and the reverse. Each member judges
the battle in both orders and gets its own position-swapped verdict; the four labels are categorical, so the
panel's rule is agreement, not a vote:

* every member gives the same verdict (``x``, ``y``, ``both_good``, ``both_bad`` or ``inconsistent``): that
  verdict;
* members differ: a tie (``members_disagree``, half a win each), flagged and counted per criterion;
* a member's battle is incomplete (an order refused, failed or unparsable): the panel's battle is incomplete,
  recorded with the member, order, outcome and reason, and not rated: no member speaks for another.

Position bias is reported per member (each member's own single-order answers).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from faceedit_bench.api import ConfigError, create_registered
from faceedit_bench_arena.pairwise_judge import CRITERIA, SwappedVerdict, position_bias
from faceedit_bench_arena.stored_runs import ArenaError

PANEL = "panel"
DISAGREE = "members_disagree"
HOW = ("give them as --judge-param 'members={<label>: {name: <judge>, params: {...}}, ...}', "
       "e.g. members={gpt: {name: openai, params: {model: gpt-4.1}}, gem: {name: gemini}}")


@dataclass(frozen=True)
class Member:
    label: str  # the member's name in the panel (the judge's name for a single judge)
    name: str  # the registered judge
    judge: Any


def arena_judges(name: str, params: Mapping[str, Any]) -> list[Member]:
    """The judges that answer the arena's battles: one, or a panel's members, created and checked
    before any call (a bad name or parameter is an error naming where it is)."""
    if name != PANEL:
        return [Member(name, name, create_registered("judges", name, params))]
    unknown = sorted(set(params) - {"members"})
    if unknown:
        raise ArenaError(f"judge 'panel' in the arena takes only 'members', not {', '.join(unknown)}: the four "
                         "labels are categorical, so members must agree and a disagreement is a tie "
                         "(docs/arena.md, 'Judge panels')")
    raw = params.get("members")
    if isinstance(raw, (list, tuple)):  # a list of {name, params}: labelled by name, as pointwise panels do
        raw = {_label(m, i, raw): m for i, m in enumerate(raw)}
    if not isinstance(raw, Mapping) or len(raw) < 2:
        raise ArenaError(f"a judge panel needs at least two members: {HOW}")
    for label, spec in raw.items():  # the panel's shape first, then each member's own parameters
        if not isinstance(spec, Mapping) or not spec.get("name"):
            raise ArenaError(f"panel member {label!r} needs a judge name: {HOW}")
        if spec["name"] == PANEL:
            raise ArenaError(f"panel member {label!r}: a panel member cannot itself be a panel")
    members = []
    for label, spec in raw.items():
        try:
            judge = create_registered("judges", str(spec["name"]), dict(spec.get("params") or {}))
        except ConfigError as exc:  # say which member; keep the check's own message
            raise ArenaError(f"panel member {label!r} ({spec['name']}): {exc}") from exc
        members.append(Member(str(label), str(spec["name"]), judge))
    return members


def _label(member: Any, i: int, members: Any) -> str:
    name = str(member.get("name")) if isinstance(member, Mapping) else f"member{i}"
    same = [m for m in members[:i] if isinstance(m, Mapping) and str(m.get("name")) == name]
    return f"{name}_{len(same) + 1}" if same else name


def panel_verdict(verdicts: Mapping[str, SwappedVerdict]) -> SwappedVerdict:
    """The panel's verdict on one criterion from each member's position-swapped verdict (module docstring)."""
    missing = tuple({"member": m, **miss} for m, v in verdicts.items() if v.status != "decided" for miss in v.missing)
    if any(v.status != "decided" for v in verdicts.values()):
        return SwappedVerdict("incomplete", None, None, missing=missing)
    labels = {v.label for v in verdicts.values()}
    if len(labels) > 1:
        return SwappedVerdict("decided", 0.5, DISAGREE)
    return next(iter(verdicts.values()))


def panel_part(members: list[Member], identities: Mapping[str, Any], log: list[dict],
               answers: Mapping[str, list]) -> dict:
    """The ``panel`` part of arena.json: members, per-criterion disagreements, each member's verdicts and
    position bias."""
    judged = [b for b in log if not b["one_sided"]]
    out = {"rule": "agreement", "members": {m.label: dict(identities[m.label]) for m in members},
           "disagreements": {c: sum(b["verdicts"][c]["label"] == DISAGREE for b in judged) for c in CRITERIA},
           "position_bias": {m.label: position_bias(answers[m.label]) for m in members}}
    out["member_labels"] = {m.label: {c: _count(b["members"][m.label]["verdicts"][c]["label"] for b in judged)
                                      for c in CRITERIA} for m in members}
    return out


def _count(labels) -> dict[str, int]:
    out: dict[str, int] = {}
    for label in labels:
        key = label or "incomplete"
        out[key] = out.get(key, 0) + 1
    return dict(sorted(out.items()))
