"""Judge metrics as declarations: what to ask, about which images, and how answers become values.

A :class:`JudgeMetric` is data, not code in the core:

* a versioned, hashed :class:`~faceedit_bench.scoring.judge.service.PromptTemplate` with its pydantic
  answer schema;
* the images the judge sees, by role, in the order the prompt names them (:data:`ROLES`), and
  optionally a label the judge reads before each role's images (``image_labels``, e.g. paper (b)'s
  ``"SOURCE IMAGE:"``); every judge plugin sends them in the order :meth:`JudgeRequest.parts` gives;
* what it is asked about: every step k = 1..K (``over="steps"``), every image I_0..I_K
  (``over="images"``) or the session once, about its last image (``over="session"``);
* one or several named values (:class:`JudgeValue`): how one answer becomes a number, and how
  a session's numbers reduce to the session's value (the mean by default, or a custom reducer),
  with the direction, unit, description, label and bounds reports and the leaderboard render;
* optionally facets: each position asked once per facet, with its own placeholder values (e.g. a
  question-answer protocol's question lists per dimension, one call each), reduced by a function that sees the questions.

A session value is undefined when any answer it needs is not ``ok``: a partial mean would
favour sessions whose hard steps were refused or unparsable. Nothing is filled in.
Plugins register metrics with the ``faceedit_register_judge_metrics`` hook; a run selects
them by name (``judge_metrics=[sc,state]``). What a metric adds across sessions (the overediting matrix,
a protocol's tables) is a report section (:mod:`faceedit_bench.plugin.sections`) that reads the metric's
judgments from every session result.
"""

from __future__ import annotations

import re
import string
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from functools import cached_property
from typing import Any, Literal

from pydantic import BaseModel

from faceedit_bench.keys import fingerprint
from faceedit_bench.plugin.needs import NO_NEEDS, Needs
from faceedit_bench.records import Face, JudgeAnswer, Outcome, Session
from faceedit_bench.scoring.judge.service import PromptTemplate

#: Image roles a metric may name. ``references`` expands to every reference image of the face;
#: ``inputs`` to every extra input image of the step, in the step's order; ``input:<name>`` is a step's
#: extra input image of that role.
ROLES = ("source", "previous", "current", "references", "inputs")
INPUT_ROLE = re.compile(r"^input:[A-Za-z0-9_.-]+$")

Over = Literal["steps", "images", "session"]

#: Placeholder values every question offers its template.
CONTEXT_FIELDS = ("instruction", "attribute", "category", "sub_axis", "axis", "k", "session_id", "previous")


@dataclass(frozen=True)
class Question:
    """One question of a session: which position (k), the images' hashes, the template's fields.
    ``labels`` are the metric's image labels, one per image (empty: none).
    ``missing`` names a role with no image, or ``questions`` when a facet has nothing to ask;
    ``not_asked`` says why the face's fields could not be filled (either way the question is not
    asked; recorded as skipped with the reason). ``facet`` names the facet of a faceted metric."""

    k: int
    images: tuple[str, ...]
    fields: Mapping[str, str]
    missing: str = ""
    not_asked: str = ""
    facet: str = ""
    labels: tuple[str, ...] = ()

    @property
    def skip_reason(self) -> str:
        if self.missing == "questions":
            return "no question set entry for this question"
        if self.missing:
            return f"no {self.missing} image for this question"
        return self.not_asked


class NotAsked(Exception):
    """Raised by a metric's ``face_fields`` when the face lacks what the question needs (e.g. a
    demographic label): the question is recorded as skipped with this reason, never guessed."""


