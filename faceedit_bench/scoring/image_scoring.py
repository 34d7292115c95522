"""Image metrics in the score stage: each edited session's steps measured by every selected image metric, beside
the embedder, in worker processes.

A session is one task: its images are decoded once and each metric measures the session's steps in one batch. The
detector runs once per image that a metric needing faces reads, however many sessions read it at once (I_0 is in
every session of a face), and its faces are kept in the ledger by detector and image hash. In a run the work goes
to the embedder's worker processes (:meth:`~faceedit_bench.scoring.identity.EmbeddingService.share_workers`): one
pool, each worker starting Python and loading the models once; while the embedder runs in the run's own process
(few images to embed), so does this. Every result, failures included, is kept in the ledger by (metric identity,
step content), so a rerun computes nothing and a changed metric recomputes only itself.
"""

from __future__ import annotations

import asyncio
import math
import os
from collections.abc import Callable, Iterable, Mapping, Sequence
from concurrent.futures import Executor, ProcessPoolExecutor, ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from faceedit_bench.errors import ImageError
from faceedit_bench.execution.parent_watch import exit_with_parent, leave_stop_signals_to_parent, worker_context
from faceedit_bench.keys import fingerprint
from faceedit_bench.records import AdmittedFace, DetectedFace, Outcome, Session, StepState
from faceedit_bench.scoring.identity import WORKER_NICENESS, EmbeddingService
from faceedit_bench.scoring.image_metric import FACE_ROLES, ImageMetric, MeasuredSession, StepImages, StepMeasure
from faceedit_bench.storage.images import decode_rgb
from faceedit_bench.storage.ledger import Ledger
from faceedit_bench.storage.store import ImageStore

_worker: dict[str, Any] = {}


@dataclass(frozen=True)
class StepTask:
    k: int
    key: str
    instruction: str
    hashes: tuple[str, str, str]  # I_0, I_{k-1}, I_k


@dataclass(frozen=True)
class SessionTask:
    """One session's missing results: metric name -> its steps to measure; the faces already known."""

    steps: tuple[StepTask, ...]
    references: tuple[str, ...]
    missing: Mapping[str, tuple[int, ...]]  # metric -> indexes into ``steps``
    faces: Mapping[str, tuple[DetectedFace, ...]]


def step_key(hashes: Sequence[str], references: Sequence[str], instruction: str) -> str:
    """A step's content: I_0, I_{k-1}, I_k, the references and the instruction."""
    return fingerprint(["image_step", list(hashes), list(references), instruction])


# -- in a worker (or a thread) ------------------------------------------------------------------


def _init_worker(metrics: Sequence[ImageMetric], detector: Any, store_root: str, niceness: int) -> None:
    exit_with_parent()
    leave_stop_signals_to_parent()
    if niceness and hasattr(os, "nice"):
        os.nice(niceness)
    _keep_state(metrics, detector, store_root)


def _keep_state(metrics: Sequence[ImageMetric], detector: Any, store_root: str) -> None:
    _worker.update(metrics={m.name: m for m in metrics}, detector=detector, store=ImageStore(Path(store_root)))


def _in_worker(work: Callable[..., Any], *args: Any) -> Any:
    return work(_worker, *args)


def measure_session(state: Mapping[str, Any], task: SessionTask
                    ) -> tuple[dict[str, list[StepMeasure]], dict[str, tuple[DetectedFace, ...]]]:
    """Each metric's results on its missing steps (in ``task.missing``'s order), and the faces detected here.
    ``state``: the metrics by name, the detector and the image store."""
    images = _Images(state["store"], state["detector"], task.faces)
    results = {}
    for name, indexes in task.missing.items():
        metric = state["metrics"][name]
        results[name] = _measure(metric, [task.steps[i] for i in indexes], task.references, images)
    return results, images.detected


def detect_stored(state: Mapping[str, Any], image_hash: str) -> tuple[DetectedFace, ...] | None:
    """The faces in a stored image; None when it cannot be decoded or the detector fails on it: the session's task
    then meets the same error and records it as the outcome of the steps that read the image."""
    try:
        return tuple(state["detector"].detect(decode_rgb(state["store"].get(image_hash), label=image_hash[:12])))
    except Exception:
        return None


class _Images:
    """Decoded images and their faces, each computed once per task."""

    def __init__(self, store: ImageStore, detector: Any, faces: Mapping[str, tuple[DetectedFace, ...]]) -> None:
        self.store, self.detector = store, detector
        self.known = dict(faces)
        self.detected: dict[str, tuple[DetectedFace, ...]] = {}
        self._rgb: dict[str, np.ndarray | ImageError] = {}

    def rgb(self, image_hash: str) -> np.ndarray:
        if image_hash not in self._rgb:
            try:
                rgb = decode_rgb(self.store.get(image_hash), label=f"stored image {image_hash[:12]}")
                rgb.flags.writeable = False  # shared by every metric: none may change it
                self._rgb[image_hash] = rgb
            except ImageError as exc:
                self._rgb[image_hash] = exc
        found = self._rgb[image_hash]
        if isinstance(found, ImageError):
            raise found
        return found

    def faces(self, image_hash: str) -> tuple[DetectedFace, ...]:
        if image_hash not in self.known:
            self.known[image_hash] = self.detected[image_hash] = tuple(self.detector.detect(self.rgb(image_hash)))
        return self.known[image_hash]


