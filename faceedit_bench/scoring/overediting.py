"""Overedits from tracked states: per step, per session (OER), the 35x35 matrix, frequent patterns.

RECONSTRUCTION (METHODOLOGY §8.5, following §2.5): paper (a) describes the state dictionary
and the overedit count but its App. E was never published. The counting rules here are ours:

- A state maps each of the 8 sub-axes to a SET of categories (the tracker returns every tied
  category); the empty set is ``None`` (absent).
- For step k with target sub-axis s* and category c*, every other key s whose state changed
  is ONE overedit. Changed means the before and after sets are disjoint: overlapping
  multi-label sets count as no change (the conservative reading); None -> None is no change.
  Kinds: ``changed`` (X -> Y), ``added`` (None -> Y), ``removed`` (X -> None).
- Changes in s* itself are not overedits (whether the target was reached is SC's job).
- The matrix cell of an overedit is [c*][c'], c' the new category; for a removal, the
  removed category. When the new (or removed) set has several categories, c' is the
  alphabetically first of them, so each overedit fills exactly one cell and a row sum of
  the matrix equals the number of overedits of that intended category. The full sets stay
  on the :class:`Overedit` (``before``/``after``) for anyone who needs them.
- OER of a session = overedits over its steps / number of steps (4): overedits per edit, not a
  rate bounded by 1 (an edit that changes several sub-axes counts each); reporters multiply by 100.
  A session with a missing state (edit or tracker failed, answer unparsable) has no OER: it is
  undefined with a reason, never 0 overedits, and its steps enter neither the matrix nor the
  patterns, so all three describe the same sessions.

Pure functions, no I/O.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from fractions import Fraction
from typing import Any, Literal, Protocol

#: key (sub-axis) -> categories; the empty set means None (absent).
State = Mapping[str, frozenset[str]]

OvereditKind = Literal["changed", "removed", "added"]

DEFAULT_PATTERN_THRESHOLD = 0.15  # §2.5: ">= 15% of edited images show the same extra change"


@dataclass(frozen=True)
class Overedit:
    """One unrequested change of a sub-axis during one edit."""

    sub_axis: str  # the key that changed (never the step's target)
    intended_category: str  # c*, the matrix row
    changed_category: str  # c', the matrix column (see the module docstring for multi-label sets)
    kind: OvereditKind
    before: tuple[str, ...] = ()  # the key's full state before and after, sorted
    after: tuple[str, ...] = ()


class StepTarget(Protocol):
    """What a step contributes (records.Step fits)."""

    attribute: str
    category: str
    sub_axis: str


@dataclass(frozen=True)
class StepOveredits:
    """The overedits of one state-tracked edit, with what it asked for."""

    k: int
    attribute: str
    category: str
    sub_axis: str
    overedits: tuple[Overedit, ...]


@dataclass(frozen=True)
class SessionOER:
    """A session's OER (overedits / steps), or ``None`` with the reason it is undefined."""

    oer: float | None
    steps: tuple[StepOveredits, ...] = ()  # empty when undefined
    reason: str = ""

    @property
    def defined(self) -> bool:
        return self.oer is not None

    @property
    def n_overedits(self) -> int | None:
        return sum(len(s.overedits) for s in self.steps) if self.defined else None


def _as_state(state: Mapping[str, Iterable[str]], name: str) -> dict[str, frozenset[str]]:
    if not isinstance(state, Mapping):
        raise TypeError(f"{name} must be a mapping sub-axis -> set of categories, got {type(state).__name__}")
    out = {}
    for key, value in state.items():
        if isinstance(value, str) or value is None:  # a bare string would become a set of letters
            raise TypeError(f"{name}[{key!r}] must be a set of categories (empty for None), got {value!r}")
        out[key] = frozenset(value)
    return out


