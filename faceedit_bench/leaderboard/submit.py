"""``faceedit-bench submit``: a finished run (directory or MLflow run) -> a submission bundle."""

from __future__ import annotations

import json
import shutil
import tempfile
from pathlib import Path
from typing import Any

from faceedit_bench.errors import FaceEditBenchError
from faceedit_bench.leaderboard.bundle import STEPS_FILE, SUBMISSION_FILE, bundle_images
from faceedit_bench.leaderboard.record import SESSIONS_FILE, build_record, default_submission_id
from faceedit_bench.leaderboard.schema import validate_submission
from faceedit_bench.leaderboard.tolerances import registered_metrics
from faceedit_bench.report.sources import load_run

DEFAULT_OUT = Path("leaderboard") / "submissions"


def submit(run: str, *, out: Path = DEFAULT_OUT, tracking_uri: str | None = None, workspace: Path | None = None,
           images: bool = True, submission_id: str | None = None, submitter: str | None = None,
           url: str | None = None, notes: str = "", force: bool = False, plugins: Any = None) -> Path:
    """Write ``<out>/<id>/`` (submission.json, steps.csv, sessions.csv when the run has it and, with
    ``images``, the step images in the replay layout) for ``run``: a run directory or an MLflow run id.
    Returns the directory."""
    artifacts = load_run(run, tracking_uri=tracking_uri, workspace=workspace)
    report = artifacts.report
    if not report.get("run", {}).get("complete", True):
        raise FaceEditBenchError(f"{artifacts.label} did not finish (stopped by its budget): rerun it to completion "
                                 "before submitting; partial numbers are not comparable.")
    sid = submission_id or default_submission_id(report)
    record = build_record(artifacts, submission_id=sid, registered=registered_metrics(plugins),
                          submitter=submitter, url=url, notes=notes)
    target = Path(out) / sid
    if target.exists() and not force:
        raise FaceEditBenchError(f"{target} already exists. Pass --id <new id>, or --force to replace it.")
    Path(out).mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=out, prefix=f".{sid}-") as tmp:
        staging = Path(tmp) / sid
        staging.mkdir()
        if images:
            bundle_images(record, artifacts.steps_table, artifacts.store, staging)
        validate_submission(record, what=f"the submission made from {artifacts.label}")
        (staging / STEPS_FILE).write_bytes(artifacts.steps_table)
        if "sessions_table" in record["files"]:
            (staging / SESSIONS_FILE).write_bytes(artifacts.tables[SESSIONS_FILE])
        (staging / SUBMISSION_FILE).write_text(json.dumps(record, indent=2, sort_keys=True, ensure_ascii=False) + "\n",
                                               encoding="utf-8")
        if target.exists():
            shutil.rmtree(target)
        staging.rename(target)
    return target
