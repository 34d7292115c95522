"""The further input images a step names (test-set format 2), resolved to stored images.

A ``file`` input is an image shipped with the test set. A ``dataset`` input is another face
of the dataset, chosen by a documented, seeded rule that depends only on the two faces' ids
and labels (never on the order faces arrive in):

- ``other_gender``: a face whose ``gender`` label differs;
- ``other_gender_other_race``: a face whose ``gender`` and ``race`` labels both differ;
- ``female_other_race`` / ``male_other_race``: the same, with the order fixed: the base face must be
  male (female) and comes first, the partner is female (male) and comes second (a pairing whose order the
  prompt depends on, e.g. "the first person is the doctor"). A base face of the wrong gender cannot form the
  request; run such a test set on the base faces of that gender (a dataset parameter, where it has one).

A ``dataset`` input may instead name one face by its id (``"face": "<dataset>/<face>"``): a pairing a
publication fixed. A dataset without that face cannot form the request (``unsupported``, with the reason).

Partners come from the dataset's ``partners()`` when it has one (a dataset that yields only some
faces as base images can still offer every face as a partner), else from ``faces()``.

Among the faces that fit, the one with the smallest sha256("<seed>|<face id>|<candidate id>")
is taken. A face with no fitting partner (or without the labels the rule reads) cannot form
the request: the step ends as ``unsupported``, with the reason.
"""

from __future__ import annotations

import hashlib
import threading
from collections.abc import Callable, Iterable

from faceedit_bench.records import Face, Step
from faceedit_bench.storage.images import read_image
from faceedit_bench.storage.store import ImageStore

RULE_LABELS = {"other_gender": ("gender",), "other_gender_other_race": ("gender", "race"),
               "female_other_race": ("gender", "race"), "male_other_race": ("gender", "race")}
#: Ordered rules: the base face's required gender and the partner's.
ORDERED = {"female_other_race": ("male", "female"), "male_other_race": ("female", "male")}


class InputResolver:
    def __init__(self, store: ImageStore, faces: Callable[[], Iterable[Face]], seed: int = 0) -> None:
        self.store, self._faces, self.seed = store, faces, seed
        self._candidates: list[Face] | None = None  # the dataset's faces, read on first need
        self._files: dict[str, str] = {}  # path -> stored hash
        self._listing = threading.Lock()  # steps resolve in worker threads: the dataset is listed once

    def resolve(self, face: Face, step: Step) -> tuple[tuple[str, ...], tuple[str, ...], str | None]:
        """(roles, stored hashes) of the step's inputs in order, or a reason they cannot be had."""
        roles, hashes = [], []
        for spec in step.inputs:
            if spec.source == "file":
                digest = self._files.get(spec.path or "")
                if digest is None:
                    digest = self._files[spec.path or ""] = self.store.put(read_image(spec.path)[0])
            elif spec.face is not None:
                named = self.named(spec.face)
                if named is None:
                    return (), (), f"input {spec.role!r}: the dataset has no face {spec.face!r}"
                digest = self.store.put(read_image(named.image)[0])
            else:
                partner = self.partner(face, spec.rule or "")
                order = ORDERED.get(spec.rule or "")
                if order and face.demographics.get("gender") != order[0]:
                    return (), (), (f"input {spec.role!r}: rule {spec.rule} puts a {order[0]} base face first; "
                                    f"{face.face_id} is {face.demographics.get('gender')!r}. Run this test set on "
                                    f"{order[0]} base faces, e.g. dataset.params.base_gender={order[0]}")
                if partner is None:
                    return (), (), (f"input {spec.role!r}: the dataset has no face that fits rule {spec.rule} "
                                    f"for {face.face_id} (labels {dict(face.demographics)})")
                digest = self.store.put(read_image(partner.image)[0])
            roles.append(spec.role)
            hashes.append(digest)
        return tuple(roles), tuple(hashes), None

    def candidates(self) -> list[Face]:
        with self._listing:
            if self._candidates is None:
                self._candidates = list(self._faces())
        return self._candidates

    def named(self, face_id: str) -> Face | None:
        return next((c for c in self.candidates() if c.face_id == face_id), None)

    def partner(self, face: Face, rule: str) -> Face | None:
        labels = RULE_LABELS[rule]
        own = [face.demographics.get(key) for key in labels]
        if any(v is None for v in own):
            return None
        fits = [c for c in self.candidates()
                if all(c.demographics.get(key) not in (None, value) for key, value in zip(labels, own))]
        if rule in ORDERED:
            fits = [c for c in fits if c.demographics.get("gender") == ORDERED[rule][1]]
        return min(fits, key=lambda c: self._rank(face, c), default=None)

    def _rank(self, face: Face, candidate: Face) -> str:
        return hashlib.sha256(f"{self.seed}|{face.face_id}|{candidate.face_id}".encode()).hexdigest()

