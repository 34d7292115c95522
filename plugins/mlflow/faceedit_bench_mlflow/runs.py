"""Reading the runs this plugin's tracker logged, for submissions and the leaderboard
(the ``faceedit_tracked_runs`` hook)."""

from __future__ import annotations

import os
import tempfile
import time
from pathlib import Path
from typing import Any

from faceedit_bench.api import FaceEditBenchError, TrackedRun, file_lock

#: Tracking URIs MLflow reads (a server, or a local sqlite/file store).
SCHEMES = ("sqlite:", "http:", "https:", "file:", "databricks")


def is_mlflow_uri(uri: str) -> bool:
    return uri.startswith(SCHEMES) or "://" not in uri


def mlflow_client(tracking_uri: str) -> Any:
    os.environ.setdefault("MLFLOW_DISABLE_TELEMETRY", "true")  # before the import: no outside calls
    os.environ.setdefault("DO_NOT_TRACK", "true")
    os.environ.setdefault("MLFLOW_ENABLE_ARTIFACTS_PROGRESS_BAR", "false")  # a few small files per run
    from mlflow import MlflowClient

    from faceedit_bench_mlflow.store import prepare_store, quiet_store_logs, sqlite_path, store_lock

    db = sqlite_path(tracking_uri)
    if db is not None:
        if not db.is_file():  # MLflow would silently create an empty store
            raise FaceEditBenchError(f"no MLflow store at {db}. Pass --tracking-uri, or run an experiment first.")
        # One left half made by an interrupted run holds nothing: build it, rather than let MLflow
        # migrate it further in place, unlocked.
        with file_lock(store_lock(tracking_uri, db.parent), what=f"opening the MLflow store {db}"):
            prepare_store(tracking_uri)
    quiet_store_logs()
    return MlflowClient(tracking_uri=tracking_uri)


def _tracked(client: Any, run: Any, files: list[str]) -> TrackedRun:
    run_id = run.info.run_id
    found: dict[str, bytes] = {}
    problem = None
    if run.info.status != "FINISHED":
        problem = f"MLflow run {run_id} is {run.info.status}, not FINISHED: submit finished runs only."
    else:
        with tempfile.TemporaryDirectory(prefix="faceedit-tracked-") as tmp:
            for name in files:
                try:
                    found[name] = Path(client.download_artifacts(run_id, name, tmp)).read_bytes()
                except Exception as exc:  # mlflow raises several types for a missing artifact
                    problem = f"MLflow run {run_id} has no artifact {name} ({str(exc)[:200]})."
                    break
    return TrackedRun(run_id, run.info.status, dict(run.data.tags), dict(run.data.params), found, problem)


def tracked_runs(tracking_uri: str, run_id: str | None, experiments: list[str] | None,
                 files: list[str]) -> list[TrackedRun]:
    from faceedit_bench_mlflow.tracker import RUN_KEY_TAG

    client = mlflow_client(tracking_uri)
    if run_id is not None:
        try:
            run = client.get_run(run_id)
        except Exception as exc:
            raise FaceEditBenchError(
                f"MLflow run {run_id!r} not found in {client.tracking_uri} ({str(exc)[:200]}).") from None
        return [_tracked(client, run, files)]
    if experiments:
        found = [client.get_experiment_by_name(name) for name in experiments]
        missing = [n for n, e in zip(experiments, found) if e is None]
        if missing:
            raise FaceEditBenchError(f"no MLflow experiment named {', '.join(missing)} in {tracking_uri}.")
    else:
        found = [e for e in client.search_experiments() if e.name.startswith("faceedit/")]
    ids = sorted(e.experiment_id for e in found if e is not None)
    if not ids:
        return []
    runs = client.search_runs(ids, filter_string="attributes.status = 'FINISHED'",
                              order_by=["attributes.start_time ASC"], max_results=50_000)
    return [_tracked(client, run, files) for run in runs if RUN_KEY_TAG in run.data.tags]


def _run_of_key(client, tracking_uri: str, run_key: str) -> str:
    """The id of the oldest run tagged with ``run_key``."""
    from faceedit_bench_mlflow import _limits as lim
    from faceedit_bench_mlflow.tracker import RUN_KEY_TAG

    ids = [e.experiment_id for e in client.search_experiments()]
    quote = "'" if "'" not in run_key else '"'
    found = client.search_runs(ids, filter_string=f"tags.`{RUN_KEY_TAG}` = {quote}{run_key}{quote}",
                               order_by=["attributes.start_time ASC"], max_results=10) if ids else []
    if not found:
        raise FaceEditBenchError(f"no MLflow run with run key {run_key} in {lim.redact_uri(tracking_uri)}; was the "
                                 "run tracked there (tracking=mlflow)? Pass --tracking-uri to name its store.")
    return str(found[0].info.run_id)


def log_run_metrics(tracking_uri: str, run_key: str, metrics: dict[str, float]) -> str:
    """Log ``metrics`` (one timestamp, batched) to the oldest run tagged with ``run_key``; its id."""
    from mlflow.entities import Metric

    from faceedit_bench_mlflow import _limits as lim

    client = mlflow_client(tracking_uri)
    run_id = _run_of_key(client, tracking_uri, run_key)
    keys = lim.unique_keys(metrics, lim.metric_key)
    stamp = int(time.time() * 1000)
    for chunk in lim.batches([(keys[k], float(v)) for k, v in metrics.items()], 1000):
        client.log_batch(run_id, metrics=[Metric(key, value, stamp, 0) for key, value in chunk])
    return run_id


def log_run_artifacts(tracking_uri: str, run_key: str, files: dict[str, str]) -> str:
    """Log ``files`` (path -> artifact folder, "" for the top) to the oldest run tagged with ``run_key``; its id."""
    client = mlflow_client(tracking_uri)
    run_id = _run_of_key(client, tracking_uri, run_key)
    for path, folder in files.items():
        if not Path(path).is_file():
            raise FaceEditBenchError(f"{path}: no such file to add to MLflow run {run_id}")
        client.log_artifact(run_id, str(path), artifact_path=folder or None)
    return run_id
