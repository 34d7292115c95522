"""The bounded flow of one run: faces admitted ahead of need, sessions started as the editor
frees up, each session scored as soon as its edits are done, results handed on in plan order.

Every stage works at every moment: while some sessions wait for the editor, finished ones
are embedded and judged and the next faces are admitted. Three bounds keep it moving with
flat memory:

* faces admitted ahead (:data:`AHEAD_FACES`): the next face is ready when a session slot frees;
* sessions editing at once: the edit stage's ``concurrency`` (twice a hosted editor's calls in
  flight, so a call slot never waits for a session between its chained steps);
* sessions started but not yet handed on (:data:`PENDING_SESSIONS`, or more for a very wide
  editor): what scoring and judging have still to do, and results waiting for an earlier one.
  When judging is the slowest stage, editing slows to its pace here instead of piling up work.

Results are handed on in plan order (dataset order of faces, test-set order of sessions),
whatever order sessions finish in, so the tables, the statistics and the report are the same
as a run that did one session at a time. The callback (tables, aggregation, contact sheets)
runs in a worker thread, one batch of results at a time, so the event loop only waits.

If a stage fails, no new step starts, the steps already calling the editor finish and are
recorded (they are paid for), scoring still waiting is cancelled, and the error ends the run.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from faceedit_bench.records import AdmittedFace, Face, Session, SessionResult
from faceedit_bench.run.admission import Admission
from faceedit_bench.run.edit_stage import EditStage
from faceedit_bench.run.progress import ADMISSION, EDITING, JUDGING, SCORING
from faceedit_bench.scoring.stage import ScoreStage

AHEAD_FACES = 4
PENDING_SESSIONS = 1024

_DONE = object()  # the end of the admitted faces


class Flow:
    def __init__(self, admission: Admission, edit: EditStage, score: ScoreStage, sessions: tuple[Session, ...],
                 on_result: Callable[[SessionResult], None], progress: Any = None, *,
                 select: Callable[[Face, Session], bool] | None = None) -> None:
        self.admission, self.edit, self.score = admission, edit, score
        edit.on_image = score.image_edited  # each edited image is embedded while its session goes on
        self.sessions, self.on_result, self.progress = sessions, on_result, progress
        self.select = select  # a sample of (face, session) items (run.sample); None: every item
        self.first_base_hash: str | None = None
        self.exclusions: dict[str, int] = {}
        self._error: Exception | None = None
        self._failed: asyncio.Event | None = None
        self._ready: dict[int, SessionResult] = {}  # plan index -> result, until its turn to be handed on
        self._ready_changed: asyncio.Event | None = None
        self._next = 0  # the plan index handed on next
        self._planned = 0
        self._launched_all = False
        self._launch_done = False  # every session started (or the budget stopped the starts)
        self._editing_now = 0  # sessions holding an editing slot
        self._sessions: set[asyncio.Task[None]] = set()
        self._scoring: set[asyncio.Task[None]] = set()
        self._results_thread = ThreadPoolExecutor(1, thread_name_prefix="faceedit-results")
        self._preparing: asyncio.Future[None] | None = None
        admission.before_embedding = self._prepare_editor

    @property
    def stopped(self) -> str | None:
        return self.edit.stopped or self.score.stopped

    async def run(self, faces: Iterator[Face]) -> None:
        self._failed, self._ready_changed = asyncio.Event(), asyncio.Event()
        concurrency = self.edit.concurrency
        self._editing = asyncio.Semaphore(concurrency)
        self._pending = asyncio.Semaphore(max(PENDING_SESSIONS, 8 * concurrency))
        admitted: asyncio.Queue[Any] = asyncio.Queue(maxsize=AHEAD_FACES)
        helpers = [asyncio.ensure_future(self._guard(self._admit(faces, admitted)))]
        hand_on = asyncio.ensure_future(self._guard(self._hand_on_in_order()))
        try:
            await self._until_failed(self._guard(self._launch(admitted)))
            self._launch_done = True
            self._editing_ended_yet()
            await self._until_failed(self._all_sessions())
            self._launched_all = True
            self._ready_changed.set()
            await self._until_failed(hand_on)
        except _Failed:
            await self._wind_down()
            assert self._error is not None
            raise self._error from None
        finally:
            helpers += [self._preparing] if self._preparing is not None else []
            for task in (*helpers, hand_on):
                task.cancel()
            await asyncio.gather(*helpers, hand_on, return_exceptions=True)
            self.edit.ledger.flush()

    def close(self) -> None:
        self._results_thread.shutdown(wait=False, cancel_futures=True)

    # -- the stages ----------------------------------------------------------------------

    async def _admit(self, faces: Iterator[Face], admitted: asyncio.Queue[Any]) -> None:
        """Faces in dataset order, each admitted (stored, embedded, checked) ahead of need."""
        while not self.stopped:
            face = await asyncio.to_thread(next, faces, None)  # a dataset may read files to yield a face
            if face is None:
                break
            accepted, rejected = await self.admission.admit([face])
            self._advance(1, ADMISSION)
            if accepted and self.first_base_hash is None:
                self.first_base_hash = accepted[0].base_hash
            for _, reason in rejected:
                self.exclusions[reason] = self.exclusions.get(reason, 0) + 1
            await admitted.put(accepted[0] if accepted else rejected[0])
        await admitted.put(_DONE)

    def _prepare_editor(self) -> None:
        """Start the editor's ``prepare`` beside the first admission that embeds a face. A rerun whose faces
        are all embedded replays its stored steps and may make no call: it prepares nothing, and a first
        call makes what it needs itself."""
        if self._preparing is None:
            self._preparing = asyncio.ensure_future(self.edit.prepare())

    async def _launch(self, admitted: asyncio.Queue[Any]) -> None:
        """Start each admitted face's sessions as editing slots free up; rejected faces' sessions
        are results at once."""
        while (item := await admitted.get()) is not _DONE:
            face = item.face if isinstance(item, AdmittedFace) else item[0]
            for session in self.sessions:
                # A session written for one base image (a benchmark of source images, a published pairing) runs on that face only.
                if not session.applies_to(face.face_id) or (self.select is not None and not self.select(face, session)):
                    continue
                await self._pending.acquire()
                if self.stopped:  # the budget: nothing new starts
                    self._pending.release()
                    return
                index, self._planned = self._planned, self._planned + 1
                if not isinstance(item, AdmittedFace):
                    face, reason = item
                    self._put(index, SessionResult(face, session, [], excluded=reason))
                    continue
                await self._editing.acquire()
                self._editing_now += 1
                task = asyncio.ensure_future(self._session(index, item, session))
                self._sessions.add(task)
                task.add_done_callback(self._sessions.discard)
            if self.stopped:
                return

    async def _session(self, index: int, face: AdmittedFace, session: Session) -> None:
        try:
            try:
                states = await self.edit.edit_session(face, session)
            finally:
                self._editing.release()
                self._editing_now -= 1
                self._editing_ended_yet()
            if self._error is not None:
                return
            task = asyncio.current_task()
            assert task is not None
            self._scoring.add(task)
            task.add_done_callback(self._scoring.discard)
            result = await self.score.score_one((face, session, states), stopped=bool(self.stopped))
            self._put(index, result)
        except Exception as exc:  # any stage's error ends the run, after the edits in flight
            self._fail(exc)

    def _editing_ended_yet(self) -> None:
        """Once the last session's edits are done, the sessions left to score get every core."""
        if self._launch_done and not self._editing_now:
            self.score.editing_ended()

    async def _all_sessions(self) -> None:
        while self._sessions:
            await asyncio.wait(set(self._sessions))

    async def _hand_on_in_order(self) -> None:
        """The results in plan order, as soon as each one's predecessors are done."""
        loop = asyncio.get_running_loop()
        assert self._ready_changed is not None
        while True:
            await self._ready_changed.wait()
            self._ready_changed.clear()
            batch = []
            while self._next in self._ready:
                batch.append(self._ready.pop(self._next))
                self._next += 1
            if batch:
                await loop.run_in_executor(self._results_thread, self._hand_on, batch)
                for _ in batch:
                    self._pending.release()
            if self._launched_all and self._next == self._planned:
                return

    def _hand_on(self, results: list[SessionResult]) -> None:
        for result in results:
            self._advance(len(result.session.steps) - len(result.steps), EDITING)  # left unedited
            self.on_result(result)
        self._advance(len(results), SCORING, JUDGING)

    # -- failures ------------------------------------------------------------------------

    def _put(self, index: int, result: SessionResult) -> None:
        self._ready[index] = result
        assert self._ready_changed is not None
        self._ready_changed.set()

    async def _guard(self, coroutine: Any) -> None:
        try:
            await coroutine
        except Exception as exc:  # Ctrl-C and cancellation are not failures: they end the run at once
            self._fail(exc)

    def _fail(self, exc: Exception) -> None:
        if self._error is None:
            self._error = exc
        self.edit.halted = True
        assert self._failed is not None
        self._failed.set()

    async def _until_failed(self, awaitable: Any) -> None:
        """Await ``awaitable``; raise :class:`_Failed` (cancelling it) as soon as any stage fails."""
        assert self._failed is not None
        work = asyncio.ensure_future(awaitable)
        failed = asyncio.ensure_future(self._failed.wait())
        try:
            await asyncio.wait({work, failed}, return_when=asyncio.FIRST_COMPLETED)
        finally:
            failed.cancel()
            if not work.done():
                work.cancel()
                with contextlib.suppress(asyncio.CancelledError):
                    await work
        if self._error is not None:
            raise _Failed
        work.result()

    async def _wind_down(self) -> None:
        """After a failure: scoring stops now; sessions still editing end after their current step."""
        for task in self._scoring:
            task.cancel()
        await asyncio.gather(*self._sessions, return_exceptions=True)

    def _advance(self, n: int, *stages: str) -> None:
        if self.progress is not None and n:
            for stage in stages:
                self.progress.advance(stage, n)


class _Failed(Exception):
    """A stage failed; the flow winds down and raises that stage's error."""
