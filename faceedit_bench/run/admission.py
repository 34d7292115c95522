"""The admission stage: store a face's base image and references, embed them, and exclude
faces that cannot be measured (unreadable, no face, several faces, FSS_0 not above the
dataset's threshold) before any edit is paid for. A reference that cannot be used (unreadable,
no face in it) leaves its face measured against the others: it is counted by reason
(:class:`ReferenceCounts`, report.json's ``counts.references``), never dropped silently.

Reading and storing the files runs in a worker thread and the embeddings in the embedding
service's workers (ahead of edited images), so the event loop goes on making calls."""

from __future__ import annotations

import asyncio
import logging
import math
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from faceedit_bench.errors import ImageError
from faceedit_bench.records import AdmittedFace, Face, Outcome
from faceedit_bench.scoring.identity import EmbeddingService, fss
from faceedit_bench.storage.images import read_image
from faceedit_bench.storage.store import ImageStore

log = logging.getLogger(__name__)


@dataclass
class ReferenceCounts:
    """What became of the references the dataset listed: ``listed`` = ``used`` + ``of_excluded_faces``
    + the sum of ``ignored`` (reason -> references that could not be used)."""

    listed: int = 0
    used: int = 0
    of_excluded_faces: int = 0
    ignored: Counter[str] = field(default_factory=Counter)

    def as_dict(self) -> dict[str, Any]:
        return {"listed": self.listed, "used": self.used, "of_excluded_faces": self.of_excluded_faces,
                "ignored": dict(sorted(self.ignored.items()))}


class Admission:
    def __init__(self, store: ImageStore, embeddings: EmbeddingService, similarity: Any, *,
                 min_base_fss: float | None = None, single_face_only: bool = False, identity: bool = True) -> None:
        self.store, self.embeddings, self.similarity = store, embeddings, similarity
        self.min_base_fss, self.single_face_only = min_base_fss, single_face_only
        self.identity = identity  # False: the dataset's images are not faces; nothing is embedded
        self.image_conversions: Counter[str] = Counter()  # conversion -> dataset images decoded with it
        self.references = ReferenceCounts()
        self._converted: set[str] = set()  # their hashes: a reference shared by faces counts once
        #: Called before a face's images are embedded here (not found in the ledger): the flow starts the
        #: editor's preparation beside this work, which leaves the interpreter largely free.
        self.before_embedding: Callable[[], None] | None = None

    def _store_file(self, path: Any) -> str:
        data, conversions = read_image(path)
        image_hash = self.store.put(data)
        if conversions and image_hash not in self._converted:
            self._converted.add(image_hash)
            self.image_conversions.update(conversions)
            log.debug("%s decoded with %s", path, ", ".join(conversions))
        return image_hash

    async def admit(self, chunk: list[Face]) -> tuple[list[AdmittedFace], list[tuple[Face, str]]]:
        """The faces of ``chunk`` that can be measured, and (face, reason) for the others."""
        candidates, rejected = await asyncio.to_thread(self._stored, chunk)
        if not self.identity:
            return candidates, rejected
        embeddings = await self.embeddings.aget_for_admission(
            [h for c in candidates for h in (c.base_hash, *c.reference_hashes)], before_embedding=self.before_embedding)
        admitted = []
        for cand in candidates:
            reason = self._problem(cand, embeddings)
            self._count_references(cand, embeddings, excluded=reason is not None)
            if reason:
                rejected.append((cand.face, reason))
            else:
                admitted.append(cand)
        return admitted, rejected

    def _stored(self, chunk: list[Face]) -> tuple[list[AdmittedFace], list[tuple[Face, str]]]:
        """Each face's images read, checked and stored; the faces with no readable base or references apart."""
        candidates: list[AdmittedFace] = []
        rejected: list[tuple[Face, str]] = []
        for face in chunk:
            self.references.listed += len(face.references)
            try:
                base = self._store_file(face.image)
            except ImageError as exc:
                log.warning("excluding face %s: %s", face.face_id, exc)
                rejected.append((face, "invalid_base_image"))
                self.references.of_excluded_faces += len(face.references)
                continue
            refs = []
            for ref in face.references:
                try:
                    refs.append(self._store_file(ref))
                except ImageError as exc:
                    log.warning("ignoring reference of %s: %s", face.face_id, exc)
                    self.references.ignored["invalid_reference_image"] += 1
            if face.references and not refs:
                rejected.append((face, "no_readable_reference"))
                continue
            # No references: the base image is its own reference (e.g. FairFace).
            candidates.append(AdmittedFace(face, base, refs or [base]))
        return candidates, rejected

    def _count_references(self, cand: AdmittedFace, embeddings: dict[str, Any], *, excluded: bool) -> None:
        """Each of the face's stored references: used, of an excluded face, or ignored for its reason."""
        if not cand.face.references:  # no references: the base image is its own, nothing to count
            return
        for h in cand.reference_hashes:
            outcome = embeddings[h].outcome
            if outcome is Outcome.OK:
                if excluded:
                    self.references.of_excluded_faces += 1
                else:
                    self.references.used += 1
                continue
            reason = "no_face_in_reference" if outcome is Outcome.NO_FACE else f"reference_{outcome.value}"
            log.warning("ignoring a reference of %s: %s", cand.face.face_id, reason)
            self.references.ignored[reason] += 1

    def _problem(self, cand: AdmittedFace, embeddings: dict[str, Any]) -> str | None:
        base = embeddings[cand.base_hash]
        if base.outcome is not Outcome.OK:
            return "no_face_in_base" if base.outcome is Outcome.NO_FACE else f"base_{base.outcome.value}"
        cand.base_n_faces = base.n_faces
        if self.single_face_only and base.n_faces > 1:
            return "multiple_faces_in_base"
        cand.reference_vectors = [
            embeddings[h].vector for h in cand.reference_hashes if embeddings[h].outcome is Outcome.OK
        ]
        if not cand.reference_vectors:
            return "no_face_in_references"
        cand.fss0 = fss(self.similarity, base.vector, cand.reference_vectors)
        if not math.isfinite(cand.fss0):
            return "base_not_scorable"
        if self.min_base_fss is not None and cand.fss0 <= self.min_base_fss:
            return "below_min_base_fss"
        if cand.fss0 <= 0:
            return "nonpositive_base_fss"
        return None