@dataclass(frozen=True)
class JudgeValue:
    """One named number of a judge metric.

    ``point`` turns one ``ok`` answer's value (a dict that fits the schema; numbers may be
    non-integral after a panel's mean) into a number, or ``None``. The session value is
    ``scale * sum(points) / len(points)``, or ``reduce(points)`` when a reducer is given;
    undefined when any point is missing. ``applies`` (given the question's placeholder values) says
    whether the value exists for a question at all: where it does not, its point is ``None`` whatever the
    answer says (e.g. aging accuracy outside the aging prompt).
    """

    name: str
    higher_is_better: bool | None  # None: neither direction is better (a score whose ideal is the middle)
    unit: str
    description: str
    point: Callable[[Mapping[str, Any]], float | None] | None = None
    scale: float = 1.0
    reduce: Callable[[Sequence[float]], float | None] | None = None
    #: How reports and the leaderboard name it (``SC``); the name when empty.
    label: str = ""
    #: The values a session can take, (low, high) with None for an open side (OER: (0, None)); None when
    #: open-ended both ways. Plot axes and the interval of every mean follow them (analysis/statistics.py).
    bounds: tuple[float | None, float | None] | None = None
    #: With ``higher_is_better`` None: the value that means "no change" (3 on a two-sided 1-5 scale, 0.5 for a
    #: share whose ideal is balance); reports give each group's deviation from it instead of a best and worst.
    ideal: float | None = None
    applies: Callable[[Mapping[str, str]], bool] | None = None

    def session_value(self, points: Sequence[float | None]) -> float | None:
        if not points or any(p is None for p in points):
            return None
        known = [p for p in points if p is not None]
        if self.reduce is not None:
            return self.reduce(known)
        return self.scale * sum(known) / len(known)  # this order of operations: the pinned SC values


@dataclass(frozen=True)
class MetricJudgment:
    """What one metric found in one session: its answers (one per question), each answer's
    points per value, the session values, and the reducer's detail (e.g. the overedits)."""

    metric: JudgeMetric
    ks: tuple[int, ...]
    answers: tuple[JudgeAnswer, ...]
    points: tuple[Mapping[str, float | None], ...]
    values: Mapping[str, float | None]
    detail: Any = None
    questions: tuple[Question, ...] = ()

    def at(self, k: int) -> tuple[JudgeAnswer, Mapping[str, float | None]] | None:
        """The answer about position k (step k or image I_k), with its points."""
        for i, kk in enumerate(self.ks):
            if kk == k:
                return self.answers[i], self.points[i]
        return None


#: A custom session reducer: (answers, points, session) -> (session values, detail).
SessionReducer = Callable[[Sequence[JudgeAnswer], Sequence[Mapping[str, float | None]], Session],
                          tuple[Mapping[str, float | None], Any]]
#: A reducer that also sees the questions (their facets and fields): (questions, answers, session) ->
#: (session values, detail).
QuestionReducer = Callable[[Sequence[Question], Sequence[JudgeAnswer], Session],
                           tuple[Mapping[str, float | None], Any]]
#: Placeholder values of one facet of a position: (session, k, facet, image hashes) -> fields, or None
#: when there is nothing to ask (the question is recorded as skipped).
FacetFields = Callable[[Session, int, str, Sequence[str]], Mapping[str, str] | None]
UnjudgedValues = Callable[[Session, str, str | None], Mapping[str, float | None] | None]


def step_fields(session: Session, k: int) -> dict[str, str]:
    """The default placeholder values of position k: step k's instruction and taxonomy binding
    (empty for I_0), its number and the session's earlier instructions."""
    step = session.steps[k - 1] if 1 <= k <= len(session.steps) else None
    previous = "\n".join(f"P{i}: {s.instruction}" for i, s in enumerate(session.steps[:max(k - 1, 0)], start=1))
    return {"instruction": step.instruction if step else "", "attribute": step.attribute if step else "",
            "category": step.category if step else "", "sub_axis": step.sub_axis if step else "",
            "axis": step.axis if step else "", "k": str(k), "session_id": session.session_id,
            "previous": previous or "none"}


