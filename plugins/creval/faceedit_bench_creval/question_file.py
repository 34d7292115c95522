"""The question-set file, validated as a whole against one schema before anything uses it.

Reading a question-set file (:mod:`~faceedit_bench_creval.questions` describes the format) is a
trust boundary: the file is frozen once and answered for every editor, so a malformed one must fail
where it is read, before any judge call, with the path of the bad field
(``items[3].questions.IF[0].weight``), never as a traceback halfway through a paid run. The reader:

* refuses a file over :data:`MAX_FILE_BYTES` before reading it (a 150 MB file took 680 MB of memory);
* refuses JSON nested deeper than Python's reader (or :data:`MAX_DEPTH` in ``provenance``) allows;
* validates every field's type and range with one pydantic schema (every error at once, up to 8);
* refuses question ids of one metric that name the same question once normalised (``Q1``, ``q1``,
  ``Q1b``, ``Q1.1`` all name Q1 for the answer matcher, so two questions would share one answer);
* refuses a file without its ``content_hash`` unless the caller re-freezes it on purpose
  (``faceedit-bench questions freeze``): without it, nothing shows that the file is the one frozen.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

from faceedit_bench.api import FaceEditBenchError, parse_json, read_utf8

#: Larger question-set files are refused before they are read (CREval-Bench's 874 items with every
#: question's chain of thought is about 10 MB).
MAX_FILE_BYTES = 64 * 1024 * 1024
#: How deep ``provenance`` may nest (it is free-form metadata; a frozen set's is 3 levels deep).
MAX_DEPTH = 32
_HEX64 = r"^[0-9a-f]{64}$"
_ERRORS_SHOWN = 8


class QuestionSetError(FaceEditBenchError):
    """A question-set file that does not load: the message names the item and field."""


_QID = re.compile(r"^\s*([A-Za-z]*\d+)")


def normal_id(raw: str) -> str:
    """``Q3``, ``q3``, ``Q3: Is ...``, ``Q3b`` and ``3`` all name question Q3 (an answer's question id is
    matched on its prefix, as CREval's parser does); ids must stay apart in this form."""
    found = _QID.match(raw or "")
    token = found.group(1) if found else (raw or "").strip()
    return token.upper() if token[:1].isalpha() else f"Q{token}"


def _depth(value: Any) -> int:
    """Nesting depth of a JSON value, without recursion."""
    deepest, stack = 0, [(value, 1)]
    while stack:
        node, depth = stack.pop()
        deepest = max(deepest, depth)
        children = node.values() if isinstance(node, dict) else node if isinstance(node, list) else ()
        stack.extend((child, depth + 1) for child in children if isinstance(child, (dict, list)))
    return deepest


NonEmpty = Annotated[str, Field(min_length=1, strict=True)]
Text = Annotated[str, Field(strict=True)]


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True)


class QuestionModel(_Strict):
    question_id: NonEmpty
    thinking: Text = ""
    question: NonEmpty
    choices: list[NonEmpty] = Field(min_length=2)
    answer: NonEmpty
    weight: int = Field(ge=1, le=3)

    @model_validator(mode="after")
    def _answer_is_a_choice(self) -> QuestionModel:
        if self.answer.strip().casefold() not in {c.strip().casefold() for c in self.choices}:
            raise ValueError(f"{self.question_id}: the expected answer {self.answer!r} is not one of the choices "
                             f"{self.choices}")
        return self


def check_ids(ids: list[str]) -> None:
    """Raise ValueError when two ids of one metric name the same question once normalised."""
    seen: dict[str, str] = {}
    for qid in ids:
        other = seen.setdefault(normal_id(qid), qid)
        if other is not qid:
            raise ValueError(f"question ids {other!r} and {qid!r} both name {normal_id(qid)} (ids are matched on "
                             "their prefix, case aside): two questions would share one answer. Number them "
                             "Q1, Q2, Q3 ...")


Questions = Annotated[list[QuestionModel], Field(min_length=1)]


