"""Helpers for the leaderboard tests: run directories written directly (no experiment), so the
checks on submissions, pages and hostile input take milliseconds. Their numbers are made up
and consistent; only tests/test_leaderboard_e2e.py verifies numbers by re-scoring real runs.
"""

from __future__ import annotations

import csv
import hashlib
import io
import json
from pathlib import Path
from typing import Any

import yaml

from faceedit_bench.analysis.statistics import summarize
from faceedit_bench.storage.images import encode_png
from faceedit_bench.storage.store import ImageStore
from faceedit_bench.testing import gradient_image

STEP_COLUMNS = ["face_id", "identity", "session_id", "k", "instruction", "category", "sub_axis", "axis", "outcome",
                "reason", "resumed", "image_hash", "score_outcome", "faces_detected", "fss", "embedder",
                "session_excluded", "gender", "skin_tone", "age_group"]
TESTSET = {"name": "pose", "version": "1.0.0", "content_hash": "f" * 64, "taxonomy_version": "1.0.0",
           "reconstruction": True, "sessions": 1}


def _metric(values: list[float], hib: bool, unit: str = "%") -> dict[str, Any]:
    return {"higher_is_better": hib, "unit": unit, "description": "made-up test metric", **summarize(values),
            "undefined_sessions": 0}


