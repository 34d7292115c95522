"""Creating a study from runs (``faceedit-bench study create`` and the app's form), and adding annotators.

Annotators are pseudonyms (``a-`` and random hex) with a link holding a random secret; the ledger keeps the
SHA-256 of the secret only, so a link is shown once, when it is made, and a stolen ledger opens no study.
Nothing about the person is asked or stored.

Gold items check attention, with an answer known without asking anyone:

- pairwise: one output against itself; the right answer is a tie (both good or both bad);
- rating, checklist, categorical: an item asked a second time; the right answer is the annotator's own first
  one: within one point on every scale (rating), the same answer to at least
  :data:`~faceedit_bench.studies.results.REPEAT_SHARE` of the questions (checklist, categorical).
"""

from __future__ import annotations

import hashlib
import random
import secrets
from collections.abc import Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from faceedit_bench.errors import FaceEditBenchError
from faceedit_bench.storage.study_tables import StudyTables
from faceedit_bench.studies import assign as assignment
from faceedit_bench.studies.categorical import categorical_items, load_metric
from faceedit_bench.studies.checklist import checklist_items
from faceedit_bench.studies.items import (
    Output,
    balanced_sample,
    count,
    item_id,
    pairwise_items,
    rating_item,
    read_runs,
)
from faceedit_bench.studies.questions import PAIRWISE, scale_questions

KINDS = ("pairwise", "rating", "checklist", "categorical")
#: Kinds whose questions are a judge metric's (``--metric``; a checklist study may take the run's only one).
METRIC_KINDS = ("rating", "checklist", "categorical")


@dataclass(frozen=True)
class Settings:
    kind: str
    items: int | None = None  # None: every item the runs give
    annotators: int = 2
    per_item: int = 2
    gold: int = 2
    seed: int = 0
    metric: str | None = None  # rating, categorical, checklist: the judge metric whose questions people answer
    title: str = ""


@dataclass(frozen=True)
class Created:
    study_id: str
    links: dict[str, str]  # annotator -> secret (shown once)
    n_items: int
    n_gold: int
    not_asked: dict[str, int]  # why outputs of the runs were not made items -> how many


def secret_hash(secret: str) -> str:
    return hashlib.sha256(secret.encode()).hexdigest()


def new_annotators(n: int) -> tuple[list[tuple[str, str]], dict[str, str]]:
    """(pseudonym, secret hash) rows and pseudonym -> secret."""
    links = {f"a-{secrets.token_hex(4)}": secrets.token_urlsafe(24) for _ in range(n)}
    return [(a, secret_hash(s)) for a, s in links.items()], links


def rating_items(outputs: Sequence[Output], metric_name: str, not_asked: dict[str, int]) -> list[dict[str, Any]]:
    from faceedit_bench.records import Face, Session, Step
    from faceedit_bench.scoring.judge.declared import NotAsked

    metric = load_metric(metric_name)
    items = []
    for out in outputs:
        face = Face(out.face_id, out.identity, Path(), (), dict(out.groups))
        steps = tuple(Step(k=i + 1, instruction=text, prompt_id=pid or None)
                      for i, (text, pid) in enumerate(zip(out.instructions, out.prompt_ids)))
        session = Session(out.session_id, "", steps, condition=out.condition, face_id=out.face_id)
        try:
            fields = {"instruction": out.instructions[-1],
                      **(metric.face_fields(face, session, out.k) if metric.face_fields else {})}
        except NotAsked as exc:
            count(not_asked, str(exc))
            continue
        items.append(rating_item(out, metric_name, [q.as_dict() for q in scale_questions(metric, fields)]))
    return items


