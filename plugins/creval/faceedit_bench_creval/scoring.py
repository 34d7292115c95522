"""CREval's scoring rule (METHODOLOGY §5.3; CREval's ``code/answer_with_gpt4o.py``).

* Item score of a metric = Σ_i w_i · 1[answer_i = expected_i] / Σ_i w_i.
* An answer is matched to its question by ID, case aside and on its prefix (``q3``, ``Q3: Is ...``),
  as CREval's parser matches; a question the judge did not answer counts as wrong (as in the paper).
* An answer is compared with the expected one after trivial normalisation (case, surrounding spaces
  and quotes, trailing punctuation: "Yes." is "Yes"). CREval compares case-insensitively only; the
  answers that only this normalisation matched are counted (``normalised``), so the effect is known.
* An answer that is none of the question's choices even then ("Maybe", "The hair is red") is wrong,
  as in the paper, and counted (``out_of_choice``).
* A call without a usable answer (api_error, refused, parse_error ...) gives the item no score for
  that metric here; what it counts as (0, CREval's rule, or left out) is the metric's declared
  failure policy (:mod:`faceedit_bench_creval.policy`).
* Overall = 0.4 · IF + 0.4 · VC + 0.2 · VQ; a metric's value is the mean over items, x100.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from faceedit_bench.api import JudgeAnswer, Outcome
from faceedit_bench_creval.question_file import normal_id
from faceedit_bench_creval.questions import METRICS, OVERALL_WEIGHTS, CheckQuestion


@dataclass(frozen=True)
class QuestionResult:
    metric: str
    question_id: str
    question: str
    expected: str
    weight: int
    answer: str | None  # None: the judge did not answer it (counted wrong)
    explanation: str
    correct: bool
    in_choices: bool = True  # False: the answer is none of the choices, even normalised (counted wrong)
    normalised: bool = False  # True: correct only after normalisation beyond CREval's case-insensitive match


@dataclass(frozen=True)
class MetricScore:
    """One metric of one item: its score in [0, 1], or why there is none."""

    metric: str
    outcome: Outcome
    score: float | None
    results: tuple[QuestionResult, ...] = ()
    missing: int = 0  # questions without an answer (counted wrong)
    unknown: int = 0  # answers to no question asked (ignored)
    reason: str = ""
    out_of_choice: int = 0  # answers none of the question's choices (counted wrong)
    normalised: int = 0  # answers matched only after normalisation


_TRAILING = re.compile(r"[\s.,;:!?]+$")


def normalise(text: str) -> str:
    """ ' "Yes." ' -> 'yes': case, surrounding spaces and quotes, trailing punctuation."""
    return _TRAILING.sub("", text.strip().strip("\"'`").strip()).casefold()


def matches(answer: str, expected: str) -> bool:
    """CREval's own comparison: case-insensitive exact match, surrounding spaces aside."""
    return answer.strip().casefold() == expected.strip().casefold()


def _result(metric: str, q: CheckQuestion, entry: Mapping[str, str] | None) -> QuestionResult:
    if entry is None:
        return QuestionResult(metric, q.question_id, q.question, q.answer, q.weight, None, "", False)
    text = str(entry.get("answer", ""))
    given = normalise(text)
    in_choices = any(given == normalise(c) for c in q.choices)
    correct = in_choices and given == normalise(q.answer)
    return QuestionResult(metric, q.question_id, q.question, q.answer, q.weight, text,
                          str(entry.get("explanation", "")), correct, in_choices,
                          correct and not matches(text, q.answer))


def score_metric(metric: str, questions: Sequence[CheckQuestion], answer: JudgeAnswer) -> MetricScore:
    if answer.outcome is not Outcome.OK or not answer.value:
        return MetricScore(metric, answer.outcome, None, reason=answer.reason or "no answer")
    given: dict[str, Mapping[str, str]] = {}
    for key, entry in answer.value.items():
        if isinstance(entry, Mapping):
            given.setdefault(normal_id(str(key)), entry)  # the first answer counts
    asked = {normal_id(q.question_id) for q in questions}
    results = tuple(_result(metric, q, given.get(normal_id(q.question_id))) for q in questions)
    total = sum(r.weight for r in results)
    score = sum(r.weight for r in results if r.correct) / total
    return MetricScore(metric, Outcome.OK, score, results, sum(r.answer is None for r in results),
                       sum(1 for i in given if i not in asked), "",
                       sum(1 for r in results if r.answer is not None and not r.in_choices),
                       sum(r.normalised for r in results))


def overall(scores: Mapping[str, float | None]) -> float | None:
    """0.4 IF + 0.4 VC + 0.2 VQ, in the scores' own unit; undefined when any metric is."""
    if any(scores.get(m) is None for m in METRICS):
        return None
    return sum(OVERALL_WEIGHTS[m] * float(scores[m]) for m in METRICS)  # type: ignore[arg-type]


@dataclass(frozen=True)
class ItemResult:
    """Every metric of one item (step k of a session), with the images it was judged on. ``failure``
    names why the item has no edited image to judge (``step_refused`` ...), when it has none."""

    session_id: str
    k: int
    item_id: str
    category: str
    dimension: str
    images: tuple[str, ...]
    metrics: Mapping[str, MetricScore]
    failure: str = ""

    @property
    def overall(self) -> float | None:
        return overall({m: s.score for m, s in self.metrics.items()})

    @property
    def failed(self) -> dict[str, str]:
        """metric -> why it has no score: the edit's failure, or the call's outcome."""
        if self.failure:
            return {m: self.failure for m in METRICS}
        return {m: s.outcome.value for m, s in self.metrics.items() if s.score is None}