def step_overedits(before: State, after: State, target_sub_axis: str, target_category: str) -> list[Overedit]:
    """The overedits of one edit from the states of its input (``before``) and output
    (``after``), in the order of ``before``'s keys. Rules in the module docstring."""
    b, a = _as_state(before, "before"), _as_state(after, "after")
    if set(b) != set(a):
        raise ValueError(f"before and after states must have the same keys; only in before: "
                         f"{sorted(set(b) - set(a))}, only in after: {sorted(set(a) - set(b))}")
    if target_sub_axis not in b:
        raise ValueError(f"target sub-axis {target_sub_axis!r} is not a state key; keys are {list(b)}")
    found = []
    for key, old in b.items():
        new = a[key]
        if key == target_sub_axis or old == new or (old & new):
            continue
        if not new:
            kind, cell = "removed", min(old)
        else:
            kind, cell = ("changed" if old else "added"), min(new)
        found.append(Overedit(key, target_category, cell, kind, tuple(sorted(old)), tuple(sorted(new))))
    return found


def session_oer(states: Sequence[State | None], steps: Sequence[StepTarget]) -> SessionOER:
    """OER of one session from the tracked states of I_0..I_K (``None`` where no state was
    obtained) and its K steps: total overedits / K (K = 4 in the benchmark)."""
    if not steps:
        raise ValueError("a session needs at least one step")
    if len(states) != len(steps) + 1:
        raise ValueError(f"need one state per image I_0..I_{len(steps)} ({len(steps) + 1}), got {len(states)}")
    missing = [k for k, s in enumerate(states) if s is None]
    if missing:
        names = ", ".join(f"I_{k}" for k in missing)
        return SessionOER(None, reason=f"no tracked state for {names}; OER undefined")
    per_step = tuple(
        StepOveredits(k, step.attribute, step.category, step.sub_axis,
                      tuple(step_overedits(states[k - 1], states[k], step.sub_axis, step.category)))
        for k, step in enumerate(steps, start=1)
    )
    return SessionOER(sum(len(s.overedits) for s in per_step) / len(steps), per_step)