def _gold(kind: str, items: Sequence[dict[str, Any]], n: int, seed: int) -> tuple[list[dict], dict[str, dict]]:
    picked = random.Random(seed + 1).sample(list(items), min(n, len(items)))
    gold_items, rules = [], {}
    for item in picked:
        gid = "gold-" + item_id("gold", item["item_id"])
        if kind == "pairwise":
            images = {**item["images"], "B": item["images"]["A"]}
            gold_items.append({**item, "item_id": gid, "images": images})
            rules[gid] = {"rule": "tie"}
        else:
            gold_items.append({**item, "item_id": gid})
            rules[gid] = {"rule": "repeat", "of": item["item_id"]}
    return gold_items, rules


def create_study(workspace: Path, runs: Sequence[Path], settings: Settings) -> Created:
    if settings.kind not in KINDS:
        raise FaceEditBenchError(f"--kind {settings.kind!r}: use one of {', '.join(KINDS)}")
    if not runs:
        raise FaceEditBenchError("name at least one run folder (<workspace>/runs/<run>); pairwise needs two")
    read = read_runs(runs)
    not_asked = {f"{run.editor}: {outcome} (no image)": n for run in read for outcome, n in run.not_shown.items()}
    if settings.kind == "pairwise":
        if len(read) < 2:
            raise FaceEditBenchError("a pairwise study needs at least two runs (two editors on the same faces)")
        candidates = pairwise_items(read, PAIRWISE.as_dict())
    elif settings.kind in ("rating", "categorical") and not settings.metric:
        raise FaceEditBenchError(f"a {settings.kind} study needs --metric NAME: the judge metric whose questions "
                                 "people answer (`faceedit-bench plugins` lists the judge metrics)")
    elif settings.kind == "rating":
        candidates = rating_items([o for run in read for o in run.outputs], settings.metric, not_asked)
    elif settings.kind == "checklist":
        metric, candidates = checklist_items(read, settings.metric, not_asked)
        settings = replace(settings, metric=metric)
    else:
        candidates = categorical_items(read, str(settings.metric), not_asked)
    items = balanced_sample(candidates, settings.items, settings.seed)
    if not items and not_asked:
        raise FaceEditBenchError("no output of the runs can be asked about: " + "; ".join(
            f"{n} x {reason}" for reason, n in not_asked.items()))
    assignment.check_sizes(len(items), settings.annotators, settings.per_item)
    gold_items, rules = _gold(settings.kind, items, settings.gold, settings.seed)
    rows, links = new_annotators(settings.annotators)
    tasks = assignment.assign([i["item_id"] for i in items], _asks_again(rules), [a for a, _ in rows],
                              settings.per_item, settings.seed)
    study_id = f"s-{secrets.token_hex(4)}"
    spec = {"title": settings.title or f"{settings.kind} study of {', '.join(r.editor for r in read)}",
            "kind": settings.kind, "per_item": settings.per_item, "seed": settings.seed,
            "metric": settings.metric if settings.kind in METRIC_KINDS else None,
            "runs": [str(r.run_dir) for r in read], "editors": [r.editor for r in read],
            "not_asked": not_asked, "candidates": len(candidates)}
    StudyTables(workspace).create(study_id, settings.kind, spec, [*items, *gold_items], rules, rows, tasks)
    return Created(study_id, links, len(items), len(gold_items), not_asked)


def _asks_again(rules: dict[str, dict[str, Any]]) -> dict[str, str | None]:
    return {gold: rule.get("of") for gold, rule in rules.items()}


def add_annotators(workspace: Path, study_id: str, n: int) -> dict[str, str]:
    """``n`` more annotators, who share the study's items between them once more; their links."""
    tables = StudyTables(workspace)
    study = tables.study(study_id)
    if study is None:
        raise FaceEditBenchError(f"no study {study_id!r} in {workspace}; `faceedit-bench study list` shows them")
    items = tables.items(study_id)
    regular = sorted(i for i, item in items.items() if item["gold"] is None)
    gold = _asks_again({i: item["gold"] for i, item in sorted(items.items()) if item["gold"] is not None})
    rows, links = new_annotators(n)
    tasks = assignment.assign(regular, gold, [a for a, _ in rows], 1, study["spec"]["seed"] + n)
    tables.add_annotators(study_id, rows, tasks)
    return links
