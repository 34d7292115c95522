"""A finished run as a command after it sees it (``faceedit_bench.api.sections.FinishedRun``): its report, its
folder and the tables and config there, and the two things a command adds to it: a section in its report, and
numbers and files in its tracker run."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, ClassVar

from faceedit_bench.report.attached import attach_section
from faceedit_bench.report.compared_runs import load_run, run_config
from faceedit_bench.report.sources import default_tracking_uri
from faceedit_bench.report.tables import DEMOGRAPHIC_KEYS, SESSIONS_CSV, STEPS_CSV


@dataclass(frozen=True)
class FinishedRun:
    """A finished run: ``FinishedRun.load(path)`` reads the report of a run folder (or of its report.json),
    checked against the report's schema. ``report`` and ``folder``; the folder's tables ``steps_csv`` (one row
    per face, session, condition and step) and ``sessions_csv`` (one per face and session, with the faces'
    label columns :attr:`DEMOGRAPHIC_KEYS` and one column per metric value); ``config`` (its config.yaml);
    ``key`` (its run key) and ``tracking_uri`` (where it was tracked). :meth:`attach` adds a section to its
    report.json and report.html; :meth:`log` adds numbers and files to its tracker run. Its images are
    ``faceedit_bench.api.images.RunImages.of_run(run.folder)``."""

    report: Mapping[str, Any]
    folder: Path
    #: The label columns of the sessions table (a face's demographics), in its order.
    DEMOGRAPHIC_KEYS: ClassVar[tuple[str, ...]] = DEMOGRAPHIC_KEYS

    @classmethod
    def load(cls, path: Path) -> FinishedRun:
        report, folder = load_run(Path(path))
        return cls(report, folder)

    @property
    def steps_csv(self) -> Path:
        return self.folder / STEPS_CSV

    @property
    def sessions_csv(self) -> Path:
        return self.folder / SESSIONS_CSV

    @property
    def key(self) -> str | None:
        return (self.report.get("run") or {}).get("key")

    @property
    def config(self) -> Mapping[str, Any] | None:
        """The run's config.yaml (what the report leaves out: limits, the tracker's parameters), or None."""
        return run_config(self.folder)

    @property
    def tracking_uri(self) -> str | None:
        """Where the run was tracked: its tracker's ``tracking_uri``, else ``$MLFLOW_TRACKING_URI``, else its
        workspace's mlflow.db; None when it ran with ``tracking=none``."""
        tracking = (self.config or {}).get("tracking") or {}
        if tracking.get("name") in (None, "none"):
            return None
        return (tracking.get("params") or {}).get("tracking_uri") or default_tracking_uri(
            self.folder.resolve().parents[1])

    def attach(self, name: str, part: Mapping[str, Any]) -> dict[str, Any]:
        """Add ``part`` as ``report[name]`` (report.json, then report.html), under the run folder's lock, kept by
        every later report of the run (a rerun, ``make run``). Returns the new report."""
        return attach_section(self.folder, name, part)

    def log(self, tracking_uri: str, *, metrics: Mapping[str, float] | None = None,
            files: Mapping[str, str] | None = None) -> str | None:
        """Add ``metrics`` and ``files`` (local path -> folder in the run's artifacts, "" for the top; a file of
        the same name there is replaced) to this run's tracker run at ``tracking_uri`` (the
        ``faceedit_log_run_metrics`` and ``faceedit_log_run_artifacts`` hooks): that run's id, or None when no
        installed tracker reads the URI."""
        from faceedit_bench.plugin.manager import current_plugins

        hook = current_plugins().pm.hook
        key = str(self.key)
        found = None
        if metrics:
            found = hook.faceedit_log_run_metrics(tracking_uri=tracking_uri, run_key=key, metrics=dict(metrics))
        if files:
            found = hook.faceedit_log_run_artifacts(tracking_uri=tracking_uri, run_key=key,
                                                    files={str(k): str(v) for k, v in files.items()}) or found
        return found
