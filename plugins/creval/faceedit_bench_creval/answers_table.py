"""``creval_answers.csv`` (and ``creval_face_answers.csv``) in the run folder: every question of every
judged item with the judge's answer, whether it matched, and the explanation, so any score can be read
back to the answers it counts (docs/creval.md). A metric whose call failed, or whose edit gave no image,
has one row with that outcome. ``in_choices`` is false for an answer that is none of the question's choices
(counted wrong)."""

from __future__ import annotations

import csv
from pathlib import Path
from typing import Any

from faceedit_bench.api import atomic_open
from faceedit_bench_creval.questions import METRICS

COLUMNS = ("session_id", "k", "item_id", "category", "dimension", "metric", "outcome", "question_id", "question",
           "weight", "expected", "answer", "correct", "in_choices", "explanation", "original_image", "edited_image")


def answer_rows(items: Any) -> list[dict[str, Any]]:
    rows = []
    for item in items:
        where = {"session_id": item.session_id, "k": item.k, "item_id": item.item_id, "category": item.category,
                 "dimension": item.dimension, "original_image": item.images[0] if item.images else "",
                 "edited_image": item.images[-1] if len(item.images) > 1 else ""}
        if item.failure:
            rows.extend({**where, "metric": m, "outcome": item.failure} for m in METRICS)
        for metric, score in item.metrics.items():
            if not score.results:
                rows.append({**where, "metric": metric, "outcome": score.outcome.value, "explanation": score.reason})
            for r in score.results:
                rows.append({**where, "metric": metric, "outcome": score.outcome.value, "question_id": r.question_id,
                             "question": r.question, "weight": r.weight, "expected": r.expected,
                             "answer": "" if r.answer is None else r.answer,
                             "correct": "missing" if r.answer is None else str(r.correct).lower(),
                             "in_choices": "" if r.answer is None else str(r.in_choices).lower(),
                             "explanation": r.explanation})
    return rows


def write_answer_table(path: Path, items: Any) -> Path:
    with atomic_open(path, "w", encoding="utf-8", newline="") as fh:
        writer = csv.DictWriter(fh, fieldnames=COLUMNS)
        writer.writeheader()
        writer.writerows(answer_rows(items))
    return path