def write_fake_run(workspace: Path, *, editor: str = "identity", editor_version: str = "1",
                   values: tuple[float, ...] = (0.0, 0.0, 0.0, 0.0), metric: str = "drop_fss", hib: bool = False,
                   embedder_version: str = "1", refused: int = 0, disparity: bool = True, schema_version: str = "1.1",
                   notes: str = "", testset: str = "pose", attribute_changes: dict[str, Any] | None = None,
                   sessions_table: bool = False) -> Path:
    """A finished-looking run directory ``<workspace>/runs/<name>`` whose images are in
    ``<workspace>/store``: one face per value, one session each, 4 steps; the first ``refused``
    faces had step 1 refused (their session is excluded). ``attribute_changes`` (the run report's overedit
    counts per attribute) makes it a judged run; ``sessions_table`` writes its sessions.csv."""
    store = ImageStore(workspace / "store")
    seed = int(hashlib.sha256(f"{editor}{values}".encode()).hexdigest()[:6], 16)
    rows, included = [], []
    for i, value in enumerate(values):
        face, gender = f"synthetic/{i}", ("male" if i % 2 == 0 else "female")
        base = store.put(gradient_image(i))
        common = {"face_id": face, "identity": f"id{i}", "session_id": "pose-01", "gender": gender}
        rows.append({**common, "k": 0, "outcome": "ok", "image_hash": base, "score_outcome": "ok"})
        for k in range(1, 5):
            if i < refused:
                outcome = "refused" if k == 1 else "skipped"
                rows.append({**common, "k": k, "outcome": outcome, "reason": "blocked by policy" if k == 1 else "",
                             "image_hash": "", "session_excluded": "step_refused"})
            else:
                digest = store.put(gradient_image(seed + 10 * i + k))
                rows.append({**common, "k": k, "outcome": "ok", "image_hash": digest, "score_outcome": "ok",
                             "instruction": "turn the head"})
        if i >= refused:
            included.append((gender, value))
    key = hashlib.sha256(f"{editor}{editor_version}{values}{embedder_version}{refused}{testset}".encode()).hexdigest()
    vals = [v for _, v in included]
    by_gender = {g: [v for gg, v in included if gg == g] for g in ("female", "male")}
    report: dict[str, Any] = {
        "schema": "faceedit_bench/run_report", "schema_version": schema_version, "faceedit_bench_version": "0.1.0",
        "run": {"key": key, "name": f"{editor}@pose/synthetic/pixel", "experiment": "faceedit/pose",
                "created_at": "2026-01-01T00:00:00Z", "wall_time_s": 1.0, "computed": {}, "complete": True},
        "components": {
            "editor": {"name": editor, "provider": "fake", "provider_version": "0",
                       "description": {"name": editor, "version": editor_version, "root": "/home/someone/edits"}},
            "embedder": {"name": "pixel", "provider": "fake", "provider_version": "0",
                         "description": {"name": "pixel", "version": embedder_version}},
            "dataset": {"name": "synthetic", "provider": "fake", "provider_version": "0",
                        "description": {"name": "synthetic", "n_faces": len(values)}},
            "testset": {"name": "pose", "provider": "builtin", "provider_version": "0.1.0",
                        "description": {"name": "pose"}},
            "tracking": {"name": "none", "provider": "builtin", "provider_version": "0.1.0", "description": {}},
        },
        "testset": {**TESTSET, "name": testset,
                    "content_hash": TESTSET["content_hash"] if testset == "pose" else hashlib.sha256(testset.encode()).hexdigest()},
        "scales": {"fss": "cosine of centred 8x8 thumbnails (test only)", "embedder_version": embedder_version},
        "counts": {
            "faces": {"seen": len(values), "excluded": {}},
            "sessions": {"planned": len(values), "included": len(vals),
                         "excluded": {"step_refused": refused} if refused else {}},
            "steps": {"ok": 4 * len(vals), **({"refused": refused, "skipped": 3 * refused} if refused else {})},
            "edited_images_without_face": 0,
        },
        "metrics": {metric: _metric(vals, hib)},
        "trajectory": {"fss": [{"k": k, **summarize([1.0 - 0.01 * k] * len(vals))} for k in range(5)]},
        "groups": {"gender": {g: {"sessions_included": len(v), "sessions_excluded": {},
                                  "metrics": {metric: summarize(v)}} for g, v in by_gender.items()}},
        "skipped_metrics": {"sc": "needs a judge"},
        "notes": ["made-up numbers for tests"],
    }
    if attribute_changes is not None:
        report["components"]["judge"] = {"name": "judge", "provider": "fake", "provider_version": "0",
                                          "description": {"name": "judge", "version": "1"}}
        report["overediting"] = {"categories": [], "matrix": [], "edits": [], "patterns": [],
                                 "attribute_changes": attribute_changes}
    if disparity:
        report["disparity"] = [{
            "metric": metric, "contrast": "gender", "groups": {g: summarize(v) for g, v in by_gender.items()},
            "wd": abs(sum(by_gender["male"] or [0]) - sum(by_gender["female"] or [0])), "p_value": 0.01,
            "bias": editor.startswith("biased"), "worst_group": "male", "best_group": "female", "threshold": 3.0,
            "alpha": 0.05, "reason": None, "p_clustered": 0.01, "p_holm": 0.01, "q_value": 0.01,
            "bias_status": "yes" if editor.startswith("biased") else "no", "not_tested_reason": None,
            "n_identities": {g: len(v) for g, v in by_gender.items()},
            "paper_rule": {"rule": "paper (a)", "bias": editor.startswith("biased")},
        }]
    run_dir = workspace / "runs" / f"{editor}-{key[:12]}"
    run_dir.mkdir(parents=True)
    (run_dir / "report.json").write_text(json.dumps(report, indent=2))
    buf = io.StringIO()
    writer = csv.DictWriter(buf, fieldnames=STEP_COLUMNS, restval="")
    writer.writeheader()
    writer.writerows(rows)
    (run_dir / "steps.csv").write_text(buf.getvalue())
    if sessions_table:
        lines = ["face_id,identity,session_id,condition,excluded,gender," + metric]
        lines += [f"synthetic/{i},id{i},pose-01,baseline,{'step_refused' if i < refused else ''},"
                  f"{'male' if i % 2 == 0 else 'female'},{'' if i < refused else value}"
                  for i, value in enumerate(values)]
        (run_dir / "sessions.csv").write_text("\n".join(lines) + "\n")
    config = {"editor": {"name": editor, "params": {}}, "testset": {"name": testset, "params": {}},
              "dataset": {"name": "synthetic", "params": {"root": str(workspace / "faces"), "n": len(values)}},
              "embedder": {"name": "pixel", "params": {}}, "judge": {"name": "none", "params": {}},
              "tracking": {"name": "none", "params": {}},
              "run": {"workspace": str(workspace), "max_faces": None, "max_sessions": None, "seed": 0,
                      "confidence": 0.95, "workers": 1}}
    (run_dir / "config.yaml").write_text(yaml.safe_dump(config))
    return run_dir


def noisy_png(seed: int) -> bytes:
    import numpy as np

    return encode_png(np.random.default_rng(seed).integers(0, 255, (64, 64, 3), dtype=np.uint8))


def rewrite_record(submission_dir: Path, change: Any) -> dict[str, Any]:
    """Apply ``change(record)`` to submission.json (as a tamperer would) and return the record."""
    path = submission_dir / "submission.json"
    record = json.loads(path.read_text())
    change(record)
    path.write_text(json.dumps(record, indent=2))
    return record
