"""A stratified sample of (face, session) items, e.g. paper (b)'s mitigation sample (METHODOLOGY §4.5:
25 per prompt id, 500 in all, demographics kept proportional).

``run.sample={per_prompt: N, by: [race, gender, age_bin], seed: S}`` keeps, for every prompt id (a
session's first step's ``prompt_id``, else its session id), N faces. The rule:

1. A face's stratum is its tuple of labels for ``by`` (a missing label is its own value).
2. Prompt ids are taken in sorted order. Prompt j gets a quota per stratum. The quotas come from the
   cumulative targets (j + 1) * N * size(stratum) / faces, rounded by largest remainder so that
   they sum to (j + 1) * N. Prompt j gets the difference from the quotas the earlier prompts got.
   So every prompt has exactly N items, and over all prompts each stratum's share is
   proportional to its share of the faces, to within one item.
3. Inside a stratum, faces are ranked by sha256(seed, prompt id, face id) and the first ones are
   taken. A stratum with fewer faces than its quota gives the rest to the strata with faces left,
   in the same ranking.

The sample depends only on content ids (face ids, prompt ids), the settings and the seed. It does
not depend on the order the dataset lists faces in. The report's ``sample`` section records it:
the settings, the count of items per prompt id and per stratum, and the rule.
"""

from __future__ import annotations

import hashlib
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

from faceedit_bench.errors import ConfigError
from faceedit_bench.records import Face, Session

RULE = ("per prompt id: N faces; stratum quotas by cumulative largest remainder over prompt ids in sorted "
        "order (proportional to stratum sizes); within a stratum the faces ranked by "
        "sha256(seed, prompt id, face id)")


def prompt_id(session: Session) -> str:
    return (session.steps[0].prompt_id if session.steps else None) or session.session_id


def _rank(seed: int, prompt: str, face_id: str) -> str:
    return hashlib.sha256(f"{seed}\x1f{prompt}\x1f{face_id}".encode()).hexdigest()


def _cumulative_quotas(sizes: dict[tuple, int], total: int) -> dict[tuple, int]:
    """Largest-remainder rounding of total * size / sum(sizes), ties by stratum order."""
    faces = sum(sizes.values())
    exact = {s: Fraction(total * n, faces) for s, n in sizes.items()}
    quotas = {s: int(q) for s, q in exact.items()}
    short = total - sum(quotas.values())
    for s in sorted(sizes, key=lambda s: (-(exact[s] - quotas[s]), repr(s)))[:short]:
        quotas[s] += 1
    return quotas


@dataclass(frozen=True)
class Sample:
    items: frozenset[tuple[str, str]]  # (face_id, session_id)
    description: dict[str, Any]

    def selects(self, face: Face, session: Session) -> bool:
        return (face.face_id, session.session_id) in self.items


def stratified_sample(faces: Iterable[Face], sessions: Sequence[Session], *, per_prompt: int,
                      by: Sequence[str], seed: int) -> Sample:
    faces = sorted(faces, key=lambda f: f.face_id)
    if per_prompt > len(faces):
        raise ConfigError(f"run.sample.per_prompt={per_prompt} asks for more faces per prompt id than the dataset "
                          f"has ({len(faces)}); lower it or select more faces.")
    stratum = {f.face_id: tuple(str(f.demographics.get(a)) for a in by) for f in faces}
    members: dict[tuple, list[Face]] = {}
    for f in faces:
        members.setdefault(stratum[f.face_id], []).append(f)
    sizes = {s: len(m) for s, m in sorted(members.items(), key=lambda kv: repr(kv[0]))}
    prompts = sorted({prompt_id(s) for s in sessions})
    given: Counter[tuple] = Counter()
    chosen: dict[str, list[str]] = {}
    for j, prompt in enumerate(prompts):
        target = _cumulative_quotas(sizes, (j + 1) * per_prompt)
        quota = {s: target[s] - given[s] for s in sizes}
        ranked = {s: sorted(m, key=lambda f: _rank(seed, prompt, f.face_id)) for s, m in members.items()}
        picked = [f for s in sizes for f in ranked[s][:max(quota[s], 0)]]
        spare = sorted((f for s in sizes for f in ranked[s][max(quota[s], 0):]),
                       key=lambda f: _rank(seed, prompt, f.face_id))
        picked += spare[:per_prompt - len(picked)]  # a stratum smaller than its quota
        picked = picked[:per_prompt]
        given.update(stratum[f.face_id] for f in picked)
        chosen[prompt] = sorted(f.face_id for f in picked)
    items = frozenset((face_id, s.session_id) for s in sessions for face_id in chosen[prompt_id(s)])
    per_stratum = Counter({"/".join(s): 0 for s in sizes})
    for s in sessions:
        per_stratum.update("/".join(stratum[face_id]) for face_id in chosen[prompt_id(s)])
    description = {"per_prompt": per_prompt, "by": list(by), "seed": seed, "rule": RULE, "items": len(items),
                   "faces": len(faces), "prompt_ids": len(prompts),
                   "items_per_prompt": {p: sum(1 for s in sessions if prompt_id(s) == p) * len(chosen[p])
                                        for p in prompts},
                   "items_per_stratum": dict(sorted(per_stratum.items()))}
    return Sample(items, description)
