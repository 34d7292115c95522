"""WinoBias judged by people (paper (b)'s own method, METHODOLOGY §4.7): annotations read, the same statistics
computed, and compared with the run's judge (docs/human_evaluation.md, "WinoBias annotations").

An annotation CSV has one row per (item, rater)::

    item,rater,target_person,target_gender
    fairface_grid/Black_Male_40s/1|W-01,r01,first,male

- ``item``: ``<face_id>|<session_id>``, as ``faceedit-bench human winobias-export`` writes it;
- ``target_person``: first | second | both | neither | unclear (which input person the output shows in the
  target role); ``target_gender``: male | female | ambiguous | no_person (as the output shows them): the
  questions the judge answers, so both are categorised by one rule (``category_of``).

Other columns of the exported sheet (the occupation, the instruction, the image files) may stay in the file.
Each item's people category is the one most of its raters give; a tie decides nothing (``disagreed``, counted
and never scored, as a judge panel's disagreement). The share, its exact test and interval and the bounds are
those of the judge's section (:func:`~faceedit_bench_audit.winobias.adherence.adherence`). Agreement: Fleiss' κ
between raters over the categories; between the judge and people, the share of items both decided alike and
Cohen's κ over the categories of the items both have.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from faceedit_bench.api import csv_records, read_utf8
from faceedit_bench.api.statistics import reliability
from faceedit_bench_audit.human.ratings import MAX_LISTED, RatingsError
from faceedit_bench_audit.winobias.adherence import adherence, bounds
from faceedit_bench_audit.winobias.metric import CATEGORIES, GENDERS, WinoBiasAnswer, category_of

REQUIRED = ("item", "rater", "target_person", "target_gender")
#: Columns of the exported sheet an annotation file may keep.
SHEET = ("target_occupation", "instruction", "image_1", "image_2", "output")
PERSONS = tuple(WinoBiasAnswer.model_fields["target_person"].annotation.__args__)  # type: ignore[union-attr]
TARGET_GENDERS = tuple(WinoBiasAnswer.model_fields["target_gender"].annotation.__args__)  # type: ignore[union-attr]
DECIDED = ("stereotyped", "anti_stereotyped")


@dataclass(frozen=True)
class Annotation:
    item: str
    rater: str
    target_person: str
    target_gender: str
    line: int


def read_annotations(path: Path | str) -> list[Annotation]:
    path = Path(path)
    if not path.is_file():
        raise RatingsError(f"{path}: no such file; give the WinoBias annotation CSV (columns {', '.join(REQUIRED)}; "
                           "docs/human_evaluation.md)")
    return parse_annotations(read_utf8(path, what="annotation CSV", error=RatingsError), str(path))


def parse_annotations(text: str, source: str = "annotations.csv") -> list[Annotation]:
    problems: list[str] = []  # every row's, listed at once
    header, records = csv_records(text, source, what="annotation CSV", error=RatingsError, problems=problems)
    missing = [c for c in REQUIRED if c not in header]
    unknown = [c for c in header if c not in REQUIRED + SHEET]
    if missing or unknown:
        raise RatingsError(f"{source}, line 1 (header): "
                           + "; ".join(([f"missing column(s) {', '.join(missing)}"] if missing else [])
                                       + ([f"unknown column(s) {', '.join(unknown)}"] if unknown else []))
                           + f". Columns: {', '.join(REQUIRED)} (required), {', '.join(SHEET)} (the sheet's, optional)")
    out: list[Annotation] = []
    seen: dict[tuple[str, str], int] = {}
    for line, record in records:
        row = {h: c.strip() for h, c in record.items()}
        bad = [f"line {line}, column {c}: empty" for c in REQUIRED if not row[c]]
        if not bad and row["target_person"] not in PERSONS:
            bad.append(f"line {line}, column target_person: {row['target_person']!r} is not one of {', '.join(PERSONS)}")
        if not bad and row["target_gender"] not in TARGET_GENDERS:
            bad.append(f"line {line}, column target_gender: {row['target_gender']!r} is not one of "
                       f"{', '.join(TARGET_GENDERS)}")
        key = (row["item"], row["rater"])
        if not bad and key in seen:
            bad.append(f"line {line}: rater {row['rater']!r} already annotated item {row['item']!r} on line "
                       f"{seen[key]}; keep one row per rater and item")
        if bad:
            problems += bad
            continue
        seen[key] = line
        out.append(Annotation(row["item"], row["rater"], row["target_person"], row["target_gender"], line))
    if problems:
        more = f"\n  ... and {len(problems) - MAX_LISTED} more" if len(problems) > MAX_LISTED else ""
        raise RatingsError(f"{source}: {len(problems)} problem(s):\n  " + "\n  ".join(problems[:MAX_LISTED]) + more)
    if not out:
        raise RatingsError(f"{source}: no annotations (only a header); add one row per (item, rater)")
    return out


def people_category(votes: Sequence[str]) -> str:
    """The category most raters give; a tie between the most given decides nothing (``disagreed``)."""
    counts = Counter(votes).most_common()
    if len(counts) > 1 and counts[0][1] == counts[1][1]:
        return "disagreed"
    return counts[0][0]


def _summary(categories: Sequence[str], confidence: float) -> dict[str, Any]:
    counts = Counter(categories)
    return {**adherence(counts["stereotyped"], counts["anti_stereotyped"], confidence),
            "answers": dict(sorted(counts.items())), "judged": len(categories), "bounds": bounds(counts)}


def _cohens_kappa(pairs: Sequence[tuple[str, str]]) -> dict[str, Any]:
    labels = sorted({c for pair in pairs for c in pair})
    if len(pairs) < 2 or len(labels) < 2:
        return {"value": None, "reason": "fewer than two items, or one category only: kappa is undefined"}
    from statsmodels.stats.inter_rater import cohens_kappa  # imported here: statsmodels takes a while

    index = {c: i for i, c in enumerate(labels)}
    table = [[0] * len(labels) for _ in labels]
    for a, b in pairs:
        table[index[a]][index[b]] += 1
    result = cohens_kappa(table)
    return {"value": float(result.kappa), "categories": labels}


def winobias_human_section(annotations: Sequence[Annotation], items: Sequence[Mapping[str, Any]] | None, *,
                           source: str, confidence: float = 0.95) -> dict[str, Any]:
    """The ``winobias_human`` section: the people's statistics, rater agreement and, with the run's
    ``winobias.items``, the agreement of its judge with people. Every annotated item must be one of the run's."""
    known = {i["item"]: i for i in items or ()}
    if not known:
        raise RatingsError("give the run whose outputs were annotated (--run RUN_DIR): the stereotyped gender of "
                           "each item comes from its test set")
    unknown = sorted({a.item for a in annotations} - set(known))
    if unknown:
        first = next(a for a in annotations if a.item == unknown[0])
        raise RatingsError(f"{source}, line {first.line}, column item: {unknown[0]!r} is none of the run's WinoBias "
                           f"items ({len(unknown)} unknown); export the sheet from this run "
                           "(faceedit-bench human winobias-export)")
    votes: dict[str, dict[str, str]] = defaultdict(dict)
    for a in annotations:
        gender = known[a.item].get("stereotyped_gender")
        votes[a.item][a.rater] = (category_of(a.target_person, a.target_gender, gender) if gender in GENDERS
                                  else "no_target")
    people = {item: people_category(list(v.values())) for item, v in votes.items()}
    codes = {c: n for n, c in enumerate(CATEGORIES)}
    groups: dict[str, list[str]] = defaultdict(list)
    for item, category in people.items():
        gender = known[item].get("stereotyped_gender")
        groups[gender if gender in GENDERS else "unlabelled"].append(category)
    pairs = [(str(known[i]["category"]), c) for i, c in people.items() if known[i].get("category") in CATEGORIES]
    decided = [(j, h) for j, h in pairs if j in DECIDED and h in DECIDED]
    judge_on_common = [j for j, _ in pairs]
    return {
        "source": source, "raters": len({a.rater for a in annotations}), "annotations": len(annotations),
        "items": len(people), "run_items": len(known), "confidence": confidence,
        "rule": "each item's category is the one most of its raters give; a tie is 'disagreed' (counted, not scored)",
        "overall": _summary(list(people.values()), confidence),
        "by_target": {g: _summary(c, confidence) for g, c in sorted(groups.items())},
        "raters_agreement": {"fleiss_kappa": reliability(
            {item: {r: float(codes[c]) for r, c in v.items()} for item, v in votes.items()}, "fleiss_kappa"),
            "categories": list(CATEGORIES)},
        "vlm_vs_human": {
            "items": len(pairs),
            "same_category": (sum(j == h for j, h in pairs) / len(pairs)) if pairs else None,
            "cohens_kappa": _cohens_kappa(pairs),
            "decided_by_both": len(decided),
            "same_decision": (sum(j == h for j, h in decided) / len(decided)) if decided else None,
            "judge_on_these_items": _summary(judge_on_common, confidence),
            "confusion": {j: dict(sorted(Counter(h for jj, h in pairs if jj == j).items()))
                          for j in sorted({j for j, _ in pairs})},
        },
    }
