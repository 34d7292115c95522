"""Identity scoring: face embeddings of stored images, computed once per (embedder, image),
and FSS_k from them.

CPU embedders run in a pool of worker processes, each building its own copy of the
embedder; results go to the ledger, so a resumed or re-reported run embeds nothing twice.
"""

from __future__ import annotations

import asyncio
import math
import multiprocessing
import os
from collections.abc import Callable, Iterable
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path
from typing import Any

from faceedit_bench.errors import ImageError
from faceedit_bench.execution.parent_watch import exit_with_parent
from faceedit_bench.records import (
    STOPPED_BY_BUDGET,
    AdmittedFace,
    Edited,
    FaceEmbedding,
    ImageScore,
    Outcome,
    SessionResult,
    StepState,
)
from faceedit_bench.storage.images import decode_rgb
from faceedit_bench.storage.ledger import Ledger
from faceedit_bench.storage.store import ImageStore

_worker: dict[str, Any] = {}


def _init_worker(embedder: Any, store_root: str) -> None:
    exit_with_parent()  # a parent killed with SIGKILL must not leave workers behind
    _worker["embedder"] = embedder
    _worker["store"] = ImageStore(Path(store_root))


def _embed_in_worker(image_hash: str) -> tuple[str, FaceEmbedding]:
    return image_hash, embed_stored(_worker["embedder"], _worker["store"], image_hash)


def embed_stored(embedder: Any, store: ImageStore, image_hash: str) -> FaceEmbedding:
    """Embed one stored image; failures become outcomes, never scores."""
    try:
        rgb = decode_rgb(store.get(image_hash), label=f"stored image {image_hash[:12]}")
    except ImageError as exc:
        return FaceEmbedding(Outcome.INVALID_IMAGE, reason=str(exc))
    try:
        return embedder.embed(rgb)
    except Exception as exc:  # one bad image must not end a long run
        return FaceEmbedding(Outcome.FAILED, reason=f"{type(exc).__name__}: {exc}")


class EmbeddingService:
    """Returns embeddings for image hashes, from the ledger or computed now."""

    #: Below this many missing images, embedding in-process beats starting workers.
    POOL_THRESHOLD = 8

    def __init__(self, embedder: Any, embedder_fp: str, make_embedder: Callable[[], Any],
                 store: ImageStore, ledger: Ledger, workers: int, retry: frozenset[Outcome]) -> None:
        self.embedder, self.fp, self._make = embedder, embedder_fp, make_embedder
        self.store, self.ledger, self.retry = store, ledger, retry
        self.workers = workers or os.cpu_count() or 1
        self._pool: ProcessPoolExecutor | None = None
        self.computed = 0

    def get(self, hashes: Iterable[str]) -> dict[str, FaceEmbedding]:
        known, missing = self._lookup(hashes)
        return self._keep(known, dict(self._compute(missing)) if missing else {})

    async def aget(self, hashes: Iterable[str]) -> dict[str, FaceEmbedding]:
        """:meth:`get` for the event loop: embeddings are computed in a worker thread, so the
        loop goes on making calls meanwhile; the ledger is used from the loop's thread only."""
        known, missing = self._lookup(hashes)
        fresh = dict(await asyncio.to_thread(self._compute, missing)) if missing else {}
        return self._keep(known, fresh)

    def _lookup(self, hashes: Iterable[str]) -> tuple[dict[str, FaceEmbedding], list[str]]:
        wanted = list(dict.fromkeys(hashes))
        known = self.ledger.get_embeddings(self.fp, wanted)
        return known, [h for h in wanted if h not in known or known[h].outcome in self.retry]

    def _keep(self, known: dict[str, FaceEmbedding], fresh: dict[str, FaceEmbedding]) -> dict[str, FaceEmbedding]:
        if fresh:
            self.ledger.put_embeddings(self.fp, fresh.items())
            known.update(fresh)
            self.computed += len(fresh)
        return known

    def _compute(self, hashes: list[str]) -> Iterable[tuple[str, FaceEmbedding]]:
        if self.workers <= 1 or (self._pool is None and len(hashes) < self.POOL_THRESHOLD):
            return [(h, embed_stored(self.embedder, self.store, h)) for h in hashes]
        if self._pool is None:
            self._pool = ProcessPoolExecutor(
                max_workers=self.workers,
                mp_context=multiprocessing.get_context("spawn"),
                initializer=_init_worker,
                initargs=(self._make(), str(self.store.root)),
            )
        # One image per task: an embedding costs ~0.1 s, far above the IPC cost, and
        # small tasks keep both cores busy until the last image.
        return list(self._pool.map(_embed_in_worker, hashes))

    def close(self) -> None:
        if self._pool is not None:
            self._pool.shutdown(cancel_futures=True)
            self._pool = None


# -- FSS ------------------------------------------------------------------------------------


def fss(similarity: Callable[[Any, Any], float], vector: Any, references: list[Any]) -> float:
    """FSS = max over the identity's references of the embedder's similarity (METHODOLOGY §2.5)."""
    return max(similarity(vector, r) for r in references)


def image_hashes(face: AdmittedFace, states: list[StepState]) -> tuple[str | None, ...]:
    """I_0 (the base image) and each step's output."""
    return (face.base_hash, *(s.output_hash for s in states))


def unscored_session(edited: Edited) -> SessionResult:
    """A session of images that are not faces: no FSS, excluded only when a step did not succeed."""
    face, session, states = edited
    hashes = image_hashes(face, states)
    if len(states) < len(session.steps):
        return SessionResult(face.face, session, states, excluded=STOPPED_BY_BUDGET, image_hashes=hashes)
    failed = next((s for s in states if s.outcome is not Outcome.OK), None)
    return SessionResult(face.face, session, states, excluded=f"step_{failed.outcome.value}" if failed else None,
                         image_hashes=hashes)


def score_session(edited: Edited, embeddings: dict[str, FaceEmbedding],
                  similarity: Callable[[Any, Any], float]) -> SessionResult:
    """FSS_0..FSS_k of one edited session, or why it is excluded from metrics."""
    face, session, states = edited
    hashes = image_hashes(face, states)
    if len(states) < len(session.steps):
        return SessionResult(face.face, session, states, excluded=STOPPED_BY_BUDGET, image_hashes=hashes)
    failed = next((s for s in states if s.outcome is not Outcome.OK), None)
    if failed is not None:
        return SessionResult(face.face, session, states, excluded=f"step_{failed.outcome.value}", image_hashes=hashes)
    scores = [ImageScore(Outcome.OK, face.base_n_faces, face.fss0)]
    for state in states:
        emb = embeddings[state.output_hash]
        outcome, value = emb.outcome, None
        if outcome is Outcome.OK:
            value = fss(similarity, emb.vector, face.reference_vectors)
            if not math.isfinite(value):  # a broken embedding is a failure, never a number
                outcome, value = Outcome.FAILED, None
        elif outcome is Outcome.NO_FACE:
            value = 0.0  # METHODOLOGY §6.5: no face in I_k = identity lost; counted
        scores.append(ImageScore(outcome, emb.n_faces, value))
    problem = next((f"score_{s.outcome.value}" for s in scores if s.fss is None), None)
    return SessionResult(face.face, session, states, excluded=problem, scores=tuple(scores), image_hashes=hashes)
