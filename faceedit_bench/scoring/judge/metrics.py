"""The judge part of the score stage: semantic consistency per step and tracked states per image.

For a session whose 4 edits all returned an image:

* SC_k = min(editing success, overediting) / 10 from the VIEScore "tie" judge on
  (I_{k-1}, I_k, P_k) (METHODOLOGY §2.5, §3; the pair I_{k-1} is our reading, §10.2);
* the state dictionary of I_0..I_4 from the state tracker (§8.5, a reconstruction), from
  which :mod:`faceedit_bench.scoring.overediting` counts overedits and the session's OER.

Every answer keeps its outcome. A step whose SC answer is not ``ok`` leaves the session's
SC undefined; a missing state leaves its OER undefined. Nothing is filled in.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from faceedit_bench.records import JudgeAnswer, Outcome, Session
from faceedit_bench.scoring.judge.prompts import SC_TEMPLATE, STATE_TEMPLATE, sc_from_answer, state_from_answer
from faceedit_bench.scoring.judge.service import JudgeService
from faceedit_bench.scoring.overediting import SessionOER, session_oer


@dataclass(frozen=True)
class JudgedSession:
    sc_answers: tuple[JudgeAnswer, ...]  # steps 1..4
    state_answers: tuple[JudgeAnswer, ...]  # images I_0..I_4
    oer: SessionOER

    @property
    def sc_steps(self) -> tuple[float | None, ...]:
        """SC_k in [0, 1] for k = 1..4, ``None`` where the judge gave no usable answer."""
        return tuple(sc_from_answer(a.value) if a.outcome is Outcome.OK and a.value else None
                     for a in self.sc_answers)

    @property
    def answers(self) -> tuple[JudgeAnswer, ...]:
        return self.sc_answers + self.state_answers


class JudgeScorer:
    def __init__(self, service: JudgeService, name: str, identity: dict[str, Any], seed: int = 0) -> None:
        self.service = service
        self.name = name
        self.identity = identity
        self.seed = seed

    def describe(self) -> dict[str, Any]:
        return {"sc": SC_TEMPLATE.describe(), "state": STATE_TEMPLATE.describe()}

    def label(self) -> str:
        """Who judged, for every judged row: the judge, its model and the prompts' versions and hashes."""
        model = self.identity.get("model", self.identity.get("version", "?"))
        prompts = "; ".join(f"{p['name']}@{p['version']} {p['hash'][:12]}" for p in self.describe().values())
        return f"{self.name} {model}; {prompts}"

    async def score(self, sessions: Sequence[tuple[Sequence[str], Session]]) -> list[JudgedSession]:
        """Judge sessions, given as (hashes of I_0..I_4, session), concurrently."""
        return list(await asyncio.gather(*(self._session(hashes, session) for hashes, session in sessions)))

    async def _session(self, hashes: Sequence[str], session: Session) -> JudgedSession:
        steps = session.steps
        sc = [self.service.ask(SC_TEMPLATE, [hashes[k - 1], hashes[k]], self.seed, instruction=step.instruction)
              for k, step in enumerate(steps, start=1)]
        states = [self.service.ask(STATE_TEMPLATE, [h], self.seed) for h in hashes]
        answers = await asyncio.gather(*sc, *states)
        sc_answers, state_answers = tuple(answers[:len(sc)]), tuple(answers[len(sc):])
        tracked = [state_from_answer(a.value) if a.outcome is Outcome.OK and a.value else None
                   for a in state_answers]
        return JudgedSession(sc_answers, state_answers, session_oer(tracked, steps))
