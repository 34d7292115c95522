"""Instructions written by an MLLM, frozen into a new, separately versioned test set.

Paper (a) had Gemini-2.5-Flash write each session's 4 instructions in order, telling it
the earlier steps' metadata (METHODOLOGY §2.4). This module does that over the sessions of
an existing test set (same attributes, same order), with the reconstructed prompt
``prompts.INSTRUCTION_TEMPLATE`` (§8.3), through the judge interface: calls are cached
in the ledger, so rewriting after an interruption asks only what is missing. A step the
model refuses or answers unparsably stops the build with the reason: a frozen test set
has no holes. The template generator remains the offline default.
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

from faceedit_bench.errors import FaceEditBenchError
from faceedit_bench.execution.calls import Executors
from faceedit_bench.keys import fingerprint, portable
from faceedit_bench.records import Outcome, Step, TestSet
from faceedit_bench.scoring.judge.prompts import INSTRUCTION_TEMPLATE, instruction_fields
from faceedit_bench.scoring.judge.service import JudgeService
from faceedit_bench.storage.ledger import Ledger
from faceedit_bench.storage.store import ImageStore
from faceedit_bench.taxonomy import Taxonomy

MLLM_VERSION = "1.0.0"


class InstructionWritingError(FaceEditBenchError):
    pass


async def _write_session(service: JudgeService, session: Any, seed: int) -> list[Step]:
    written: list[Step] = []
    for step in session.steps:
        fields = instruction_fields(step.attribute, step.sub_axis, step.axis, written)
        answer = await service.ask(INSTRUCTION_TEMPLATE, [], seed, **fields)
        if answer.outcome is not Outcome.OK or not answer.value:
            raise InstructionWritingError(
                f"{session.session_id} step {step.k} ({step.attribute}): the model's answer is "
                f"{answer.outcome.value} ({answer.reason or 'no reason given'}); nothing was frozen. Rerun to retry "
                "(answers already written are kept), or use another judge model."
            )
        written.append(Step(step.k, answer.value["instruction"], step.attribute, step.category, step.sub_axis,
                            step.axis))
    return written


def write_testset(source: TestSet, judge: Any, judge_name: str, workspace: Path, *, name: str | None = None,
                  seed: int = 0) -> dict[str, Any]:
    """The content of a new test-set file whose instructions ``judge`` wrote for ``source``'s sessions."""
    identity = {"name": judge_name, **dict(judge.describe())}
    judge_fp = fingerprint(portable(identity))
    ledger = Ledger(workspace / "ledger.sqlite")
    try:
        ledger.record_component(judge_fp, "judge", identity)
        executors = Executors()
        service = JudgeService(judge, judge_fp, executors.get(judge.limits), ledger, ImageStore(workspace / "store"))

        async def write_all() -> list[list[Step]]:
            return list(await asyncio.gather(*(_write_session(service, s, seed) for s in source.sessions)))

        sessions = asyncio.run(write_all())
    finally:
        ledger.close()
    new_name = name or f"{source.name}-mllm"
    taxonomy = Taxonomy.builtin()
    return {
        "name": new_name,
        "version": MLLM_VERSION,
        "taxonomy": {"name": taxonomy.name, "version": taxonomy.version, "content_hash": taxonomy.content_hash},
        "generator": {"name": "mllm", "judge": identity, "prompt": INSTRUCTION_TEMPLATE.describe(), "seed": seed,
                      "from": {"name": source.name, "version": source.version, "content_hash": source.content_hash}},
        "reconstruction": True,
        "description": (f"{source.name} sessions with instructions written by {judge_name} "
                        f"({identity.get('model', identity.get('version', '?'))}) one step at a time from the "
                        "previous steps' metadata (METHODOLOGY §2.4); the prompt is a reconstruction (§8.3)."),
        "sessions": [
            {"session_id": f"{new_name}-{i:02d}", "test_set": new_name,
             "steps": [{"k": s.k, "attribute": s.attribute, "category": s.category, "sub_axis": s.sub_axis,
                        "axis": s.axis, "instruction": s.instruction} for s in steps]}
            for i, steps in enumerate(sessions, start=1)
        ],
    }
