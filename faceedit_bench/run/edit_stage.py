"""The edit stage: I_k = editor(I_{k-1}, P_k) for every session's chained steps.

Each step is looked up in the ledger by its content key and only computed when absent (or
transient and retried). Every step ends with an explicit outcome; step k always edits the
output of step k-1, so a step after one that did not succeed is ``skipped``.

The event loop only waits: images are decoded, checked and stored in worker threads, and an
editor without ``aedit`` (a local model) runs in a thread of its own, one edit at a time.
"""

from __future__ import annotations

import asyncio
import logging
import threading
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any

from faceedit_bench.errors import ImageError
from faceedit_bench.execution.budget import BudgetReached
from faceedit_bench.execution.busy_clock import BusyClock
from faceedit_bench.execution.call_errors import RUN_ENDING, GaveUp
from faceedit_bench.execution.calls import CallTiming, Executors
from faceedit_bench.execution.secrets import redact
from faceedit_bench.keys import edit_key, step_seed
from faceedit_bench.plugin.payloads import RunInfo, StepRecord
from faceedit_bench.plugin.protocols import AsyncEditor, capability
from faceedit_bench.records import AdmittedFace, EditRequest, EditResult, Face, Outcome, Session, Step, StepState
from faceedit_bench.run.condition_prompts import ConditionPrompts, prompt_for
from faceedit_bench.run.inputs import InputResolver
from faceedit_bench.run.progress import EDITING
from faceedit_bench.storage.images import decode_rgb, plain_image
from faceedit_bench.storage.ledger import EditRow, Ledger
from faceedit_bench.storage.store import ImageStore

log = logging.getLogger(__name__)

#: Threads that check and store edited images: answers are recorded at once, whatever else the run decodes.
ANSWER_THREADS = 4


