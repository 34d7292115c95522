"""Battles from stored runs: two editors' outputs for the same face, session and step, nothing re-edited.

Runs are read from their folders (``<workspace>/runs/<run>``: report.json, steps.csv, sessions.csv). They must
share the test set (its content hash), the dataset (its name and description, how many faces were taken
aside: :func:`dataset_hash`) and the workspace (one image store), and hold at least one face in common; for
every face both runs hold, the base images must have the same content hash, and every (session, step) the
same instruction. Anything else is refused before any judge call, naming the runs and what differs.

For each pair of editors and each (face, session, step ≥ 1) both ran:
* both steps ``ok``: a battle to judge (its two output hashes);
* one side not ``ok`` (refused, failed, no image …): a *one-sided* battle, recorded with the outcomes; under
  the ``loss`` policy the side without an output loses, under ``exclude`` it is left out (both are reported);
* neither ``ok``: recorded and counted, never rated.
Only the reference prompt condition is read (``baseline``, or the unnamed one of runs without conditions).
"""

from __future__ import annotations

import csv
from collections.abc import Sequence
from dataclasses import dataclass, field
from itertools import combinations
from pathlib import Path

from faceedit_bench.api import FaceEditBenchError, fingerprint
from faceedit_bench.api.sections import FinishedRun

REFERENCE_CONDITIONS = ("", "baseline")
#: What a dataset's description says about how many of its faces a run took, not which dataset it is.
SIZE_KEYS = ("limit", "n_faces", "n_identities", "n_self_reference", "reference_mode")


class ArenaError(FaceEditBenchError):
    """Runs that cannot meet in one arena (exit code 2, with what to change)."""


@dataclass
class StoredRun:
    path: Path
    editor: str
    run_key: str
    testset_hash: str
    dataset_hash: str = ""
    outputs: dict[tuple[str, str, int], tuple[str, str]] = field(default_factory=dict)  # -> (outcome, hash)
    base: dict[str, str] = field(default_factory=dict)  # face -> base image hash
    identity: dict[str, str] = field(default_factory=dict)  # face -> identity
    instructions: dict[tuple[str, int], str] = field(default_factory=dict)
    labels: dict[str, dict[str, str]] = field(default_factory=dict)  # face -> demographic labels


def dataset_hash(component: dict | None) -> str:
    """The sha256 of a run's dataset: its registered name and description, without :data:`SIZE_KEYS` (two runs
    of one dataset that took different numbers of faces meet on the faces both hold); "" when not recorded."""
    if not component:
        return ""
    description = {k: v for k, v in (component.get("description") or {}).items() if k not in SIZE_KEYS}
    return fingerprint({"name": component.get("name"), "description": description})


def _rows(path: Path) -> list[dict[str, str]]:
    try:
        with path.open(newline="", encoding="utf-8") as f:
            return list(csv.DictReader(f))
    except OSError as exc:
        raise ArenaError(f"{path}: cannot be read ({exc}); is this a finished run's folder?") from exc


def read_run(path: Path) -> StoredRun:
    finished = FinishedRun.load(Path(path))
    report, folder = finished.report, finished.folder
    components = report.get("components", {})
    editor = (components.get("editor") or {}).get("name") or "?"
    run = StoredRun(folder, str(editor), str(report.get("run", {}).get("key", folder.name)),
                    str(((components.get("testset") or {}).get("description") or {}).get("content_hash") or ""),
                    dataset_hash(components.get("dataset")))
    for row in _rows(finished.steps_csv):
        if row.get("condition", "") not in REFERENCE_CONDITIONS:
            continue
        face, session, k = row["face_id"], row["session_id"], int(row["k"])
        run.identity[face] = row.get("identity") or face
        if k == 0:
            run.base[face] = row["image_hash"]
            continue
        run.outputs[(face, session, k)] = (row["outcome"], row.get("image_hash", ""))
        run.instructions[(session, k)] = row["instruction"]
    for row in _rows(finished.sessions_csv):
        if row.get("condition", "") in REFERENCE_CONDITIONS:
            run.labels[row["face_id"]] = {key: row[key] for key in FinishedRun.DEMOGRAPHIC_KEYS if row.get(key)}
    return run


@dataclass(frozen=True)
class Input:
    """What two editors were given: face, session, step; the judge sees the base image and the
    instructions up to this step."""

    face: str
    session: str
    k: int

    @property
    def key(self) -> str:
        return f"{self.face}/{self.session}/{self.k}"


