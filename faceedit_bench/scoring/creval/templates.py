"""CREval's prompts: the answering judge (§5.3) and the three question writers (§5.2).

The wording is ours, written from the paper's description (METHODOLOGY §5.2-§5.3): CREval's
answer prompt (Fig. S7) and generation prompts were not retrieved, so these are
RECONSTRUCTIONS. The answer format follows what CREval's parser reads (per question: its ID, the
answer, an explanation), as one JSON object so the core validates it against a schema.
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from faceedit_bench.scoring.creval.questions import MIN_QUESTIONS
from faceedit_bench.scoring.judge.service import PromptTemplate

# -- answering (stage 3) -------------------------------------------------------------------


# Comments, not docstrings, on answer models: a docstring would become part of the schema (the prompt).
class QuestionAnswer(BaseModel):
    model_config = ConfigDict(extra="forbid")

    question_id: str
    answer: str
    explanation: str


class CrevalAnswers(BaseModel):
    model_config = ConfigDict(extra="forbid")

    answers: list[QuestionAnswer]


_ANSWER_TEXT = """\
You are an image quality evaluator. Two images are given: the first is the original image and the second \
is an edited version of it, made by following this instruction:

$instruction

Answer every question below about the edited image (the second image), comparing it with the original \
where a question asks about changes. For each question choose exactly one of its choices, spelled as \
written, and explain your answer in one or two sentences. Judge only what you can see.

$questions

Answer with one JSON object of this form, one entry per question, in the order asked:
{"answers": [{"question_id": "Q1", "answer": "Yes", "explanation": "..."}]}
"""

ANSWER_TEMPLATE = PromptTemplate(
    name="creval-answer",
    version="1",
    text=_ANSWER_TEXT,
    schema=CrevalAnswers,
    source=("RECONSTRUCTION of CREval's answer prompt (Wang et al. 2026, github.com/ChonghuinanWang/CREval, "
            "prompt_templete/answer.txt was not retrieved; METHODOLOGY §5.3): the judge sees the original and "
            "the edited image and one metric's questions, and answers each with an explanation"),
    reconstruction=True,
)


# -- question writing (stage 2) ------------------------------------------------------------


class WrittenQuestion(BaseModel):
    model_config = ConfigDict(extra="forbid")

    thinking: str = Field(description="your reasoning: which requirement or element this question checks, and why")
    question: str
    choices: list[str] = Field(min_length=2)
    answer: str = Field(description="the answer a perfect edit gets; one of the choices")
    weight: int = Field(ge=1, le=3, strict=True)

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


class WrittenQuestions(BaseModel):
    model_config = ConfigDict(extra="forbid")

    questions: list[WrittenQuestion] = Field(min_length=MIN_QUESTIONS)


_COMMON = f"""\
Write at least {MIN_QUESTIONS} yes/no check questions that a second model will answer about an edited \
version of this image. Think step by step first: put your reasoning for each question in its "thinking" \
field, then the question, its choices (["Yes", "No"]), the answer a perfect edit would get, and a weight: \
3 for a core element, 2 for an important detail, 1 for a minor detail. Each question checks one thing, \
can be answered by looking at the edited image (and the original where it asks about change), and does \
not depend on the other questions.

Answer with one JSON object: {{"questions": [{{"thinking": "...", "question": "...", "choices": ["Yes", \
"No"], "answer": "Yes", "weight": 1}}]}}
"""

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
    return PromptTemplate(
        name=f"creval-write-{metric.lower()}",
        version="1",
        text=_FOCUS[metric] + "\n\n" + _COMMON,
        schema=WrittenQuestions,
        source=("RECONSTRUCTION of CREval's stage-2 question-writing prompts (METHODOLOGY §5.2: per metric, "
                "chain of thought, at least 5 questions, weights 1-3); the original wording was not retrieved"),
        reconstruction=True,
    )


WRITER_TEMPLATES = {m: _writer(m) for m in ("IF", "VC", "VQ")}
