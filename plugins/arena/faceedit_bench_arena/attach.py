"""Attach an arena to its runs: ``report["arena"]`` (this run's editor marked) in each run's report.json and
report.html, and the run's arena metrics to its tracker run."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from faceedit_bench.api import FaceEditBenchError
from faceedit_bench.api.sections import FinishedRun
from faceedit_bench_arena.section import tracking


def attach(part: Mapping[str, Any], runs: Sequence[Any], tracking_uri: str | None = None,
           files: Sequence[Path] = ()) -> list[str]:
    """Add the arena to every run (``runs``: the pool's runs); the lines to print. A tracked run gets the arena's
    metrics, its rewritten report.json and report.html, and ``files`` (arena.json, battles.jsonl) under
    ``arena/`` in its artifacts."""
    lines = []
    for run in runs:
        finished = FinishedRun.load(Path(run.path))
        folder = finished.folder
        section = {**part, "editor": run.editor}
        finished.attach("arena", section)  # a later report of the run (a rerun, make run) keeps it
        uri = tracking_uri or finished.tracking_uri  # given, else where the run was tracked (None: not tracked)
        if uri is None:
            lines.append(f"{run.editor}: arena added to {folder.name}/report.json and report.html (not tracked)")
            continue
        run_id = finished.log(uri, metrics=tracking(section))
        if run_id is None:
            raise FaceEditBenchError(f"no installed tracker plugin reads {uri}; install faceedit-bench-mlflow "
                                     "or pass --no-attach")
        finished.log(uri, files={**{str(folder / n): "" for n in ("report.json", "report.html")},
                                 **{str(f): "arena" for f in files}})
        lines.append(f"{run.editor}: arena added to {folder.name}; metrics and files logged to tracker run {run_id}")
    return lines
