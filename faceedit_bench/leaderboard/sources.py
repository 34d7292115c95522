"""Where a submission's run comes from: a run directory, or an MLflow run logged by the
``mlflow`` tracker (report.json, steps.csv and config.yaml are its artifacts)."""

from __future__ import annotations

import json
import os
import re
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from faceedit_bench.errors import FaceEditBenchError
from faceedit_bench.store import ImageStore

RUN_FILES = ("report.json", "steps.csv", "config.yaml")
#: The tag the mlflow tracker puts on every run (faceedit_bench_mlflow.tracker.RUN_KEY_TAG).
RUN_KEY_TAG = "faceedit.run_key"
MLFLOW_RUN_ID = re.compile(r"^[0-9a-f]{32}$")


@dataclass
class RunArtifacts:
    """What a submission is made from: the run's report, resolved config and per-step table."""

    report: dict[str, Any]
    config: dict[str, Any]
    steps_table: bytes
    source: str  # "run_dir" or "mlflow"
    label: str  # for messages: the run directory or "mlflow run <id>"
    mlflow_run_id: str | None = None
    plugins: dict[str, str] = field(default_factory=dict)  # distribution -> version, when recorded
    store: ImageStore | None = None  # where the run's images are, when reachable


def default_workspace() -> Path:
    """The workspace the Hydra app uses by default (``conf/config.yaml``)."""
    return Path(os.environ.get("FACEEDIT_BENCH_HOME") or ".faceedit_bench").expanduser().resolve()


def default_tracking_uri(workspace: Path | None = None) -> str:
    """As the mlflow tracker decides: ``$MLFLOW_TRACKING_URI``, else ``<workspace>/mlflow.db``."""
    env = os.environ.get("MLFLOW_TRACKING_URI")
    if env:
        return env
    return f"sqlite:///{((workspace or default_workspace()) / 'mlflow.db').resolve().as_posix()}"


def _store_at(workspace: Path | None) -> ImageStore | None:
    if workspace is None:
        return None
    root = Path(workspace).expanduser() / "store"
    return ImageStore(root) if root.is_dir() else None


def _load_config(path: Path) -> dict[str, Any]:
    from omegaconf import OmegaConf

    config = OmegaConf.to_container(OmegaConf.load(path), resolve=False)
    if not isinstance(config, dict):
        raise FaceEditBenchError(f"{path} is not a run config (expected a mapping).")
    return config


def _read_run_files(folder: Path, label: str) -> tuple[dict[str, Any], dict[str, Any], bytes]:
    missing = [name for name in RUN_FILES if not (folder / name).is_file()]
    if missing:
        raise FaceEditBenchError(
            f"{label} lacks {', '.join(missing)}: submissions are made from finished runs "
            "(run directories under <workspace>/runs/, or MLflow runs logged with tracking=mlflow)."
        )
    report = json.loads((folder / "report.json").read_text(encoding="utf-8"))
    return report, _load_config(folder / "config.yaml"), (folder / "steps.csv").read_bytes()


def from_run_dir(run_dir: Path, workspace: Path | None = None) -> RunArtifacts:
    """A finished run directory ``<workspace>/runs/<run>``; images come from ``<workspace>/store``."""
    run_dir = Path(run_dir).expanduser().resolve()
    report, config, steps = _read_run_files(run_dir, f"run directory {run_dir}")
    store = _store_at(workspace or run_dir.parents[1])
    return RunArtifacts(report, config, steps, "run_dir", str(run_dir), store=store)


# -- MLflow ---------------------------------------------------------------------------------


def mlflow_client(tracking_uri: str) -> Any:
    os.environ.setdefault("MLFLOW_DISABLE_TELEMETRY", "true")  # before the import: no outside calls
    os.environ.setdefault("DO_NOT_TRACK", "true")
    os.environ.setdefault("MLFLOW_ENABLE_ARTIFACTS_PROGRESS_BAR", "false")  # a few small files per run
    try:
        from mlflow import MlflowClient
    except ImportError:
        raise FaceEditBenchError(
            "reading MLflow runs needs mlflow: install the faceedit-bench-mlflow plugin (pip install -e plugins/mlflow)."
        ) from None
    if tracking_uri.startswith("sqlite:///"):
        db = Path(tracking_uri.removeprefix("sqlite:///"))
        if not db.is_file():  # MLflow would silently create an empty store
            raise FaceEditBenchError(f"no MLflow store at {db}. Pass --tracking-uri, or run an experiment first.")
    return MlflowClient(tracking_uri=tracking_uri)


