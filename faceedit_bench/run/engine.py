"""The run loop: admit faces, edit sessions, score stored images, hand results on.

The stages run as one bounded flow (:mod:`faceedit_bench.run.flow`): the admission stage
(:mod:`faceedit_bench.run.admission`) stores and checks faces ahead of need, the edit stage
(:mod:`faceedit_bench.run.edit_stage`) starts sessions as the editor frees up, and the score
stage (:mod:`faceedit_bench.scoring.stage`) embeds and judges each session as soon as it is
edited, all at the same time; memory stays flat in the dataset's size. Once every session is
scored, the score stage checks the judge's reliability. :meth:`Engine.run` hands each
session's result to a callback, in plan order, and returns what the run did as an
:class:`EngineStats` value.
"""

from __future__ import annotations

import asyncio
import contextlib
import signal
import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

from faceedit_bench.records import Face, Session, SessionResult
from faceedit_bench.run.admission import Admission
from faceedit_bench.run.edit_stage import EditStage
from faceedit_bench.run.flow import Flow
from faceedit_bench.scoring.stage import ScoreStage

#: Closing the loop cancels what is left in at most this many rounds, each waiting at most this long.
CLOSE_ROUNDS, CLOSE_ROUND_S = 100, 1.0


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
    references: dict[str, Any]  # what became of the dataset's reference images (Admission.references)
    first_base_hash: str | None
    judge_reliability: dict[str, Any] | None  # anchors and judge-human agreement, with a judge


class Engine:
    """Runs the stages on one event loop (where the executors' limiters live)."""

    def __init__(self, admission: Admission, edit: EditStage, score: ScoreStage, progress: Any = None) -> None:
        self.admission, self.edit, self.score = admission, edit, score
        self.progress = progress
        self.select: Callable[[Face, Session], bool] | None = None  # a sample of (face, session) items (run.sample)
        self._loop = asyncio.new_event_loop()

    def run_async(self, coroutine: Any) -> Any:
        with _signals_wake(self._loop):
            return self._loop.run_until_complete(coroutine)

    def close(self) -> None:
        self.edit.close()
        if self._loop.is_closed():
            return
        # Tasks still pending after an interrupt: cancel them and let them unwind, as
        # asyncio.run does, so none runs on into a closed loop. An interrupt raised inside a
        # task surfaces again while its waiters unwind, and a task may take one cancellation
        # on its way out and wait again: cancel again, round after round, until every task is
        # done. Each round waits a bounded time, so no such task holds Ctrl-C up for good.
        for _ in range(CLOSE_ROUNDS):
            pending = asyncio.all_tasks(self._loop)
            if not pending:
                break
            for task in pending:
                task.cancel()
            with contextlib.suppress(KeyboardInterrupt, SystemExit):
                done, _ = self._loop.run_until_complete(asyncio.wait(pending, timeout=CLOSE_ROUND_S))
                for task in done:  # retrieved: the error that ended the run is raised by the run itself
                    if not task.cancelled():
                        task.exception()
        self._loop.run_until_complete(self._loop.shutdown_asyncgens())
        self._loop.close()

    @property
    def stopped(self) -> str | None:
        return self.edit.stopped or self.score.stopped

    def run(self, faces: Iterator[Face], sessions: tuple[Session, ...],
            on_result: Callable[[SessionResult], None]) -> EngineStats:
        flow = Flow(self.admission, self.edit, self.score, sessions, on_result, self.progress, select=self.select)
        try:
            self.run_async(flow.run(faces))
        finally:
            flow.close()
        reliability = None if self.stopped else self.run_async(self.score.reliability(flow.first_base_hash))
        return EngineStats(
            new_edit_calls=self.edit.new_calls, edit_stage_s=self.edit.wall_s, score_stage_s=self.score.wall_s,
            peak_gpu_mem_bytes=self.edit.peak_gpu_mem_bytes, stopped=self.stopped,
            face_exclusions=dict(flow.exclusions), image_conversions=dict(self.admission.image_conversions),
            references=self.admission.references.as_dict(),
            first_base_hash=flow.first_base_hash, judge_reliability=reliability)


def _interrupt() -> None:
    raise KeyboardInterrupt


@contextlib.contextmanager
def _signals_wake(loop: asyncio.AbstractEventLoop) -> Iterator[None]:
    """The kernel may hand a signal to any thread (an embedding or SDK thread); the main thread then sleeps on
    in the selector while no I/O comes (every call held by a slow provider), and Ctrl-C or SIGTERM waited for a
    provider timeout. A signal handler on the loop sets asyncio's wake-up fd, so any signal wakes the loop
    whichever thread took it; Ctrl-C still raises KeyboardInterrupt in the main thread, and SIGTERM/SIGHUP
    their own handlers (run/signals.py)."""
    if threading.current_thread() is not threading.main_thread() or \
            signal.getsignal(signal.SIGINT) is not signal.default_int_handler:
        yield
        return
    loop.add_signal_handler(signal.SIGINT, _interrupt)
    try:
        yield
    finally:
        loop.remove_signal_handler(signal.SIGINT)  # back to default_int_handler