def _measure(metric: ImageMetric, steps: list[StepTask], references: Sequence[str], images: _Images
             ) -> list[StepMeasure]:
    out: list[StepMeasure | None] = [None] * len(steps)
    ready: list[tuple[int, StepImages]] = []
    for i, step in enumerate(steps):
        try:
            faces = {role: images.faces(h) for role, h in zip(FACE_ROLES, step.hashes)} if metric.needs_faces else {}
            if metric.needs_faces and not any(faces.values()):
                out[i] = StepMeasure(Outcome.NO_FACE, reason="the detector found no face in I_0, I_k-1 or I_k")
                continue
            source, previous, current = (images.rgb(h) for h in step.hashes)
            refs = tuple(images.rgb(h) for h in references)
        except ImageError as exc:
            out[i] = StepMeasure(Outcome.INVALID_IMAGE, reason=str(exc))
            continue
        except Exception as exc:  # the detector failed on this image: the step, not the run
            out[i] = StepMeasure(Outcome.FAILED, reason=f"detector: {type(exc).__name__}: {exc}")
            continue
        ready.append((i, StepImages(step.k, step.instruction, source, previous, current, refs, faces)))
    for i, measure in _batched(metric, [s for _, s in ready]):
        out[ready[i][0]] = measure
    return [m for m in out if m is not None]


def _batched(metric: ImageMetric, steps: list[StepImages]) -> Iterable[tuple[int, StepMeasure]]:
    """The batch's results; when the batch raises, each step alone, so one bad step fails alone."""
    if not steps:
        return []
    try:
        answers = list(metric.measure_batch(steps))
        if len(answers) != len(steps):
            raise ValueError(f"measure_batch gave {len(answers)} results for {len(steps)} steps")
        return [(i, _checked(metric, a)) for i, a in enumerate(answers)]
    except Exception:
        return [(i, _alone(metric, s)) for i, s in enumerate(steps)]


def _alone(metric: ImageMetric, step: StepImages) -> StepMeasure:
    try:
        return _checked(metric, metric.measure_batch([step])[0])
    except Exception as exc:  # one bad step must not end a long run
        return StepMeasure(Outcome.FAILED, reason=f"{type(exc).__name__}: {exc}")


def _checked(metric: ImageMetric, answer: Mapping[str, Any]) -> StepMeasure:
    values: dict[str, float | None] = {}
    for value in metric.values:
        raw = answer.get(value.name)
        if raw is None:
            values[value.name] = None
            continue
        number = float(raw)
        if not math.isfinite(number):
            return StepMeasure(Outcome.FAILED, reason=f"{value.name} = {number}: not a finite number")
        values[value.name] = number
    return StepMeasure(Outcome.OK, values)


# -- on the run's event loop -------------------------------------------------------------------


