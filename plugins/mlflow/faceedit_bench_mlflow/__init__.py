"""faceedit-bench-mlflow: the MLflow experiment tracker, a plugin like any other.

Loading this module is cheap: ``mlflow`` is imported only when a run is tracked.
Select it with ``tracking=mlflow``; the parameters are in ``conf/tracking/mlflow.yaml``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from faceedit_bench.api import hookimpl

if TYPE_CHECKING:
    from faceedit_bench.api import Register, TrackedRun

__all__ = ["faceedit_config_searchpath", "faceedit_log_run_artifacts", "faceedit_log_run_metrics",
           "faceedit_register_trackers", "faceedit_tracked_runs"]


@hookimpl
def faceedit_register_trackers(register: Register) -> None:
    register(
        "mlflow",
        "faceedit_bench_mlflow.tracker:MlflowTracker",
        description="MLflow: one run per experiment run key (sqlite under the workspace, or a server)",
    )


@hookimpl
def faceedit_config_searchpath() -> list[str]:
    return ["pkg://faceedit_bench_mlflow.conf"]


@hookimpl
def faceedit_tracked_runs(tracking_uri: str, run_id: str | None, experiments: list[str] | None,
                          files: list[str]) -> list[TrackedRun] | None:
    from faceedit_bench_mlflow import runs

    if not runs.is_mlflow_uri(tracking_uri):
        return None
    return runs.tracked_runs(tracking_uri, run_id, experiments, files)


@hookimpl
def faceedit_log_run_metrics(tracking_uri: str, run_key: str, metrics: dict[str, float]) -> str | None:
    from faceedit_bench_mlflow import runs

    if not runs.is_mlflow_uri(tracking_uri):
        return None
    return runs.log_run_metrics(tracking_uri, run_key, metrics)


@hookimpl
def faceedit_log_run_artifacts(tracking_uri: str, run_key: str, files: dict[str, str]) -> str | None:
    from faceedit_bench_mlflow import runs

    if not runs.is_mlflow_uri(tracking_uri):
        return None
    return runs.log_run_artifacts(tracking_uri, run_key, files)
