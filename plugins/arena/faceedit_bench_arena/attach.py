"""Attach an arena to its runs: ``report["arena"]`` (this run's editor marked) in each run's report.json and
report.html, and the run's arena metrics to its tracker run."""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from faceedit_bench.api import FaceEditBenchError
from faceedit_bench.api.sections import attach_section, log_to_run, run_config
from faceedit_bench_arena.section import tracking


def tracking_uri_of(run_dir: Path, given: str | None) -> str | None:
    """``given``, else the run's configured tracker URI (MLflow's default: the workspace's mlflow.db);
    None when the run was not tracked."""
    if given:
        return given
    conf = (run_config(run_dir) or {}).get("tracking") or {}
    if conf.get("name") in (None, "none"):
        return None
    uri = (conf.get("params") or {}).get("tracking_uri") or os.environ.get("MLFLOW_TRACKING_URI")
    return uri or f"sqlite:///{(run_dir.resolve().parents[1] / 'mlflow.db').as_posix()}"


def attach(part: Mapping[str, Any], runs: Sequence[Any], tracking_uri: str | None = None,
           files: Sequence[Path] = ()) -> list[str]:
    """Add the arena to every run (``runs``: the pool's runs); the lines to print. A tracked run gets the arena's
    metrics, its rewritten report.json and report.html, and ``files`` (arena.json, battles.jsonl) under
    ``arena/`` in its artifacts."""
    lines = []
    for run in runs:
        folder = Path(run.path)
        section = {**part, "editor": run.editor}
        attach_section(folder, "arena", section)  # a later report of the run (a rerun, make run) keeps it
        uri = tracking_uri_of(folder, tracking_uri)
        if uri is None:
            lines.append(f"{run.editor}: arena added to {folder.name}/report.json and report.html (not tracked)")
            continue
        run_id = log_to_run(uri, run.run_key, metrics=tracking(section))
        if run_id is None:
            raise FaceEditBenchError(f"no installed tracker plugin reads {uri}; install faceedit-bench-mlflow "
                                     "or pass --no-attach")
        log_to_run(uri, run.run_key, files={**{str(folder / n): "" for n in ("report.json", "report.html")},
                                            **{str(f): "arena" for f in files}})
        lines.append(f"{run.editor}: arena added to {folder.name}; metrics and files logged to tracker run {run_id}")
    return lines
