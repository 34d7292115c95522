"""Identity scoring: face embeddings of stored images, computed once per (embedder, image),
and FSS_k from them.

CPU embedders run in a pool of worker processes, each building its own copy of the
embedder; results go to the ledger, so a resumed or re-reported run embeds nothing twice.
On the event loop (:meth:`EmbeddingService.aget`) each image is its own task and goes to the
ledger as soon as it is embedded; the images that admit a face go before edited ones, so a
backlog of scoring never keeps the editor waiting for its next face.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import math
import os
from collections.abc import Callable, Iterable
from concurrent.futures import Executor, ProcessPoolExecutor, ThreadPoolExecutor
from pathlib import Path
from typing import Any

from faceedit_bench.errors import ImageError
from faceedit_bench.execution.parent_watch import exit_with_parent, leave_stop_signals_to_parent, worker_context
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

#: The order in which waiting images are embedded: a face's admission first, then edited images.
ADMISSION, SCORING = 0, 1


#: How much lower the embedding workers' CPU priority is than the run's while editing: on a busy
#: machine the process making the provider calls (little CPU, but late calls waste the rate limit)
#: goes first, and the embeddings catch up in the gaps. On an idle machine it changes nothing.
#: Once editing ends, nothing is left to make room for: :meth:`EmbeddingService.full_priority`.
WORKER_NICENESS = 5


def _init_worker(embedder: Any, store_root: str, niceness: int,
                 also: tuple[tuple[Callable[..., None], tuple[Any, ...]], ...] = ()) -> None:
    exit_with_parent()  # a parent killed with SIGKILL must not leave workers behind
    leave_stop_signals_to_parent()
    if niceness and hasattr(os, "nice"):
        os.nice(niceness)
    _worker["embedder"] = embedder
    _worker["store"] = ImageStore(Path(store_root))
    for initializer, args in also:  # the other per-image work of the score stage (image metrics)
        initializer(*args)


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
        self._thread: ThreadPoolExecutor | None = None  # in-process embedding, off the event loop
        self.computed = 0
        self._loop: asyncio.AbstractEventLoop | None = None
        self._in_flight: dict[str, asyncio.Future[FaceEmbedding]] = {}
        self._queue: asyncio.PriorityQueue[tuple[int, int, str]] | None = None
        self._dispatchers: list[asyncio.Task[None]] = []
        self._order = itertools.count()
        self._requested = 0  # images asked for on the loop, for the pool's start
        self._niceness = WORKER_NICENESS  # of workers started from now on, above the run's own
        self._also: list[tuple[Callable[..., None], tuple[Any, ...]]] = []  # see share_workers

    def get(self, hashes: Iterable[str]) -> dict[str, FaceEmbedding]:
        known, missing = self._lookup(hashes)
        return self._keep(known, dict(self._compute(missing)) if missing else {})

    async def aget(self, hashes: Iterable[str]) -> dict[str, FaceEmbedding]:
        """:meth:`get` for the event loop (the score stage): each missing image is embedded
        by a worker while the loop goes on making calls, and committed as it is done; the
        ledger is used from the loop's thread only."""
        return await self._aget(hashes, SCORING)

    def prefetch(self, hashes: Iterable[str]) -> None:
        """Queue the missing images' embeddings on the running loop without waiting for them; a later
        :meth:`aget` of the same images waits for the same work (an error reaches that caller)."""
        for image_hash in self._lookup(hashes)[1]:
            self._waiting(image_hash, SCORING)

    async def aget_for_admission(self, hashes: Iterable[str], *,
                                 before_embedding: Callable[[], None] | None = None) -> dict[str, FaceEmbedding]:
        """:meth:`aget` ahead of every edited image waiting: a face's base and references.
        ``before_embedding`` is called when some of them are not in the ledger, before they are embedded."""
        return await self._aget(hashes, ADMISSION, before_embedding)

    async def _aget(self, hashes: Iterable[str], priority: int,
                    before_embedding: Callable[[], None] | None = None) -> dict[str, FaceEmbedding]:
        known, missing = self._lookup(hashes)
        if missing:
            if before_embedding is not None:
                before_embedding()
            # Shielded: a caller that is cancelled leaves the image to the others waiting for it.
            done = await asyncio.gather(*(asyncio.shield(self._waiting(h, priority)) for h in missing))
            known.update(zip(missing, done))
        return known

    def _waiting(self, image_hash: str, priority: int) -> asyncio.Future[FaceEmbedding]:
        """The future of one image's embedding, queued once however many callers want it."""
        if image_hash in self._in_flight:
            return self._in_flight[image_hash]
        loop = asyncio.get_running_loop()
        if self._loop is not loop:  # each engine run has its own loop: start afresh
            self._loop, self._in_flight, self._queue, self._dispatchers = loop, {}, asyncio.PriorityQueue(), []
        future: asyncio.Future[FaceEmbedding] = loop.create_future()
        self._in_flight[image_hash] = future
        self._queue.put_nowait((priority, next(self._order), image_hash))
        self._requested += 1
        executor, width = self._executor()
        while len(self._dispatchers) < width:
            self._dispatchers.append(loop.create_task(self._dispatch(executor)))
        return future

    def _executor(self) -> tuple[Executor, int]:
        """The worker pool once enough images were asked for (or it exists), else one thread;
        and how many images to hand it at a time (a few more than it runs, so none waits)."""
        if self.workers > 1 and (self._pool is not None or self._requested >= self.POOL_THRESHOLD):
            return self._process_pool(), 2 * self.workers
        if self._thread is None:
            self._thread = ThreadPoolExecutor(1, thread_name_prefix="faceedit-embed")
        return self._thread, 1

    async def _dispatch(self, executor: Executor) -> None:
        loop = asyncio.get_running_loop()
        while True:
            if self._pool is not None and executor is not self._pool:
                self._dispatchers.remove(asyncio.current_task())  # the pool took over
                return
            _, _, image_hash = await self._queue.get()
            future = self._in_flight[image_hash]
            try:
                if executor is self._pool:
                    _, embedding = await loop.run_in_executor(executor, _embed_in_worker, image_hash)
                else:
                    embedding = await loop.run_in_executor(executor, embed_stored, self.embedder, self.store,
                                                           image_hash)
                self._keep({}, {image_hash: embedding})
            except Exception as exc:  # the pool broke, or the ledger cannot be written: the callers get the error
                self._in_flight.pop(image_hash, None)
                if not future.done():
                    future.set_exception(exc)
                    future.exception()  # retrieved: the callers get it, nobody else has to
                continue
            self._in_flight.pop(image_hash, None)
            if not future.done():
                future.set_result(embedding)

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
        # One image per task: an embedding costs ~0.1 s, far above the IPC cost, and
        # small tasks keep both cores busy until the last image.
        return list(self._process_pool().map(_embed_in_worker, hashes))

    def _process_pool(self) -> ProcessPoolExecutor:
        if self._pool is None:
            self._pool = ProcessPoolExecutor(
                max_workers=self.workers,
                mp_context=worker_context(),
                initializer=_init_worker,
                initargs=(self._make(), str(self.store.root), self._niceness, tuple(self._also)),
            )
        return self._pool

    def share_workers(self, initializer: Callable[..., None], *args: Any) -> None:
        """Other per-image work of the score stage runs in these workers too (one pool of processes, each
        starting Python and loading the models once): each worker calls ``initializer(*args)`` as it starts.
        Called before any work: the workers start with the first images to embed."""
        if self._pool is not None:
            raise RuntimeError("share_workers() after the embedding workers started")
        self._also.append((initializer, args))

    @property
    def pool(self) -> ProcessPoolExecutor | None:
        """The worker processes, once enough images were asked for; None while embedding runs in this process."""
        return self._pool

    def full_priority(self) -> None:
        """Editing has ended: the workers run at the run's own CPU priority from now on, so the
        sessions left to score get every core (their lower priority only made room for the calls).
        Where the system does not let a process raise a priority (no CAP_SYS_NICE, RLIMIT_NICE 0)
        the running workers keep theirs; nothing else changes."""
        if not self._niceness or not hasattr(os, "setpriority"):
            return
        self._niceness = 0
        own = os.getpriority(os.PRIO_PROCESS, 0)
        # The pool's worker processes (``_processes``: pid -> process, a stable attribute of
        # ProcessPoolExecutor); a worker that has just exited is skipped.
        for pid in list(getattr(self._pool, "_processes", None) or {}):
            with contextlib.suppress(OSError):
                os.setpriority(os.PRIO_PROCESS, pid, own)

    def close(self) -> None:
        for executor in (self._pool, self._thread):
            if executor is not None:
                executor.shutdown(cancel_futures=True)
        self._pool = self._thread = None


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
