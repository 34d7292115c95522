"""faceedit-bench-mlflow: the MLflow experiment tracker, a plugin like any other.

Loading this module is cheap: ``mlflow`` is imported only when a run is tracked.
Select it with ``tracking=mlflow``; the parameters are in ``conf/tracking/mlflow.yaml``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from faceedit_bench import hookimpl

if TYPE_CHECKING:
    from faceedit_bench.plugin.registry import Register

__all__ = ["faceedit_config_searchpath", "faceedit_register_trackers"]


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