class MetricQuestions(_Strict):
    IF: Questions
    VC: Questions
    VQ: Questions

    @field_validator("IF", "VC", "VQ")
    @classmethod
    def _ids_apart(cls, questions: list[QuestionModel]) -> list[QuestionModel]:
        check_ids([q.question_id for q in questions])
        return questions


class ItemModel(_Strict):
    item_id: NonEmpty
    session_id: NonEmpty
    k: int = Field(ge=1)
    instruction: Text = ""
    source_image: Annotated[str, Field(pattern=_HEX64)] | None = None
    category: NonEmpty | None = None
    dimension: NonEmpty | None = None
    questions: MetricQuestions


class ExcludedModel(_Strict):
    item_id: NonEmpty
    metric: NonEmpty
    outcome: NonEmpty
    reason: Text = ""


class QuestionSetFile(_Strict):
    format: Literal["faceedit_bench.questions"]
    format_version: Literal[1]
    name: NonEmpty
    version: NonEmpty
    description: Text = ""
    provenance: dict[str, Any] = Field(default_factory=dict)
    items: list[ItemModel]
    excluded: list[ExcludedModel] = Field(default_factory=list)
    content_hash: Annotated[str, Field(pattern=_HEX64)] | None = None

    @field_validator("provenance")
    @classmethod
    def _shallow(cls, value: dict[str, Any]) -> dict[str, Any]:
        if _depth(value) > MAX_DEPTH:
            raise ValueError(f"nests deeper than {MAX_DEPTH} levels")
        return value

    @model_validator(mode="after")
    def _items_apart(self) -> QuestionSetFile:
        seen: set[tuple[str | None, str, int]] = set()
        for item in self.items:
            key = (item.source_image, item.session_id, item.k)
            if key in seen:
                raise ValueError(f"two items are about the same (source image, session, step): {item.item_id}")
            seen.add(key)
        return self


def _where(loc: tuple[Any, ...]) -> str:
    out = ""
    for part in loc:
        out += f"[{part}]" if isinstance(part, int) else (f".{part}" if out else str(part))
    return out or "(the file)"


def _message(exc: ValidationError) -> str:
    errors = exc.errors(include_url=False)
    lines = []
    for e in errors[:_ERRORS_SHOWN]:
        # model-level checks carry no field; a literal's message names what it expected
        msg = str(e.get("ctx", {}).get("error") or e["msg"]) if e["type"] == "value_error" else e["msg"]
        lines.append(f"{_where(tuple(p for p in e['loc'] if not str(p).startswith('function-')))}: {msg}")
    more = f" (and {len(errors) - _ERRORS_SHOWN} more)" if len(errors) > _ERRORS_SHOWN else ""
    return "; ".join(lines) + more


def validate_file(data: Any, source: str, *, need_hash: bool = True) -> QuestionSetFile:
    """``data`` (a decoded question-set file) checked against the schema; a clear error otherwise."""
    if not isinstance(data, dict) or data.get("format") != "faceedit_bench.questions":
        raise QuestionSetError(f"{source}: not a question set (no \"format\": \"faceedit_bench.questions\")")
    if data.get("format_version") != 1:
        raise QuestionSetError(f"{source}: format_version {data.get('format_version')!r} is not supported (this "
                               "faceedit_bench reads 1)")
    try:
        parsed = QuestionSetFile.model_validate(data)
    except ValidationError as exc:
        raise QuestionSetError(f"{source}: {_message(exc)}") from None
    if need_hash and parsed.content_hash is None:
        raise QuestionSetError(
            f"{source}: no content_hash, so nothing shows this is the file that was frozen. If you edited it on "
            f"purpose, re-freeze it: faceedit-bench questions freeze {source} (it gets a new hash, and runs "
            "with it are new runs); otherwise restore the frozen file.")
    return parsed


def read_file(path: Path) -> Any:
    """The decoded JSON of a question-set file, refused early when too large or too deeply nested."""
    text = read_utf8(path, what="question set", error=QuestionSetError, max_bytes=MAX_FILE_BYTES)
    return parse_json(text, str(path), what="question set", error=QuestionSetError)