@dataclass(frozen=True)
class JudgeMetric:
    name: str
    template: PromptTemplate
    images: tuple[str, ...]
    values: tuple[JudgeValue, ...]
    over: Over = "steps"
    description: str = ""
    #: Placeholder values for a question (session, k); default: the step's fields (CONTEXT_FIELDS).
    fields: Callable[[Session, int], Mapping[str, str]] | None = None
    session: SessionReducer | None = None
    #: It asks about the steps' taxonomy binding (categories, sub-axes): skipped, with the reason, for a
    #: test set whose steps have none.
    needs_taxonomy: bool = False
    #: Placeholder values that depend on the face (face, session, k), added to the others; raise
    #: :class:`NotAsked` when the face lacks what the question needs.
    face_fields: Callable[[Face | None, Session, int], Mapping[str, str]] | None = None
    #: Ask every position once per facet, with ``facet_fields`` giving each facet's placeholder values.
    facets: tuple[str, ...] = ()
    facet_fields: FacetFields | None = None
    reduce_questions: QuestionReducer | None = None
    #: Values of a session no judge saw because an edit gave no image: (session, exclusion reason such as
    #: ``step_refused``, hash of I_0) -> values, or None (the session has none, as for every other metric).
    #: A protocol's failure rule may score such a session 0 (its own setting, e.g. ``on_failure``).
    unjudged: UnjudgedValues | None = None
    #: A text the judge reads before each role's images, one per entry of ``images`` ("" for none); for a
    #: role of several images (references, inputs) it precedes the first. Empty: images unlabelled.
    image_labels: tuple[str, ...] = ()
    #: What it needs of the faces to be asked at all (labels its ``face_fields`` read, ...): checked before the
    #: run's first paid call (:class:`~faceedit_bench.plugin.needs.Needs`; its image roles add their own).
    needs: Needs = NO_NEEDS

    # What a declaration is written with, kept on it (not dataclass fields): the values it declares, the
    # questions it asks (what its ``reduce_questions`` receives), the exception its ``face_fields`` raises, and
    # its ``fields``' default.
    Value = JudgeValue
    Question = Question
    NotAsked = NotAsked
    step_fields = staticmethod(step_fields)

    def __post_init__(self) -> None:
        if not self.name.isidentifier():
            raise ValueError(f"judge metric name {self.name!r} must be a Python identifier")
        if self.over not in ("steps", "images", "session"):
            raise ValueError(f"judge metric {self.name}: over={self.over!r}; use steps, images or session")
        if not self.images:
            raise ValueError(f"judge metric {self.name}: name at least one image role ({', '.join(ROLES)}, input:<role>)")
        bad = [r for r in self.images if r not in ROLES and not INPUT_ROLE.match(r)]
        if bad:
            raise ValueError(f"judge metric {self.name}: unknown image role(s) {bad}; use {', '.join(ROLES)} "
                             "or input:<role>")
        if self.over == "images" and "previous" in self.images:
            raise ValueError(f"judge metric {self.name}: over=images has no previous image for I_0")
        if self.image_labels and len(self.image_labels) != len(self.images):
            raise ValueError(f"judge metric {self.name}: image_labels has {len(self.image_labels)} entries for "
                             f"{len(self.images)} image role(s); give one per role ('' for none)")
        if not self.values:
            raise ValueError(f"judge metric {self.name}: declare at least one value")
        if self.facets and self.facet_fields is None:
            raise ValueError(f"judge metric {self.name}: facets {list(self.facets)} need a facet_fields function")
        if self.session is None and self.reduce_questions is None:
            lacking = [v.name for v in self.values if v.point is None]
            if lacking:
                raise ValueError(f"judge metric {self.name}: value(s) {lacking} need a point function "
                                 "(or give the metric a session reducer)")
        if self.fields is None and self.face_fields is None and self.facet_fields is None:
            names = {m.group("named") or m.group("braced")
                     for m in string.Template.pattern.finditer(self.template.text)} - {None}
            unknown = sorted(names - set(CONTEXT_FIELDS))
            if unknown:
                raise ValueError(f"judge metric {self.name}: template placeholder(s) {unknown} are not among "
                                 f"{', '.join(CONTEXT_FIELDS)}; give the metric a fields function")
        if not issubclass(self.template.schema, BaseModel):
            raise ValueError(f"judge metric {self.name}: the template's schema must be a pydantic model")

    # -- identity and description ----------------------------------------------------------

    def describe(self) -> dict[str, Any]:
        custom = self.session is not None or self.reduce_questions is not None
        out = {"name": self.name, "template": self.template.describe(), "images": list(self.images),
               "over": self.over, "description": self.description,
               "values": {v.name: {"higher_is_better": v.higher_is_better, "unit": v.unit,
                                   "description": v.description, "scale": v.scale,
                                   "reducer": "mean" if v.reduce is None and not custom else "custom"}
                          for v in self.values}}
        if self.facets:  # only then: the identity of metrics without facets is unchanged
            out["facets"] = list(self.facets)
        if self.image_labels:  # likewise
            out["image_labels"] = list(self.image_labels)
        return out

    @cached_property
    def identity(self) -> str:
        """What decides this metric's numbers, for the run key (the template hash covers the prompt
        and the schema; point and reducer functions are the metric's ``template.version``'s job)."""
        return fingerprint(self.describe())

    # -- questions -------------------------------------------------------------------------

    def positions(self, session: Session) -> list[int]:
        n = len(session.steps)
        return {"steps": list(range(1, n + 1)), "images": list(range(n + 1)), "session": [n]}[self.over]

    def questions(self, hashes: Sequence[str], session: Session,
                  references: Sequence[str] = (), inputs: Mapping[int, Mapping[str, str]] | None = None,
                  face: Face | None = None) -> list[Question]:
        out = []
        for k in self.positions(session):
            images: list[str] = []
            labels: list[str] = []
            missing = ""
            for i, role in enumerate(self.images):
                start = len(images)
                if role == "source":
                    images.append(hashes[0])
                elif role == "current":
                    images.append(hashes[k])
                elif role == "previous":
                    images.append(hashes[k - 1])
                elif role == "references":
                    if not references:
                        missing = missing or "references"
                    images.extend(references)
                elif role == "inputs":
                    given = list((inputs or {}).get(k, {}).values())
                    if not given:
                        missing = missing or "input"
                    images.extend(given)
                else:
                    found = (inputs or {}).get(k, {}).get(role.split(":", 1)[1])
                    if found is None:
                        missing = missing or role
                    else:
                        images.append(found)
                if self.image_labels and len(images) > start:  # the label precedes the role's first image
                    labels.extend([self.image_labels[i]] + [""] * (len(images) - start - 1))
            if self.facets:
                out.extend(self._facet_questions(session, k, tuple(images), missing, tuple(labels)))
                continue
            fields = dict(self.fields(session, k) if self.fields is not None else step_fields(session, k))
            not_asked = ""
            if self.face_fields is not None:
                try:
                    fields.update(self.face_fields(face, session, k))
                except NotAsked as exc:
                    not_asked = str(exc)
            out.append(Question(k, tuple(images), fields, missing, not_asked, labels=tuple(labels)))
        return out

    def _facet_questions(self, session: Session, k: int, images: tuple[str, ...], missing: str,
                         labels: tuple[str, ...] = ()) -> list[Question]:
        assert self.facet_fields is not None
        out = []
        for facet in self.facets:
            fields = None if missing else self.facet_fields(session, k, facet, images)
            out.append(Question(k, images, dict(fields or {}), missing or ("" if fields is not None else "questions"),
                                facet=facet, labels=labels))
        return out

    def judge(self, questions: Sequence[Question], answers: Sequence[JudgeAnswer], session: Session) -> MetricJudgment:
        points = tuple(self._points(a, q.fields) for a, q in zip(answers, questions))
        if self.reduce_questions is not None:
            values, detail = self.reduce_questions(questions, answers, session)
            values = {v.name: values.get(v.name) for v in self.values}
        elif self.session is not None:
            values, detail = self.session(answers, points, session)
            values = {v.name: values.get(v.name) for v in self.values}
        else:
            values = {v.name: v.session_value([p[v.name] for p in points]) for v in self.values}
            detail = None
        return MetricJudgment(self, tuple(q.k for q in questions), tuple(answers), points, values, detail,
                              tuple(questions))

    def _points(self, answer: JudgeAnswer, fields: Mapping[str, str]) -> dict[str, float | None]:
        if answer.outcome is not Outcome.OK or not answer.value:
            return {v.name: None for v in self.values}
        return {v.name: (float(p) if (p := v.point(answer.value)) is not None else None)
                if v.point and (v.applies is None or v.applies(fields)) else None
                for v in self.values}
