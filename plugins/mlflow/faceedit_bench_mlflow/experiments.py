"""The MLflow experiment a run is logged to, set up to open on its runs table, and the link to a run.

MLflow 3 shows an experiment in one of two views: "GenAI apps & agents" (traces, sessions, judges) or
"Machine learning" (the runs table). A faceedit_bench experiment is the second kind, and is tagged so
(``mlflow.experimentKind``: what MLflow's UI writes when a user picks the kind, and what UIs that
honour the tag read). MLflow 3.17's UI, however, opens every experiment in the view of its own
GenAI / Model-training switch, which starts on GenAI, whatever the tag says; only a link carrying
``workflowType=machine_learning`` opens the runs table. So every link printed here carries it.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import TYPE_CHECKING

from faceedit_bench.api import FaceEditBenchError
from faceedit_bench_mlflow import _limits as lim

if TYPE_CHECKING:
    from mlflow import MlflowClient

EXPERIMENT_KIND_TAG = "mlflow.experimentKind"
RUNS_KIND = "custom_model_development"  # the UI's "Machine learning" kind: runs, metrics, artifacts
RUNS_VIEW = "workflowType=machine_learning"  # the URL parameter that opens MLflow 3.17's runs table
LOCAL_SERVER = "http://127.0.0.1:5000"  # `mlflow server`'s default address
REMOTE = re.compile(r"^(https?|databricks[\w-]*|uc):", re.IGNORECASE)


class MlflowTrackerError(FaceEditBenchError):
    """The MLflow store cannot take this run as configured."""


def experiment_id(client: MlflowClient, name: str, artifact_location: Callable[[], str | None]) -> str:
    """The id of the active experiment ``name``, created (with ``artifact_location()``) if missing,
    and tagged as a runs experiment unless it already says which kind it is."""
    from mlflow.exceptions import MlflowException

    experiment = client.get_experiment_by_name(name)
    if experiment is None:
        try:
            return str(client.create_experiment(name, artifact_location=artifact_location(),
                                                tags={EXPERIMENT_KIND_TAG: RUNS_KIND}))
        except MlflowException:  # another process created it first
            experiment = client.get_experiment_by_name(name)
            if experiment is None:
                raise
    if experiment.lifecycle_stage != "active":
        raise MlflowTrackerError(
            f"MLflow experiment {name!r} (id {experiment.experiment_id}) is deleted. Restore it with "
            f"`mlflow experiments restore --experiment-id {experiment.experiment_id}`, remove it for "
            "good with `mlflow gc`, or set tracking.params.experiment_name to another name."
        )
    if EXPERIMENT_KIND_TAG not in experiment.tags:  # made by an earlier version; a user's choice stays
        client.set_experiment_tag(experiment.experiment_id, EXPERIMENT_KIND_TAG, RUNS_KIND)
    return str(experiment.experiment_id)


def experiment_link(server: str, experiment: str) -> str:
    """The address of an experiment's runs table in the MLflow UI at ``server``."""
    return f"{server.rstrip('/')}/#/experiments/{experiment}/runs?{RUNS_VIEW}"


def run_link(server: str, experiment: str, run_id: str) -> str:
    """The address of a run's page in the MLflow UI at ``server``, in the runs view."""
    return f"{server.rstrip('/')}/#/experiments/{experiment}/runs/{run_id}?{RUNS_VIEW}"


def where(uri: str, experiment: str) -> tuple[str, str]:
    """Where a run's experiment is: ("runs table", its link) on a server, else ("tracking URI", the URI)."""
    if uri.lower().startswith(("http:", "https:")):
        return "runs table", experiment_link(lim.redact_uri(uri), experiment)
    return "tracking URI", lim.redact_uri(uri)


def browse_hint(uri: str, experiment: str, run_id: str) -> tuple[str, list[str]]:
    """How to open a run: what to do, and what to copy for it, a line each (its link on a server; for a local
    store, the command that serves it and then the link)."""
    if uri.lower().startswith(("http:", "https:")):
        return "open", [run_link(lim.redact_uri(uri), experiment, run_id)]
    if REMOTE.match(uri):
        return f"open it at {lim.redact_uri(uri)} (experiment {experiment}, run id {run_id})", []
    return "to browse: serve the store, open the link", [
        "MLFLOW_SERVER_ENABLE_JOB_EXECUTION=false mlflow server --workers 1 \\",
        f"  --backend-store-uri {uri}", run_link(LOCAL_SERVER, experiment, run_id)]
