"""The CREval judge metrics, declared like any other (:mod:`faceedit_bench.scoring.judge.declared`).

* ``creval``: every step is asked three times, once per metric (IF, VC, VQ), with that metric's
  frozen questions for the step's (source image, instruction), taken from the question sets the run
  names (``analysis.creval.questions=[...]``). Images: the original (I_0) and the edited image (I_k), in CREval's
  answer call (:mod:`~faceedit_bench_creval.templates`).
* ``creval_face`` (EXTENSION, METHODOLOGY §5.4): the same, with questions written from the taxonomy
  (:mod:`faceedit_bench_creval.face`); images I_{k-1} and I_k, as for SC.

Values (x100, higher is better): ``<name>_if``, ``<name>_vc``, ``<name>_vq`` = the mean over the
session's steps of Σw·1[answer = expected]/Σw; ``<name>`` = the mean of 0.4 IF + 0.4 VC + 0.2 VQ.
What a failed call or a missing edited image counts as is the metric's declared failure policy
(:mod:`~faceedit_bench_creval.policy`: ``zero``, CREval's rule, or ``exclude``), one rule for
every value. The per-question results travel in the judgment's detail (:class:`ItemResult`) to the report.
"""

from __future__ import annotations

import functools
import json
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

from faceedit_bench.api import JudgeAnswer, Session
from faceedit_bench.api.judging import JudgeMetric
from faceedit_bench_creval import policy
from faceedit_bench_creval.face import face_item
from faceedit_bench_creval.protocol import questions_block
from faceedit_bench_creval.questions import METRICS, QuestionItem, QuestionSet
from faceedit_bench_creval.scoring import ItemResult, MetricScore, score_metric
from faceedit_bench_creval.templates import ANSWER_TEMPLATE

#: (session, k, image hashes of the question) -> the item's questions, or None (nothing to ask).
Lookup = Callable[[Session, int, Sequence[str]], QuestionItem | None]
#: (session, exclusion reason, hash of I_0) -> the session's items, failed for that reason.
FailedItems = Callable[[Session, str, str | None], Sequence[ItemResult]]


@dataclass(frozen=True)
class CrevalMetric(JudgeMetric):
    """A CREval judge metric with what its report section (``creval``, ``creval_face``) reads of it: whether
    it is the taxonomy extension, its failure rule, the failed items of a session whose edit gave no image,
    and the question sets it answers (their descriptions). None of these enter its identity beyond the
    description and values, which name the sets and the rule."""

    extension: bool = False
    on_failure: str = policy.EXCLUDE
    failed_items: FailedItems | None = None
    question_sets: tuple[Mapping[str, Any], ...] = ()

_TITLES = {"IF": "instruction following", "VC": "visual consistency", "VQ": "visual quality"}


def _values(name: str, extension: bool, rule: str) -> tuple[JudgeMetric.Value, ...]:
    tag = " EXTENSION (METHODOLOGY §5.4): questions written from the taxonomy." if extension else ""
    title = "CREval-face" if extension else "CREval"
    failures = f" Failures: on_failure={rule}, {policy.RULES[rule]}."
    per = [JudgeMetric.Value(f"{name}_{m.lower()}", True, "x100",
                      f"CREval {m} ({_TITLES[m]}): Σ weight·[answer = expected] / Σ weight over the {m} questions, "
                      f"mean over the steps, x100 (METHODOLOGY §5.3).{failures}{tag}", label=f"{title} {m}",
                      bounds=(0, 100))
           for m in METRICS]
    return (*per, JudgeMetric.Value(name, True, "x100",
                             f"CREval overall: 0.4 IF + 0.4 VC + 0.2 VQ per step, mean over the steps, x100 "
                             f"(METHODOLOGY §5.3).{failures}{tag}", label=title, bounds=(0, 100)))


def _where(item: QuestionItem | None, session: Session, k: int) -> tuple[str, str]:
    """(category, dimension) of an item: the question set's, else the step's prompt category
    ("Category/Dimension"), else its taxonomy axis and sub-axis."""
    if item is not None and item.category:
        return item.category, item.dimension or item.category
    step = session.steps[k - 1]
    if step.prompt_category:
        category, _, dimension = step.prompt_category.partition("/")
        return category, dimension or category
    if step.axis:
        return step.axis, step.sub_axis or step.axis
    return "all", "all"


def _reducer(lookup: Lookup, name: str, rule: str) -> Callable[..., tuple[dict[str, float | None], Any]]:
    def reduce(questions: Sequence[JudgeMetric.Question], answers: Sequence[JudgeAnswer],
               session: Session) -> tuple[dict[str, float | None], Any]:
        by_k: dict[int, dict[str, MetricScore]] = {}
        images: dict[int, tuple[str, ...]] = {}
        items: dict[int, QuestionItem] = {}
        for q, a in zip(questions, answers):
            item = lookup(session, q.k, q.images)
            if item is None:  # no question for this step: not an item of the benchmark
                continue
            items[q.k], images[q.k] = item, q.images
            by_k.setdefault(q.k, {})[q.facet] = score_metric(q.facet, item.questions[q.facet], a)
        results = tuple(ItemResult(session.session_id, k, items[k].item_id, *_where(items[k], session, k), images[k],
                                   by_k[k]) for k in sorted(by_k))
        return policy.session_values(results, name, rule), results

    return reduce


