"""The run loop: admit faces, edit sessions, score stored images, hand results on.

Faces are streamed in small chunks, so memory does not grow with the dataset. For each
chunk the admission stage (:mod:`faceedit_bench.run.admission`) stores and checks the
faces, the edit stage (:mod:`faceedit_bench.run.edit_stage`) runs every session's chained
steps, and the score stage (:mod:`faceedit_bench.scoring.stage`) embeds every produced
image and asks the judge, while the next chunk is edited. Once every session is scored,
the score stage checks the judge's reliability. :meth:`Engine.run` hands each session's
result to a callback and returns what the run did as an :class:`EngineStats` value.
"""

from __future__ import annotations

import asyncio
import contextlib
import math
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from itertools import islice
from typing import Any

from faceedit_bench.records import AdmittedFace, Edited, Face, Session, SessionResult, StepState
from faceedit_bench.run.admission import Admission
from faceedit_bench.run.edit_stage import EditStage
from faceedit_bench.run.progress import ADMISSION, EDITING, JUDGING, SCORING
from faceedit_bench.scoring.stage import ScoreStage

FACE_CHUNK = 4


@dataclass(frozen=True)
class EngineStats:
    """What a run did, for the report."""

    new_edit_calls: int
    edit_stage_s: float
    score_stage_s: float
    peak_gpu_mem_bytes: int | None
    stopped: str | None  # why the run stopped early (budget), else None
    face_exclusions: dict[str, int]  # reason -> faces
    image_conversions: dict[str, int]  # conversion applied on decoding (EXIF orientation ...) -> dataset images
    first_base_hash: str | None
    judge_reliability: dict[str, Any] | None  # anchors and human agreement, with a judge


def chunks(items: Iterator[Face], size: int) -> Iterator[list[Face]]:
    while chunk := list(islice(items, size)):
        yield chunk


class Engine:
    """Runs the stages on one event loop (where the executors' limiters live)."""

    def __init__(self, admission: Admission, edit: EditStage, score: ScoreStage, progress: Any = None) -> None:
        self.admission, self.edit, self.score = admission, edit, score
        self.progress = progress
        self.select: Callable[[Face, Session], bool] | None = None  # a sample of (face, session) items (run.sample)
        self._loop = asyncio.new_event_loop()

    def run_async(self, coroutine: Any) -> Any:
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
        if not self.edit.is_async:
            return FACE_CHUNK
        return max(FACE_CHUNK, math.ceil(2 * self.edit.editor.limits.max_concurrency / max(1, n_sessions)))

    @property
    def stopped(self) -> str | None:
        return self.edit.stopped or self.score.stopped

    def run(self, faces: Iterator[Face], sessions: tuple[Session, ...],
            on_result: Callable[[SessionResult], None]) -> EngineStats:
        # Chunk N is embedded and judged while chunk N+1 is edited: the editor, the judge and
        # the embedder (provider limits, another provider's limits, local cores) work at once
        # instead of taking turns.
        exclusions: Counter[str] = Counter()
        first_base_hash: str | None = None
        previous: list[Edited] = []  # edited, not yet scored
        for chunk in chunks(faces, self.chunk_size(len(sessions))):
            admitted, rejected = self.admission.admit(chunk)
            self._advance(len(chunk), ADMISSION)
            if admitted and first_base_hash is None:
                first_base_hash = admitted[0].base_hash
            pairs = [(a, s) for a in admitted for s in sessions
                     if s.applies_to(a.face.face_id) and (self.select is None or self.select(a.face, s))]
            edited, scored = self.run_async(self._edit_and_score(pairs, previous))
            self._hand_on(scored, on_result)
            for face, reason in rejected:
                exclusions[reason] += 1
                for session in (s for s in sessions
                                if s.applies_to(face.face_id) and (self.select is None or self.select(face, s))):
                    self._advance(len(session.steps), EDITING)
                    self._advance(1, SCORING, JUDGING)
                    on_result(SessionResult(face, session, [], excluded=reason))
            previous = [(a, s, states) for (a, s), states in zip(pairs, edited)]
            if self.stopped:
                break
        self._hand_on(self.run_async(self.score.score(previous, stopped=bool(self.stopped))), on_result)
        reliability = None if self.stopped else self.run_async(self.score.reliability(first_base_hash))
        return EngineStats(
            new_edit_calls=self.edit.new_calls, edit_stage_s=self.edit.wall_s, score_stage_s=self.score.wall_s,
            peak_gpu_mem_bytes=self.edit.peak_gpu_mem_bytes, stopped=self.stopped,
            face_exclusions=dict(exclusions), image_conversions=dict(self.admission.image_conversions),
            first_base_hash=first_base_hash, judge_reliability=reliability)

    async def _edit_and_score(self, pairs: list[tuple[AdmittedFace, Session]],
                              previous: list[Edited]) -> tuple[list[list[StepState]], list[SessionResult]]:
        edit = asyncio.ensure_future(self.edit.edit_all(pairs))
        score = asyncio.ensure_future(self.score.score(previous, stopped=bool(self.stopped)))
        try:
            edited, scored = await asyncio.gather(edit, score)
        except BaseException:  # one stage failed: stop the other before the error ends the run
            for task in (edit, score):
                task.cancel()
            await asyncio.gather(edit, score, return_exceptions=True)
            raise
        return edited, scored

    def _hand_on(self, results: list[SessionResult], on_result: Callable[[SessionResult], None]) -> None:
        for result in results:
            self._advance(len(result.session.steps) - len(result.steps), EDITING)  # left unedited by a budget stop
            on_result(result)
        self._advance(len(results), SCORING, JUDGING)

    def _advance(self, n: int, *stages: str) -> None:
        if self.progress is not None and n:
            for stage in stages:
                self.progress.advance(stage, n)
