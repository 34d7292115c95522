"""The judge part of the score stage: every selected judge metric asked about every session.

For a session whose edits all returned an image, each metric (:mod:`faceedit_bench.scoring.judge.declared`)
asks its questions: paper (a)'s ``sc`` (VIEScore "tie" on (I_{k-1}, I_k, P_k), METHODOLOGY §2.5,
§3; the pair I_{k-1} is our reading, §10.2) and ``state`` (the state tracker on I_0..I_K, §8.5, a
reconstruction, from which :mod:`faceedit_bench.scoring.overediting` counts overedits and OER),
and any metric a plugin registered.

Every answer keeps its outcome. A value whose answers are not all ``ok`` is undefined for
the session. Nothing is filled in.
"""

from __future__ import annotations

import asyncio
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from faceedit_bench.records import JudgeAnswer, Outcome, Session
from faceedit_bench.scoring.judge.declared import JudgeMetric, MetricJudgment, Question
from faceedit_bench.scoring.judge.standard import SC_METRIC, STATE_METRIC
from faceedit_bench.scoring.overediting import SessionOER


@dataclass(frozen=True)
class JudgedSession:
    """Every selected metric's judgment of one session, by metric name."""

    metrics: Mapping[str, MetricJudgment]

    @property
    def answers(self) -> tuple[JudgeAnswer, ...]:
        return tuple(a for m in self.metrics.values() for a in m.answers)

    @property
    def values(self) -> dict[str, float | None]:
        """Session values of every metric, by value name."""
        return {name: v for m in self.metrics.values() for name, v in m.values.items()}

    # paper (a)'s metrics, by their old names (steps.csv, SessionScores.sc / .oer)
    @property
    def sc_answers(self) -> tuple[JudgeAnswer, ...]:
        return self.metrics["sc"].answers if "sc" in self.metrics else ()

    @property
    def sc_steps(self) -> tuple[float | None, ...] | None:
        """SC_k in [0, 1] for k = 1..K, ``None`` where the judge gave no usable answer."""
        return tuple(p["sc"] for p in self.metrics["sc"].points) if "sc" in self.metrics else None

    @property
    def state_answers(self) -> tuple[JudgeAnswer, ...]:
        return self.metrics["state"].answers if "state" in self.metrics else ()

    @property
    def oer(self) -> SessionOER | None:
        return self.metrics["state"].detail if "state" in self.metrics else None


def _skipped(question: Question, metric: JudgeMetric) -> JudgeAnswer:
    t = metric.template
    return JudgeAnswer(Outcome.SKIPPED, None, None, question.skip_reason, {}, f"{t.name}@{t.version}", t.hash)


class JudgeScorer:
    def __init__(self, service: Any, name: str, identity: dict[str, Any], seed: int = 0,
                 metrics: Sequence[JudgeMetric] = (SC_METRIC, STATE_METRIC)) -> None:
        self.service = service  # a JudgeService, or a panel's service (faceedit_bench.scoring.judge.panel)
        self.name = name
        self.identity = identity
        self.seed = seed
        self.metrics = tuple(metrics)

    def describe(self) -> dict[str, Any]:
        """The prompt of every metric (the report's ``prompts`` section)."""
        return {m.name: m.template.describe() for m in self.metrics}

    def label(self) -> str:
        """Who judged, for every judged row: the judge, its model and the prompts' versions and hashes."""
        describe = getattr(self.service, "describe_judge", None)
        who = describe() if describe else self.identity.get("model", self.identity.get("version", "?"))
        prompts = "; ".join(f"{p['name']}@{p['version']} {p['hash'][:12]}" for p in self.describe().values())
        return f"{self.name} {who}; {prompts}"

    async def score(self, sessions: Sequence[tuple[Any, ...]]) -> list[JudgedSession]:
        """Judge sessions, given as (hashes of I_0..I_K, session) pairs, concurrently. An item may
        carry a third element, a mapping with ``references`` (hashes of the face's reference images),
        ``inputs`` (k -> role -> hash of a step's extra input) and ``face`` (the Face, for metrics
        whose questions name its labels)."""
        return list(await asyncio.gather(*(self._session(*item) for item in sessions)))

    async def _session(self, hashes: Sequence[str], session: Session,
                       context: Mapping[str, Any] | None = None) -> JudgedSession:
        context = context or {}
        asked = [(m, m.questions(hashes, session, context.get("references", ()), context.get("inputs"),
                                 face=context.get("face")))
                 for m in self.metrics]
        answers = iter(await asyncio.gather(*(self._ask(m, q) for m, questions in asked for q in questions)))
        return JudgedSession({m.name: m.judge(questions, [next(answers) for _ in questions], session)
                              for m, questions in asked})

    async def _ask(self, metric: JudgeMetric, question: Question) -> JudgeAnswer:
        if question.skip_reason:
            return _skipped(question, metric)
        return await self.service.ask(metric.template, list(question.images), self.seed,
                                      image_labels=question.labels, **question.fields)
