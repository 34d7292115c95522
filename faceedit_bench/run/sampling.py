"""A stratified sample of (face, session) items, e.g. paper (b)'s mitigation sample (METHODOLOGY §4.5:
25 per prompt id, 500 in all, demographics kept proportional).

``run.sample={per_prompt: N, by: [race, gender, age_bin], seed: S}`` keeps, for every prompt id (a
session's first step's ``prompt_id``, else its session id), N faces. The rule is a systematic
sample over a stratified list:

1. The faces are listed by stratum: grouped by the first attribute of ``by`` (labels in sorted
   order), within that by the second, and so on. The order of the next attribute is reversed in
   every other group (serpentine), so neighbouring groups differ little. Inside the last level,
   faces are ranked by sha256(seed, face id). A missing label is a value of its own.
2. The P prompt ids are ranked by sha256(seed, prompt id) and given offsets j = 0..P-1. Prompt j
   takes the faces at positions floor((i * P + j) * F / (N * P)) for i = 0..N-1, where F is the
   number of faces. Together the prompts take one systematic sample of N * P points spread
   evenly over the list. So each prompt has N different faces. Any run of neighbouring faces,
   such as a race, or a race x gender x age cell, gets its proportional share of the whole
   sample to within one item, and of each prompt's N to within one.

The sample depends only on content ids (face ids, prompt ids), the settings and the seed. It does
not depend on the order the dataset lists faces in. The report's ``sample`` section records it:
the settings, the count of items per prompt id and per stratum, and the rule.

``run.sample={published: <name>, model: <model>}`` takes a published sample instead: the items a paper names,
registered by a protocol package as a :class:`PublishedSample` (the ``faceedit_register_samples`` hook).
Items whose face or session this run does not have are counted and listed, never replaced.
"""

from __future__ import annotations

import hashlib
from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from faceedit_bench.errors import ConfigError
from faceedit_bench.records import Face, Session

RULE = ("faces listed by stratum (serpentine over the attributes of `by`, sha256(seed, face id) inside); "
        "prompt ids ranked by sha256(seed, prompt id) get offsets j; prompt j takes positions "
        "floor((i * P + j) * F / (N * P)), i < N")


def prompt_id(session: Session) -> str:
    return (session.steps[0].prompt_id if session.steps else None) or session.session_id


def _rank(seed: int, *ids: str) -> str:
    return hashlib.sha256("\x1f".join([str(seed), *ids]).encode()).hexdigest()


def _label(face: Face, attribute: str) -> str:
    value = face.demographics.get(attribute)
    return "" if value is None else str(value)


def stratified_order(faces: Sequence[Face], by: Sequence[str], seed: int, reverse: bool = False) -> list[Face]:
    """Faces grouped by ``by[0]``, then ``by[1]`` (serpentine) ..., ranked by hash inside the last level."""
    if not by:
        return sorted(faces, key=lambda f: _rank(seed, f.face_id))
    groups: dict[str, list[Face]] = {}
    for f in faces:
        groups.setdefault(_label(f, by[0]), []).append(f)
    ordered: list[Face] = []
    for i, label in enumerate(sorted(groups, reverse=reverse)):
        ordered += stratified_order(groups[label], by[1:], seed, reverse=bool(i % 2))
    return ordered


@dataclass(frozen=True)
class Sample:
    items: frozenset[tuple[str, str]]  # (face_id, session_id)
    description: dict[str, Any]

    def selects(self, face: Face, session: Session) -> bool:
        return (face.face_id, session.session_id) in self.items


def stratified_sample(faces: Iterable[Face], sessions: Sequence[Session], *, per_prompt: int,
                      by: Sequence[str], seed: int) -> Sample:
    listed = stratified_order(sorted(faces, key=lambda f: f.face_id), by, seed)
    n_faces = len(listed)
    if per_prompt > n_faces:
        raise ConfigError(f"run.sample.per_prompt={per_prompt} asks for more faces per prompt id than the dataset "
                          f"has ({n_faces}); lower it or select more faces.")
    prompts = sorted({prompt_id(s) for s in sessions}, key=lambda p: (_rank(seed, p), p))
    n_prompts = len(prompts)
    chosen = {prompt: sorted(listed[(i * n_prompts + j) * n_faces // (per_prompt * n_prompts)].face_id
                             for i in range(per_prompt))
              for j, prompt in enumerate(prompts)}
    items = frozenset((face_id, s.session_id) for s in sessions for face_id in chosen[prompt_id(s)])
    stratum = {f.face_id: "/".join(_label(f, a) for a in by) for f in listed}
    per_stratum = Counter({label: 0 for label in stratum.values()})
    for face_id, _ in items:
        per_stratum[stratum[face_id]] += 1
    description = {"per_prompt": per_prompt, "by": list(by), "seed": seed, "rule": RULE, "items": len(items),
                   "faces": n_faces, "prompt_ids": n_prompts,
                   "items_per_prompt": {p: sum(1 for s in sessions if prompt_id(s) == p) * len(chosen[p])
                                        for p in sorted(prompts)},
                   "items_per_stratum": dict(sorted(per_stratum.items()))}
    return Sample(items, description)


@dataclass(frozen=True)
class PublishedSample:
    """A sample a publication names, registered with ``faceedit_register_samples``: ``run.sample={published:
    <name>, model: <one of models>}`` runs exactly its items."""

    items: Callable[[str], Sequence[tuple[str, str]]]  # model -> its (face id, session id) pairs
    models: tuple[str, ...]  # the values run.sample.model may take
    source: str  # where the items come from (file, commit, checksum), recorded in the report


def find_published(settings: dict[str, Any]) -> PublishedSample:
    """The registered sample ``run.sample.published`` names, with ``run.sample.model`` checked against it; a
    ConfigError otherwise (called when the run is planned, before any work)."""
    from faceedit_bench.plugin.manager import current_plugins

    table = current_plugins().registry["samples"]
    if settings["published"] not in table.names():
        known = ", ".join(table.names()) or "none: no installed plugin registers one"
        raise ConfigError(f"run.sample.published={settings['published']!r}; registered published samples: {known}")
    found: PublishedSample = table.get(settings["published"]).load()
    if settings["model"] not in found.models:
        raise ConfigError(f"run.sample.model={settings['model']!r}; choose one of {', '.join(found.models)} (the "
                          f"editor whose rows of {settings['published']} to take)")
    return found


def published_sample(faces: Iterable[Face], sessions: Sequence[Session], *, published: str, model: str) -> Sample:
    """The items of a published sample that this run has; the others are counted and listed (the first 20)."""
    found = find_published({"published": published, "model": model})
    source, wanted = found.source, found.items(model)
    have_faces = {f.face_id for f in faces}
    have_sessions = {s.session_id for s in sessions}
    items = frozenset(i for i in wanted if i[0] in have_faces and i[1] in have_sessions)
    absent = [f"{f}|{s}" for f, s in wanted if (f, s) not in items]
    description = {"published": published, "model": model, "source": source, "items": len(items),
                   "published_items": len(wanted), "missing_items": len(absent), "missing": absent[:20],
                   "items_per_prompt": dict(sorted(Counter(s for _, s in items).items())),
                   "rule": "the items the publication names (face, prompt), those this run has"}
    return Sample(items, description)
