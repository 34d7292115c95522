"""``TrackerContract``: the checks every experiment tracker must pass.

A tracker receives the run lifecycle hooks through a real plugin manager, as in a run: its hook methods must
match the hook specifications, a whole run (start, steps, end) and a run stopped by an error are recorded
without raising, and a run recorded twice under one run key is recorded, not refused. Subclass it and give a
``tracker`` fixture (writing to a temporary store); override ``run_info`` and ``run_report`` to describe the run
differently, and ``recorded`` (a callable ``run_key -> bool`` that reads the store) so the checks also see what was stored."""

from __future__ import annotations

import inspect
from pathlib import Path
from typing import Any

import pytest

from faceedit_bench.plugin.payloads import ComponentInfo, RunInfo, StepRecord
from faceedit_bench.plugin.protocols import Tracker
from faceedit_bench.report.run_report import metrics_for_tracking, results_digest
from faceedit_bench.testing.harness import hook_manager
from faceedit_bench.testing.helpers import json_description

#: The hooks a run calls on its tracker, in order.
LIFECYCLE = ("faceedit_run_start", "faceedit_step_done", "faceedit_run_end", "faceedit_run_error")


def contract_step(k: int, outcome: str = "ok") -> StepRecord:
    """A finished step as the engine reports it."""
    return StepRecord(unit_key=f"unit-{k}", face_id="face-1", identity="id-1", session_id="hair-01", k=k,
                      instruction="make the person's hair color crimson red", category="hair_color",
                      sub_axis="color", axis="hair", outcome=outcome, reason="" if outcome == "ok" else "refused",
                      input_hash="a" * 64, output_hash="b" * 64 if outcome == "ok" else None, resumed=False,
                      duration_s=0.1)


def contract_run(tmp_path: Path) -> RunInfo:
    """A run as the engine describes it to trackers: an editor on a test set, a seed, one parameter."""
    components = {"editor": ComponentInfo("editor", "identity", "builtin", "0", {"version": "1"}),
                  "testset": ComponentInfo("testset", "contract", "builtin", "0", {"content_hash": "c" * 64})}
    return RunInfo(run_key="contract-run", run_name="identity@contract", experiment_name="contract",
                   components=components, config={"run": {"seed": 0}}, params={"editor.name": "identity"},
                   tags={"testset": "contract"}, workspace=tmp_path / "ws", output_dir=tmp_path / "ws" / "out")


def contract_report() -> dict[str, Any]:
    """The smallest report a run ends with: one metric, the counts, no groups."""
    stats = {"mean": 0.8, "ci_low": 0.7, "ci_high": 0.9, "n": 3, "sd": 0.1, "undefined_sessions": 0}
    return {"metrics": {"fss_mean": stats}, "groups": {}, "counts": {
        "faces": {"seen": 1, "excluded": {}}, "sessions": {"planned": 1, "included": 1, "excluded": {}},
        "edited_images_without_face": 0}}


class TrackerContract:
    """Checks every tracker must pass. Subclass and provide a ``tracker`` fixture."""

    @pytest.fixture
    def run_info(self, tmp_path: Path) -> RunInfo:
        return contract_run(tmp_path)

    @pytest.fixture
    def run_report(self) -> dict[str, Any]:
        return contract_report()

    @pytest.fixture
    def recorded(self) -> Any:
        return None

    def test_is_a_tracker_whose_hooks_match_the_specifications(self, tracker: Any) -> None:
        assert isinstance(tracker, Tracker)
        json_description(tracker)
        implemented = [name for name in LIFECYCLE if inspect.ismethod(getattr(tracker, name, None))]
        assert "faceedit_run_start" in implemented and "faceedit_run_end" in implemented, \
            "a tracker records at least the start and the end of a run"
        hook_manager(tracker)  # pluggy refuses a hook method whose arguments no specification has

    def test_a_whole_run_is_recorded(self, tracker: Any, run_info: RunInfo, run_report: dict[str, Any],
                                     recorded: Any) -> None:
        pm = hook_manager(tracker)
        pm.hook.faceedit_run_start(run=run_info)
        for k, outcome in enumerate(("ok", "refused", "ok"), start=1):
            pm.hook.faceedit_step_done(run=run_info, step=contract_step(k, outcome))
        end_run(pm, run_info, run_report)
        if recorded is not None:
            assert recorded(run_info.run_key), "the finished run is not in the tracker's store"

    def test_a_run_stopped_by_an_error_is_recorded_and_the_hook_does_not_raise(
            self, tracker: Any, run_info: RunInfo, recorded: Any) -> None:
        pm = hook_manager(tracker)
        pm.hook.faceedit_run_start(run=run_info)
        pm.hook.faceedit_step_done(run=run_info, step=contract_step(1))
        pm.hook.faceedit_run_error(run=run_info, error=RuntimeError("the editor's provider went away"))
        if recorded is not None:
            assert recorded(run_info.run_key), "the failed run is not in the tracker's store"

    def test_a_resumed_run_is_recorded_again(self, tracker: Any, run_info: RunInfo,
                                             run_report: dict[str, Any]) -> None:
        pm = hook_manager(tracker)
        for _ in range(2):  # a resumed run calls the lifecycle again with the same run key
            pm.hook.faceedit_run_start(run=run_info)
            end_run(pm, run_info, run_report)


def end_run(pm: Any, run: RunInfo, report: dict[str, Any], artifacts: dict[str, str] | None = None,
            metrics: dict[str, float] | None = None) -> None:
    """``faceedit_run_end`` as a run calls it: with the report's metrics (``metrics``: given instead, for a
    tracker's tests on reports of a few fields) and its results digest."""
    pm.hook.faceedit_run_end(run=run, report=report, artifacts=artifacts or {},
                             metrics=metrics_for_tracking(report) if metrics is None else metrics,
                             results_digest=results_digest(report))
