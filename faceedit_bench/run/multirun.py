"""Hydra's side of a run: where each job's results are, and one table of all jobs after a sweep.

Runs write their outputs to the workspace (``<workspace>/runs/<run>``), where every run of the same
experiment resumes, whatever Hydra's ``hydra.run.dir`` / ``hydra.sweep.dir`` are. Hydra's job folder
(that dir) gets a pointer to the run: ``faceedit_run.json`` (run folder, report, run key, status,
headline metrics), and the console summary goes to the job's log there. After a multirun the
callback :class:`MultirunSummary` (``hydra.callbacks`` in ``conf/config.yaml``) reads every job's
pointer, prints one table and writes it to ``<sweep dir>/summary.txt``. It reads files rather than
the jobs' return values, so it works with every launcher (jobs in other processes, joblib, submitit).
"""

from __future__ import annotations

import json
import logging
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from hydra.experimental.callback import Callback

from faceedit_bench.storage import atomic

POINTER = "faceedit_run.json"
SWEEP_SUMMARY = "summary.txt"
#: Logs only to the job's log file (conf/config.yaml: hydra.job_logging.loggers): the summary, a traceback.
job_log = logging.getLogger("faceedit_bench.job_log")


@dataclass(frozen=True)
class Job:
    """The Hydra job a run is: its folder, number and overrides."""

    output_dir: Path | None
    num: int | None = None
    overrides: list[str] = field(default_factory=list)
    multirun: bool = False


def current_job() -> Job:
    """The running Hydra job, or a job without a folder when Hydra is not running."""
    from hydra.core.hydra_config import HydraConfig
    from hydra.types import RunMode

    if not HydraConfig.initialized():
        return Job(None)
    hc = HydraConfig.get()
    multirun = hc.mode == RunMode.MULTIRUN
    return Job(Path(hc.runtime.output_dir), int(hc.job.num) if multirun else None, list(hc.overrides.task), multirun)


def _write_text_atomic(path: Path, text: str) -> None:
    """Written whole, with the umask's mode (a shared sweep folder), into a folder made if missing."""
    path.parent.mkdir(parents=True, exist_ok=True)
    atomic.write_text(path, text)


def headline(report: dict[str, Any]) -> dict[str, Any]:
    """The numbers a sweep table shows: each metric's mean with its CI, and the session counts."""
    sessions = report["counts"]["sessions"]
    return {
        "metrics": {name: {k: m.get(k) for k in ("mean", "ci_low", "ci_high", "n", "unit", "higher_is_better")}
                    for name, m in report["metrics"].items()},
        "sessions_included": sessions["included"],
        "sessions_planned": sessions["planned"],
    }


def record_job(job: Job, *, status: str, title: str | None = None, run_dir: Path | None = None,
               report: dict[str, Any] | None = None, error: str | None = None, summary: str | None = None) -> None:
    """Write the job's pointer file and put the console summary in the job's log (nothing outside Hydra)."""
    if job.output_dir is None:
        return
    record: dict[str, Any] = {"job": job.num, "overrides": job.overrides, "status": status, "title": title,
                              "run_dir": str(run_dir) if run_dir else None,
                              "report": str(run_dir / "report.json") if run_dir else None}
    if report is not None:
        record.update(run_key=report["run"]["key"], stopped=report["run"].get("stopped"), **headline(report))
    if error is not None:
        record["error"] = error
    _write_text_atomic(job.output_dir / POINTER, json.dumps(record, indent=2) + "\n")
    if summary:
        job_log.info("%s", summary)


def read_jobs(sweep_dir: Path) -> list[dict[str, Any]]:
    """Every job pointer under a sweep folder, in job order."""
    jobs = []
    for path in sweep_dir.rglob(POINTER):
        try:
            record = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError) as exc:
            record = {"status": "unreadable", "error": f"{path}: {exc}"}
        record["job_dir"] = str(path.parent)
        jobs.append(record)
    return sorted(jobs, key=lambda r: (r.get("job") is None, r.get("job") or 0, r["job_dir"]))


def _cell(metric: dict[str, Any] | None) -> str:
    if not metric or metric.get("mean") is None:
        return "n/a"
    if metric.get("ci_low") is None:
        return f"{metric['mean']:.2f}"
    return f"{metric['mean']:.2f} [{metric['ci_low']:.2f}, {metric['ci_high']:.2f}]"


def _varying(jobs: list[dict[str, Any]]) -> tuple[list[str], list[list[str]]]:
    """The overrides all jobs share, and per job the ones that vary (what the sweep is over)."""
    lists = [list(j.get("overrides") or []) for j in jobs]
    common = [o for o in lists[0] if all(o in other for other in lists)] if lists else []
    return common, [[o for o in overrides if o not in common] for overrides in lists]


def jobs_text(jobs: list[dict[str, Any]], sweep_dir: Path, width: int) -> str:
    """One row per job with its overrides, status and headline metrics, fitted to ``width``; then each job's
    run folder (or error) on a line of its own, a path to copy whole."""
    from rich.text import Text

    from faceedit_bench.report.console import Column, fitted_tables, render

    names: list[str] = []
    for job in jobs:
        names += [n for n in job.get("metrics", {}) if n not in names]
    common, varying = _varying(jobs)
    columns = [Column("overrides", wrap=40), Column("status")]
    for name in names:
        arrow = next(({True: "↑", False: "↓"}.get(j["metrics"][name].get("higher_is_better"), "")  # None: no arrow
                      for j in jobs if name in j.get("metrics", {})), "")
        columns.append(Column(f"{name} {arrow}", True))
    columns.append(Column("sessions", True))
    rows, places = [], []
    for job, overrides in zip(jobs, varying):
        sessions = f"{job['sessions_included']}/{job['sessions_planned']}" if "sessions_planned" in job else ""
        error = (job.get("error") or "").strip().splitlines()
        rows.append([str(job.get("job", "")), " ".join(overrides) or "(defaults)", job.get("status", "?"),
                     *[_cell(job.get("metrics", {}).get(n)) for n in names], sessions])
        places.append(f"#{job.get('job', '')} " + (job.get("run_dir") or (f"error: {error[0][:300]}" if error
                                                                           else job["job_dir"])))
    head = [Text(f"{len(jobs)} jobs of the sweep in {sweep_dir}"), *([Text(f"all with: {' '.join(common)}")]
                                                                    if common else [])]
    table = render([*head, *fitted_tables([Column("#", True)], columns, rows, width)], width)
    return table + "\nrun folders (or errors):\n" + "\n".join(places)


class MultirunSummary(Callback):
    """After a multirun: one table of all jobs; the exit code says whether any job failed."""

    def on_multirun_end(self, config: Any, **kwargs: Any) -> None:
        from faceedit_bench.report.console import DEFAULT_WIDTH, console_width

        sweep_dir = Path(config.hydra.sweep.dir)
        jobs = read_jobs(sweep_dir)
        if not jobs:
            return
        print(jobs_text(jobs, sweep_dir, console_width()))
        _write_text_atomic(sweep_dir / SWEEP_SUMMARY, jobs_text(jobs, sweep_dir, DEFAULT_WIDTH) + "\n")
        failed = [j for j in jobs if j.get("status") in ("failed", "unreadable")]
        if failed:
            print(f"Error: {len(failed)} of {len(jobs)} jobs failed (see the table above). Fix them and rerun the "
                  "sweep: finished work is kept and not repeated.", file=sys.stderr)
            raise SystemExit(2)
