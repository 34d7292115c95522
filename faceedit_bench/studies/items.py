"""A study's items, from finished runs' step tables (``steps.csv``): each edited image a run kept (outcome
``ok``) with its source image, instructions, the face's demographic labels and the judge's values.

- a rating item is one output, shown beside its source image;
- a pairwise item is two editors' outputs for the same face, session, condition and step, beside the source.

Refused or failed steps have no image to show: they are counted, not asked.
"""

from __future__ import annotations

import csv
import hashlib
import io
import itertools
import json
import random
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from faceedit_bench.errors import FaceEditBenchError
from faceedit_bench.report.compared_runs import load_run
from faceedit_bench.report.tables import DEMOGRAPHIC_KEYS, STEPS_CSV


@dataclass(frozen=True)
class Output:
    """One kept edit of one run."""

    editor: str
    face_id: str
    identity: str
    session_id: str
    condition: str
    k: int
    steps: int  # the session's number of steps
    instructions: tuple[str, ...]  # P_1 .. P_k
    prompt_ids: tuple[str, ...]
    source_hash: str
    output_hash: str
    groups: dict[str, str] = field(default_factory=dict)
    judge: dict[str, dict[str, float]] = field(default_factory=dict)  # judge metric -> value -> number

    @property
    def where(self) -> tuple[str, str, str, int]:
        return (self.face_id, self.session_id, self.condition, self.k)

    def unit(self) -> dict[str, Any]:
        return {"face_id": self.face_id, "identity": self.identity, "session_id": self.session_id,
                "condition": self.condition, "k": self.k, "steps": self.steps,
                "instructions": list(self.instructions), "groups": self.groups}


@dataclass(frozen=True)
class RunOutputs:
    editor: str
    run_dir: Path
    outputs: tuple[Output, ...]
    not_shown: dict[str, int]  # outcome -> steps without an image to show


def _judge_values(cell: str) -> dict[str, dict[str, float]]:
    """The steps table's ``judge_values``: judge metric -> its values at the step (the numbers only)."""
    try:
        metrics = json.loads(cell) if cell else {}
    except json.JSONDecodeError:
        return {}
    if not isinstance(metrics, dict):
        return {}
    return {str(name): {str(k): float(v) for k, v in values.items()
                        if isinstance(v, (int, float)) and not isinstance(v, bool)}
            for name, values in metrics.items() if isinstance(values, dict)}


def read_outputs(run_path: Path) -> RunOutputs:
    report, run_dir = load_run(run_path)
    table = run_dir / STEPS_CSV
    if not table.is_file():
        raise FaceEditBenchError(f"{run_dir}: no {STEPS_CSV}; rerun the experiment to write its tables")
    rows = list(csv.DictReader(io.StringIO(table.read_text(encoding="utf-8"), newline="")))
    editor = str(((report.get("components") or {}).get("editor") or {}).get("name") or run_dir.name)
    sessions: dict[tuple[str, str, str], list[dict[str, str]]] = defaultdict(list)
    for row in rows:
        sessions[(row["face_id"], row["session_id"], row.get("condition") or "baseline")].append(row)
    outputs, not_shown = [], defaultdict(int)
    for (face_id, session_id, condition), steps in sessions.items():
        steps.sort(key=lambda r: int(r["k"]))
        source = next((r["image_hash"] for r in steps if r["k"] == "0"), "")
        edits = [r for r in steps if r["k"] != "0"]
        for row in edits:
            k = int(row["k"])
            if row["outcome"] != "ok" or not row.get("image_hash") or not source:
                not_shown[row["outcome"] or "no image"] += 1
                continue
            earlier = edits[:k]
            outputs.append(Output(
                editor=editor, face_id=face_id, identity=row.get("identity") or face_id, session_id=session_id,
                condition=condition, k=k, steps=len(edits), instructions=tuple(r["instruction"] for r in earlier),
                prompt_ids=tuple(r.get("prompt_id") or "" for r in earlier), source_hash=source,
                output_hash=row["image_hash"], groups={g: row[g] for g in DEMOGRAPHIC_KEYS if row.get(g)},
                judge=_judge_values(row.get("judge_values", ""))))
    return RunOutputs(editor, run_dir, tuple(outputs), dict(not_shown))


def read_runs(paths: Sequence[Path]) -> list[RunOutputs]:
    runs = [read_outputs(Path(p)) for p in paths]
    editors = [r.editor for r in runs]
    if len(set(editors)) < len(editors):  # the same editor twice: tell the runs apart by folder
        runs = [RunOutputs(r.run_dir.name, r.run_dir, tuple(replace(o, editor=r.run_dir.name) for o in r.outputs),
                           r.not_shown) for r in runs]
    return runs


def count(tally: dict[str, int], reason: str) -> None:
    tally[reason] = tally.get(reason, 0) + 1


def item_id(*parts: Any) -> str:
    return hashlib.sha256(json.dumps(parts, default=str).encode()).hexdigest()[:16]


def rating_item(output: Output, metric: str, questions: Sequence[dict[str, Any]]) -> dict[str, Any]:
    """One output; ``judge``: the judge's values of ``metric`` at this step, for judge-human agreement."""
    return {"item_id": item_id("rating", output.editor, *output.where), "editor": output.editor,
            **output.unit(), "images": {"source": output.source_hash, "output": output.output_hash},
            "judge": output.judge.get(metric, {}), "questions": list(questions)}


def pairwise_items(runs: Sequence[RunOutputs], question: dict[str, Any]) -> list[dict[str, Any]]:
    """Every pair of editors' outputs for the same face, session, condition and step."""
    by_where: dict[tuple[str, str, str, int], dict[str, Output]] = defaultdict(dict)
    for run in runs:
        for output in run.outputs:
            by_where[output.where][output.editor] = output
    items = []
    for where, outputs in by_where.items():
        for a, b in itertools.combinations(sorted(outputs), 2):
            first = outputs[a]
            items.append({"item_id": item_id("pairwise", a, b, *where), "editors": [a, b], **first.unit(),
                          "images": {"source": first.source_hash, "A": first.output_hash,
                                     "B": outputs[b].output_hash},
                          "judge": {}, "questions": [question]})
    return items


def stratum(item: dict[str, Any]) -> tuple[str, ...]:
    """What a balanced sample balances: the editor(s) and the face's first demographic label."""
    groups = item.get("groups") or {}
    label = next((f"{g}={groups[g]}" for g in DEMOGRAPHIC_KEYS if g in groups), "")
    return (*(item.get("editors") or [item.get("editor", "")]), label)


def balanced_sample(items: Sequence[dict[str, Any]], n: int | None, seed: int) -> list[dict[str, Any]]:
    """``n`` items taken in turn from each stratum (editors x first demographic label), each stratum shuffled:
    strata are as equal as the items allow. ``n=None``: every item, in that order."""
    rng = random.Random(seed)
    strata: dict[tuple[str, ...], list[dict[str, Any]]] = defaultdict(list)
    for item in sorted(items, key=lambda i: i["item_id"]):
        strata[stratum(item)].append(item)
    queues = [strata[key] for key in sorted(strata)]
    for queue in queues:
        rng.shuffle(queue)
    taken = [item for group in itertools.zip_longest(*queues) for item in group if item is not None]
    return taken if n is None else taken[:n]
