"""A mostly missing measurement is said first (issue 20 item 18): in report.json's ``warnings``, at the top of
the console summary, in report.html's "Read first" box and in MLflow (tag and metric), with the reason.
"Mostly" is more than half: exactly half is not a warning.
"""

from __future__ import annotations

import sys
from collections import Counter

import jsonschema
import pytest

from faceedit_bench.report.read_first import MOST, mostly_missing, warning_lines
from faceedit_bench.report.run_report import metrics_for_tracking
from faceedit_bench.report.summary import format_summary
from faceedit_bench.run.experiment import build_experiment, run_experiment
from tests import test_conditions
from tests.schema_support import builtin_report_schema
from tests.test_protocols import write_testset

SCHEMA = builtin_report_schema()


@pytest.fixture
def run_conditions(plugins, compose, tmp_path, monkeypatch, new_mlflow_store):
    """The feature-prompt run of tests/test_conditions.py, tracked in MLflow, with a judge that refuses every
    feature text and answers every SC question with 5 and 5 (so every judge anchor fails)."""
    new_mlflow_store(tmp_path / "ws")
    from faceedit_bench.run.hydra_app import register_configs

    plugins.add(sys.modules[test_conditions.__name__], name="condition_fakes")
    register_configs(plugins)
    test_conditions.ConditionJudge.calls = Counter()
    monkeypatch.setattr(test_conditions, "refuses", lambda image: True)
    monkeypatch.setattr(test_conditions, "_pixel_hash", lambda image: 60)  # SC answers 60 % 11 and 60 // 11
    path = write_testset(tmp_path / "diag.json", [
        {"session_id": sid, "steps": [{"instruction": text, "prompt_id": sid, "prompt_category": "Occupational"}]}
        for sid, text in test_conditions.INSTRUCTIONS.items()], name="diag")
    cfg = compose("dataset=synthetic", f"+dataset.params.root={tmp_path / 'faces'}", "+dataset.params.n=6",
                  "embedder=pixel", "run.workers=1", "tracking=mlflow", "testset=file", f"testset.params.path={path}",
                  "editor=prompt_noise", "judge=cond_judge", "judge_metrics=[sc]", "analysis.n_resamples=99",
                  f"conditions=[baseline,{test_conditions.FEATURES}]")
    exp = build_experiment(cfg, plugins)
    return run_experiment(exp, plugins), exp.info.output_dir, tmp_path / "ws"


def test_failed_feature_prompts_and_failed_anchors_are_said_first_everywhere(run_conditions):
    report, out, workspace = run_conditions
    jsonschema.validate(report, SCHEMA)
    codes = {w["code"]: w for w in report["warnings"]}
    steps = codes["steps:features"]
    assert (steps["missing"], steps["total"], steps["reasons"]) == (18, 18, {"prompt_failed": 18})
    assert steps["message"] == "18 of 18 edit steps under features have no usable image (prompt_failed 18)"
    assert codes["pairs_dropped:features:drop_fss"]["missing"] == 18
    anchors = codes["judge_anchors"]
    assert anchors["message"] == "0 of 3 judge anchors passed (answer out of range 3)"
    assert "steps:baseline" not in codes  # the baseline's 18 edits are all fine
    # the console: before the run's own header, in the order of report.json
    console = " ".join(format_summary(report, out).split())  # lines wrap at the terminal's width
    first = console[:console.index("Run ")]
    preliminary = "PRELIMINARY: 6 identities, fewer than 10: intervals and flags rest on few people "  # then this
    warned = " ".join(f"MOSTLY MISSING (over 50%): {w['message']}" for w in report["warnings"])
    assert first == warned + " " + preliminary
    # report.html's Read first box, first
    page = (out / "report.html").read_text()
    box = page[page.index("Read first"):]
    assert box.index("18 of 18 edit steps under features have no usable image") < box.index("</ul>")
    assert "0 of 3 judge anchors passed" in box
    # MLflow: a tag and a metric
    from mlflow import MlflowClient

    client = MlflowClient(tracking_uri=f"sqlite:///{workspace / 'mlflow.db'}")
    (run,) = client.search_runs([e.experiment_id for e in client.search_experiments()
                                 if e.name.startswith("faceedit/")])
    assert "MOSTLY MISSING (over 50%): 18 of 18 edit steps under features" in run.data.tags["faceedit.warnings"]
    assert run.data.tags["mlflow.note.content"].startswith("**MOSTLY MISSING (over 50%): 18 of 18")
    assert run.data.metrics["warnings"] == len(report["warnings"])
    assert run.data.metrics["warning_steps_features_share"] == 1.0


def _audit_report(scored: int, items: int) -> dict:
    return {"counts": {"faces": {"seen": 8, "excluded": {}}, "sessions": {"planned": 160, "included": 160,
                                                                          "excluded": {}},
                       "steps": {"ok": 160}, "judge": {"rubric@1": {"ok": scored, "api_error": items - scored}}},
            "metrics": {}, "audit": {"items": items, "scored": scored,
                                     "not_scored": {"api_error: 503": items - scored} if items > scored else {}}}


def test_a_paper_b_run_with_no_scored_edit_says_so_and_exactly_half_is_not_most():
    warnings = {w["code"]: w for w in mostly_missing(_audit_report(0, 160))}
    assert warnings["audit_unscored"]["message"] == "0 of 160 rubric edits scored (api_error: 503 160)"
    assert warnings["judge_answers:rubric@1"]["share"] == 1.0
    assert MOST == 0.5 and mostly_missing(_audit_report(80, 160)) == []  # half is not most
    assert [w["code"] for w in mostly_missing(_audit_report(79, 160))] == ["judge_answers:rubric@1", "audit_unscored"]
    assert warning_lines(_audit_report(160, 160)) == []
    tracked = metrics_for_tracking({**_audit_report(0, 160), "groups": {}, "disparity": [],
                                    "counts": {**_audit_report(0, 160)["counts"], "edited_images_without_face": 0}})
    assert tracked["warnings"] == 2 and tracked["warning_audit_unscored_share"] == 1.0


def test_a_value_that_does_not_apply_is_not_missing():
    report = {"counts": {}, "metrics": {
        "aging_accuracy": {"n": 3, "undefined_sessions": 57, "undefined_by_reason": {"answered_without_value": 57}},
        "sc": {"n": 10, "undefined_sessions": 30, "undefined_by_reason": {"judge_api_error": 25,
                                                                           "answered_without_value": 5}}}}
    (warning,) = mostly_missing(report)
    assert warning["code"] == "metric_undefined:sc" and (warning["missing"], warning["total"]) == (25, 35)
