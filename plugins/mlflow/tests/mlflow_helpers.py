"""Helpers shared by the tests (a module of its own: several conftest.py files in one
pytest session shadow each other as ``conftest``)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import pluggy

from faceedit_bench.api import RunInfo, StepRecord
from faceedit_bench.testing import end_run, hook_manager


def make_pm(*plugins: object) -> pluggy.PluginManager:
    return hook_manager(*plugins)  # every hookimpl matches a spec


def step(outcome: str, k: int = 1) -> StepRecord:
    return StepRecord(
        unit_key=f"u{k}", face_id="f1", identity="id1", session_id="s1", k=k, instruction="make the hair red",
        category="hair_color", sub_axis="color", axis="hair", outcome=outcome, reason="", input_hash="a" * 64,
        output_hash=None, resumed=False, duration_s=0.1,
    )


def lifecycle(
    pm: pluggy.PluginManager,
    run: RunInfo,
    outcomes: Sequence[str] = (),
    metrics: dict[str, Any] | None = None,
    artifacts: dict[str, str] | None = None,
) -> None:
    """start, step_done per outcome, end: what the engine does for one run."""
    pm.hook.faceedit_run_start(run=run)
    for k, outcome in enumerate(outcomes):
        pm.hook.faceedit_step_done(run=run, step=step(outcome, k))
    run_end(pm, run=run, report={"metrics": metrics or {}}, artifacts=artifacts or {})


def run_end(pm: pluggy.PluginManager, *, run: RunInfo, report: dict[str, Any], artifacts: dict[str, str]) -> None:
    """``faceedit_run_end`` as a run calls it, the tracker's metrics being the report's ``metrics`` (these tests'
    reports hold a few fields, not a whole run's)."""
    end_run(pm, run, report, artifacts, metrics=dict(report.get("metrics") or {}))


def only_run(client: Any, experiment: str) -> Any:
    """The single MLflow run of ``experiment`` (fails if there are several)."""
    exp = client.get_experiment_by_name(experiment)
    runs = client.search_runs([exp.experiment_id])
    assert len(runs) == 1, [r.info.run_id for r in runs]
    return runs[0]