class OvereditMatrix:
    """Counts [intended category][changed category] over state-tracked edits, with the
    number of edits per intended category (the denominator of a row)."""

    def __init__(self, categories: Sequence[str]) -> None:
        if len(set(categories)) != len(categories):
            raise ValueError("matrix categories must be unique")
        self.categories = tuple(categories)
        self._index = {c: i for i, c in enumerate(self.categories)}
        n = len(self.categories)
        self._counts = [[0] * n for _ in range(n)]
        self._edits = [0] * n

    @classmethod
    def from_taxonomy(cls, taxonomy: Any = None) -> OvereditMatrix:
        """A 35x35 matrix in the taxonomy's category order (the builtin one by default)."""
        if taxonomy is None:
            from faceedit_bench.taxonomy import Taxonomy

            taxonomy = Taxonomy.builtin()
        return cls(taxonomy.categories())

    def _at(self, category: str, role: str) -> int:
        try:
            return self._index[category]
        except KeyError:
            raise ValueError(f"{role} category {category!r} is not a matrix category; "
                             f"categories are {list(self.categories)}") from None

    def add(self, intended_category: str, overedits: Iterable[Overedit]) -> None:
        """Count one state-tracked edit that asked for ``intended_category`` and its
        overedits (possibly none: the edit still counts in the row's denominator)."""
        row = self._at(intended_category, "intended")
        overedits = list(overedits)
        for o in overedits:  # validate all before counting any
            if o.intended_category != intended_category:
                raise ValueError(f"overedit {o} belongs to intended category {o.intended_category!r}, "
                                 f"not {intended_category!r}")
            self._at(o.changed_category, "changed")
        self._edits[row] += 1
        for o in overedits:
            self._counts[row][self._index[o.changed_category]] += 1

    def add_session(self, result: SessionOER) -> None:
        """Count every step of a session with a defined OER; an undefined one adds nothing."""
        for step in result.steps:
            self.add(step.category, step.overedits)

    def merge(self, other: OvereditMatrix) -> OvereditMatrix:
        """A new matrix with both matrices' counts (e.g. shards or test sets)."""
        if other.categories != self.categories:
            raise ValueError("cannot merge overedit matrices over different categories")
        out = OvereditMatrix(self.categories)
        out._counts = [[x + y for x, y in zip(r1, r2)] for r1, r2 in zip(self._counts, other._counts)]
        out._edits = [x + y for x, y in zip(self._edits, other._edits)]
        return out

    def count(self, intended_category: str, changed_category: str) -> int:
        return self._counts[self._at(intended_category, "intended")][self._at(changed_category, "changed")]

    def as_dict(self) -> dict[str, Any]:
        """JSON-ready: ``matrix[i][j]`` counts edits asking for ``categories[i]`` that also
        changed ``categories[j]``; ``edits[i]`` is the number of state-tracked edits asking for
        ``categories[i]``; ``overedits[i]`` is row i's sum."""
        return {
            "categories": list(self.categories),
            "matrix": [list(row) for row in self._counts],
            "edits": list(self._edits),
            "overedits": [sum(row) for row in self._counts],
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> OvereditMatrix:
        """Rebuild a matrix from :meth:`as_dict` (e.g. to merge stored reports)."""
        out = cls(data["categories"])
        n = len(out.categories)
        matrix, edits = data["matrix"], data["edits"]
        if len(matrix) != n or any(len(r) != n for r in matrix) or len(edits) != n:
            raise ValueError(f"matrix must be {n}x{n} with {n} edit counts")
        out._counts = [[int(x) for x in row] for row in matrix]
        out._edits = [int(x) for x in edits]
        return out


def frequent_patterns(edits: Iterable[StepOveredits], threshold: float | Fraction = DEFAULT_PATTERN_THRESHOLD,
                      min_edits: int = 1) -> list[dict[str, Any]]:
    """Frequent overedit patterns "attribute -> category" (§2.5).

    ``edits`` are the state-tracked edits (e.g. the ``steps`` of every session with a
    defined OER). For each intended attribute, ``edits`` is the number of its edits and
    ``count`` the number of them whose overedits include the changed category; a pair is a
    pattern when count / edits >= ``threshold`` and the attribute has at least
    ``min_edits`` edits. The comparison is exact (15 of 100 at 0.15 is a pattern).
    Sorted by share, then count (both descending), then attribute and category.
    """
    limit = threshold if isinstance(threshold, Fraction) else Fraction(str(threshold))
    if not 0 < limit <= 1:
        raise ValueError(f"threshold must be in (0, 1], got {threshold}")
    totals, hits = _attribute_counts(edits)
    found = [
        {"attribute": attr, "category": cat, "count": n, "edits": totals[attr], "share": n / totals[attr]}
        for (attr, cat), n in hits.items()
        if totals[attr] >= min_edits and Fraction(n, totals[attr]) >= limit
    ]
    return sorted(found, key=lambda p: (-p["share"], -p["count"], p["attribute"], p["category"]))


def _attribute_counts(edits: Iterable[StepOveredits]) -> tuple[Counter[str], Counter[tuple[str, str]]]:
    totals: Counter[str] = Counter()
    hits: Counter[tuple[str, str]] = Counter()
    for edit in edits:
        totals[edit.attribute] += 1
        for category in {o.changed_category for o in edit.overedits}:  # once per edit
            hits[edit.attribute, category] += 1
    return totals, hits


def attribute_changes(edits: Iterable[StepOveredits]) -> dict[str, Any]:
    """Every count :func:`frequent_patterns` thresholds, below the threshold too, so that runs can be pooled
    (Table 3 over several test sets): ``edits[attribute]`` state-tracked edits asking for it and
    ``changed[attribute][category]`` of them that also changed that category."""
    totals, hits = _attribute_counts(edits)
    changed: dict[str, dict[str, int]] = {}
    for (attribute, category), n in sorted(hits.items()):
        changed.setdefault(attribute, {})[category] = n
    return {"edits": dict(sorted(totals.items())), "changed": changed}
