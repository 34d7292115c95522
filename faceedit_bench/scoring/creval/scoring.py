"""CREval's scoring rule (METHODOLOGY §5.3).

* Item score of a metric = Σ_i w_i · 1[answer_i = expected_i] / Σ_i w_i, matched case-insensitively.
* A question the judge did not answer counts as wrong (as in the paper); such answers are counted.
* A failed call (api_error, refused, parse_error, ...) gives no score: the item is excluded for that
  metric, never scored 0.
* Overall = 0.4 · IF + 0.4 · VC + 0.2 · VQ; a metric's value is the mean over items, x100.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from faceedit_bench.records import JudgeAnswer, Outcome
from faceedit_bench.scoring.creval.questions import METRICS, OVERALL_WEIGHTS, CheckQuestion


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


_ID = re.compile(r"^\s*([A-Za-z]*\d+)")


def _normal_id(raw: str) -> str:
    """``Q3``, ``q3``, ``Q3: Is ...`` and ``3`` all name question Q3 (CREval's parser matches the prefix)."""
    found = _ID.match(raw or "")
    token = found.group(1) if found else (raw or "").strip()
    return token.upper() if token[:1].isalpha() else f"Q{token}"


def matches(answer: str, expected: str) -> bool:
    """Case-insensitive exact match, surrounding spaces aside."""
    return answer.strip().casefold() == expected.strip().casefold()


def score_metric(metric: str, questions: Sequence[CheckQuestion], answer: JudgeAnswer) -> MetricScore:
    if answer.outcome is not Outcome.OK or not answer.value:
        return MetricScore(metric, answer.outcome, None, reason=answer.reason)
    given: dict[str, Mapping[str, str]] = {}
    for entry in answer.value.get("answers", []):
        given.setdefault(_normal_id(str(entry.get("question_id", ""))), entry)  # the first answer counts
    asked = {_normal_id(q.question_id) for q in questions}
    results = []
    for q in questions:
        entry = given.get(_normal_id(q.question_id))
        text = None if entry is None else str(entry.get("answer", ""))
        results.append(QuestionResult(metric, q.question_id, q.question, q.answer, q.weight, text,
                                      "" if entry is None else str(entry.get("explanation", "")),
                                      text is not None and matches(text, q.answer)))
    total = sum(r.weight for r in results)
    score = sum(r.weight for r in results if r.correct) / total
    return MetricScore(metric, Outcome.OK, score, tuple(results), sum(r.answer is None for r in results),
                       sum(1 for i in given if i not in asked))


def overall(scores: Mapping[str, float | None]) -> float | None:
    """0.4 IF + 0.4 VC + 0.2 VQ, in the scores' own unit; undefined when any metric is."""
    if any(scores.get(m) is None for m in METRICS):
        return None
    return sum(OVERALL_WEIGHTS[m] * float(scores[m]) for m in METRICS)  # type: ignore[arg-type]


@dataclass(frozen=True)
class ItemResult:
    """Every metric of one item (step k of a session), with the images it was judged on."""

    session_id: str
    k: int
    item_id: str
    category: str
    dimension: str
    images: tuple[str, ...]
    metrics: Mapping[str, MetricScore]

    @property
    def overall(self) -> float | None:
        return overall({m: s.score for m, s in self.metrics.items()})
