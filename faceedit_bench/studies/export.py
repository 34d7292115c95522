"""A study's answers in the layouts the analysis commands read, gold items left out:

- rating studies: the ratings CSV layout (``item,rater,axis,score,condition,editor`` and the face's
  ``race,gender,age_bin``; docs/studies.md). ``item`` is ``<face_id>|<session_id>``,
  the run's own item, with ``|<k>`` added for sessions of several steps;
- pairwise studies: the votes CSV of ``faceedit-bench arena run ... --votes`` (``model_a,model_b,vote,voter_id,
  input_id,identity`` and the labels; ``input_id`` is the arena's ``<face>/<session>/<k>``), each vote as its
  annotator saw it (left = A);
- categorical studies: an annotations CSV, ``item,rater`` and one column per question (the judge's answer
  fields, e.g. ``target_person,target_gender``), ``item`` as in ratings: the layout an annotation command of
  those fields reads (docs/studies.md);
- checklist studies: ``answers.csv``, one row per question an annotator answered, in the columns of the run's
  ``<metric>_answers.csv`` (``session_id,k,metric,question_id,question,weight,expected``) with ``rater``, their
  ``answer``, the judge's (``judge_answer``), ``item``, ``editor`` and the face's labels.

Those commands take ``study:<id>`` (in the default workspace) or ``study:<id>@<workspace>`` instead of a CSV:
:func:`study_csv` writes the export into ``<workspace>/studies/<id>/`` and hands back its path.
"""

from __future__ import annotations

import csv
import io
from pathlib import Path
from typing import Any

from faceedit_bench.errors import FaceEditBenchError
from faceedit_bench.report.tables import DEMOGRAPHIC_KEYS
from faceedit_bench.storage.atomic import write_text
from faceedit_bench.storage.run_dirs import default_runs_dir
from faceedit_bench.storage.study_tables import LEDGER, StudyTables
from faceedit_bench.studies.results import answer_table

PREFIX = "study:"
RATING_GROUPS = ("race", "gender", "age_bin")


def run_item(item: dict[str, Any]) -> str:
    base = f"{item['face_id']}|{item['session_id']}"
    return base if item["steps"] == 1 else f"{base}|{item['k']}"


def _csv(header: list[str], rows: list[dict[str, Any]]) -> str:
    out = io.StringIO()
    writer = csv.DictWriter(out, header, lineterminator="\n")
    writer.writeheader()
    writer.writerows(rows)
    return out.getvalue()


def _counted(tables: StudyTables, study_id: str) -> list[dict[str, Any]]:
    """The answers an export holds: gold items (the attention checks) left out."""
    return [row for row in answer_table(tables, study_id) if not row["gold"]]


def ratings_csv(tables: StudyTables, study_id: str) -> str:
    rows = []
    for row in _counted(tables, study_id):
        item = row["item"]
        rows.append({"item": run_item(item), "rater": row["annotator"], "axis": row["question"],
                     "score": int(row["value"]), "condition": item["condition"], "editor": item["editor"],
                     **{g: item["groups"].get(g, "") for g in RATING_GROUPS}})
    return _csv(["item", "rater", "axis", "score", "condition", "editor", *RATING_GROUPS], rows)


def votes_csv(tables: StudyTables, study_id: str) -> str:
    rows = []
    for row in _counted(tables, study_id):
        item = row["item"]
        left, right = reversed(item["editors"]) if row["swapped"] else item["editors"]
        rows.append({"model_a": left, "model_b": right, "vote": row["shown"], "voter_id": row["annotator"],
                     "input_id": f"{item['face_id']}/{item['session_id']}/{item['k']}",
                     "identity": item["identity"], **{g: item["groups"].get(g, "") for g in DEMOGRAPHIC_KEYS}})
    return _csv(["model_a", "model_b", "vote", "voter_id", "input_id", "identity", *DEMOGRAPHIC_KEYS], rows)


def annotations_csv(tables: StudyTables, study_id: str) -> str:
    """``editor`` is a column only when the study holds several runs (an annotation command reads one run's)."""
    answers: dict[tuple[str, str], dict[str, Any]] = {}
    names: dict[str, None] = {}
    for row in _counted(tables, study_id):
        names[row["question"]] = None
        item = row["item"]
        answers.setdefault((row["item_id"], row["annotator"]), {
            "item": run_item(item), "rater": row["annotator"], "editor": item["editor"]})[row["question"]] = row["shown"]
    editors = ["editor"] if len({a["editor"] for a in answers.values()}) > 1 else []
    return _csv(["item", "rater", *editors, *names], [{k: v for k, v in a.items() if k != "editor" or editors}
                                                     for a in answers.values()])


def checklist_csv(tables: StudyTables, study_id: str) -> str:
    rows = []
    for row in _counted(tables, study_id):
        item = row["item"]
        question = next(q for q in item["questions"] if q["name"] == row["question"])
        rows.append({"item": run_item(item), "rater": row["annotator"], "editor": item["editor"],
                     "session_id": item["session_id"], "k": item["k"], "metric": question["facet"],
                     "question_id": row["question"].split(":", 1)[1], "question": question["text"],
                     "weight": question.get("weight", ""), "expected": question.get("expected", ""),
                     "answer": row["shown"], "judge_answer": item["judge"].get(row["question"], ""),
                     **{g: item["groups"].get(g, "") for g in DEMOGRAPHIC_KEYS}})
    return _csv(["item", "rater", "editor", "session_id", "k", "metric", "question_id", "question", "weight",
                 "expected", "answer", "judge_answer", *DEMOGRAPHIC_KEYS], rows)


#: kind -> the export's file name and how it is written.
EXPORTS = {"pairwise": ("votes.csv", votes_csv), "rating": ("ratings.csv", ratings_csv),
           "categorical": ("annotations.csv", annotations_csv), "checklist": ("answers.csv", checklist_csv)}


def export(workspace: Path, study_id: str) -> Path:
    """Write the study's CSV (:data:`EXPORTS`) into ``<workspace>/studies/<id>/``."""
    tables = StudyTables(workspace)
    study = tables.study(study_id)
    if study is None:
        raise FaceEditBenchError(f"no study {study_id!r} in {workspace}; `faceedit-bench study list "
                                 f"{workspace}` shows them")
    name, write = EXPORTS[study["kind"]]
    text = write(tables, study_id)
    folder = Path(workspace) / "studies" / study_id
    folder.mkdir(parents=True, exist_ok=True)
    return write_text(folder / name, text)


def default_workspace() -> Path:
    """The workspace runs use by default (``FACEEDIT_BENCH_HOME``, else ``.faceedit_bench``)."""
    return default_runs_dir().parent


def study_csv(reference: str | Path) -> Path:
    """``study:<id>[@<workspace>]`` exported (see the module text); any other path is returned as it is."""
    text = str(reference)
    if not text.startswith(PREFIX):
        return Path(reference)
    study_id, _, workspace = text[len(PREFIX):].partition("@")
    folder = Path(workspace).expanduser() if workspace else default_workspace()
    if not (folder / LEDGER).is_file():
        raise FaceEditBenchError(f"{text}: {folder} holds no workspace ledger; write study:<id>@<workspace folder>")
    return export(folder, study_id)
