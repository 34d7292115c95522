"""VIEScore's judge–human Spearman correlations on ImagenHub's human ratings, recomputed with the project's
agreement code (:mod:`faceedit_bench.analysis.metric_agreement`); ``faceedit-bench reproduce
viescore`` (docs/reproductions.md).

Published layouts read here, every problem named by its file, line and field:

* a judge's answers (``<answers>/<task>/<editor>/{SC,PQ}.json``): ``{"<uid>": {"score": [s, ...]}, ...}``, each
  score 0–10 (a number or a list of numbers, as numbers or numeric strings);
* ImagenHub's rater TSVs (``<ratings>/<task>/*_rater<k>.tsv``): ``uid``, then one column per editor holding
  the rater's ``[SC, PQ]`` (each 0, 0.5 or 1).

What VIEScore's ``paper_implementation/analyze_json.ipynb`` computes, restated: per editor, on the images both
SC and PQ answers cover, the judge's score is min(scores)/10 clipped to [0, 1]; O = sqrt(SC · PQ) per image;
the people's score is the mean of the raters' SC, PQ, and of their sqrt(SC · PQ); Spearman's ρ between the two.
A task's correlation is the ``tanh_of_mean`` average of its editors' (what the notebook does), and the seven
tasks' likewise; the proper ``fisher_z`` average is printed beside each.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping
from pathlib import Path

import numpy as np

from faceedit_bench.analysis.metric_agreement import average_correlation, correlations
from faceedit_bench.analysis.published import PublishedFileError
from faceedit_bench.storage.user_files import csv_rows, parse_json, read_utf8

ASPECTS = ("SC", "PQ", "O")


def _line_of(text: str, key: str) -> int:
    at = text.find(json.dumps(key))
    return text.count("\n", 0, at) + 1 if at >= 0 else 1


def read_answers(path: Path) -> dict[str, float]:
    """uid -> the judge's score on [0, 1] (min of its scores / 10, clipped: the notebook's rule)."""
    text = read_utf8(path, what="VIEScore answers JSON", error=PublishedFileError)
    data = parse_json(text, str(path), what="VIEScore answers JSON", error=PublishedFileError)
    if not isinstance(data, dict):
        raise PublishedFileError(f"{path}: line 1: expected an object of {{uid: {{\"score\": ...}}}} answers")
    out = {}
    for uid, entry in data.items():
        score = entry.get("score") if isinstance(entry, dict) else None
        values = score if isinstance(score, list) else [score]
        try:
            numbers = [float(v) for v in values if not isinstance(v, bool)]
        except (TypeError, ValueError):
            numbers = []
        if not numbers or len(numbers) != len(values) or not all(math.isfinite(v) for v in numbers):
            raise PublishedFileError(f"{path}: line {_line_of(text, uid)}, uid {uid!r}, field 'score': {score!r} is "
                                     "not a score or a list of scores (0-10)")
        out[uid] = min(max(min(numbers) / 10.0, 0.0), 1.0)
    return out


def read_rater_tsv(path: Path) -> dict[str, dict[str, tuple[float, float]]]:
    """editor -> uid -> (SC, PQ) of one rater."""
    text = read_utf8(path, what="ImagenHub rater TSV", error=PublishedFileError)
    lines = list(csv_rows(text, str(path), what="ImagenHub rater TSV", error=PublishedFileError, delimiter="\t"))
    rows = [row for _, row in lines]
    if not rows or not rows[0] or rows[0][0] != "uid" or len(rows[0]) < 2:
        raise PublishedFileError(f"{path}: line 1 (header): expected 'uid' and then one column per editor, found "
                                 f"{rows[0][:4] if rows else 'nothing'}")
    editors = rows[0][1:]
    out: dict[str, dict[str, tuple[float, float]]] = {e: {} for e in editors}
    for line, row in lines[1:]:
        if not any(c.strip() for c in row):
            continue
        if len(row) != len(rows[0]):
            raise PublishedFileError(f"{path}: line {line}: {len(row)} fields where the header has {len(rows[0])} "
                                     "(truncated?)")
        for editor, cell in zip(editors, row[1:]):
            try:
                pair = json.loads(cell)
                sc, pq = (float(v) for v in pair)
            except (json.JSONDecodeError, TypeError, ValueError):
                raise PublishedFileError(f"{path}: line {line}, column {editor!r}: {cell!r} is not an '[SC, PQ]' "
                                         "pair of numbers") from None
            out[editor][row[0]] = (sc, pq)
    return out


def read_task_ratings(folder: Path, order: list[str] | None = None) -> dict[str, dict[str, list[tuple[float, float]]]]:
    """editor -> uid -> every rater's (SC, PQ), from the task folder's ``*.tsv`` files, read in ``order`` (file
    names; default: sorted)."""
    files = [Path(folder) / name for name in order] if order else sorted(Path(folder).glob("*.tsv"))
    if not files:
        raise PublishedFileError(f"{folder}: no rater TSV files (ImagenHub's <task>/<task>_rater<k>.tsv layout)")
    out: dict[str, dict[str, list[tuple[float, float]]]] = {}
    for path in files:
        for editor, cells in read_rater_tsv(path).items():
            for uid, pair in cells.items():
                out.setdefault(editor, {}).setdefault(uid, []).append(pair)
    return out


def _mean(values: list[float], exact: bool) -> float:
    return math.fsum(values) / len(values) if exact else float(np.mean(values))


def editor_correlations(answers: Path, ratings: Mapping[str, Mapping[str, list[tuple[float, float]]]],
                        editor: str, exact: bool = False) -> dict:
    """Spearman's ρ of SC, PQ and O between one editor's judge answers and the people's mean ratings.

    ``exact=False`` averages the raters as the notebook does, in floating point in the order they were read:
    two images whose raters gave the same O scores in another order can then differ in the last bit, and
    Spearman's ranks break that tie (the published O correlations depend on the order the notebook read the
    rater files). ``exact=True`` sums exactly (``math.fsum``), so such images tie whatever the order."""
    sc, pq = read_answers(answers / "SC.json"), read_answers(answers / "PQ.json")
    people = ratings.get(editor, {})
    uids = sorted(set(sc) & set(pq) & set(people))
    judge = {"SC": [sc[u] for u in uids], "PQ": [pq[u] for u in uids],
             "O": [math.sqrt(sc[u] * pq[u]) for u in uids]}
    human = {"SC": [_mean([r[0] for r in people[u]], exact) for u in uids],
             "PQ": [_mean([r[1] for r in people[u]], exact) for u in uids],
             "O": [_mean([math.sqrt(r[0] * r[1]) for r in people[u]], exact) for u in uids]}
    return {"images": len(uids), "unrated": len((set(sc) & set(pq)) - set(people)),
            **{a: correlations(judge[a], human[a])["spearman"] for a in ASPECTS}}


def viescore_table(answers: Path, ratings: Path, orders: Mapping[str, list[str]] | None = None,
                   exact: bool = False) -> dict[str, dict]:
    """task -> {"editors": {editor: correlations}, "average": {method: {aspect: r}}}, and "all". ``orders``:
    per task, the rater files in the order they are read (default sorted); ``exact``: see
    :func:`editor_correlations`."""
    tasks = sorted(p.name for p in Path(answers).iterdir() if p.is_dir())
    if not tasks:
        raise PublishedFileError(f"{answers}: no task folders (VIEScore's <task>/<editor>/{{SC,PQ}}.json layout)")
    out: dict[str, dict] = {}
    for task in tasks:
        if not (Path(ratings) / task).is_dir():
            raise PublishedFileError(f"{ratings}: no folder {task!r} of rater TSVs for the answers' task {task!r}")
        people = read_task_ratings(Path(ratings) / task, (orders or {}).get(task))
        editors = {e.name: editor_correlations(e, people, e.name, exact) for e in sorted(Path(answers, task).iterdir())
                   if e.is_dir()}
        out[task] = {"editors": editors, "average": {m: {a: _average([r[a] for r in editors.values()], m)
                                                         for a in ASPECTS} for m in ("tanh_of_mean", "fisher_z")}}
    out["all"] = {"average": {m: {a: _average([out[t]["average"][m][a] for t in tasks], m) for a in ASPECTS}
                              for m in ("tanh_of_mean", "fisher_z")}}
    return out


def _average(values: list[float | None], method: str) -> float | None:
    return None if any(v is None for v in values) else average_correlation(values, method)
