"""Question sets: frozen, versioned, content-hashed CREval questions (METHODOLOGY §5.2).

A question set is to the ``creval`` judge metrics what a test set is to the editors: written once
(by an MLLM, by the taxonomy, or taken from CREval-Bench), frozen into a file, and answered for
every editor, so each editor is scored against the same questions. The file (JSON)::

    {"format": "faceedit_bench.questions", "format_version": 1,
     "name": "...", "version": "...", "description": "...",
     "provenance": {"generator": ..., "generator_model": ..., "prompt_hashes": {...}, "source_testset": {...}},
     "items": [{"item_id", "session_id", "k", "instruction", "source_image" (sha256 or null),
                "category", "dimension", "questions": {"IF": [...], "VC": [...], "VQ": [...]}}],
     "excluded": [{"item_id", "metric", "outcome", "reason"}],
     "content_hash": "<sha256 of everything above>"}

Each question: ``question_id``, ``thinking`` (the writer's chain of thought), ``question``,
``choices``, ``answer`` (the expected one, one of the choices) and ``weight`` (1, 2 or 3). An item
is complete (all three metrics) or listed under ``excluded``: nothing is half-frozen.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import Any

from faceedit_bench.api import fingerprint
from faceedit_bench_creval.question_file import (
    QuestionModel,
    QuestionSetError,
    check_ids,
    read_file,
    validate_file,
)

FORMAT = "faceedit_bench.questions"
FORMAT_VERSION = 1
#: CREval's three metrics, in the order the paper reports them.
METRICS = ("IF", "VC", "VQ")
#: The paper's overall weighting (METHODOLOGY §5.3, derived from Tables 2 and S1).
OVERALL_WEIGHTS = {"IF": 0.4, "VC": 0.4, "VQ": 0.2}
#: At least this many questions per metric when an MLLM writes them (§5.2).
MIN_QUESTIONS = 5


@dataclass(frozen=True)
class CheckQuestion:
    question_id: str
    question: str
    answer: str
    weight: int = 1
    choices: tuple[str, ...] = ("Yes", "No")
    thinking: str = ""

    def as_dict(self) -> dict[str, Any]:
        return {"question_id": self.question_id, "thinking": self.thinking, "question": self.question,
                "choices": list(self.choices), "answer": self.answer, "weight": self.weight}


@dataclass(frozen=True)
class QuestionItem:
    """The questions about one (source image, instruction): CREval-Bench item, or step k of a session."""

    item_id: str
    session_id: str
    k: int
    instruction: str
    questions: Mapping[str, tuple[CheckQuestion, ...]]
    source_image: str | None = None  # sha256 of the source image's bytes; None: any image of the session
    category: str | None = None
    dimension: str | None = None

    def as_dict(self) -> dict[str, Any]:
        return {"item_id": self.item_id, "session_id": self.session_id, "k": self.k,
                "instruction": self.instruction, "source_image": self.source_image, "category": self.category,
                "dimension": self.dimension,
                "questions": {m: [q.as_dict() for q in self.questions[m]] for m in METRICS}}


@dataclass(frozen=True)
class QuestionSet:
    name: str
    version: str
    items: tuple[QuestionItem, ...]
    provenance: Mapping[str, Any] = field(default_factory=dict)
    excluded: tuple[Mapping[str, str], ...] = ()
    description: str = ""

    def body(self) -> dict[str, Any]:
        return {"format": FORMAT, "format_version": FORMAT_VERSION, "name": self.name, "version": self.version,
                "description": self.description, "provenance": dict(self.provenance),
                "items": [i.as_dict() for i in self.items], "excluded": [dict(e) for e in self.excluded]}

    @cached_property
    def content_hash(self) -> str:
        return fingerprint(self.body())

    def to_json(self) -> str:
        return json.dumps({**self.body(), "content_hash": self.content_hash}, indent=1, ensure_ascii=False) + "\n"

    def describe(self) -> dict[str, Any]:
        return {"name": self.name, "version": self.version, "content_hash": self.content_hash,
                "items": len(self.items), "excluded": len(self.excluded),
                "questions": sum(len(qs) for i in self.items for qs in i.questions.values()),
                "generator": self.provenance.get("generator"),
                "generator_model": self.provenance.get("generator_model")}

    @cached_property
    def _index(self) -> dict[tuple[str | None, str, int], QuestionItem]:
        return {(i.source_image, i.session_id, i.k): i for i in self.items}

    def find(self, session_id: str, k: int, source_image: str | None) -> QuestionItem | None:
        """The item about step k of ``session_id``: the one frozen for this source image, else the
        one frozen for any image of the session."""
        return self._index.get((source_image, session_id, k)) or self._index.get((None, session_id, k))


# -- reading -------------------------------------------------------------------------------


def _fail(where: str, msg: str) -> QuestionSetError:
    return QuestionSetError(f"{where}: {msg}")


def parse_question(raw: Any, where: str, *, min_weight: int = 1) -> CheckQuestion:
    """One question as stored (ours or CREval's ``quality_check_questions`` entry). Strict: a
    missing field, an answer outside the choices or a weight outside 1-3 is an error."""
    if not isinstance(raw, Mapping):
        raise _fail(where, "a question must be an object")
    text, answer = raw.get("question"), raw.get("answer")
    qid = raw.get("question_id")
    if not isinstance(qid, str) or not qid.strip():
        raise _fail(where, "question_id must be a non-empty string")
    if not isinstance(text, str) or not text.strip():
        raise _fail(where, f"{qid}: question must be a non-empty string")
    choices = raw.get("choices", ["Yes", "No"])
    if not isinstance(choices, list) or len(choices) < 2 or not all(isinstance(c, str) and c.strip() for c in choices):
        raise _fail(where, f"{qid}: choices must be a list of at least two strings")
    if not isinstance(answer, str) or answer.strip().casefold() not in {c.strip().casefold() for c in choices}:
        raise _fail(where, f"{qid}: the expected answer {answer!r} is not one of the choices {choices}")
    weight = raw.get("weight", 1)
    if isinstance(weight, float) and weight.is_integer():
        weight = int(weight)
    if isinstance(weight, bool) or not isinstance(weight, int) or not min_weight <= weight <= 3:
        raise _fail(where, f"{qid}: weight must be 1, 2 or 3, not {weight!r}")
    thinking = raw.get("thinking", raw.get("thinking_process", ""))
    return CheckQuestion(qid.strip(), text.strip(), answer.strip(), weight, tuple(c.strip() for c in choices),
                         str(thinking or ""))


def parse_questions(raw: Any, where: str) -> tuple[CheckQuestion, ...]:
    if not isinstance(raw, list) or not raw:
        raise _fail(where, "a metric needs a non-empty list of questions")
    out = tuple(parse_question(q, f"{where}[{i}]") for i, q in enumerate(raw))
    try:
        check_ids([q.question_id for q in out])
    except ValueError as exc:
        raise _fail(where, str(exc)) from None
    return out


def _question(q: QuestionModel) -> CheckQuestion:
    return CheckQuestion(q.question_id.strip(), q.question.strip(), q.answer.strip(), q.weight,
                         tuple(c.strip() for c in q.choices), q.thinking)


def parse_question_set(data: Any, source: str = "<data>", *, refreeze: bool = False) -> QuestionSet:
    """A decoded question-set file as a :class:`QuestionSet`, validated as a whole first
    (:mod:`~faceedit_bench_creval.question_file`). Its ``content_hash`` must be there and match,
    except when re-freezing it on purpose (``refreeze=True``: the stored hash is ignored)."""
    file = validate_file(data, source, need_hash=not refreeze)
    items = tuple(QuestionItem(i.item_id, i.session_id, i.k, i.instruction,
                               {m: tuple(_question(q) for q in getattr(i.questions, m)) for m in METRICS},
                               i.source_image, i.category, i.dimension) for i in file.items)
    qset = QuestionSet(file.name, file.version, items, file.provenance,
                       tuple(e.model_dump() for e in file.excluded), file.description)
    if not refreeze and file.content_hash != qset.content_hash:
        raise _fail(source, f"content_hash {file.content_hash[:12]}... does not match the content "
                            f"({qset.content_hash[:12]}...): the file was changed after it was frozen; restore the "
                            "original, or re-freeze it on purpose (faceedit-bench questions freeze)")
    return qset


def load_question_set(path: str | Path, *, refreeze: bool = False) -> QuestionSet:
    path = Path(path).expanduser()
    return parse_question_set(read_file(path), str(path), refreeze=refreeze)


def merge_items(items: Iterable[QuestionItem]) -> tuple[QuestionItem, ...]:
    """Items in a stable order (session, step, image), whatever order they were written in."""
    return tuple(sorted(items, key=lambda i: (i.session_id, i.k, i.source_image or "", i.item_id)))


def question_lines(questions: Sequence[CheckQuestion]) -> str:
    """The questions as the answering judge reads them: ``Qn: question`` and its choices."""
    return "\n\n".join(f"{q.question_id}: {q.question}\nChoices: {', '.join(q.choices)}" for q in questions)
