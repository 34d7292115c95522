"""What an annotator is asked: questions with fixed choices, each choice with its keyboard key.

- :data:`PAIRWISE`: which of two edits is better, A / B / both good / both bad (GenAI-Arena's four votes,
  the labels ``arena run ... --votes`` reads);
- :func:`scale_questions`: the scales of a registered judge metric, in the judge's own words. The judge's
  question is rendered for the item exactly as the judge reads it (its template with the item's fields), and
  each value's line ``- <value>: 1 ...; 2 ...; ...`` gives that question's wording and the label of every
  point. People and judge answer the same question on the same scale, so their answers compare directly.
- :func:`check_question`: one yes/no check question a judge metric asked about one item (kind ``checklist``);
- :func:`answer_fields`: the fields of a judge metric's answer that take one of fixed values (kind
  ``categorical``), each worded by the template's own line about it (``- <field>: ...``), else by the schema's
  description of the field, with its values as the choices.
"""

from __future__ import annotations

import re
import string
from collections.abc import Mapping
from dataclasses import asdict, dataclass
from typing import Any

from faceedit_bench.errors import FaceEditBenchError


@dataclass(frozen=True)
class Choice:
    value: str
    label: str
    key: str  # the keyboard shortcut


@dataclass(frozen=True)
class Question:
    name: str
    text: str
    choices: tuple[Choice, ...]
    level: str  # how agreement treats the answers: "interval" (a scale) or "nominal" (categories)

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


PAIRWISE = Question(
    name="vote",
    text="Which edit carries out the instruction better while keeping the person the same person?",
    choices=(Choice("A", "A (left) is better", "a"), Choice("B", "B (right) is better", "b"),
             Choice("both_good", "both good", "t"), Choice("both_bad", "both bad", "n")),
    level="nominal",
)
#: A pair's vote with the sides exchanged.
SWAPPED_VOTE = {"A": "B", "B": "A", "both_good": "both_good", "both_bad": "both_bad"}

_POINT = re.compile(r"(?:^|;)\s*(\d+)\s+([^;]+)")


def scale_questions(metric: Any, fields: Mapping[str, str]) -> tuple[Question, ...]:
    """One question per value of the judge metric ``metric`` that its rendered template describes point by
    point (a line ``- <name>: 1 ...; 2 ...``), in the template's order; others (derived values) are left out."""
    text = string.Template(metric.template.text).safe_substitute(fields)
    questions = []
    for value in metric.values:
        if value.bounds is None:
            continue
        low, high = (int(b) for b in value.bounds)
        # the line that labels the most points (a template may also name the value in another step)
        lines = [ln.split(":", 1)[1].strip() for ln in text.splitlines() if ln.lstrip().startswith(f"- {value.name}:")]
        points = [{int(n): lab.strip().rstrip(".") for n, lab in _POINT.findall(w)} for w in lines]
        if not lines or not max(map(len, points)):
            continue
        wording, labels = max(zip(lines, points), key=lambda pair: len(pair[1]))
        choices = tuple(Choice(str(n), f"{n} {labels.get(n, '')}".strip(), str(n)) for n in range(low, high + 1))
        questions.append(Question(value.name, f"{value.name.replace('_', ' ')}: {wording}", choices, "interval"))
    if not questions:
        raise FaceEditBenchError(f"judge metric {metric.name!r} describes no scale point by point in its question "
                                 "(lines '- <value>: 1 ...; 2 ...'); a rating study needs such a metric")
    if len(questions[0].choices) > 9:
        raise FaceEditBenchError(f"judge metric {metric.name!r}: scales of more than 9 points have no one-key answers")
    return tuple(questions)


#: A check question's choices: the judge's (a checklist question is answered Yes or No).
YES_NO = (Choice("Yes", "Yes", "y"), Choice("No", "No", "n"))


def check_question(name: str, text: str, **about: Any) -> dict[str, Any]:
    """A yes/no question as stored with its item; ``about``: what else the results show (facet, expected ...)."""
    return {**Question(name, text, YES_NO, "nominal").as_dict(), **about}


def answer_fields(metric: Any, rendered: str) -> tuple[Question, ...]:
    """One nominal question per field of ``metric``'s answer schema with fixed values (an enum), in the schema's
    order; ``rendered``: the judge's question as it read it, whose ``- <field>: ...`` line words the question."""
    schema = metric.template.json_schema
    questions = []
    for name, spec in (schema.get("properties") or {}).items():
        values = spec.get("enum")
        if not values or not all(isinstance(v, str) for v in values):
            continue
        lines = [ln.split(":", 1)[1].strip() for ln in rendered.splitlines() if ln.lstrip().startswith(f"- {name}:")]
        wording = lines[0] if lines else spec.get("description") or name.replace("_", " ")
        choices = tuple(Choice(v, v.replace("_", " "), str(n)) for n, v in enumerate(values, start=1))
        questions.append(Question(name, f"{name.replace('_', ' ')}: {wording}", choices, "nominal"))
    if not questions:
        raise FaceEditBenchError(f"judge metric {metric.name!r}: its answer has no field with fixed values (an enum); "
                                 "a categorical study asks such fields")
    if any(len(q.choices) > 9 for q in questions):
        raise FaceEditBenchError(f"judge metric {metric.name!r}: fields of more than 9 values have no one-key answers")
    return tuple(questions)
