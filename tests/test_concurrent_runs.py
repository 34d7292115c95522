"""Runs share a workspace safely: two real processes running the same experiment at the same
moment, on a fresh workspace (MLflow's store is created by one of them) and on an existing one
(both rewrite the same run folder)."""

from __future__ import annotations

import csv
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
#: The default experiment (identity editor, sample faces, dlib, MLflow), kept small.
ARGS = ["testset=pose", "run.max_faces=2", "run.max_sessions=2", "run.workers=1", "run.progress=false"]


def start_two(tmp_path: Path) -> list[subprocess.CompletedProcess[str]]:
    env = {**os.environ, "FACEEDIT_BENCH_HOME": str(tmp_path / "ws"), "MLFLOW_DISABLE_TELEMETRY": "true",
           "DO_NOT_TRACK": "true", "PYTHONPATH": f"{ROOT}{os.pathsep}{os.environ.get('PYTHONPATH', '')}"}
    procs = [subprocess.Popen([sys.executable, "-m", "faceedit_bench", *ARGS], cwd=tmp_path, env=env, text=True,
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE) for _ in range(2)]
    done = []
    for proc in procs:
        out, err = proc.communicate(timeout=600)
        done.append(subprocess.CompletedProcess(proc.args, proc.returncode, out, err))
    return done


def check_workspace(tmp_path: Path) -> None:
    from mlflow import MlflowClient

    (run_dir,) = (tmp_path / "ws" / "runs").iterdir()  # the same experiment: one run folder
    with open(run_dir / "steps.csv", newline="", encoding="utf-8") as fh:
        steps = list(csv.DictReader(fh))
    with open(run_dir / "sessions.csv", newline="", encoding="utf-8") as fh:
        sessions = list(csv.DictReader(fh))
    assert len(sessions) == 2 * 2
    assert len(steps) == 2 * 2 * 5  # two faces, two sessions, k = 0..4
    assert len({(r["face_id"], r["session_id"], r["k"]) for r in steps}) == len(steps)
    assert {r["outcome"] for r in steps if r["k"] != "0"} == {"ok"}
    assert all(float(r["fss"]) > 0 for r in steps)
    assert not [p.name for p in run_dir.iterdir() if p.name.endswith(".tmp")]

    client = MlflowClient(tracking_uri=f"sqlite:///{tmp_path / 'ws' / 'mlflow.db'}")
    (experiment,) = [e for e in client.search_experiments() if e.name == "faceedit/pose"]
    (run,) = client.search_runs([experiment.experiment_id])  # one run key, one MLflow run
    assert run.info.status == "FINISHED"
    assert run.data.metrics["steps_ok"] == 2 * 2 * 4 and "drop_fss" in run.data.metrics


@pytest.mark.slow(seconds=17)
def test_two_processes_share_a_fresh_and_then_an_existing_workspace(tmp_path):
    for attempt in ("fresh", "existing"):
        results = start_two(tmp_path)
        for r in results:
            assert r.returncode == 0, f"{attempt} workspace:\n{r.stderr[-3000:]}"
        check_workspace(tmp_path)
