"""A re-report of a finished run (a rerun, ``make run``) keeps what was attached after the run and the provenance
of the launch that did the work, and its results digest stays the launch's (a tracker logs nothing again)."""

from __future__ import annotations

import json

from faceedit_bench.api.sections import FinishedRun
from faceedit_bench.report.attached import did_work, keep_derived
from faceedit_bench.report.run_report import results_digest
from faceedit_bench.run.experiment import build_experiment, run_experiment


def run(plugins, compose, *overrides):
    return run_experiment(build_experiment(compose(*overrides), plugins), plugins)


def test_a_rerun_keeps_an_attached_section_and_the_working_launchs_provenance(plugins, compose, synthetic, tmp_path):
    calls = tmp_path / "calls.txt"
    overrides = (*synthetic, "testset=hair", "editor=scripted", f"+editor.params.calls_file={calls}",
                 "run.max_faces=2", "run.max_sessions=2", "analysis.n_resamples=99")
    first = run(plugins, compose, *overrides)
    (run_dir,) = (tmp_path / "ws" / "runs").glob("scripted-*")
    assert did_work(first) and first["run"]["launches"] == [
        {"created_at": first["run"]["created_at"], "wall_time_s": first["run"]["wall_time_s"],
         "computed": first["run"]["computed"], "new_usd": first["cost"]["new_usd"]}]
    attached = FinishedRun.load(run_dir).attach("people_notes", {"said": "kept"})
    assert attached["attached"]["people_notes"]["attached_at"]
    assert results_digest(attached) == results_digest(first)  # attaching is no new result of the launch

    again = run(plugins, compose, *overrides)
    stored = json.loads((run_dir / "report.json").read_text())
    assert stored["people_notes"] == again["people_notes"] == {"said": "kept"}
    assert stored["attached"] == attached["attached"]
    assert len(calls.read_text().splitlines()) == first["run"]["computed"]["edit_calls"]  # nothing edited again
    assert again["run"]["computed"] == {"embeddings": 0, "edit_calls": 0, "judge_calls": 0}  # this launch's own
    assert again["run"]["wall_time_s"] == first["run"]["wall_time_s"]  # the launch that did the work
    assert again["run"]["re_reported"]["wall_time_s"] >= 0 and again["run"]["launches"] == first["run"]["launches"]
    assert again["calls"] == first["calls"] and again["performance"] == first["performance"]
    assert results_digest(again) == results_digest(first)
    assert "re-reported in" in (run_dir / "report.html").read_text()


def _report(computed: int, wall: float, at: str) -> dict:
    return {"run": {"key": "k", "created_at": at, "wall_time_s": wall,
                    "computed": {"embeddings": 0, "edit_calls": computed, "judge_calls": 0}},
            "cost": {"new_usd": 0.1 * computed}, "metrics": {"drop_fss": computed},
            "calls": {"gemini:default:KEY:m": {"calls": computed}}, "performance": {"edit_stage_s": wall}}


def test_launches_that_did_work_are_listed_and_a_re_report_keeps_the_last_ones_provenance():
    first = _report(40, 30.0, "t1")
    keep_derived(first, None)
    resumed = _report(20, 12.0, "t2")  # resumed after a budget stop: more work
    keep_derived(resumed, first)
    assert [launch["created_at"] for launch in resumed["run"]["launches"]] == ["t1", "t2"]
    assert resumed["run"]["wall_time_s"] == 12.0 and "re_reported" not in resumed["run"]
    re_report = _report(0, 0.4, "t3")
    keep_derived(re_report, resumed)
    assert re_report["run"]["wall_time_s"] == 12.0 and re_report["run"]["re_reported"] == {"wall_time_s": 0.4}
    assert re_report["calls"] == resumed["calls"] and re_report["performance"] == resumed["performance"]
    assert re_report["run"]["launches"] == resumed["run"]["launches"]
    assert re_report["cost"]["new_usd"] == 0 and re_report["run"]["created_at"] == "t3"  # its own


def test_a_section_attached_before_the_record_existed_is_kept_too():
    """A report written before ``attached`` was recorded: a registered section without a collector (the arena's,
    people's ratings: the installed plugins register them) cannot come from a launch, so it was attached."""
    from faceedit_bench.plugin.manager import sections_in_use

    name = next(s.name for s in sections_in_use() if s.collector is None)
    previous = {**_report(0, 1.0, "t1"), name: {"kept": True}, "unknown_part": {}}
    report = _report(0, 0.2, "t2")
    keep_derived(report, previous)
    assert report[name] == {"kept": True} and report["attached"] == {name: {"attached_at": None}}
    assert "unknown_part" not in report  # not a registered section added after a run: not carried