class ImageScorer:
    """Measures edited sessions with the selected image metrics; results come from the ledger or are computed now.

    ``identities``: metric name -> its identity (:func:`~faceedit_bench.scoring.image_metric.metric_identity`).
    ``detector``: the run's face detector (an object with ``detect``), or None; ``detector_fp`` its identity.
    ``embeddings``: the run's embedding service, whose workers do this work too; without it (a scorer on its own)
    ``workers`` processes of its own, or one thread for ``workers=1``."""

    def __init__(self, metrics: Sequence[ImageMetric], identities: Mapping[str, str], detector: Any,
                 detector_fp: str, store: ImageStore, ledger: Ledger, workers: int,
                 retry: frozenset[Outcome], embeddings: EmbeddingService | None = None) -> None:
        self.metrics, self.identities = list(metrics), dict(identities)
        self.detector, self.detector_fp = detector, detector_fp
        self.store, self.ledger, self.retry = store, ledger, retry
        self.workers = workers or os.cpu_count() or 1
        self.computed = 0  # step results computed (not read back)
        self._embeddings = embeddings
        if embeddings is not None:
            embeddings.share_workers(_keep_state, self.metrics, detector, str(store.root))
        self._state = {"metrics": {m.name: m for m in self.metrics}, "detector": detector, "store": store}
        self._executor: Executor | None = None
        self._niceness = WORKER_NICENESS  # while editing: the calls go first
        self._loop: asyncio.AbstractEventLoop | None = None
        self._detecting: dict[str, asyncio.Future[tuple[DetectedFace, ...] | None]] = {}

    async def measure(self, face: AdmittedFace, session: Session, states: Sequence[StepState]) -> MeasuredSession:
        hashes = [face.base_hash, *(s.output_hash or "" for s in states)]
        references = tuple(face.reference_hashes)
        steps = tuple(StepTask(k, step_key((hashes[0], hashes[k - 1], hashes[k]), references,
                                           session.steps[k - 1].instruction),
                               session.steps[k - 1].instruction, (hashes[0], hashes[k - 1], hashes[k]))
                      for k in range(1, len(states) + 1))
        found: dict[str, list[StepMeasure | None]] = {}
        missing: dict[str, tuple[int, ...]] = {}
        for metric in self.metrics:
            kept = self.ledger.get_image_values(self.identities[metric.name], (s.key for s in steps))
            found[metric.name] = [StepMeasure(row[0], row[1] or {}, row[2], resumed=True) if row else None
                                  for row in (kept.get(s.key) for s in steps)]
            todo = tuple(i for i, m in enumerate(found[metric.name]) if m is None or m.outcome in self.retry)
            if todo:
                missing[metric.name] = todo
        if missing:
            await self._compute(steps, references, missing, found)
        return MeasuredSession.of(self.metrics, {n: tuple(m for m in ms if m is not None) for n, ms in found.items()})

    async def _compute(self, steps: tuple[StepTask, ...], references: tuple[str, ...],
                       missing: dict[str, tuple[int, ...]], found: dict[str, list[StepMeasure | None]]) -> None:
        needed = {h for name, todo in missing.items() if self._metric(name).needs_faces
                  for i in todo for h in steps[i].hashes}
        known = await self._faces(needed) if needed else {}
        results, detected = await self._run(measure_session, SessionTask(steps, references, missing, known))
        for image_hash, faces in detected.items():
            self.ledger.put_detections(self.detector_fp, image_hash, faces)
        for name, measures in results.items():
            for i, measure in zip(missing[name], measures):
                self.ledger.put_image_value(self.identities[name], steps[i].key, measure.outcome,
                                            dict(measure.values) if measure.outcome is Outcome.OK else None,
                                            measure.reason)
                found[name][i] = measure
                self.computed += 1

    async def _faces(self, hashes: set[str]) -> dict[str, tuple[DetectedFace, ...]]:
        """The faces of the images, from the ledger or detected now: each image once, whichever sessions ask."""
        known = self.ledger.get_detections(self.detector_fp, hashes)
        loop = asyncio.get_running_loop()
        if self._loop is not loop:  # each engine run has its own loop: start afresh
            self._loop, self._detecting = loop, {}
        todo = sorted(hashes - known.keys())
        for image_hash in todo:
            if image_hash not in self._detecting:
                self._detecting[image_hash] = loop.create_task(self._detect(image_hash))
        # Shielded: a caller that is cancelled leaves the detection to the others waiting for it.
        found = await asyncio.gather(*(asyncio.shield(self._detecting[h]) for h in todo))
        known.update((h, faces) for h, faces in zip(todo, found) if faces is not None)
        return known

    async def _detect(self, image_hash: str) -> tuple[DetectedFace, ...] | None:
        try:
            faces = await self._run(detect_stored, image_hash)
            if faces is not None:
                self.ledger.put_detections(self.detector_fp, image_hash, faces)
            return faces
        finally:
            self._detecting.pop(image_hash, None)

    async def _run(self, work: Callable[..., Any], *args: Any) -> Any:
        """``work(state, *args)`` in a worker process, or in this process's scoring thread."""
        loop = asyncio.get_running_loop()
        pool = self._embeddings.pool if self._embeddings is not None else self._pool() if self.workers > 1 else None
        if pool is not None:
            return await loop.run_in_executor(pool, _in_worker, work, *args)
        return await loop.run_in_executor(self._thread(), work, self._state, *args)

    def _metric(self, name: str) -> ImageMetric:
        return next(m for m in self.metrics if m.name == name)

    def _pool(self) -> Executor:
        if self._executor is None:
            self._executor = ProcessPoolExecutor(max_workers=self.workers, mp_context=worker_context(),
                                                 initializer=_init_worker,
                                                 initargs=(self.metrics, self.detector, str(self.store.root),
                                                           self._niceness))
        return self._executor

    def _thread(self) -> Executor:
        if self._executor is None:
            self._executor = ThreadPoolExecutor(1, thread_name_prefix="faceedit-image-metrics")
        return self._executor

    def editing_ended(self) -> None:
        """Workers started from now on run at the run's own priority (the running ones keep theirs; shared
        workers: the embedding service's :meth:`~faceedit_bench.scoring.identity.EmbeddingService.full_priority`)."""
        self._niceness = 0

    def close(self) -> None:
        if self._executor is not None:
            self._executor.shutdown(cancel_futures=True)
            self._executor = None
