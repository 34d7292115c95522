"""Items of a ``checklist`` study: the yes/no check questions a judge metric asked about each edited image, read
from the run's own record of them, ``<metric>_answers.csv`` in the run folder (one row per question of every
judged item: ``session_id``, ``k``, ``metric`` (the question's facet), ``question_id``, ``question``,
``weight``, ``expected``, the judge's ``answer`` and the hashes of the ``original_image`` and the
``edited_image`` it was asked about). The questions are copied into the study when it is made, so the study
never depends on the question file the run read.

A question is asked with the judge's own choices, Yes and No; one whose expected answer is neither is not asked
(counted). The judge's answer is kept with each question for judge-human agreement: one that is neither Yes nor
No (missing, or outside the choices) is left out of that agreement and counted.
"""

from __future__ import annotations

import csv
import io
from collections import defaultdict
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from faceedit_bench.errors import FaceEditBenchError
from faceedit_bench.studies.items import RunOutputs, count, item_id
from faceedit_bench.studies.questions import YES_NO, check_question

SUFFIX = "_answers.csv"
COLUMNS = ("session_id", "k", "metric", "question_id", "question", "expected", "answer", "edited_image")
_CHOICES = {c.value.casefold(): c.value for c in YES_NO}


def answers_table(run_dir: Path, metric: str | None) -> tuple[str, Path]:
    """(judge metric, its answers table) of a run: ``metric``'s, or the run's only one when ``metric`` is None."""
    if metric is not None:
        path = run_dir / f"{metric}{SUFFIX}"
        if path.is_file():
            return metric, path
        raise FaceEditBenchError(f"{run_dir} holds no {path.name}: the run's judge did not answer {metric}'s check "
                                 "questions item by item; a checklist study needs a run of such a judge metric")
    found = sorted(run_dir.glob(f"*{SUFFIX}"))
    if len(found) == 1:
        return found[0].name[:-len(SUFFIX)], found[0]
    if not found:
        raise FaceEditBenchError(f"{run_dir} holds no check questions (no <metric>{SUFFIX}): a checklist study "
                                 "asks the questions a judge metric asked item by item; run one first")
    names = ", ".join(p.name[:-len(SUFFIX)] for p in found)
    raise FaceEditBenchError(f"{run_dir} holds the check questions of {names}: choose one with --metric")


def _rows(path: Path) -> list[dict[str, str]]:
    rows = list(csv.DictReader(io.StringIO(path.read_text(encoding="utf-8"), newline="")))
    missing = [c for c in COLUMNS if rows and c not in rows[0]]
    bad = next((n for n, row in enumerate(rows, start=2) if not (row["k"] or "").isdigit()), None)
    if missing or bad:
        problem = f"no column(s) {', '.join(missing)}" if missing else f"line {bad}: k is not a step number"
        raise FaceEditBenchError(f"{path}: {problem}; rerun the experiment to rewrite it")
    return rows


def checklist_items(runs: Sequence[RunOutputs], metric: str | None, not_asked: dict[str, int]
                    ) -> tuple[str, list[dict[str, Any]]]:
    """(the judge metric, one item per edited image its judge asked check questions about)."""
    items, names = [], set()
    for run in runs:
        name, path = answers_table(run.run_dir, metric)
        names.add(name)
        by_image = {(o.session_id, o.k, o.output_hash): o for o in run.outputs}
        asked: dict[tuple[str, int, str], list[dict[str, str]]] = defaultdict(list)
        for row in _rows(path):
            if row["question_id"] and row["edited_image"]:
                asked[(row["session_id"], int(row["k"]), row["edited_image"])].append(row)
        for where, rows in asked.items():
            output = by_image.get(where)
            if output is None:
                count(not_asked, f"{run.editor}: the edited image is not a kept step of the run")
                continue
            questions, judge = [], {}
            for row in rows:
                expected = _CHOICES.get(row["expected"].strip().casefold())
                if expected is None:
                    count(not_asked, f"{name}: a question whose expected answer is not Yes or No (left out of its "
                                     "item)")
                    continue
                qname = f"{row['metric']}:{row['question_id']}"
                questions.append(check_question(qname, row["question"], facet=row["metric"], expected=expected,
                                                weight=row.get("weight") or "1"))
                if (given := _CHOICES.get(row["answer"].strip().strip(".").casefold())) is not None:
                    judge[qname] = given
            if not questions:
                continue
            shown = [["original", rows[0].get("original_image") or output.source_hash], ["edited", output.output_hash]]
            items.append({"item_id": item_id("checklist", output.editor, *output.where), "editor": output.editor,
                          **output.unit(), "metric": name, "images": dict(shown), "shown": shown, "judge": judge,
                          "questions": questions})
    if len(names) > 1:
        raise FaceEditBenchError("the runs' check questions are of different judge metrics "
                                 f"({', '.join(sorted(names))}): choose one with --metric")
    return (names.pop() if names else metric or ""), items
