"""The score stage over stored images: identity scores (FSS_k), the image metrics' values
(:mod:`faceedit_bench.scoring.image_scoring`) and the judge's answers of edited sessions, computed at the
same time; and, once every session is scored, the judge's reliability checks (anchors, agreement with human
labels), before anything is aggregated.

The engine scores each session as soon as its edits are done (:meth:`ScoreStage.score_one`),
while other sessions are being edited; each embedding and judge answer is committed as it
completes."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

from faceedit_bench.execution.budget import BudgetReached
from faceedit_bench.execution.busy_clock import BusyClock
from faceedit_bench.records import Edited, Outcome, SessionResult
from faceedit_bench.scoring.identity import EmbeddingService, image_hashes, score_session, unscored_session
from faceedit_bench.scoring.judge.agreement import judge_human_agreement
from faceedit_bench.scoring.judge.anchors import check_anchors


def judge_context(face: Any, states: Any) -> dict[str, Any]:
    """What a judge metric may see besides I_0..I_K: the face (its labels) and each step's further
    input images by role."""
    return {"face": face, "inputs": {s.k: dict(s.inputs) for s in states if s.inputs}}


class ScoreStage:
    def __init__(self, embeddings: EmbeddingService, similarity: Any, judge_scorer: Any = None, *,
                 ledger: Any = None, store: Any = None, human_labels: str | None = None, seed: int = 0,
                 identity: bool = True, image_scorer: Any = None) -> None:
        self.embeddings, self.similarity, self.judge_scorer = embeddings, similarity, judge_scorer
        self.image_scorer = image_scorer  # the selected image metrics (image_scoring.ImageScorer), or None
        self.identity = identity  # False: images that are not faces, judged only (no FSS)
        self.ledger, self.store, self.human_labels, self.seed = ledger, store, human_labels, seed
        self.wall_s = 0.0  # wall time spent embedding and judging (overlaps the edit stage)
        self.stopped: str | None = None  # set when the budget stopped the judge
        self._busy = BusyClock()

    async def score(self, edited: list[Edited], *, stopped: bool = False) -> list[SessionResult]:
        """Identity scores and judge answers of edited sessions, in their order."""
        return list(await asyncio.gather(*(self.score_one(e, stopped=stopped) for e in edited)))

    async def score_one(self, edited: Edited, *, stopped: bool = False) -> SessionResult:
        """Identity scores and judge answers of one edited session. The judge asks about a
        session whose every step was edited, and nothing once the run has stopped."""
        face, session, states = edited
        with self._busy:
            try:
                outputs = [s.output_hash for s in states if s.output_hash] if self.identity else []
                judgeable = len(states) == len(session.steps) and all(s.outcome is Outcome.OK for s in states)
                asked = [(image_hashes(face, states), session, judge_context(face.face, states))] if judgeable else []
                embeddings, judged, measured = await asyncio.gather(
                    self._embed(outputs), self._judge(asked, stopped), self._measure(edited, judgeable))
            finally:
                self.wall_s = self._busy.total_s
        result = score_session(edited, embeddings, self.similarity) if self.identity else unscored_session(edited)
        if judged:
            result.judged = judged[0]
        result.measured = measured
        return result

    def image_edited(self, image_hash: str) -> None:
        """An edited image is in the store: its embedding is queued now, not when its session is done, so
        the sessions that finish last leave no backlog of images to embed after the last edit."""
        if self.identity:
            self.embeddings.prefetch([image_hash])

    def editing_ended(self) -> None:
        """Nothing is being edited any more: the embeddings left need not make room for the calls."""
        if self.identity:
            self.embeddings.full_priority()
        if self.image_scorer is not None:
            self.image_scorer.editing_ended()

    async def _embed(self, hashes: list[str]) -> dict[str, Any]:
        return await self.embeddings.aget(hashes) if hashes else {}

    async def _measure(self, edited: Edited, complete: bool) -> Any:
        """The image metrics' results on a session whose every step gave an image (else None)."""
        if self.image_scorer is None or not complete:
            return None
        face, session, states = edited
        return await self.image_scorer.measure(face, session, states)

    async def _judge(self, sessions: list[tuple[Any, ...]], stopped: bool) -> list[Any]:
        if self.judge_scorer is None or stopped or self.stopped or not sessions:
            return []
        try:
            return await self.judge_scorer.score(sessions)
        except BudgetReached as exc:
            self.stopped = str(exc)
            return []

    async def reliability(self, first_base_hash: str | None) -> dict[str, Any] | None:
        """The anchors (every judged run) and the human-label agreement (when labels are given)."""
        if self.judge_scorer is None or not first_base_hash or self.stopped:
            return None
        service = self.judge_scorer.service
        try:
            # Re-check the judge whenever this run asked it anything; a pure re-report makes no call.
            result = await check_anchors(service, self.ledger, self.store, first_base_hash,
                                         fresh=service.calls_made > 0)
            result["agreement"] = await judge_human_agreement(
                service, self.store, Path(self.human_labels).expanduser(), self.seed) if self.human_labels else None
        except BudgetReached as exc:
            self.stopped = str(exc)
            return None
        return result
