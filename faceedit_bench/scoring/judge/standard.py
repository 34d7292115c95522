"""Paper (a)'s two judge metrics, declared like any plugin's (:mod:`faceedit_bench.scoring.judge.declared`).

* ``sc``: VIEScore "tie" on (I_{k-1}, I_k, P_k) for every step; SC_k = min(editing success,
  overediting) / 10; the session's SC is the mean over its steps, x100 (METHODOLOGY §2.5, §3).
* ``state``: the state tracker on every image I_0..I_K; the session's OER (overedits / K, x100)
  and, across sessions, the overediting matrix and frequent patterns (§2.5, §8.5, a reconstruction).

Their prompts, hashes and numbers are those the core computed before metrics were declared
(``tests/test_reference_run.py`` pins them).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from faceedit_bench.records import JudgeAnswer, Outcome, Session, SessionResult
from faceedit_bench.scoring.judge.declared import JudgeMetric, JudgeValue, MetricJudgment
from faceedit_bench.scoring.judge.prompts import SC_TEMPLATE, STATE_TEMPLATE, sc_from_answer, state_from_answer
from faceedit_bench.scoring.overediting import (
    OvereditMatrix,
    StepOveredits,
    attribute_changes,
    frequent_patterns,
    session_oer,
)


def sc_point(value: Mapping[str, Any]) -> float:
    """SC_k of one answer. A single judge's answer is validated again (``sc_from_answer``); a
    panel's combined answer may hold non-integral means, checked for range here."""
    scores = (value.get("editing_success"), value.get("overediting"))
    if all(isinstance(s, int) and not isinstance(s, bool) for s in scores):
        return sc_from_answer(value)
    if not all(isinstance(s, (int, float)) and not isinstance(s, bool) and 0 <= s <= 10 for s in scores):
        raise ValueError(f"not an SC answer: {dict(value)}")
    return min(float(scores[0]), float(scores[1])) / 10  # type: ignore[arg-type]


SC_METRIC = JudgeMetric(
    name="sc",
    template=SC_TEMPLATE,
    images=("previous", "current"),
    over="steps",
    description="VIEScore 'tie' semantic consistency of every step (METHODOLOGY §3).",
    values=(JudgeValue(
        name="sc", higher_is_better=True, unit="x100",
        description="Semantic consistency: mean over the 4 steps of min(editing success, overediting)/10 from "
                    "the VIEScore-style judge on (I_k-1, I_k, P_k), x100 (METHODOLOGY §2.5, §3).",
        point=sc_point, scale=100.0, label="SC", bounds=(0.0, 100.0)),),
)


def _oer(answers: Sequence[JudgeAnswer], points: Sequence[Mapping[str, float | None]],
         session: Session) -> tuple[dict[str, float | None], Any]:
    tracked = [state_from_answer(a.value) if a.outcome is Outcome.OK and a.value else None for a in answers]
    oer = session_oer(tracked, session.steps)
    return {"oer": None if oer.oer is None else 100.0 * oer.oer}, oer


class OvereditCollector:
    """The ``overediting`` report section: the matrix and frequent patterns over the included sessions whose
    OER is defined (a report section's collector, :mod:`faceedit_bench.report.overediting_section`)."""

    def __init__(self, metric: str = "state") -> None:
        self.metric = metric
        self.matrix = OvereditMatrix.from_taxonomy()
        self.steps: list[StepOveredits] = []

    def add_session(self, result: SessionResult) -> None:
        included = result.fss is not None and result.judged is not None
        judgment: MetricJudgment | None = result.judged.metrics.get(self.metric) if included else None
        if judgment is not None and judgment.detail is not None and judgment.detail.defined:
            self.matrix.add_session(judgment.detail)
            self.steps.extend(judgment.detail.steps)

    def finish(self) -> dict[str, Any]:
        return {**self.matrix.as_dict(), "patterns": frequent_patterns(self.steps),
                "attribute_changes": attribute_changes(self.steps), "reconstruction": True}


STATE_METRIC = JudgeMetric(
    name="state",
    template=STATE_TEMPLATE,
    images=("current",),
    over="images",
    description="State tracker on I_0..I_K: overediting rate, matrix and patterns (METHODOLOGY §8.5, reconstructed).",
    values=(JudgeValue(
        name="oer", higher_is_better=False, unit="x100",
        # No upper bound: an edit that changes several sub-axes counts each (METHODOLOGY §2.5), so OER x100 can
        # pass 100. (The description is part of the metric's identity, and so of run keys: unchanged.)
        description="Overediting rate: unrequested sub-axis changes per edit found by the state tracker, x100 "
                    "(METHODOLOGY §2.5; counting rules reconstructed, §8.5).", label="OER", bounds=(0.0, None)),),
    session=_oer,
    needs_taxonomy=True,
)
