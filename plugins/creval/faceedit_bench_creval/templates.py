"""CREval's prompts: the answering judge (§5.3) and the three question writers (§5.2).

The answering call follows CREval's published ``code/answer_with_gpt4o.py``
(:mod:`~faceedit_bench_creval.protocol` reads its strings from the package's data file): its
system message, the source and the edited image, then a text in which only ``{Questions}`` is filled
in, with CREval's own list of the questions (``Q1: ...`` and ``Choices: ...``); the instruction is not
repeated. The template around ``{Questions}`` (CREval's ``prompt_templete/answer.txt``) is not published:
ours is a RECONSTRUCTION, labelled so. The writers' templates (``prompt_templete/{IF,VC,VQ}.txt``) are
not published either: reconstructions too.

The answer is one JSON object keyed by question ID, each with the chosen ``answer`` and an
``explanation``. The schema sent to the provider holds each question's own choices as an enum
(:func:`answer_schema`); the answer is validated against a looser schema, so an answer outside the
choices is counted as such by the scorer (never an unparsable item).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, RootModel, field_validator, model_validator

from faceedit_bench.api.judging import PromptTemplate
from faceedit_bench_creval.protocol import answer_template_text, published, source_label
from faceedit_bench_creval.questions import MIN_QUESTIONS

# -- answering (stage 3) -------------------------------------------------------------------


# Comments, not docstrings, on answer models: a docstring would become part of the schema (the prompt).
class QuestionAnswer(BaseModel):
    model_config = ConfigDict(extra="ignore")  # CREval's parser reads these two fields and ignores the rest

    answer: str = ""
    explanation: str = ""


class CrevalAnswers(RootModel[dict[str, QuestionAnswer]]):
    pass


def answer_schema(fields: Mapping[str, str]) -> dict[str, Any]:
    """The schema sent with one metric's questions: one property per question ID, its answer one of that
    question's choices (``fields["choices"]``: JSON of question ID -> choices)."""
    choices: dict[str, list[str]] = json.loads(fields["choices"])
    entry = {qid: {"type": "object", "additionalProperties": False, "required": ["answer", "explanation"],
                   "properties": {"answer": {"type": "string", "enum": list(c)}, "explanation": {"type": "string"}}}
             for qid, c in choices.items()}
    return {"type": "object", "title": "CrevalAnswers", "additionalProperties": False, "required": list(choices),
            "properties": entry}


ANSWER_TEMPLATE = PromptTemplate(
    name="creval-answer",
    version="2",
    text=answer_template_text(),
    schema=CrevalAnswers,
    system=published("answer")["system"],
    request_schema=answer_schema,
    source=(f"CREval's answer call ({source_label('answer')}): its system message, the source and edited "
            "images, and {Questions} filled with its published question list; the text around {Questions} "
            "(prompt_templete/answer.txt, not published) is a RECONSTRUCTION"),
    reconstruction=True,
)


# -- question writing (stage 2) ------------------------------------------------------------


class WrittenQuestion(BaseModel):
    model_config = ConfigDict(extra="forbid")

    thinking: str = Field(description="your reasoning: which requirement or element this question checks, and why")
    question: str
    choices: list[str] = Field(min_length=2)
    answer: str = Field(description="the answer a perfect edit gets; one of the choices")

    @model_validator(mode="after")
    def _answer_is_a_choice(self) -> WrittenQuestion:
        if self.answer.strip().casefold() not in {c.strip().casefold() for c in self.choices}:
            raise ValueError(f"the expected answer {self.answer!r} is not one of the choices {self.choices}")
        return self

    @field_validator("question", "thinking")
    @classmethod
    def _not_blank(cls, v: str) -> str:
        if not v.strip():
            raise ValueError("must not be empty")
        return v.strip()


class WeightedQuestion(WrittenQuestion):
    weight: int = Field(ge=1, le=3, strict=True)


# CREval's parser keeps every question it finds, however few (no minimum): so does this schema. The
# writer is asked for at least MIN_QUESTIONS; items with fewer are counted in the question set.
class WrittenQuestions(BaseModel):
    model_config = ConfigDict(extra="forbid")

    questions: list[WrittenQuestion] = Field(min_length=1)


class WeightedQuestions(BaseModel):
    model_config = ConfigDict(extra="forbid")

    questions: list[WeightedQuestion] = Field(min_length=1)


_COMMON = f"""\
Write at least {MIN_QUESTIONS} yes/no check questions that a second model will answer about an edited \
version of this image. Think step by step first: put your reasoning for each question in its "thinking" \
field, then the question, its choices (["Yes", "No"]) and the answer a perfect edit would get.$weighting \
Each question checks one thing, can be answered by looking at the edited image (and the original where it \
asks about change), and does not depend on the other questions.

Answer with one JSON object: {{"questions": [{{"thinking": "...", "question": "...", "choices": ["Yes", \
"No"], "answer": "Yes"$weight_example}}]}}
"""
#: CREval's published IF and VQ questions all weigh 1; only VC questions are graded by importance.
_WEIGHTING = {"VC": (" Give each a weight: 3 for a core element, 2 for an important detail, 1 for a minor "
                     "detail.", ', "weight": 3')}

_FOCUS = {
    "IF": ("INSTRUCTION FOLLOWING. The image shown is the original. The editing instruction is:\n\n$instruction\n\n"
           "List every explicit requirement of the instruction and every requirement it implies (for example a "
           "named art style implies its typical colours and strokes; an object turned into a figurine implies "
           "its material and a base). Ask one question per requirement: did it happen in the edited image?"),
    "VC": ("VISUAL CONSISTENCY. The image shown is the original. The editing instruction is:\n\n$instruction\n\n"
           "Find the identity-defining elements of the original that the instruction does NOT ask to change "
           "(the key subject's recognisable features, iconic patterns, colours, text, composition) and ask, for "
           "each, whether the edited image preserves it. Weight each by its importance."),
    "VQ": ("VISUAL QUALITY. The image shown is the original. The editing instruction is:\n\n$instruction\n\n"
           "For each part of the image the instruction changes, ask whether the edited result is structurally "
           "plausible and free of artifacts (for example five fingers per hand, no floating or fused parts, "
           "clean textures and edges, legible text where text is asked for)."),
}


def _writer(metric: str) -> PromptTemplate:
    weighting, example = _WEIGHTING.get(metric, ("", ""))
    common = _COMMON.replace("$weighting", weighting).replace("$weight_example", example)
    return PromptTemplate(
        name=f"creval-write-{metric.lower()}",
        version="2",
        text=_FOCUS[metric] + "\n\n" + common,
        schema=WeightedQuestions if metric in _WEIGHTING else WrittenQuestions,
        source=("RECONSTRUCTION of CREval's question-writing prompts (prompt_templete/{IF,VC,VQ}.txt, not published; "
                f"the call itself follows {source_label('writer')}: the source image, then the text): per metric, "
                "chain of thought, at least 5 questions asked for and every question kept, VC weighted 1-3, IF and "
                "VQ weight 1 as in CREval's published questions"),
        reconstruction=True,
    )


WRITER_TEMPLATES = {m: _writer(m) for m in ("IF", "VC", "VQ")}