def _failed_items(lookup: Lookup) -> Callable[[Session, str, str | None], tuple[ItemResult, ...]]:
    """The items of a session whose edit gave no image: one per step with questions, failed for ``reason``."""

    def items(session: Session, reason: str, base_hash: str | None) -> tuple[ItemResult, ...]:
        out = []
        for step in session.steps:
            item = lookup(session, step.k, (base_hash,) if base_hash else ())
            if item is not None:
                out.append(ItemResult(session.session_id, step.k, item.item_id, *_where(item, session, step.k),
                                      (base_hash,) if base_hash else (), {}, failure=reason))
        return tuple(out)

    return items


def build_metric(name: str, lookup: Lookup, *, images: tuple[str, ...], description: str, extension: bool,
                 needs_taxonomy: bool = False, on_failure: str = policy.EXCLUDE,
                 question_sets: Sequence[Mapping[str, Any]] = ()) -> CrevalMetric:
    rule = policy.check_rule(on_failure, f"judge metric {name}")
    failed_items = _failed_items(lookup)

    def facet_fields(session: Session, k: int, facet: str, hashes: Sequence[str]) -> Mapping[str, str] | None:
        item = lookup(session, k, hashes)
        if item is None:
            return None
        questions = item.questions[facet]
        return {"questions": questions_block(questions),
                "choices": json.dumps({q.question_id: list(q.choices) for q in questions})}

    def unjudged(session: Session, reason: str, base_hash: str | None) -> Mapping[str, float | None] | None:
        """Values of a session no judge saw because an edit gave no image: 0 under CREval's rule."""
        if rule != policy.ZERO or not reason.startswith(policy.EDIT_FAILURE):
            return None
        return policy.session_values(failed_items(session, reason, base_hash), name, rule) or None

    return CrevalMetric(name=name, template=ANSWER_TEMPLATE, images=images, values=_values(name, extension, rule),
                        over="steps", description=f"{description} Failures: on_failure={rule}.",
                        needs_taxonomy=needs_taxonomy, facets=METRICS, facet_fields=facet_fields,
                        reduce_questions=_reducer(lookup, name, rule), unjudged=unjudged, extension=extension,
                        on_failure=rule, failed_items=failed_items, question_sets=tuple(question_sets))


# -- creval: frozen question sets ----------------------------------------------------------


def _no_questions(session: Session, k: int, images: Sequence[str]) -> QuestionItem | None:
    return None


_CREVAL_DESCRIPTION = ("CREval QA scoring (METHODOLOGY §5): frozen IF/VC/VQ questions per (source image, "
                       "instruction), answered by the judge on the original and the edited image in CREval's answer "
                       "call; overall 0.4/0.4/0.2.")

#: Registered unbound; a run binds it to its question sets and failure policy (:func:`bind_question_sets`).
CREVAL_METRIC = build_metric("creval", _no_questions, images=("source", "current"), extension=False,
                             description=_CREVAL_DESCRIPTION)


def bind_question_sets(metric: JudgeMetric, sets: Sequence[QuestionSet], on_failure: str = policy.EXCLUDE
                       ) -> JudgeMetric:
    """``metric`` answering the questions of ``sets`` (the first set holding a step wins) under the failure
    policy ``on_failure``. The sets' hashes and the policy become part of the metric's identity, so other
    questions or another rule give another run."""

    def lookup(session: Session, k: int, images: Sequence[str]) -> QuestionItem | None:
        source = images[0] if images else None
        for qs in sets:
            found = qs.find(session.session_id, k, source)
            if found is not None:
                return found
        return None

    names = ", ".join(f"{q.name}@{q.version} ({q.content_hash[:12]})" for q in sets)
    bound = build_metric(metric.name, lookup, images=metric.images, extension=False,
                         description=f"{_CREVAL_DESCRIPTION} Question sets: {names}.", on_failure=on_failure,
                         question_sets=[q.describe() for q in sets])
    return replace(bound, needs_taxonomy=metric.needs_taxonomy)


# -- creval_face: questions from the taxonomy ----------------------------------------------


@functools.lru_cache(maxsize=4096)
def _face_lookup(session: Session, k: int) -> QuestionItem | None:
    return face_item(session, k) if session.steps[k - 1].bound else None


_FACE_DESCRIPTION = ("EXTENSION (METHODOLOGY §5.4): CREval QA scoring of taxonomy-bound face edits on (I_k-1, I_k), "
                     "questions written from the taxonomy (IF: target attribute; VC: identity w3, other 7 sub-axes w2; "
                     "VQ: artifacts); overall 0.4/0.4/0.2. An interpretable alternative to SC.")


def _face_metric(on_failure: str = policy.EXCLUDE) -> CrevalMetric:
    return build_metric("creval_face", lambda session, k, images: _face_lookup(session, k),
                        images=("previous", "current"), extension=True, needs_taxonomy=True,
                        description=_FACE_DESCRIPTION, on_failure=on_failure)


CREVAL_FACE_METRIC = _face_metric()


def with_policy(metric: JudgeMetric, on_failure: str) -> JudgeMetric:
    """``creval_face`` under the failure policy ``on_failure`` (``creval`` takes it in :func:`bind_question_sets`)."""
    if metric.name != "creval_face":
        raise ValueError(f"with_policy rebuilds creval_face, not {metric.name}")
    return _face_metric(on_failure)
