"""A study's results as the answers stand: progress, attention (gold items), inter-rater agreement
(Krippendorff's α and Fleiss' κ, :mod:`faceedit_bench.analysis.reliability`) per question, overall and per
demographic group, with jackknife intervals over identities (the unit of replication,
:mod:`faceedit_bench.analysis.identity_jackknife`), and judge-human agreement
(:func:`faceedit_bench.analysis.metric_agreement.metric_agreement`) where the runs hold the judge's value for the
question.

Gold items are left out of agreement. Pairwise votes are compared as they mean, whatever side each annotator
saw the editors on: a vote for the right-hand side of a swapped pair is a vote for the pair's first editor.

A unit of agreement is an item, or for a checklist study (each item with its own questions) one question of one
item; the results are per question of the study (rating, categorical, pairwise) or per facet of the checklist
questions (with each question's share of Yes answers beside). Judge-human agreement on categories (checklist,
categorical) compares each unit's majority answer of people (a tie decides nothing, counted) with the judge's
answer kept with the item: the share of units where they agree and Cohen's κ, each with its interval over
identities.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from faceedit_bench.analysis.identity_jackknife import (
    alpha_from_coincidences,
    cohens_kappa,
    coincidences,
    interval_of_sums,
    jackknife_interval,
    share_alike,
    spearman,
)
from faceedit_bench.analysis.metric_agreement import metric_agreement
from faceedit_bench.analysis.reliability import fleiss_kappa, krippendorff_alpha
from faceedit_bench.storage.study_tables import StudyTables
from faceedit_bench.studies.questions import SWAPPED_VOTE

CONFIDENCE = 0.95
#: One point either way still passes a repeated (gold) rating.
REPEAT_TOLERANCE = 1.0
#: A repeated item of categories passes when at least this share of its answers are the annotator's first ones.
REPEAT_SHARE = 0.8


def canonical(question: Mapping[str, Any], value: str, swapped: bool) -> float:
    """An answer as a number agreement reads: a scale point, or the index of a category (a swapped pair's vote
    turned back to the pair's own order)."""
    if question["level"] == "interval":
        return float(value)
    if swapped and question["name"] == "vote":
        value = SWAPPED_VOTE[value]
    return float([c["value"] for c in question["choices"]].index(value))


def answer_table(tables: StudyTables, study_id: str) -> list[dict[str, Any]]:
    """One row per (annotator, item, question) answered, gold items included (``gold`` True)."""
    items, tasks = tables.items(study_id), tables.all_tasks(study_id)
    rows = []
    for answer in tables.answers(study_id):
        item = items[answer.item_id]
        swapped = tasks[(answer.annotator, answer.item_id)].swapped
        for question in item["questions"]:
            shown = answer.answer.get(question["name"])
            if shown is None:
                continue
            per_item = "facet" in question  # a checklist question: asked about this item only
            rows.append({"annotator": answer.annotator, "item_id": answer.item_id, "question": question["name"],
                         "unit": f"{answer.item_id}|{question['name']}" if per_item else answer.item_id,
                         "topic": question["facet"] if per_item else question["name"], "shown": shown,
                         "swapped": swapped, "value": canonical(question, shown, swapped),
                         "level": question["level"], "gold": item["gold"] is not None, "item": item})
    return rows


def units_of(rows: Sequence[Mapping[str, Any]]) -> dict[str, dict[str, float]]:
    units: dict[str, dict[str, float]] = defaultdict(dict)
    for row in rows:
        units[row["unit"]][row["annotator"]] = row["value"]
    return dict(units)


def _interval(rows: Sequence[Mapping[str, Any]], level: str) -> dict[str, Any]:
    """α's interval over identities: each identity's units as a coincidence matrix, then the jackknife."""
    identities: dict[str, list[Mapping[str, Any]]] = defaultdict(list)
    for row in rows:
        identities[row["item"]["identity"]].append(row)
    values = sorted({r["value"] for r in rows})
    per_identity = coincidences([units_of(mine) for _, mine in sorted(identities.items())], values)
    return interval_of_sums(per_identity, lambda o: alpha_from_coincidences(o, values, level), CONFIDENCE,
                            bounds=(-np.inf, 1.0))


def agreement(rows: Sequence[Mapping[str, Any]], level: str) -> dict[str, Any]:
    units = units_of(rows)
    alpha = krippendorff_alpha(units, level=level)
    if alpha["value"] is not None:
        alpha["interval"] = _interval(rows, level)
    return {"items": len(units), "answers": len(rows), "krippendorff_alpha": alpha, "fleiss_kappa": fleiss_kappa(units)}


def judge_human(rows: Sequence[Mapping[str, Any]], question: str) -> dict[str, Any]:
    """The judge's value against people's mean of each output (metric_agreement), with the item-level Spearman's
    interval over identities."""
    human: dict[tuple[str, str], list[float]] = defaultdict(list)
    judge: dict[tuple[str, str], float] = {}
    identity: dict[tuple[str, str], str] = {}
    for row in rows:
        item = row["item"]
        key = (item.get("editor", ""), row["item_id"])
        human[key].append(row["value"])
        identity[key] = item["identity"]
        if question in item.get("judge", {}):
            judge[key] = float(item["judge"][question])
    if not judge:
        return {"value": None, "reason": "the runs hold no judge value for this question"}
    means = {k: float(np.mean(v)) for k, v in human.items()}
    out = metric_agreement(means, judge)
    if (rho := out["item_level"].get("spearman")) is not None:
        keys = [k for k in means if k in judge]
        x, y, who = (np.array(v) for v in zip(*((means[k], judge[k], identity[k]) for k in keys)))
        left_out = [spearman(x[who != i], y[who != i]) for i in sorted(set(who))]
        out["item_level"]["spearman_interval"] = jackknife_interval(rho, left_out, CONFIDENCE, bounds=(-1.0, 1.0))
    return out


def _majority(answers: Sequence[str]) -> str | None:
    """The answer most people gave; None on a tie between the most given."""
    ranked = Counter(answers).most_common()
    return None if len(ranked) > 1 and ranked[0][1] == ranked[1][1] else ranked[0][0]


def judge_human_categories(rows: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """People's majority answer of each unit against the judge's: the share alike and Cohen's κ, each with its
    interval over identities."""
    people: dict[str, list[str]] = defaultdict(list)
    judge: dict[str, str] = {}
    identity: dict[str, str] = {}
    for row in rows:
        people[row["unit"]].append(row["shown"])
        identity[row["unit"]] = row["item"]["identity"]
        if (given := row["item"].get("judge", {}).get(row["question"])) is not None:
            judge[row["unit"]] = given
    majority = {u: _majority(a) for u, a in people.items()}
    pairs = {u: (judge[u], m) for u, m in sorted(majority.items()) if m is not None and u in judge}
    out = {"units": len(pairs), "ties": sum(m is None for m in majority.values()),
           "no_judge_answer": sum(u not in judge for u in majority)}
    if not pairs:
        return {**out, "value": None, "reason": "no unit with both a judge answer and a majority of people"}
    labels = sorted({c for pair in pairs.values() for c in pair})
    index = {c: i for i, c in enumerate(labels)}
    where = {i: n for n, i in enumerate(sorted({identity[u] for u in pairs}))}
    confusions = np.zeros((len(where), len(labels), len(labels)))
    for unit, (j, h) in pairs.items():
        confusions[where[identity[unit]], index[j], index[h]] += 1
    same = float(share_alike(confusions.sum(0)))
    out |= {"value": same, "same": same,
            "same_interval": interval_of_sums(confusions, share_alike, CONFIDENCE, bounds=(0.0, 1.0))}
    if len(labels) < 2:
        return {**out, "cohens_kappa": None, "kappa_reason": "one answer only: kappa is undefined"}
    kappa = float(cohens_kappa(confusions.sum(0)))
    if not np.isfinite(kappa):
        return {**out, "cohens_kappa": None}
    return {**out, "cohens_kappa": kappa,
            "kappa_interval": interval_of_sums(confusions, cohens_kappa, CONFIDENCE, bounds=(-1.0, 1.0))}


def yes_rates(rows: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """Each checklist question of each item: the share of people who answered Yes, with the judge's answer; those
    where people and the judge differ most first."""
    by_unit: dict[str, list[Mapping[str, Any]]] = defaultdict(list)
    for row in rows:
        by_unit[row["unit"]].append(row)
    out = []
    for mine in by_unit.values():
        item, name = mine[0]["item"], mine[0]["question"]
        question = next(q for q in item["questions"] if q["name"] == name)
        out.append({"item_id": mine[0]["item_id"], "editor": item.get("editor"), "question": name,
                    "text": question["text"], "expected": question.get("expected"), "answers": len(mine),
                    "yes_rate": sum(r["shown"] == "Yes" for r in mine) / len(mine),
                    "judge": item.get("judge", {}).get(name)})
    return sorted(out, key=lambda r: (-abs(r["yes_rate"] - (r["judge"] == "Yes")) if r["judge"] else 0.0,
                                      r["item_id"], r["question"]))


def gold_checks(rows: Sequence[Mapping[str, Any]]) -> dict[str, dict[str, int]]:
    """annotator -> gold items answered and passed."""
    own = {(r["annotator"], r["item_id"], r["question"]): r["value"] for r in rows}
    answers: dict[tuple[str, str], list[Mapping[str, Any]]] = defaultdict(list)
    for row in rows:
        if row["gold"]:
            answers[(row["annotator"], row["item_id"])].append(row)
    out: dict[str, dict[str, int]] = defaultdict(lambda: {"seen": 0, "passed": 0, "pending": 0})
    for (who, _), mine in answers.items():
        rule = mine[0]["item"]["gold"]
        if rule["rule"] == "tie":
            passed: bool | None = all(r["shown"] in ("both_good", "both_bad") for r in mine)
        else:
            firsts = [own.get((who, rule["of"], r["question"])) for r in mine]
            if any(f is None for f in firsts):
                passed = None
            elif mine[0]["level"] == "interval":
                passed = all(abs(f - r["value"]) <= REPEAT_TOLERANCE for f, r in zip(firsts, mine))
            else:
                passed = sum(f == r["value"] for f, r in zip(firsts, mine)) >= REPEAT_SHARE * len(mine)
        out[who]["seen"] += 1
        if passed is None:
            out[who]["pending"] += 1  # the first answer is still to come
        else:
            out[who]["passed"] += int(passed)
    return dict(out)


def _judge_human(kind: str, rows: Sequence[Mapping[str, Any]], name: str, study_id: str) -> dict[str, Any]:
    if kind == "pairwise":
        return {"value": None, "reason": f"pairwise votes: faceedit-bench arena run ... --votes study:{study_id} "
                                         "compares them with the judge's battles"}
    return judge_human(rows, name) if rows[0]["level"] == "interval" else judge_human_categories(rows)


def study_results(workspace: Path, study_id: str) -> dict[str, Any]:
    tables = StudyTables(workspace)
    study = tables.study(study_id)
    assert study is not None
    rows = answer_table(tables, study_id)
    regular = [r for r in rows if not r["gold"]]
    answered: dict[str, set[str]] = defaultdict(set)
    for answer in tables.answers(study_id):
        answered[answer.annotator].add(answer.item_id)
    progress = {a: {"answered": len(answered[a]), "assigned": len(tables.tasks(study_id, a))}
                for a in tables.annotators(study_id)}
    questions: dict[str, dict[str, Any]] = {}
    for name in dict.fromkeys(r["topic"] for r in regular):
        mine = [r for r in regular if r["topic"] == name]
        level = mine[0]["level"]
        groups: dict[str, dict[str, Any]] = {}
        for key in sorted({g for r in mine for g in r["item"]["groups"]}):
            for label in sorted({r["item"]["groups"][key] for r in mine if key in r["item"]["groups"]}):
                subset = [r for r in mine if r["item"]["groups"].get(key) == label]
                groups[f"{key}={label}"] = agreement(subset, level)
        questions[name] = {"level": level, "overall": agreement(mine, level), "groups": groups,
                           "judge_human": _judge_human(study["kind"], mine, name, study_id)}
        if study["kind"] == "checklist":
            questions[name]["yes_rates"] = yes_rates(mine)
    return {"study_id": study_id, "kind": study["kind"], "title": study["spec"]["title"], "progress": progress,
            "answers": len({(r["annotator"], r["item_id"]) for r in regular}), "gold": gold_checks(rows),
            "questions": questions}

