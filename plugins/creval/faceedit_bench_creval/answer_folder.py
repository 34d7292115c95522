"""Answering a question set for images edited elsewhere: CREval-Bench's own workflow (a folder of
source images and a folder of edited images named alike), through the same judge interface, ledger
cache, metric and report section as a run (METHODOLOGY §5.3)."""

from __future__ import annotations

import asyncio
from collections import Counter
from pathlib import Path
from typing import Any

from faceedit_bench.api import JudgeAnswer, Session, Step
from faceedit_bench.api.judging import JudgeSession
from faceedit_bench_creval import policy
from faceedit_bench_creval.bench import IMAGE_SUFFIXES
from faceedit_bench_creval.collector import creval_section
from faceedit_bench_creval.metric import CREVAL_METRIC, bind_question_sets
from faceedit_bench_creval.questions import QuestionItem, QuestionSet
from faceedit_bench_creval.scoring import ItemResult


def find_image(folder: Path, item: QuestionItem) -> Path | None:
    for stem in (item.item_id, item.session_id):
        for suffix in IMAGE_SUFFIXES:
            for name in (f"{stem}{suffix}", f"{stem}{suffix.upper()}"):
                if (folder / name).is_file():
                    return folder / name
    return None


#: Why an item of a folder has nothing to judge (CREval's script saves final_score 0.0 for both).
NO_SOURCE, NO_EDIT = "source_image_missing", "edited_image_missing"


async def answer_folder(qset: QuestionSet, originals: Path, edited: Path, judge: Any, judge_name: str,
                        workspace: Path, seed: int = 0,
                        on_failure: str = policy.ZERO) -> tuple[dict[str, Any], list[Any]]:
    """The ``creval`` section of ``qset`` answered for ``edited``'s images, and its items. An item without
    its source or edited image is a failed item: 0 under CREval's rule (the default here), else left out."""
    metric = bind_question_sets(CREVAL_METRIC, [qset], on_failure)
    missing: Counter[str] = Counter()
    with JudgeSession.open(judge, judge_name, workspace) as service:

        async def one(item: QuestionItem) -> list[Any]:
            source, out = find_image(originals, item), find_image(edited, item)
            if source is None or out is None:
                why = NO_SOURCE if source is None else NO_EDIT
                missing[why] += 1
                return [ItemResult(item.session_id, item.k, item.item_id, item.category or "all",
                                   item.dimension or item.category or "all", (), {}, failure=why)]
            hashes = [service.put_image(source), service.put_image(out)]
            where = f"{item.category}/{item.dimension}" if item.category else None
            session = Session(item.session_id, qset.name, (Step(item.k, item.instruction, prompt_category=where),))
            questions = metric.questions(hashes, session)
            answers: list[JudgeAnswer] = list(await asyncio.gather(
                *(service.ask(metric.template, list(q.images), seed, **q.fields) for q in questions)))
            return list(metric.judge(questions, answers, session).detail or ())

        results = [r for found in await asyncio.gather(*(one(i) for i in qset.items)) for r in found]
    section = creval_section(results, metric="creval", extension=False, on_failure=on_failure)
    section["question_sets"] = [qset.describe()]
    section["images_missing"] = dict(missing)
    section["judge"] = {"name": judge_name, "calls": service.calls_made,
                        "answers": dict(Counter(s.outcome.value for r in results for s in r.metrics.values()))}
    return section, results


def _row(row: dict[str, Any], category: str, dimension: str) -> str:
    cells = " ".join("      -" if row[c] is None else f"{row[c]:7.2f}" for c in ("IF", "VC", "VQ", "avg"))
    return f"{category:<20} {dimension:<36} {row['n']:>4} {cells}"


def table_text(section: dict[str, Any]) -> str:
    """The Table 2 / S1 layout as text under the headline rule (dimension rows, category rows, the overall row),
    then the other failure rule's overall row beside it, labelled, with its counts."""
    items, other = section["items"], section["other_rule"]
    head = f"{'category':<20} {'dimension':<36} {'n':>4} " + " ".join(f"{c:>7}" for c in ("IF", "VC", "VQ", "avg"))
    lines = [f"on_failure={section['on_failure']}: {section['rule']}. {items['total']} items, {items['failed']} "
             f"failed", head, "-" * len(head)]
    lines += [_row(row, row["category"], row["dimension"]) for row in section["table"]]
    lines.append(_row(other["table"][-1], f"on_failure={other['on_failure']}", "(all)"))
    return "\n".join(lines)