@dataclass
class Pool:
    editors: tuple[str, ...]
    runs: tuple[StoredRun, ...]
    identities: tuple[str, ...]
    to_judge: dict[tuple[int, int], list[Input]]
    one_sided: list[dict]  # pair, input, outcomes, the side that has an output
    both_failed: list[dict]

    def identity_index(self, face: str) -> int:
        return self.identities.index(self.runs[0].identity.get(face, face))

    def instruction(self, inp: Input) -> str:
        steps = [self.runs[0].instructions[(inp.session, j)] for j in range(1, inp.k + 1)
                 if (inp.session, j) in self.runs[0].instructions]
        return steps[0] if len(steps) == 1 else "; then ".join(steps) + " (applied in turn, one per step)"

    def images(self, inp: Input, x: int, y: int) -> tuple[str, str, str]:
        key = (inp.face, inp.session, inp.k)
        return self.runs[x].base[inp.face], self.runs[x].outputs[key][1], self.runs[y].outputs[key][1]

    def labels(self, face: str) -> dict[str, str]:
        return self.runs[0].labels.get(face, {})


def _check(runs: Sequence[StoredRun]) -> None:
    if len(runs) < 2:
        raise ArenaError("an arena needs at least two runs (one per editor); pass their folders")
    editors = [r.editor for r in runs]
    dup = sorted({e for e in editors if editors.count(e) > 1})
    if dup:
        raise ArenaError(f"editor(s) {dup} appear in more than one run; pass one run per editor")
    workspaces = {r.path.resolve().parents[1] for r in runs}
    if len(workspaces) > 1:
        raise ArenaError(f"the runs live in different workspaces ({sorted(map(str, workspaces))}); battles read "
                         "the images from one workspace's store: run the editors into one workspace")
    hashes = {r.testset_hash for r in runs}
    if len(hashes) > 1:
        listing = ", ".join(f"{r.path.name}: {r.testset_hash[:12] or 'none'}" for r in runs)
        raise ArenaError(f"the runs used different test sets (content hashes {listing}); an arena compares "
                         "editors on the same test set")
    datasets = {r.dataset_hash for r in runs}
    if len(datasets) > 1:
        listing = ", ".join(f"{r.path.name}: {r.dataset_hash[:12] or 'none recorded'}" for r in runs)
        raise ArenaError(f"the runs used different datasets (dataset hashes {listing}; see components.dataset in "
                         "each report.json); an arena compares editors on the same faces: run every editor on one "
                         "dataset")
    first = runs[0]
    for other in runs[1:]:
        if not first.base.keys() & other.base.keys():
            raise ArenaError(f"{first.path.name} and {other.path.name} have no face in common, so they have "
                             "nothing to compare; run both editors on the same faces")
        for face in first.base.keys() & other.base.keys():
            if first.base[face] != other.base[face]:
                raise ArenaError(f"face {face!r} has different base images in {first.path.name} and "
                                 f"{other.path.name}; the runs used different datasets")
        for step in first.instructions.keys() & other.instructions.keys():
            if first.instructions[step] != other.instructions[step]:
                raise ArenaError(f"session {step[0]!r} step {step[1]} has different instructions in "
                                 f"{first.path.name} and {other.path.name}")


def build_pool(paths: Sequence[Path]) -> Pool:
    runs = tuple(read_run(Path(p)) for p in paths)
    _check(runs)
    identities = tuple(sorted({i for r in runs for i in r.identity.values()}))
    to_judge: dict[tuple[int, int], list[Input]] = {}
    one_sided, both_failed = [], []
    for x, y in combinations(range(len(runs)), 2):
        shared = sorted(runs[x].outputs.keys() & runs[y].outputs.keys())
        to_judge[(x, y)] = []
        for face, session, k in shared:
            (ox, _), (oy, _) = runs[x].outputs[(face, session, k)], runs[y].outputs[(face, session, k)]
            inp = Input(face, session, k)
            if ox == "ok" and oy == "ok":
                to_judge[(x, y)].append(inp)
                continue
            record = {"pair": [runs[x].editor, runs[y].editor], "input": inp.key, "outcomes": [ox, oy]}
            if ox == "ok" or oy == "ok":
                one_sided.append({**record, "winner_by_loss_policy": runs[x].editor if ox == "ok" else runs[y].editor,
                                  "x": x, "y": y, "x_score": 1.0 if ox == "ok" else 0.0, "face": face, "k": k})
            else:
                both_failed.append(record)
    return Pool(tuple(r.editor for r in runs), runs, identities, to_judge, one_sided, both_failed)
