"""Stage 2 of CREval (METHODOLOGY §5.2): a judge writes each item's IF, VC and VQ questions.

For every (source image, instruction) item and every metric, the judge (default: Qwen2.5-VL-72B-Instruct
through the ``openai`` judge on an OpenAI-compatible server, as CREval's code does; any judge works)
sees the source image and the instruction and is asked for at least 5 questions, each with its chain of
thought, choices and expected answer, and for VC a weight 1-3 (IF and VQ questions weigh 1, as CREval's
published ones do; :data:`~faceedit_bench_creval.templates.WRITER_TEMPLATES`). Every question
written is kept, however few, as CREval's parser keeps them; metrics with fewer than 5 are counted in
the set's provenance (``below_minimum``). Answers are validated strictly against the schema; an item
whose answer for any metric is refused, unparsable or failed is listed under ``excluded`` with the
outcome and reason, never half-frozen.
Calls go through the judge interface and are cached in the ledger: writing again after an
interruption, or rewriting the same set, asks only what is missing (zero calls when nothing is).
"""

from __future__ import annotations

import asyncio
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from faceedit_bench.api import Outcome
from faceedit_bench.api.judging import JudgeSession
from faceedit_bench_creval.protocol import published
from faceedit_bench_creval.questions import (
    METRICS,
    MIN_QUESTIONS,
    CheckQuestion,
    QuestionItem,
    QuestionSet,
    merge_items,
)
from faceedit_bench_creval.templates import WRITER_TEMPLATES

GENERATOR_VERSION = "2"
#: The generator CREval's code uses (METHODOLOGY §5.2), as ``openai`` judge parameters for a local
#: OpenAI-compatible server (vLLM); change base_url / api_key_env for yours. Its decoding is CREval's:
#: neither temperature nor a token cap is sent (protocol data, ``published.writer``).
DEFAULT_GENERATOR = ("openai", {"model": "Qwen/Qwen2.5-VL-72B-Instruct", "api": "chat", "strict": False,
                                "temperature": published("writer")["temperature"],
                                "max_output_tokens": published("writer")["max_tokens"],
                                "base_url": "http://127.0.0.1:8000/v1", "api_key_env": "VLLM_API_KEY"})


@dataclass(frozen=True)
class SourceItem:
    """One (source image, instruction) to write questions for."""

    item_id: str
    session_id: str
    k: int
    instruction: str
    image: Path
    category: str | None = None
    dimension: str | None = None
    bind_image: bool = True  # record the image's hash (an item per face); False: the session's one image


def _questions(value: Mapping[str, Any]) -> tuple[CheckQuestion, ...]:
    # The weight defaults to 1, as CREval's parser does (IF and VQ writers are not asked for one).
    return tuple(CheckQuestion(f"Q{i}", q["question"], q["answer"], q.get("weight", 1), tuple(q["choices"]),
                               q["thinking"]) for i, q in enumerate(value["questions"], start=1))


async def _write_item(service: JudgeSession, item: SourceItem,
                      seed: int) -> tuple[QuestionItem | None, list[dict[str, str]]]:
    image_hash = service.put_image(item.image)  # the same hash the run stores the base image under
    answers = await asyncio.gather(*(service.ask(WRITER_TEMPLATES[m], [image_hash], seed, instruction=item.instruction)
                                     for m in METRICS))
    failed = [{"item_id": item.item_id, "metric": m, "outcome": a.outcome.value, "reason": a.reason or ""}
              for m, a in zip(METRICS, answers) if a.outcome is not Outcome.OK or not a.value]
    if failed:
        return None, failed
    return QuestionItem(item.item_id, item.session_id, item.k, item.instruction,
                        {m: _questions(a.value) for m, a in zip(METRICS, answers) if a.value},
                        image_hash if item.bind_image else None, item.category, item.dimension), []


def generate_question_set(items: Sequence[SourceItem], judge: Any, judge_name: str, workspace: Path, *, name: str,
                          version: str = "1.0.0", source: Mapping[str, Any] | None = None, seed: int = 0,
                          description: str = "") -> tuple[QuestionSet, int]:
    """The frozen question set ``judge`` writes for ``items``, and how many calls it made."""
    with JudgeSession.open(judge, judge_name, workspace) as service:

        async def write_all() -> list[tuple[QuestionItem | None, list[dict[str, str]]]]:
            return list(await asyncio.gather(*(_write_item(service, i, seed) for i in items)))

        written = asyncio.run(write_all())
    identity = service.identity
    excluded = tuple(e for _, failed in written for e in failed)
    kept = [i for i, _ in written if i is not None]
    below = {m: sum(1 for i in kept if len(i.questions[m]) < MIN_QUESTIONS) for m in METRICS}
    qset = QuestionSet(
        name=name, version=version, items=merge_items(kept),
        provenance={"generator": "mllm", "generator_version": GENERATOR_VERSION,
                    "generator_model": identity.get("model", identity.get("version")),
                    "judge": identity,
                    "prompt_hashes": {m: WRITER_TEMPLATES[m].hash for m in METRICS},
                    "prompts": {m: WRITER_TEMPLATES[m].describe() for m in METRICS},
                    "seed": seed, "source_testset": dict(source or {}),
                    # items whose metric got fewer questions than asked for: kept, as CREval's parser keeps them
                    "below_minimum": {"minimum": MIN_QUESTIONS, "items": below}},
        excluded=excluded,
        description=description or f"CREval questions written by {judge_name} ({identity.get('model', '?')})",
    )
    return qset, service.calls_made
