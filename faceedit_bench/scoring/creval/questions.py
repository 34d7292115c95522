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

from faceedit_bench.errors import FaceEditBenchError
from faceedit_bench.keys import fingerprint

FORMAT = "faceedit_bench.questions"
FORMAT_VERSION = 1
#: CREval's three metrics, in the order the paper reports them.
METRICS = ("IF", "VC", "VQ")
#: The paper's overall weighting (METHODOLOGY §5.3, derived from Tables 2 and S1).
OVERALL_WEIGHTS = {"IF": 0.4, "VC": 0.4, "VQ": 0.2}
#: At least this many questions per metric when an MLLM writes them (§5.2).
MIN_QUESTIONS = 5


class QuestionSetError(FaceEditBenchError):
    """A question-set file that does not load: the message names the item and field."""


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
    ids = [q.question_id for q in out]
    if len(set(ids)) != len(ids):
        raise _fail(where, f"question ids repeat: {sorted({i for i in ids if ids.count(i) > 1})}")
    return out


def _item(raw: Any, where: str) -> QuestionItem:
    if not isinstance(raw, Mapping):
        raise _fail(where, "an item must be an object")
    item_id, session_id, k = raw.get("item_id"), raw.get("session_id"), raw.get("k", 1)
    if not isinstance(item_id, str) or not item_id:
        raise _fail(where, "item_id must be a non-empty string")
    if not isinstance(session_id, str) or not session_id:
        raise _fail(where, f"{item_id}: session_id must be a non-empty string")
    if isinstance(k, bool) or not isinstance(k, int) or k < 1:
        raise _fail(where, f"{item_id}: k must be a step number >= 1")
    questions = raw.get("questions")
    if not isinstance(questions, Mapping) or set(questions) != set(METRICS):
        raise _fail(where, f"{item_id}: questions must hold exactly {', '.join(METRICS)}")
    return QuestionItem(item_id, session_id, k, str(raw.get("instruction") or ""),
                        {m: parse_questions(questions[m], f"{where} {item_id} {m}") for m in METRICS},
                        raw.get("source_image"), raw.get("category"), raw.get("dimension"))


def parse_question_set(data: Any, source: str = "<data>") -> QuestionSet:
    if not isinstance(data, Mapping) or data.get("format") != FORMAT:
        raise _fail(source, f"not a question set (no \"format\": \"{FORMAT}\")")
    if data.get("format_version") != FORMAT_VERSION:
        raise _fail(source, f"format_version {data.get('format_version')!r} is not supported (this faceedit_bench "
                            f"reads {FORMAT_VERSION})")
    items = data.get("items")
    if not isinstance(items, list):
        raise _fail(source, "items must be a list")
    parsed = tuple(_item(raw, f"{source} items[{i}]") for i, raw in enumerate(items))
    keys = [(i.source_image, i.session_id, i.k) for i in parsed]
    if len(set(keys)) != len(keys):
        raise _fail(source, "two items are about the same (source image, session, step)")
    qset = QuestionSet(str(data.get("name") or ""), str(data.get("version") or ""), parsed,
                       dict(data.get("provenance") or {}), tuple(dict(e) for e in data.get("excluded") or ()),
                       str(data.get("description") or ""))
    if not qset.name or not qset.version:
        raise _fail(source, "name and version must be given")
    stored = data.get("content_hash")
    if stored is not None and stored != qset.content_hash:
        raise _fail(source, f"content_hash {stored[:12]}... does not match the content ({qset.content_hash[:12]}...): "
                            "the file was changed after it was frozen; regenerate it (faceedit-bench questions "
                            "generate) or restore the original")
    return qset


def load_question_set(path: str | Path) -> QuestionSet:
    path = Path(path).expanduser()
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except OSError as exc:
        raise QuestionSetError(f"cannot read question set {path}: {exc.strerror or exc}") from exc
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise QuestionSetError(f"{path} is not JSON: {exc}") from exc
    return parse_question_set(data, str(path))


def merge_items(items: Iterable[QuestionItem]) -> tuple[QuestionItem, ...]:
    """Items in a stable order (session, step, image), whatever order they were written in."""
    return tuple(sorted(items, key=lambda i: (i.session_id, i.k, i.source_image or "", i.item_id)))


def question_lines(questions: Sequence[CheckQuestion]) -> str:
    """The questions as the answering judge reads them: ``Qn: question`` and its choices."""
    return "\n\n".join(f"{q.question_id}: {q.question}\nChoices: {', '.join(q.choices)}" for q in questions)
