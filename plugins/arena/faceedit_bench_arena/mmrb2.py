"""MMRB2's image-editing preference pairs: a judge's answers scored against the people's labels
(``faceedit-bench reproduce mmrb2``; docs/reproductions.md). MMRB2's data are CC BY-NC 4.0, so nothing of it
ships: the user gives its files.

* Labels (facebookresearch/MMRB2 ``benchmark/edit_response_only.json``, or ``edit.json`` once built): an object
  with ``pairs``, each with ``id`` (or ``pair_id``) and ``chosen`` (``A`` or ``B``, the experts' preference).
* Answers (MMRB2's predictions layout, ``evaluate/generate_judgements/outputs/``): ``{pair id: {"forward":
  [{"judgement": "A"}], "reverse": [{"judgement": "B"}]}}``; "reverse" is the judge's answer with the two
  responses swapped, so its judgement is flipped before it is compared.

The rule is MMRB2's (``evaluate/compute_scores/compute_accuracy.py``): each order's judgement is one trial,
right when it names the chosen response (after the flip); accuracy = right / trials. A pair without answers is
counted as missing, an order without a judgement is left out and counted; a judgement other than A or B (a tie,
a refusal) is a trial that is wrong. Beside it, the pairs whose two orders agree (position-consistent) and
their accuracy.
"""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path
from typing import Any

from faceedit_bench.api import parse_json, read_utf8
from faceedit_bench_arena.genai_arena import PublishedFileError

FLIP = {"A": "B", "B": "A"}


def _load(path: Path, what: str) -> Any:
    text = read_utf8(Path(path), what=what, error=PublishedFileError)
    return parse_json(text, str(path), what=what, error=PublishedFileError), text


def _line(text: str, key: str) -> int:
    at = text.find(json.dumps(key))
    return text.count("\n", 0, at) + 1 if at >= 0 else 1


def read_labels(path: Path) -> dict[str, str]:
    """pair id -> the chosen response (A or B)."""
    data, text = _load(path, "MMRB2 labels")
    if not isinstance(data, dict) or not isinstance(data.get("pairs"), list):
        raise PublishedFileError(f"{path}: line 1: expected an object with a 'pairs' list "
                                 "(MMRB2's edit_response_only.json)")
    out: dict[str, str] = {}
    for i, pair in enumerate(data["pairs"]):
        pair_id = (pair.get("id") or pair.get("pair_id")) if isinstance(pair, dict) else None
        if not isinstance(pair_id, str) or not pair_id:
            raise PublishedFileError(f"{path}: pairs[{i}]: no field 'id' (or 'pair_id')")
        if pair.get("chosen") not in FLIP:
            raise PublishedFileError(f"{path}: line {_line(text, pair_id)}, pair {pair_id!r}, field 'chosen': "
                                     f"{pair.get('chosen')!r} is not 'A' or 'B'")
        out[pair_id] = pair["chosen"]
    if not out:
        raise PublishedFileError(f"{path}: no pairs")
    return out


def read_answers(path: Path) -> dict[str, dict[str, str | None]]:
    """pair id -> {"forward": judgement or None, "reverse": judgement or None} (reverse not yet flipped)."""
    data, text = _load(path, "MMRB2 predictions")
    if not isinstance(data, dict):
        raise PublishedFileError(f"{path}: line 1: expected an object "
                                 '{pair id: {"forward": [...], "reverse": [...]}}')
    out: dict[str, dict[str, str | None]] = {}
    for pair_id, answer in data.items():
        if not isinstance(answer, dict):
            raise PublishedFileError(f"{path}: line {_line(text, pair_id)}, pair {pair_id!r}: expected an object "
                                     "with 'forward' and/or 'reverse'")
        sides: dict[str, str | None] = {}
        for side in ("forward", "reverse"):
            runs = answer.get(side)
            if runs is not None and not (isinstance(runs, list) and all(isinstance(r, dict) for r in runs)):
                raise PublishedFileError(f"{path}: line {_line(text, pair_id)}, pair {pair_id!r}, field {side!r}: "
                                         "expected a list of {\"judgement\": ...} objects")
            judgement = runs[0].get("judgement") if runs else None
            sides[side] = str(judgement) if judgement else None
        out[pair_id] = sides
    return out


def accuracy(labels: dict[str, str], answers: dict[str, dict[str, str | None]]) -> dict:
    trials = right = 0
    consistent = consistent_right = 0
    counts: Counter[str] = Counter()
    for pair_id, chosen in labels.items():
        answer = answers.get(pair_id)
        if answer is None:
            counts["missing pairs"] += 1
            continue
        verdicts = {"forward": answer["forward"],
                    "reverse": FLIP.get(answer["reverse"], answer["reverse"]) if answer["reverse"] else None}
        for side, verdict in verdicts.items():
            if verdict is None:
                counts[f"no {side} judgement"] += 1
                continue
            if verdict not in FLIP:
                counts["other judgements (wrong)"] += 1
            trials, right = trials + 1, right + (verdict == chosen)
        if verdicts["forward"] in FLIP and verdicts["forward"] == verdicts["reverse"]:
            consistent, consistent_right = consistent + 1, consistent_right + (verdicts["forward"] == chosen)
    return {"pairs": len(labels), "trials": trials, "accuracy": right / trials if trials else None,
            "consistent_pairs": consistent,
            "consistent_accuracy": consistent_right / consistent if consistent else None,
            "counts": dict(counts), "answers_for_unknown_pairs": len(set(answers) - set(labels))}
