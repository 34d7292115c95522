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
from faceedit_bench.storage.store import ImageStore

RUN_FILES = ("report.json", "steps.csv", "config.yaml")
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
    tables: dict[str, bytes] = field(default_factory=dict)  # further run files asked for (sessions.csv)


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
    sessions = run_dir / "sessions.csv"  # bundled with a submission when the run has it
    tables = {sessions.name: sessions.read_bytes()} if sessions.is_file() else {}
    return RunArtifacts(report, config, steps, "run_dir", str(run_dir), store=store, tables=tables)


# -- runs an experiment tracker recorded (the ``faceedit_tracked_runs`` hook) ------------------


def _tracked_runs(tracking_uri: str, run_id: str | None = None,
                  experiments: list[str] | None = None, files: list[str] | None = None) -> list[Any]:
    from faceedit_bench.plugin.manager import current_plugins

    runs = current_plugins().pm.hook.faceedit_tracked_runs(tracking_uri=tracking_uri, run_id=run_id,
                                                       experiments=experiments, files=files or list(RUN_FILES))
    if runs is None:
        raise FaceEditBenchError(
            f"no installed tracker plugin reads {tracking_uri}: install faceedit-bench-mlflow "
            "(pip install -e plugins/mlflow) or pass a run directory instead.")
    return runs


def _plugins_tag(tags: dict[str, str]) -> dict[str, str]:
    """The experiment's ``plugins`` tag, ``dist==version,...``, as a mapping."""
    out: dict[str, str] = {}
    for item in tags.get("plugins", "").split(","):
        name, sep, version = item.partition("==")
        if sep and name.strip():
            out[name.strip()] = version.strip()
    return out


def _from_tracked(run: Any, workspace: Path | None, also: tuple[str, ...] = ()) -> RunArtifacts:
    label = f"MLflow run {run.run_id}"
    if run.problem:
        raise FaceEditBenchError(run.problem)
    with tempfile.TemporaryDirectory(prefix="faceedit-submit-") as tmp:
        for name, data in run.files.items():
            (Path(tmp) / name).write_bytes(data)
        report, config, steps = _read_run_files(Path(tmp), label)
    if workspace is None:
        logged = run.params.get("run.workspace")
        workspace = Path(logged) if logged and Path(logged).is_dir() else default_workspace()
    return RunArtifacts(report, config, steps, "mlflow", label, mlflow_run_id=run.run_id,
                        plugins=_plugins_tag(run.tags), store=_store_at(workspace),
                        tables={name: run.files[name] for name in also})


def from_mlflow(run_id: str, tracking_uri: str | None = None, workspace: Path | None = None) -> RunArtifacts:
    """The MLflow run ``run_id``, with its sessions.csv when it has one; images come from the workspace logged
    with it (or ``workspace``)."""
    uri = tracking_uri or default_tracking_uri(workspace)
    (run,) = _tracked_runs(uri, run_id=run_id, files=[*RUN_FILES, "sessions.csv"])
    if run.problem and "sessions.csv" in run.problem:  # a run logged before sessions.csv was
        (run,) = _tracked_runs(uri, run_id=run_id)
        return _from_tracked(run, workspace)
    return _from_tracked(run, workspace, ("sessions.csv",))


def finished_mlflow_runs(tracking_uri: str, experiments: list[str] | None = None,
                         unusable: list[tuple[str, str]] | None = None,
                         also: tuple[str, ...] = ()) -> Iterator[RunArtifacts]:
    """Every FINISHED faceedit_bench run (tagged with its run key) of the given experiments
    (default: all experiments whose name starts with ``faceedit/``), oldest first, with the further
    artifacts named in ``also`` (e.g. ``sessions.csv``) in ``tables``. Runs whose artifacts cannot be
    read are skipped and listed in ``unusable`` as (label, reason)."""
    for run in _tracked_runs(tracking_uri, experiments=experiments, files=[*RUN_FILES, *also]):
        try:
            yield _from_tracked(run, None, also)
        except (FaceEditBenchError, ValueError, OSError) as exc:
            if unusable is not None:
                unusable.append((f"MLflow run {run.run_id}", str(exc)))


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