def _plugins_tag(tags: dict[str, str]) -> dict[str, str]:
    """The experiment's ``plugins`` tag, ``dist==version,...``, as a mapping."""
    out: dict[str, str] = {}
    for item in tags.get("plugins", "").split(","):
        name, sep, version = item.partition("==")
        if sep and name.strip():
            out[name.strip()] = version.strip()
    return out


def _from_mlflow_run(client: Any, run: Any, workspace: Path | None) -> RunArtifacts:
    run_id = run.info.run_id
    label = f"MLflow run {run_id}"
    if run.info.status != "FINISHED":
        raise FaceEditBenchError(f"{label} is {run.info.status}, not FINISHED: submit finished runs only.")
    with tempfile.TemporaryDirectory(prefix="faceedit-submit-") as tmp:
        for name in RUN_FILES:
            try:
                client.download_artifacts(run_id, name, tmp)
            except Exception as exc:  # mlflow raises several types for a missing artifact
                raise FaceEditBenchError(f"{label} has no artifact {name} ({str(exc)[:200]}).") from None
        report, config, steps = _read_run_files(Path(tmp), label)
    if workspace is None:
        logged = run.data.params.get("run.workspace")
        workspace = Path(logged) if logged and Path(logged).is_dir() else default_workspace()
    return RunArtifacts(report, config, steps, "mlflow", label, mlflow_run_id=run_id,
                        plugins=_plugins_tag(dict(run.data.tags)), store=_store_at(workspace))


def from_mlflow(run_id: str, tracking_uri: str | None = None, workspace: Path | None = None) -> RunArtifacts:
    """The MLflow run ``run_id``; images come from the workspace logged with it (or ``workspace``)."""
    client = mlflow_client(tracking_uri or default_tracking_uri(workspace))
    try:
        run = client.get_run(run_id)
    except Exception as exc:
        raise FaceEditBenchError(f"MLflow run {run_id!r} not found in {client.tracking_uri} ({str(exc)[:200]}).") from None
    return _from_mlflow_run(client, run, workspace)


def finished_mlflow_runs(tracking_uri: str, experiments: list[str] | None = None,
                         unusable: list[tuple[str, str]] | None = None) -> Iterator[RunArtifacts]:
    """Every FINISHED faceedit_bench run (tagged with its run key) of the given experiments
    (default: all experiments whose name starts with ``faceedit/``), oldest first. Runs whose
    artifacts cannot be read are skipped and listed in ``unusable`` as (label, reason)."""
    client = mlflow_client(tracking_uri)
    if experiments:
        found = [client.get_experiment_by_name(name) for name in experiments]
        missing = [n for n, e in zip(experiments, found) if e is None]
        if missing:
            raise FaceEditBenchError(f"no MLflow experiment named {', '.join(missing)} in {tracking_uri}.")
    else:
        found = [e for e in client.search_experiments() if e.name.startswith("faceedit/")]
    ids = sorted(e.experiment_id for e in found if e is not None)
    if not ids:
        return
    runs = client.search_runs(ids, filter_string="attributes.status = 'FINISHED'",
                              order_by=["attributes.start_time ASC"], max_results=50_000)
    for run in runs:
        if RUN_KEY_TAG not in run.data.tags:
            continue
        try:
            artifacts = _from_mlflow_run(client, run, None)
        except (FaceEditBenchError, ValueError, OSError) as exc:
            if unusable is not None:
                unusable.append((f"MLflow run {run.info.run_id}", str(exc)))
            continue
        yield artifacts


def load_run(run: str, *, tracking_uri: str | None = None, workspace: Path | None = None) -> RunArtifacts:
    """``run`` is a run directory if one exists at that path, else an MLflow run id."""
    path = Path(run).expanduser()
    if path.is_dir():
        return from_run_dir(path, workspace)
    if MLFLOW_RUN_ID.match(run):
        return from_mlflow(run, tracking_uri, workspace)
    from faceedit_bench.storage.run_dirs import did_you_mean

    raise FaceEditBenchError(
        f"{run!r} is neither a run directory nor an MLflow run id (32 hex digits). "
        "Run directories are <workspace>/runs/<run>; MLflow run ids are shown by the MLflow UI." + did_you_mean(run)
    )
