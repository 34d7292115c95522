"""The run loop: admit faces, edit sessions, score stored images, hand results on.

Faces are streamed in small chunks, so memory does not grow with the dataset. For
each chunk:

1. *admit*: store the base image and references, embed them, and exclude faces
   that cannot be measured (unreadable, no face, several faces, below the base FSS
   threshold) before any edit is paid for;
2. *edit*: run every session's 4 chained steps; each step is looked up in the ledger
   by its content key and only computed when absent (or transient and retried);
3. *score*: embed every produced image (ledger-cached) and compute FSS_k per step; ask
   the judge about every fully edited session. Both run while the next chunk is edited.

Every step ends with an explicit outcome; a session missing a step is excluded from
metrics, and the reason is counted.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import math
import time
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from itertools import islice
from typing import Any

from faceedit_bench.components import AsyncEditor
from faceedit_bench.errors import ImageError
from faceedit_bench.execution import BudgetReached, Executors, GaveUp
from faceedit_bench.images import decode_rgb, read_image_bytes
from faceedit_bench.keys import edit_key, step_seed
from faceedit_bench.ledger import EditRow, Ledger
from faceedit_bench.records import EditRequest, EditResult, Face, Outcome, Session
from faceedit_bench.run import RunInfo, StepRecord
from faceedit_bench.run.progress import ADMISSION, EDITING, JUDGING, SCORING
from faceedit_bench.scoring import EmbeddingService
from faceedit_bench.secrets import redact
from faceedit_bench.store import ImageStore

log = logging.getLogger(__name__)

FACE_CHUNK = 4


@dataclass
class StepState:
    k: int
    outcome: Outcome
    reason: str
    input_hash: str
    output_hash: str | None
    resumed: bool
    usage: dict[str, Any] = field(default_factory=dict)


@dataclass
class AdmittedFace:
    face: Face
    base_hash: str
    reference_hashes: list[str]
    fss0: float = 0.0
    base_n_faces: int = 0
    reference_vectors: list[Any] = field(default_factory=list)


@dataclass(frozen=True)
class ImageScore:
    """How one image I_k was scored: ``ok`` or ``no_face`` (FSS_k = 0, METHODOLOGY §6.5),
    or a failure (``invalid_image``, ``failed``) that leaves FSS_k undefined."""

    outcome: Outcome
    n_faces: int
    fss: float | None


@dataclass
class SessionResult:
    """One (face, session): its steps, the scores of I_0..I_k, and why it is excluded if it is."""

    face: Face
    session: Session
    steps: list[StepState]
    excluded: str | None  # None when included in metrics, else the reason
    scores: tuple[ImageScore, ...] = ()
    image_hashes: tuple[str | None, ...] = ()
    judged: Any = None  # a JudgedSession when a judge scored this session

    @property
    def fss(self) -> tuple[float, ...] | None:
        """FSS_0..FSS_4 of an included session, else None."""
        if self.excluded is not None:
            return None
        return tuple(s.fss for s in self.scores if s.fss is not None)


@dataclass
class EngineParts:
    """Plain objects the engine works with (built by :mod:`faceedit_bench.experiment`)."""

    info: RunInfo
    editor: Any
    editor_fp: str
    embeddings: EmbeddingService
    similarity: Callable[[Any, Any], float]
    store: ImageStore
    ledger: Ledger
    run_seed: int
    retry: frozenset[Outcome]
    min_base_fss: float | None = None
    single_face_only: bool = False
    executors: Executors = field(default_factory=Executors)
    judge_scorer: Any = None  # a JudgeScorer, or None without a judge


#: A session after the edit stage: its face, the session, and its steps' states.
Edited = tuple[AdmittedFace, Session, list[StepState]]


def _image_hashes(face: AdmittedFace, states: list[StepState]) -> tuple[str | None, ...]:
    """I_0 (the base image) and each step's output."""
    return (face.base_hash, *(s.output_hash for s in states))


def chunks(items: Iterator[Face], size: int) -> Iterator[list[Face]]:
    while chunk := list(islice(items, size)):
        yield chunk


#: Session exclusion reason when the spending budget stopped the run before it finished.
STOPPED_BY_BUDGET = "stopped_by_budget"


