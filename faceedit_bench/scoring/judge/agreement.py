"""Judge-human agreement on a human-labelled set (``analysis.human_labels``).

The file is a CSV; image paths are relative to it. Two kinds of rows:

* ``kind=state``: ``image`` and one column per state key (``hair-color``, ``beard`` ...,
  the 8 sub-axes) holding the human's categories separated by ``;`` (empty = None). The
  tracker's accuracy per key is the share of rows where its category set equals the
  human's (the paper's "share of (image, key) entries that match", §8.5).
* ``kind=sc``: ``original``, ``image``, ``instruction`` and ``sc``, the human's score on
  0-10. Agreement is Spearman's rank correlation between the judge's and the human's scores.

Judge answers that are not ``ok`` are counted and left out, never matched or ranked.
"""

from __future__ import annotations

import csv
import io
from collections import Counter
from pathlib import Path
from typing import Any

import numpy as np

from faceedit_bench.errors import ConfigError
from faceedit_bench.records import Outcome
from faceedit_bench.scoring.judge.prompts import SC_TEMPLATE, STATE_TEMPLATE, sc_from_answer, state_from_answer
from faceedit_bench.scoring.judge.service import JudgeService
from faceedit_bench.storage.images import read_image_bytes
from faceedit_bench.storage.user_files import read_utf8


def _categories(cell: str | None) -> frozenset[str]:
    return frozenset(c.strip() for c in (cell or "").split(";") if c.strip())


def read_labels(path: Path) -> list[dict[str, str]]:
    if not path.is_file():
        raise ConfigError(f"analysis.human_labels: {path} does not exist; give the path of the labels CSV "
                          "(see faceedit_bench/scoring/judge/agreement.py for its columns) or null")
    text = read_utf8(path, what="human labels CSV (analysis.human_labels)", error=ConfigError)
    rows = list(csv.DictReader(io.StringIO(text, newline="")))
    bad = [i for i, r in enumerate(rows, start=2) if r.get("kind") not in ("state", "sc")]
    if bad:
        raise ConfigError(f"{path}: line(s) {bad[:5]} need kind=state or kind=sc")
    return rows


async def judge_human_agreement(service: JudgeService, store: Any, path: Path, seed: int = 0) -> dict[str, Any]:
    rows = read_labels(path)

    def put(relative: str) -> str:
        return store.put(read_image_bytes(path.parent / relative))

    outcomes: Counter[str] = Counter()
    matches: dict[str, list[bool]] = {k: [] for k in STATE_TEMPLATE.schema.model_fields}
    judge_sc, human_sc = [], []
    for row in rows:
        if row["kind"] == "state":
            answer = await service.ask(STATE_TEMPLATE, [put(row["image"])], seed)
            outcomes[answer.outcome.value] += 1
            if answer.outcome is Outcome.OK and answer.value:
                state = state_from_answer(answer.value)
                for key in matches:
                    if key in row:
                        matches[key].append(state.get(key, frozenset()) == _categories(row[key]))
        else:
            answer = await service.ask(SC_TEMPLATE, [put(row["original"]), put(row["image"])], seed,
                                       instruction=row["instruction"])
            outcomes[answer.outcome.value] += 1
            if answer.outcome is Outcome.OK and answer.value:
                judge_sc.append(10 * sc_from_answer(answer.value))
                human_sc.append(float(row["sc"]))
    per_key = {k: {"n": len(v), "accuracy": float(np.mean(v)) if v else None} for k, v in matches.items()}
    all_matches = [m for v in matches.values() for m in v]
    rho = None
    if len(judge_sc) >= 3 and np.ptp(judge_sc) > 0 and np.ptp(human_sc) > 0:
        from scipy import stats  # imported here: scipy.stats takes seconds to import
        rho = float(stats.spearmanr(judge_sc, human_sc).statistic)
    return {
        "labels": str(path),
        "answers": dict(sorted(outcomes.items())),
        "tracker": {"per_key": per_key, "accuracy": float(np.mean(all_matches)) if all_matches else None,
                    "paper_reference": "Gemini-2.5-Flash 79.65% (paper (a), §2.5)"},
        "sc": {"n": len(judge_sc), "spearman": rho},
    }
