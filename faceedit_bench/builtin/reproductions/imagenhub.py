"""ImagenHub's human-evaluation table recomputed from its rater TSVs with the project's inter-rater code
(:mod:`faceedit_bench.analysis.reliability`); ``faceedit-bench reproduce imagenhub-human`` (docs/reproductions.md).

Layout: ``<ratings>/<task>/*.tsv``, one file per rater (read by :func:`.viescore.read_rater_tsv`: ``uid``, then
``[SC, PQ]`` per editor). What ImagenHub's ``eval/human_ratings/AnalyzeHumanEval.ipynb`` prints, restated, per
task and editor: each rater's mean SC, mean PQ ("PR"), and the sum and mean of sqrt(SC · PQ) ("HumanEval")
over the images; the table gives their mean over the raters and the (population) standard deviation of the
raters' means; and the agreement of the three raters, image by image, as Fleiss' κ and Krippendorff's α at the
ordinal level, for SC, PQ and HumanEval. A score is a category for κ; κ is undefined where every rating is
the same score (the notebook prints nan).
"""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np

from faceedit_bench.analysis.published import PublishedFileError
from faceedit_bench.analysis.reliability import fleiss_kappa, krippendorff_alpha
from faceedit_bench.builtin.reproductions.viescore import read_rater_tsv

ASPECTS = ("SC", "PR", "HumanEval")


def _scores(pair: tuple[float, float]) -> dict[str, float]:
    return {"SC": pair[0], "PR": pair[1], "HumanEval": math.sqrt(pair[0] * pair[1])}


def editor_table(raters: dict[str, dict[str, tuple[float, float]]]) -> dict[str, float | None]:
    """One editor's row: rater -> uid -> (SC, PQ) -> the published columns."""
    per_rater = {r: [_scores(p) for p in cells.values()] for r, cells in raters.items()}
    means = {a: [float(np.mean([s[a] for s in scores])) for scores in per_rater.values()] for a in ASPECTS}
    sums = [float(np.sum([s["HumanEval"] for s in scores])) for scores in per_rater.values()]
    row: dict[str, float | None] = {
        "SC_avg": float(np.mean(means["SC"])), "PR_avg": float(np.mean(means["PR"])),
        "HumanEvalSum": float(np.mean(sums)), "HumanEvalAvg": float(np.mean(means["HumanEval"])),
        "SC_std": float(np.std(means["SC"])), "PR_std": float(np.std(means["PR"])),
        "HumanEval_std": float(np.std(means["HumanEval"]))}
    uids = sorted(set.intersection(*(set(cells) for cells in raters.values())))
    for aspect in ASPECTS:
        values = sorted({_scores(raters[r][u])[aspect] for r in raters for u in uids})
        category = {v: i for i, v in enumerate(values)}  # whole-point categories, in the scores' order
        units = {u: {r: category[_scores(raters[r][u])[aspect]] for r in raters} for u in uids}
        row[f"{aspect}_fleiss_kappa"] = fleiss_kappa(units)["value"]
        row[f"{aspect}_krippendorff_alpha_ordinal"] = krippendorff_alpha(units, level="ordinal")["value"]
    return row


def human_eval_table(ratings: Path) -> dict[str, dict[str, dict[str, float | None]]]:
    """task -> editor -> the published columns."""
    tasks = sorted(p for p in Path(ratings).iterdir() if p.is_dir())
    if not tasks:
        raise PublishedFileError(f"{ratings}: no task folders of rater TSVs (<task>/<task>_rater<k>.tsv)")
    out: dict[str, dict[str, dict[str, float | None]]] = {}
    for task in tasks:
        files = sorted(task.glob("*.tsv"))
        if len(files) < 2:
            raise PublishedFileError(f"{task}: {len(files)} rater TSV file(s); agreement needs two or more raters")
        by_rater = {f.name: read_rater_tsv(f) for f in files}
        editors = list(next(iter(by_rater.values())))
        for name, table in by_rater.items():
            if list(table) != editors:
                raise PublishedFileError(f"{task / name}: line 1 (header): editors {list(table)} differ from "
                                         f"{files[0].name}'s {editors}")
        out[task.name] = {e: editor_table({r: t[e] for r, t in by_rater.items()}) for e in editors}
    return out