@dataclass
class EditStage:
    """Edits sessions concurrently on the engine's loop (hosted editors are bounded by their
    rate limits, not by the loop); a session's own steps stay chained."""

    info: RunInfo
    editor: Any
    editor_fp: str
    store: ImageStore
    ledger: Ledger
    run_seed: int
    retry: frozenset[Outcome]
    executors: Executors
    hook: Any
    progress: Any = None
    inputs: InputResolver | None = None  # resolves steps' further input images (test-set format 2)
    prompts: ConditionPrompts | None = None  # writes the prompts of non-baseline conditions
    new_calls: int = 0
    wall_s: float = 0.0  # wall time spent in the edit stage
    peak_gpu_mem_bytes: int | None = None  # the largest a local editor reported
    stopped: str | None = None  # why the run stopped early (budget), else None
    halted: bool = False  # set when another stage failed: no new step starts, the steps in flight finish
    # Called with each step's edited image as soon as the step is done (the flow queues its embedding then).
    on_image: Callable[[str], None] | None = None
    is_async: bool = field(init=False)

    def __post_init__(self) -> None:
        self.is_async = isinstance(self.editor, AsyncEditor)
        # Editors say how many input images they take (I_{k-1} included); most take one.
        self.max_images = capability(self.editor, "editor", "max_input_images")
        self._prepare = capability(self.editor, "editor", "prepare")
        # Set when the run's first new call has returned: what was held back so as not to delay the first
        # calls may go on (the MLflow run opens at the same moment, on the first new step done).
        self.first_call_done = threading.Event()
        self._busy = BusyClock()
        self._editor_thread: ThreadPoolExecutor | None = None
        self._answers = ThreadPoolExecutor(ANSWER_THREADS, thread_name_prefix="faceedit-answers")

    #: Sessions at once for a hosted editor, at least: a few faces' sessions take turns at its slots.
    MIN_HOSTED_SESSIONS = 16

    @property
    def concurrency(self) -> int:
        """How many sessions keep this editor busy: twice its calls in flight (a session waits
        between its chained steps), or for a local editor a few around its one edit at a time."""
        if not self.is_async:
            return 4
        return max(self.MIN_HOSTED_SESSIONS, 2 * self.editor.limits.max_concurrency)

    async def prepare(self) -> None:
        """The editor's ``prepare``, in a worker thread, beside a face's admission (its decoding and dlib's
        detector run in native code that leaves the interpreter free), so the first call finds the editor's
        SDK and client ready instead of making them."""
        if self._prepare is None:
            return
        try:
            await asyncio.to_thread(self._prepare)
        except Exception as exc:  # noqa: BLE001 - the first call meets the same problem and records it as its outcome
            log.debug("preparing the editor failed; the first call will say why: %s", redact(str(exc)))

    async def edit_all(self, pairs: list[tuple[AdmittedFace, Session]]) -> list[list[StepState]]:
        return list(await asyncio.gather(*(self.edit_session(a, s) for a, s in pairs)))

    async def edit_session(self, face: AdmittedFace, session: Session) -> list[StepState]:
        """One session's chained steps; the edit stage's wall time counts while any session edits."""
        with self._busy:
            try:
                return await self._session(face, session)
            finally:
                self.wall_s = self._busy.total_s

    def close(self) -> None:
        self._answers.shutdown(wait=False, cancel_futures=True)
        if self._editor_thread is not None:
            self._editor_thread.shutdown(wait=False, cancel_futures=True)
            self._editor_thread = None

    async def _session(self, face: AdmittedFace, session: Session) -> list[StepState]:
        states: list[StepState] = []
        current = face.base_hash
        for step in session.steps:
            if self.halted:
                return states  # incomplete: the run is ending with another stage's error
            if states and states[-1].outcome is not Outcome.OK:
                state = StepState(step.k, Outcome.SKIPPED, f"step {step.k - 1} did not succeed", current, None, False)
                duration = 0.0
            else:
                try:
                    state, duration = await self._step(face, session, step, current)
                except BudgetReached as exc:
                    self.stopped = str(exc)
                    return states  # incomplete: reported as stopped, nothing recorded for it
            states.append(state)
            self._notify(face.face, session, state, duration)
            if state.outcome is Outcome.OK and state.output_hash:
                current = state.output_hash
                if self.on_image is not None:
                    self.on_image(current)
        return states

    async def _step(self, face: AdmittedFace, session: Session, step: Step, input_hash: str) -> tuple[StepState, float]:
        k = step.k
        # Resolving reads and stores the further images: in a worker thread, off the event loop.
        roles, extras, problem = (await asyncio.to_thread(self.inputs.resolve, face.face, step)
                                  if step.inputs and self.inputs else ((), (), None))
        if step.inputs and self.inputs is None:
            problem = "this run resolves no further input images"
        if problem is None and 1 + len(extras) > self.max_images:
            problem = (f"the step needs {1 + len(extras)} input images ({', '.join(('previous', *roles))}); "
                       f"this editor takes at most {self.max_images}")
        if problem is not None:  # never sent: an image is not silently dropped
            return StepState(k, Outcome.UNSUPPORTED, problem, input_hash, None, False), 0.0
        composed = await prompt_for(self.prompts, face, session, step)  # the step's prompt under its condition
        if composed.prompt is None:  # never the baseline prompt instead: the step ends with the reason
            return StepState(k, Outcome.PROMPT_FAILED, composed.failure or "", input_hash, None, False), 0.0
        instruction = composed.prompt
        seed = step_seed(self.run_seed, face.base_hash, session.session_id, k)
        given = tuple(zip(roles, extras))  # (role, hash): the judge sees them too
        key = edit_key(self.editor_fp, input_hash, instruction, seed, given, composed.identity)
        row = self.ledger.get_edit(key)
        if row is None or row.outcome in self.retry:
            row = await self.ledger.claim_edit(key)  # None: ours to make; else made by another process meanwhile
        if row is not None:
            return (StepState(k, row.outcome, row.reason, input_hash, row.output_hash, True, row.usage, given,
                              instruction), row.duration_s)
        try:
            return await self._new_step(face, session, step, input_hash, key, extras, roles, instruction, seed)
        except BaseException:
            self.ledger.release(key)  # not made: another process may make it now (kept once recorded)
            raise

    async def _new_step(self, face: AdmittedFace, session: Session, step: Step, input_hash: str, key: str,
                        extras: tuple[str, ...], roles: tuple[str, ...], instruction: str,
                        seed: int) -> tuple[StepState, float]:
        k, given = step.k, tuple(zip(roles, extras))
        started = time.perf_counter()
        image, extra_images = await asyncio.to_thread(self._input_images, input_hash, extras)
        request = EditRequest(image, instruction, face.face.face_id, session.session_id, k, seed,
                              extra_images=extra_images, extra_roles=roles)
        timing = CallTiming()
        result = await self._call(request, timing)
        self.first_call_done.set()
        row = await asyncio.get_running_loop().run_in_executor(
            self._answers, self._record, result, key, started, timing, request, input_hash)
        self.new_calls += 1
        peak = row.usage.get("peak_gpu_mem_bytes")
        if isinstance(peak, int):
            self.peak_gpu_mem_bytes = max(peak, self.peak_gpu_mem_bytes or 0)
        return (StepState(k, row.outcome, row.reason, input_hash, row.output_hash, False, row.usage, given,
                          instruction), row.duration_s)

    def _record(self, result: EditResult, key: str, started: float, timing: CallTiming, request: EditRequest,
                input_hash: str) -> EditRow:
        """The answer checked, its image stored and its row handed to the ledger, in one go on a thread of its own
        (:data:`ANSWER_THREADS`): nothing else the run does (the event loop's other work, MLflow, decoding)
        comes between a provider's answer and the ledger's writer."""
        result, output_hash = self._kept(result)
        usage = self.executors.budget.charge(result.usage, capability(self.editor, "editor", "prices"))
        row = EditRow(key, result.outcome, output_hash, redact(result.reason), usage, time.perf_counter() - started,
                      timing.latency_s)
        self.ledger.put_edit(key, editor_fp=self.editor_fp, face_id=request.face_id, session_id=request.session_id,
                             k=request.k, instruction=request.instruction, input_hash=input_hash, row=row)
        return row

    def _input_images(self, input_hash: str, extras: tuple[str, ...]) -> tuple[bytes, tuple[bytes, ...]]:
        """I_{k-1} and the step's further input images as upright 8-bit pixels (in a worker thread)."""
        return (plain_image(self.store.get(input_hash), label=f"input image {input_hash[:12]}"),
                tuple(plain_image(self.store.get(h), label=f"input image {h[:12]}") for h in extras))

    def _kept(self, result: EditResult) -> tuple[EditResult, str | None]:
        """The answer, with its image checked (it must decode) and stored (in a worker thread)."""
        if result.outcome is not Outcome.OK or not result.image:
            return result, None
        try:
            decode_rgb(result.image, label="edited image")
        except ImageError as exc:
            return EditResult(Outcome.INVALID_IMAGE, reason=str(exc), usage=result.usage), None
        return result, self.store.put(result.image)

    def _edit_locally(self, request: EditRequest, timing: CallTiming) -> EditResult:
        """A local editor's one edit, in its own thread; its time is all the model's."""
        started = time.perf_counter()
        try:
            result = self.editor.edit(request)
        finally:
            timing.latency_s = time.perf_counter() - started
            timing.attempts += 1
        return result

    async def _call(self, request: EditRequest, timing: CallTiming | None = None) -> EditResult:
        timing = timing if timing is not None else CallTiming()
        try:
            if self.is_async:
                executor = self.executors.get(self.editor.limits)
                result = await executor.call(lambda: self.editor.aedit(request), timing)
            else:
                if self._editor_thread is None:
                    self._editor_thread = ThreadPoolExecutor(1, thread_name_prefix="faceedit-editor")
                result = await asyncio.get_running_loop().run_in_executor(
                    self._editor_thread, self._edit_locally, request, timing)
        except RUN_ENDING:  # end the run: nothing is recorded for this call
            raise
        except GaveUp as exc:
            log.warning("editor call gave up on %s/%s step %d: %s", request.face_id, request.session_id, request.k,
                        exc)
            return EditResult(Outcome.API_ERROR, reason=str(exc))
        except Exception as exc:  # recorded as an outcome; KeyboardInterrupt still stops the run
            log.warning("editor failed on %s/%s step %d: %s", request.face_id, request.session_id, request.k, exc)
            return EditResult(Outcome.FAILED, reason=f"{type(exc).__name__}: {exc}")
        if result.outcome is Outcome.OK and not result.image:
            return EditResult(Outcome.NO_IMAGE, reason="editor reported success without an image")
        return result

    def _notify(self, face: Face, session: Session, state: StepState, duration: float) -> None:
        step = session.steps[state.k - 1]
        unit = f"{face.face_id}/{session.session_id}/{state.k}"
        record = StepRecord(
            unit_key=unit if session.condition == "baseline" else f"{unit}@{session.condition}", face_id=face.face_id,
            identity=face.identity, session_id=session.session_id, k=state.k, instruction=step.instruction,
            category=step.category, sub_axis=step.sub_axis, axis=step.axis, outcome=state.outcome.value,
            reason=state.reason, input_hash=state.input_hash, output_hash=state.output_hash,
            resumed=state.resumed, duration_s=duration, condition=session.condition, prompt=state.prompt or "",
        )
        self.hook.faceedit_step_done(run=self.info, step=record)
        if self.progress is not None:
            self.progress.advance(EDITING, 1, cached=state.resumed)