class Engine:
    """Runs the stages. All sessions of a chunk are edited concurrently on one event loop
    (hosted editors are then bounded by their rate limits, not by the loop); a session's
    own steps stay chained."""

    def __init__(self, parts: EngineParts, hook: Any, progress: Any = None) -> None:
        self.p = parts
        self.hook = hook
        self.progress = progress
        self.face_exclusions: Counter[str] = Counter()  # reason -> faces, for the report
        self.stopped: str | None = None  # why the run stopped early (budget), else None
        self.new_edit_calls = 0
        self.edit_stage_s = 0.0  # wall time spent in the edit stage
        self.score_stage_s = 0.0  # wall time spent embedding and judging (overlaps the edit stage)
        self.peak_gpu_mem_bytes: int | None = None  # the largest a local editor reported
        self.first_base_hash: str | None = None  # for the judge anchors
        self._loop = asyncio.new_event_loop()
        self._async_editor = isinstance(parts.editor, AsyncEditor)

    # -- public ------------------------------------------------------------------------

    def run_async(self, coroutine: Any) -> Any:
        """Run a coroutine on the engine's loop (where the executors' limiters live)."""
        return self._loop.run_until_complete(coroutine)

    def close(self) -> None:
        if self._loop.is_closed():
            return
        # Tasks still pending after an interrupt: cancel them and let them unwind, as
        # asyncio.run does, so none runs on into a closed loop. An interrupt raised inside a
        # task surfaces again while its waiters unwind: go on until every task is done.
        for _ in range(100):
            pending = asyncio.all_tasks(self._loop)
            if not pending:
                break
            for task in pending:
                task.cancel()
            with contextlib.suppress(KeyboardInterrupt, SystemExit):
                self._loop.run_until_complete(asyncio.gather(*pending, return_exceptions=True))
        self._loop.run_until_complete(self._loop.shutdown_asyncgens())
        self._loop.close()

    def chunk_size(self, n_sessions: int) -> int:
        """Faces per chunk: 4, or for editors behind the execution layer enough sessions to
        keep twice their concurrency busy, so the tail of a chunk (sessions waiting on a
        retry) costs little against the provider's rate limit."""
        if not self._async_editor:
            return FACE_CHUNK
        return max(FACE_CHUNK, math.ceil(2 * self.p.editor.limits.max_concurrency / max(1, n_sessions)))

    def run(self, faces: Iterator[Face], sessions: tuple[Session, ...]) -> Iterator[SessionResult]:
        # Chunk N is embedded and judged while chunk N+1 is edited: the editor, the judge and
        # the embedder (provider limits, another provider's limits, local cores) work at once
        # instead of taking turns.
        previous: list[Edited] = []  # edited, not yet scored
        for chunk in chunks(faces, self.chunk_size(len(sessions))):
            admitted, rejected = self._admit(chunk)
            if admitted and self.first_base_hash is None:
                self.first_base_hash = admitted[0].base_hash
            pairs = [(a, s) for a in admitted for s in sessions]
            edited, scored = self.run_async(self._edit_and_score(pairs, previous))
            yield from scored
            for face, reason in rejected:
                self.face_exclusions[reason] += 1
                for session in sessions:
                    self._advance(len(session.steps), EDITING)
                    self._advance(1, SCORING, JUDGING)
                    yield SessionResult(face, session, [], excluded=reason)
            previous = [(a, s, states) for (a, s), states in zip(pairs, edited)]
            if self.stopped:
                break
        yield from self.run_async(self._score(previous))

    # -- admission ---------------------------------------------------------------------

    def _store_file(self, path: Any) -> str:
        return self.p.store.put(read_image_bytes(path))

    def _admit(self, chunk: list[Face]) -> tuple[list[AdmittedFace], list[tuple[Face, str]]]:
        candidates: list[AdmittedFace] = []
        rejected: list[tuple[Face, str]] = []
        for face in chunk:
            try:
                base = self._store_file(face.image)
            except ImageError as exc:
                log.warning("excluding face %s: %s", face.face_id, exc)
                rejected.append((face, "invalid_base_image"))
                continue
            refs = []
            for ref in face.references:
                try:
                    refs.append(self._store_file(ref))
                except ImageError as exc:
                    log.warning("ignoring reference of %s: %s", face.face_id, exc)
            if face.references and not refs:
                rejected.append((face, "no_readable_reference"))
                continue
            # No references: the base image is its own reference (e.g. FairFace).
            candidates.append(AdmittedFace(face, base, refs or [base]))
        embeddings = self.p.embeddings.get(
            [h for c in candidates for h in (c.base_hash, *c.reference_hashes)]
        )
        admitted = []
        for cand in candidates:
            reason = self._admission_problem(cand, embeddings)
            if reason:
                rejected.append((cand.face, reason))
            else:
                admitted.append(cand)
        self._advance(len(chunk), ADMISSION)
        return admitted, rejected

    def _admission_problem(self, cand: AdmittedFace, embeddings: dict[str, Any]) -> str | None:
        base = embeddings[cand.base_hash]
        if base.outcome is not Outcome.OK:
            return "no_face_in_base" if base.outcome is Outcome.NO_FACE else f"base_{base.outcome.value}"
        cand.base_n_faces = base.n_faces
        if self.p.single_face_only and base.n_faces > 1:
            return "multiple_faces_in_base"
        cand.reference_vectors = [
            embeddings[h].vector for h in cand.reference_hashes if embeddings[h].outcome is Outcome.OK
        ]
        if not cand.reference_vectors:
            return "no_face_in_references"
        cand.fss0 = self._fss(base.vector, cand.reference_vectors)
        if not math.isfinite(cand.fss0):
            return "base_not_scorable"
        if self.p.min_base_fss is not None and cand.fss0 <= self.p.min_base_fss:
            return "below_min_base_fss"
        if cand.fss0 <= 0:
            return "nonpositive_base_fss"
        return None

    def _fss(self, vector: Any, references: list[Any]) -> float:
        """FSS = max over the identity's references of the embedder's similarity (§2.5)."""
        return max(self.p.similarity(vector, r) for r in references)

    # -- edit stage ----------------------------------------------------------------------

    async def _edit_and_score(self, pairs: list[tuple[AdmittedFace, Session]],
                              previous: list[Edited]) -> tuple[list[list[StepState]], list[SessionResult]]:
        edit, score = asyncio.ensure_future(self._edit_all(pairs)), asyncio.ensure_future(self._score(previous))
        try:
            edited, scored = await asyncio.gather(edit, score)
        except BaseException:  # one stage failed: stop the other before the error ends the run
            for task in (edit, score):
                task.cancel()
            await asyncio.gather(edit, score, return_exceptions=True)
            raise
        return edited, scored

    async def _edit_all(self, pairs: list[tuple[AdmittedFace, Session]]) -> list[list[StepState]]:
        started = time.perf_counter()
        try:
            return list(await asyncio.gather(*(self._edit_session(a, s) for a, s in pairs)))
        finally:
            self.edit_stage_s += time.perf_counter() - started

    async def _edit_session(self, face: AdmittedFace, session: Session) -> list[StepState]:
        states: list[StepState] = []
        current = face.base_hash
        for step in session.steps:
            if states and states[-1].outcome is not Outcome.OK:
                state = StepState(step.k, Outcome.SKIPPED, f"step {step.k - 1} did not succeed", current, None, False)
                duration = 0.0
            else:
                try:
                    state, duration = await self._edit_step(face, session, step.k, step.instruction, current)
                except BudgetReached as exc:
                    self.stopped = str(exc)
                    return states  # incomplete: reported as stopped, nothing recorded for it
            states.append(state)
            self._notify(face.face, session, state, duration)
            if state.outcome is Outcome.OK and state.output_hash:
                current = state.output_hash
        return states

    async def _edit_step(self, face: AdmittedFace, session: Session, k: int, instruction: str,
                         input_hash: str) -> tuple[StepState, float]:
        seed = step_seed(self.p.run_seed, face.base_hash, session.session_id, k)
        key = edit_key(self.p.editor_fp, input_hash, instruction, seed)
        row = self.p.ledger.get_edit(key)
        if row is not None and row.outcome not in self.p.retry:
            state = StepState(k, row.outcome, row.reason, input_hash, row.output_hash, True, row.usage)
            return state, row.duration_s
        request = EditRequest(self.p.store.get(input_hash), instruction, face.face.face_id, session.session_id, k, seed)
        started = time.perf_counter()
        result = await self._call_editor(request)
        duration = time.perf_counter() - started
        self.new_edit_calls += 1
        output_hash = self.p.store.put(result.image) if result.outcome is Outcome.OK and result.image else None
        usage = self.p.executors.budget.charge(result.usage, getattr(self.p.editor, "prices", None))
        peak = usage.get("peak_gpu_mem_bytes")
        if isinstance(peak, int):
            self.peak_gpu_mem_bytes = max(peak, self.peak_gpu_mem_bytes or 0)
        reason = redact(result.reason)
        row = EditRow(key, result.outcome, output_hash, reason, usage, duration)
        self.p.ledger.put_edit(key, editor_fp=self.p.editor_fp, face_id=face.face.face_id,
                               session_id=session.session_id, k=k, instruction=instruction,
                               input_hash=input_hash, row=row)
        return StepState(k, result.outcome, reason, input_hash, output_hash, False, usage), duration

    async def _call_editor(self, request: EditRequest) -> EditResult:
        try:
            if self._async_editor:
                executor = self.p.executors.get(self.p.editor.limits)
                result = await executor.call(lambda: self.p.editor.aedit(request))
            else:
                result = self.p.editor.edit(request)
        except BudgetReached:
            raise
        except GaveUp as exc:
            log.warning("editor call gave up on %s/%s step %d: %s", request.face_id, request.session_id, request.k,
                        exc)
            return EditResult(Outcome.API_ERROR, reason=str(exc))
        except Exception as exc:  # recorded as an outcome; KeyboardInterrupt still stops the run
            log.warning("editor failed on %s/%s step %d: %s", request.face_id, request.session_id, request.k, exc)
            return EditResult(Outcome.FAILED, reason=f"{type(exc).__name__}: {exc}")
        if result.outcome is Outcome.OK:
            if not result.image:
                return EditResult(Outcome.NO_IMAGE, reason="editor reported success without an image")
            try:
                decode_rgb(result.image, label="edited image")
            except ImageError as exc:
                return EditResult(Outcome.INVALID_IMAGE, reason=str(exc), usage=result.usage)
        return result

    def _advance(self, n: int, *stages: str) -> None:
        if self.progress is not None:
            for stage in stages:
                self.progress.advance(stage, n)

    def _notify(self, face: Face, session: Session, state: StepState, duration: float) -> None:
        step = session.steps[state.k - 1]
        record = StepRecord(
            unit_key=f"{face.face_id}/{session.session_id}/{state.k}", face_id=face.face_id,
            identity=face.identity, session_id=session.session_id, k=state.k, instruction=step.instruction,
            category=step.category, sub_axis=step.sub_axis, axis=step.axis, outcome=state.outcome.value,
            reason=state.reason, input_hash=state.input_hash, output_hash=state.output_hash,
            resumed=state.resumed, duration_s=duration,
        )
        self.hook.faceedit_step_done(run=self.p.info, step=record)
        if self.progress is not None:
            self.progress.advance(EDITING, 1, cached=state.resumed)

    # -- score stage ---------------------------------------------------------------------

    async def _score(self, edited: list[Edited]) -> list[SessionResult]:
        """Identity scores and judge answers of edited sessions, computed at the same time."""
        if not edited:
            return []
        started = time.perf_counter()
        outputs = [s.output_hash for _, _, states in edited for s in states if s.output_hash]
        # The judge asks about sessions whose every step was edited.
        judgeable = [i for i, (_, session, states) in enumerate(edited)
                     if len(states) == len(session.steps) and all(s.outcome is Outcome.OK for s in states)]
        embeddings, judged = await asyncio.gather(
            self.p.embeddings.aget(outputs),
            self._judge([(_image_hashes(edited[i][0], edited[i][2]), edited[i][1]) for i in judgeable]))
        results = list(self._score_identity(edited, embeddings))
        for i, judgment in zip(judgeable, judged):
            results[i].judged = judgment
        self._advance(len(edited), SCORING, JUDGING)
        self.score_stage_s += time.perf_counter() - started
        return results

    async def _judge(self, sessions: list[tuple[tuple[str, ...], Session]]) -> list[Any]:
        """The judge's scores of (image hashes I_0..I_4, session) pairs; none without a judge
        or once the run has stopped."""
        scorer = self.p.judge_scorer
        if scorer is None or self.stopped or not sessions:
            return []
        try:
            return await scorer.score(sessions)
        except BudgetReached as exc:
            self.stopped = str(exc)
            return []

    def _score_identity(self, edited: list[Edited], embeddings: dict[str, Any]) -> Iterator[SessionResult]:
        for face, session, states in edited:
            hashes = _image_hashes(face, states)
            if len(states) < len(session.steps):
                self._advance(len(session.steps) - len(states), EDITING)
                yield SessionResult(face.face, session, states, excluded=STOPPED_BY_BUDGET, image_hashes=hashes)
                continue
            failed = next((s for s in states if s.outcome is not Outcome.OK), None)
            if failed is not None:
                yield SessionResult(face.face, session, states, excluded=f"step_{failed.outcome.value}",
                                    image_hashes=hashes)
                continue
            scores = [ImageScore(Outcome.OK, face.base_n_faces, face.fss0)]
            for state in states:
                emb = embeddings[state.output_hash]
                outcome, fss = emb.outcome, None
                if outcome is Outcome.OK:
                    fss = self._fss(emb.vector, face.reference_vectors)
                    if not math.isfinite(fss):  # a broken embedding is a failure, never a number
                        outcome, fss = Outcome.FAILED, None
                elif outcome is Outcome.NO_FACE:
                    fss = 0.0  # METHODOLOGY §6.5: no face in I_k = identity lost; counted
                scores.append(ImageScore(outcome, emb.n_faces, fss))
            problem = next((f"score_{s.outcome.value}" for s in scores if s.fss is None), None)
            yield SessionResult(face.face, session, states, excluded=problem, scores=tuple(scores),
                                image_hashes=hashes)
