"""The score stage over stored images: identity scores (FSS_k) and the judge's answers of
edited sessions, computed at the same time; and, once every session is scored, the judge's
reliability checks (anchors, agreement with human labels), before anything is aggregated."""

from __future__ import annotations

import asyncio
import time
from pathlib import Path
from typing import Any

from faceedit_bench.execution.budget import BudgetReached
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
                 identity: bool = True) -> None:
        self.embeddings, self.similarity, self.judge_scorer = embeddings, similarity, judge_scorer
        self.identity = identity  # False: images that are not faces, judged only (no FSS)
        self.ledger, self.store, self.human_labels, self.seed = ledger, store, human_labels, seed
        self.wall_s = 0.0  # wall time spent embedding and judging (overlaps the edit stage)
        self.stopped: str | None = None  # set when the budget stopped the judge

    async def score(self, edited: list[Edited], *, stopped: bool = False) -> list[SessionResult]:
        """Identity scores and judge answers of edited sessions. The judge asks about sessions
        whose every step was edited, and nothing once the run has stopped."""
        if not edited:
            return []
        started = time.perf_counter()
        outputs = [s.output_hash for _, _, states in edited for s in states if s.output_hash and self.identity]
        judgeable = [i for i, (_, session, states) in enumerate(edited)
                     if len(states) == len(session.steps) and all(s.outcome is Outcome.OK for s in states)]
        embeddings, judged = await asyncio.gather(
            self.embeddings.aget(outputs),
            self._judge([(image_hashes(edited[i][0], edited[i][2]), edited[i][1], judge_context(edited[i][0].face, edited[i][2]))
                         for i in judgeable], stopped))
        results = [score_session(e, embeddings, self.similarity) if self.identity else unscored_session(e)
                   for e in edited]
        for i, judgment in zip(judgeable, judged):
            results[i].judged = judgment
        self.wall_s += time.perf_counter() - started
        return results

    async def _judge(self, sessions: list[tuple[tuple[str, ...], Any]], stopped: bool) -> list[Any]:
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
