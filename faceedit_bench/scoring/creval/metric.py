"""The CREval judge metrics, declared like any other (:mod:`faceedit_bench.scoring.judge.declared`).

* ``creval``: every step is asked three times, once per metric (IF, VC, VQ), with that metric's
  frozen questions for the step's (source image, instruction), taken from the question sets the run
  names (``questions=[...]``). Images: the original (I_0) and the edited image (I_k).
* ``creval_face`` (EXTENSION, METHODOLOGY §5.4): the same, with questions written from the taxonomy
  (:mod:`faceedit_bench.scoring.creval.face`); images I_{k-1} and I_k, as for SC.

Values (x100, higher is better): ``<name>_if``, ``<name>_vc``, ``<name>_vq`` = the mean over the
session's steps of Σw·1[answer = expected]/Σw; ``<name>`` = the mean of 0.4 IF + 0.4 VC + 0.2 VQ.
A session value is undefined when a call it needs failed (api_error, refused, parse_error): never 0.
The per-question results travel in the judgment's detail (:class:`ItemResult`) to the report.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Mapping, Sequence
from dataclasses import replace
from typing import Any

from faceedit_bench.records import JudgeAnswer, Outcome, Session
from faceedit_bench.scoring.creval.face import face_item
from faceedit_bench.scoring.creval.questions import METRICS, QuestionItem, QuestionSet, question_lines
from faceedit_bench.scoring.creval.scoring import ItemResult, MetricScore, score_metric
from faceedit_bench.scoring.creval.templates import ANSWER_TEMPLATE
from faceedit_bench.scoring.judge.declared import JudgeMetric, JudgeValue, Question

#: (session, k, image hashes of the question) -> the item's questions, or None (nothing to ask).
Lookup = Callable[[Session, int, Sequence[str]], QuestionItem | None]

_TITLES = {"IF": "instruction following", "VC": "visual consistency", "VQ": "visual quality"}


def _values(name: str, extension: bool) -> tuple[JudgeValue, ...]:
    tag = " EXTENSION (METHODOLOGY §5.4): questions written from the taxonomy." if extension else ""
    title = "CREval-face" if extension else "CREval"
    per = [JudgeValue(f"{name}_{m.lower()}", True, "x100",
                      f"CREval {m} ({_TITLES[m]}): Σ weight·[answer = expected] / Σ weight over the {m} questions, "
                      f"mean over the steps, x100 (METHODOLOGY §5.3).{tag}", label=f"{title} {m}", bounds=(0, 100))
           for m in METRICS]
    return (*per, JudgeValue(name, True, "x100",
                             f"CREval overall: 0.4 IF + 0.4 VC + 0.2 VQ per step, mean over the steps, x100 "
                             f"(METHODOLOGY §5.3).{tag}", label=title, bounds=(0, 100)))


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


def _reducer(lookup: Lookup, name: str) -> Callable[..., tuple[dict[str, float | None], Any]]:
    def reduce(questions: Sequence[Question], answers: Sequence[JudgeAnswer],
               session: Session) -> tuple[dict[str, float | None], Any]:
        by_k: dict[int, dict[str, MetricScore]] = {}
        images: dict[int, tuple[str, ...]] = {}
        items: dict[int, QuestionItem | None] = {}
        for q, a in zip(questions, answers):
            item = lookup(session, q.k, q.images)
            items[q.k], images[q.k] = item, q.images
            by_k.setdefault(q.k, {})[q.facet] = (
                score_metric(q.facet, item.questions[q.facet], a) if item is not None
                else MetricScore(q.facet, Outcome.SKIPPED, None, reason="no question set entry for this step"))
        results = tuple(ItemResult(session.session_id, k, items[k].item_id if items[k] else f"{session.session_id}/{k}",
                                   *_where(items[k], session, k), images[k], by_k[k]) for k in sorted(by_k))
        values: dict[str, float | None] = {}
        for m in METRICS:
            scores = [r.metrics[m].score for r in results]
            values[f"{name}_{m.lower()}"] = (None if not scores or any(s is None for s in scores)
                                            else 100.0 * sum(scores) / len(scores))  # type: ignore[misc]
        overalls = [r.overall for r in results]
        values[name] = (None if not overalls or any(o is None for o in overalls)
                        else 100.0 * sum(overalls) / len(overalls))  # type: ignore[misc]
        return values, results

    return reduce


def build_metric(name: str, lookup: Lookup, *, images: tuple[str, ...], description: str, extension: bool,
                 needs_taxonomy: bool = False, report: Any = None) -> JudgeMetric:
    def facet_fields(session: Session, k: int, facet: str, hashes: Sequence[str]) -> Mapping[str, str] | None:
        item = lookup(session, k, hashes)
        if item is None:
            return None
        return {"instruction": item.instruction or session.steps[k - 1].instruction,
                "questions": question_lines(item.questions[facet])}

    return JudgeMetric(name=name, template=ANSWER_TEMPLATE, images=images, values=_values(name, extension),
                       over="steps", description=description, needs_taxonomy=needs_taxonomy, facets=METRICS,
                       facet_fields=facet_fields, reduce_questions=_reducer(lookup, name), report=report)


# -- creval: frozen question sets ----------------------------------------------------------


def _no_questions(session: Session, k: int, images: Sequence[str]) -> QuestionItem | None:
    return None


#: Registered unbound; a run binds it to its question sets (:func:`bind_question_sets`).
CREVAL_METRIC = build_metric(
    "creval", _no_questions, images=("source", "current"), extension=False,
    description="CREval QA scoring (METHODOLOGY §5): frozen IF/VC/VQ questions per (source image, instruction), "
                "answered by the judge on the original and the edited image; overall 0.4/0.4/0.2.")


def bind_question_sets(metric: JudgeMetric, sets: Sequence[QuestionSet]) -> JudgeMetric:
    """``metric`` answering the questions of ``sets`` (the first set holding a step wins). The sets'
    hashes become part of the metric's identity, so other questions give another run."""

    def lookup(session: Session, k: int, images: Sequence[str]) -> QuestionItem | None:
        source = images[0] if images else None
        for qs in sets:
            found = qs.find(session.session_id, k, source)
            if found is not None:
                return found
        return None

    names = ", ".join(f"{q.name}@{q.version} ({q.content_hash[:12]})" for q in sets)
    report = (functools.partial(metric.report, question_sets=[q.describe() for q in sets])
              if metric.report is not None else None)
    bound = build_metric(metric.name, lookup, images=metric.images, extension=False,
                         description=f"{CREVAL_METRIC.description} Question sets: {names}.", report=report)
    return replace(bound, needs_taxonomy=metric.needs_taxonomy)


# -- creval_face: questions from the taxonomy ----------------------------------------------


@functools.lru_cache(maxsize=4096)
def _face_lookup(session: Session, k: int) -> QuestionItem | None:
    return face_item(session, k) if session.steps[k - 1].bound else None


CREVAL_FACE_METRIC = build_metric(
    "creval_face", lambda session, k, images: _face_lookup(session, k), images=("previous", "current"),
    extension=True, needs_taxonomy=True,
    description="EXTENSION (METHODOLOGY §5.4): CREval QA scoring of taxonomy-bound face edits on (I_k-1, I_k), "
                "questions written from the taxonomy (IF: target attribute; VC: identity w3, other 7 sub-axes w2; "
                "VQ: artifacts); overall 0.4/0.4/0.2. An interpretable alternative to SC.")
