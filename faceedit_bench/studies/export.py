"""A study's answers in the layouts the analysis commands read, gold items left out:

- rating studies: the ratings CSV layout (``item,rater,axis,score,condition,editor`` and the face's
  ``race,gender,age_bin``; docs/studies.md). ``item`` is ``<face_id>|<session_id>``,
  the run's own item, with ``|<k>`` added for sessions of several steps;
- pairwise studies: the votes CSV of ``faceedit-bench arena run ... --votes`` (``model_a,model_b,vote,voter_id,
  input_id,identity`` and the labels; ``input_id`` is the arena's ``<face>/<session>/<k>``), each vote as its
  annotator saw it (left = A).

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


def ratings_csv(tables: StudyTables, study_id: str) -> str:
    rows = []
    for row in answer_table(tables, study_id):
        if row["gold"]:
            continue
        item = row["item"]
        rows.append({"item": run_item(item), "rater": row["annotator"], "axis": row["question"],
                     "score": int(row["value"]), "condition": item["condition"], "editor": item["editor"],
                     **{g: item["groups"].get(g, "") for g in RATING_GROUPS}})
    return _csv(["item", "rater", "axis", "score", "condition", "editor", *RATING_GROUPS], rows)


def votes_csv(tables: StudyTables, study_id: str) -> str:
    rows = []
    for row in answer_table(tables, study_id):
        if row["gold"]:
            continue
        item = row["item"]
        left, right = reversed(item["editors"]) if row["swapped"] else item["editors"]
        rows.append({"model_a": left, "model_b": right, "vote": row["shown"], "voter_id": row["annotator"],
                     "input_id": f"{item['face_id']}/{item['session_id']}/{item['k']}",
                     "identity": item["identity"], **{g: item["groups"].get(g, "") for g in DEMOGRAPHIC_KEYS}})
    return _csv(["model_a", "model_b", "vote", "voter_id", "input_id", "identity", *DEMOGRAPHIC_KEYS], rows)


def export(workspace: Path, study_id: str) -> Path:
    """Write the study's CSV (``ratings.csv`` or ``votes.csv``) into ``<workspace>/studies/<id>/``."""
    tables = StudyTables(workspace)
    study = tables.study(study_id)
    if study is None:
        raise FaceEditBenchError(f"no study {study_id!r} in {workspace}; `faceedit-bench study list "
                                 f"{workspace}` shows them")
    name, text = (("votes.csv", votes_csv(tables, study_id)) if study["kind"] == "pairwise" else
                  ("ratings.csv", ratings_csv(tables, study_id)))
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
