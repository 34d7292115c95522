"""Named leaderboard views (audit, creval) and the sections every metric and group gets: values read in the
direction the submissions state, disparity columns, plugin metrics, group tests and judge panels, from
submissions and from a real MLflow store; reports from before these sections still render."""

from __future__ import annotations

import json

import pytest

from faceedit_bench.leaderboard.build import build_leaderboard
from faceedit_bench.leaderboard.entries import collect_submissions
from faceedit_bench.leaderboard.named_views import ValueSpec, ViewSpec
from faceedit_bench.leaderboard.submit import submit
from faceedit_bench.leaderboard.views import build_views
from tests.leaderboard_named_support import write_named_run
from tests.schema_support import installed_report_schema
from tests.test_leaderboard_support import write_fake_run


def _submit(tmp_path, plugins, **kw):
    return submit(str(write_named_run(tmp_path / "ws", **kw)), out=tmp_path / "lb" / "submissions", plugins=plugins)


def _section(view, contrast):
    found = [s for s in view.sections if s.contrast == contrast]
    assert found, f"no {contrast} section in {[s.contrast for s in view.sections]}"
    return found[0]


def _cells(section, row):
    return {c.title: cell for c, cell in zip(section.columns, row.cells)}


def _editors(section):
    return [row.id.split("-")[0] for row in section.rows]


def test_audit_view_ranks_by_soft_erasure_lower_first_with_race_disparities(tmp_path, plugins):
    _submit(tmp_path, plugins, editor="often", soft_erasure=0.40, race_change=0.10, gap=22.0)
    _submit(tmp_path, plugins, editor="rarely", soft_erasure=0.05, race_change=0.30, gap=4.0, refused=1)
    _submit(tmp_path, plugins, editor="middling", soft_erasure=0.20)  # no race-change rate in its report
    _submit(tmp_path, plugins, editor="identity")  # the baseline: no audit, a reference row
    (view,) = build_views(collect_submissions(tmp_path / "lb").entries, {})
    audit = _section(view, "audit")
    assert _editors(audit) == ["identity", "rarely", "middling", "often"]
    assert [row.cells[0].text for row in audit.rows] == ["ref", "1", "2", "3"]
    assert audit.rank_by == "Soft erasure" and "soft erasure" in audit.note
    titles = [c.title for c in audit.columns]
    assert titles[3:7] == ["Soft erasure (%)", "Race change (%)", "Soft erasure max−min by race (pp)",
                           "Race change max−min by race (pp)"]
    assert [c.hib for c in audit.columns[3:7]] == ["false"] * 4  # from the reports' statement; gaps: lower
    rarely = _cells(audit, audit.rows[1])
    assert rarely["Soft erasure (%)"].text == "5.000 [0.000, 15.000]" and rarely["Soft erasure (%)"].sub == "n=40"
    assert rarely["Soft erasure max−min by race (pp)"].text == "4.000 [2.000, 6.000]"
    assert rarely["Soft erasure max−min by race (pp)"].sub == "White vs Black"
    assert rarely["refused"].text == "1"
    middling = _cells(audit, audit.rows[2])
    assert middling["Race change (%)"].text == "n/a" and middling["Race change (%)"].value == ""
    assert [p.title for p in audit.plots][:2] == ["Soft erasure", "Race change"]


def test_creval_view_ranks_higher_first_with_if_vc_vq(tmp_path, plugins):
    _submit(tmp_path, plugins, editor="weak", creval=41.0)
    _submit(tmp_path, plugins, editor="strong", creval=77.0)
    _submit(tmp_path, plugins, editor="unscored")  # no CREval values: listed, unranked
    result = build_leaderboard(tmp_path / "lb", plugins=plugins)
    (view,) = build_views(result.collection.entries, {})
    creval = _section(view, "creval")
    assert _editors(creval) == ["strong", "weak", "unscored"]
    assert [row.cells[0].text for row in creval.rows] == ["1", "2", "–"]
    assert [c.title for c in creval.columns[3:7]] == ["CREval (0-100)", "CREval IF (0-100)", "CREval VC (0-100)",
                                                      "CREval VQ (0-100)"]
    assert all(c.hib == "true" for c in creval.columns[3:7])
    assert _cells(creval, creval.rows[0])["CREval IF (0-100)"].text.startswith("72.000")
    assert "creval_face" not in [s.contrast for s in view.sections]  # no entry has face QA values
    table = result.table.read_text()
    assert "### CREval: overall, IF, VC, VQ" in table and "Ranked by CREval." in table
    assert "creval" in result.page.read_text()


def test_the_registry_decides_a_direction_the_installation_knows(tmp_path, plugins):
    from faceedit_bench.analysis.session_metrics import SessionMetric

    _submit(tmp_path, plugins, editor="low", creval=30.0)
    _submit(tmp_path, plugins, editor="high", creval=60.0)
    entries = collect_submissions(tmp_path / "lb").entries
    lower = {"creval": SessionMetric("creval", False, "0-100", "registered as lower-is-better", lambda s: None)}
    (view,) = build_views(entries, lower)
    assert _editors(_section(view, "creval")) == ["low", "high"]


def test_a_value_whose_direction_nobody_states_is_shown_but_not_ranked(tmp_path, plugins):
    _submit(tmp_path, plugins, editor="a", soft_erasure=0.3, state_directions=False)
    _submit(tmp_path, plugins, editor="b", soft_erasure=0.1, state_directions=False)
    (view,) = build_views(collect_submissions(tmp_path / "lb").entries, {})
    audit = _section(view, "audit")
    assert [row.cells[0].text for row in audit.rows] == ["–", "–"]
    assert audit.columns[3].hib == "" and "Not ranked" in audit.note
    assert _cells(audit, audit.rows[0])["soft_erasure_rate (%)"].text.startswith("30.000")


def test_plugin_metrics_group_tests_and_the_judge_panel_are_rendered(tmp_path, plugins):
    _submit(tmp_path, plugins, editor="hats", plugin_score=4.2, group_tests=True, panel=True)
    _submit(tmp_path, plugins, editor="nohats", plugin_score=1.3)
    result = build_leaderboard(tmp_path / "lb", plugins=plugins)
    (view,) = build_views(result.collection.entries, {})
    overall = _section(view, "all")
    hat = next(c for c in overall.columns if c.title.startswith("hat_present"))
    assert hat.title == "hat_present (1-5)" and hat.hib == "true" and "Hat present" in hat.help
    assert {m.name: m.label for m in view.metrics}["hat_present"] == "Hat present"

    tests = _section(view, "group tests")
    rows = [_cells(tests, r) for r in tests.rows]
    kinds = {(r["test"].text, r["groups"].text) for r in rows}
    assert kinds == {("k groups", "race"), ("one vs rest", "race=White"), ("intersection", "gender x skin_tone")}
    k = next(r for r in rows if r["test"].text == "k groups")
    assert k["statistic"].text == "H 5.6, df 2" and k["p"].text == "p = 0.061"
    assert k["spread [CI]"].text == "2.000 [0.500, 3.500]" and k["worst"].text == "White"
    assert k["metric"].text == "Drop_FSS"  # the label the run report states
    crossed = next(r for r in rows if r["test"].text == "intersection")
    assert crossed["statistic"].sub == "no session has a skin_tone label"

    panel = _section(view, "judge panel")
    (row,) = [_cells(panel, r) for r in panel.rows]
    assert row["rule"].text == "tolerance (primary gemini)" and row["rule"].sub == "members: gemini, gpt"
    assert row["member answers"].text == "gemini: ok 38; gpt: api_error 2, ok 36"
    assert row["combined"].text == "agreed 30, disagreed 6, secondary_failed 2"
    assert row["disagreement flags"].text == "6" and "scores.race_change 4" in row["disagreement flags"].sub
    record = json.loads(next((tmp_path / "lb" / "submissions").glob("hats-*/submission.json")).read_text())
    assert "flagged" not in record["judge_panel"]  # the per-item list (face ids) stays in the run's report
    page = result.page.read_text()
    assert "group tests (k groups, one vs rest, intersections)" in page and "judge panel" in page


def test_reports_before_measures_still_render(tmp_path, plugins):
    out = tmp_path / "lb" / "submissions"
    submit(str(write_fake_run(tmp_path / "ws", editor="old", values=(1.0, 2.0, 3.0, 4.0), schema_version="1.1")),
           out=out, plugins=plugins)
    (entry,) = collect_submissions(tmp_path / "lb").entries
    assert entry.record["measures"]["drop_fss"]["label"] == "Drop_FSS"  # rebuilt from the old report
    assert entry.record["audit"] is None and entry.record["group_tests"] is None
    (view,) = build_views([entry], {})
    assert [s.contrast for s in view.sections] == ["all", "gender"]


def test_a_submission_from_schema_1_1_without_the_new_fields_is_accepted(tmp_path, plugins):
    from tests.test_leaderboard_support import rewrite_record

    sub = submit(str(write_fake_run(tmp_path / "ws", editor="a")), out=tmp_path / "lb" / "submissions",
                 plugins=plugins)

    def as_1_1(record):
        record["schema_version"] = "1.1"
        for key in ("measures", "group_tests", "judge_panel", "audit"):
            record.pop(key)

    rewrite_record(sub, as_1_1)
    result = build_leaderboard(tmp_path / "lb", plugins=plugins)
    assert not result.collection.rejected and len(result.collection.entries) == 1


def test_a_view_names_its_ranking_value_and_sources():
    with pytest.raises(ValueError, match="rank_by"):
        ViewSpec("x", "x", "x", (ValueSpec("a"),), rank_by="b")
    with pytest.raises(ValueError, match="source"):
        ValueSpec("a", "no where", read=dict)
    with pytest.raises(ValueError, match="read function"):
        ValueSpec("a", "audit")  # a section's value without a way to read it
    with pytest.raises(ValueError, match="read function"):
        ValueSpec("a", read=dict)  # a session metric is read by name


def test_named_views_of_runs_in_a_real_mlflow_store(tmp_path, plugins):
    """The leaderboard reads runs from MLflow (sqlite backend, artifacts on disk) as it reads submissions."""
    from faceedit_bench_mlflow.runs import mlflow_client
    from faceedit_bench_mlflow.tracker import RUN_KEY_TAG
    from mlflow import MlflowClient

    uri = f"sqlite:///{(tmp_path / 'mlflow.db').as_posix()}"
    creator = MlflowClient(tracking_uri=uri)
    experiment = creator.create_experiment("faceedit/pose", artifact_location=(tmp_path / "artifacts").as_uri())
    for editor, soft, score in (("tracked_a", 0.25, 55.0), ("tracked_b", 0.05, 35.0)):
        run_dir = write_named_run(tmp_path / "ws", editor=editor, soft_erasure=soft, race_change=0.1, creval=score)
        key = json.loads((run_dir / "report.json").read_text())["run"]["key"]
        run = creator.create_run(experiment, tags={RUN_KEY_TAG: key})
        for name in ("report.json", "steps.csv", "config.yaml"):
            creator.log_artifact(run.info.run_id, str(run_dir / name))
        creator.set_terminated(run.info.run_id, "FINISHED")
    mlflow_client(uri)  # the store exists: the leaderboard's client opens it
    result = build_leaderboard(tmp_path / "lb", tracking_uri=uri, plugins=plugins)
    assert result.n_runs == 2 and not result.collection.rejected
    (view,) = build_views(result.collection.entries, {})
    assert _editors(_section(view, "audit")) == ["tracked_b", "tracked_a"]
    assert _editors(_section(view, "creval")) == ["tracked_a", "tracked_b"]
    assert all(e.status == "unverified" and e.source == "mlflow" for e in result.collection.entries)


def test_verification_compares_the_audit_rates_within_a_point():
    from faceedit_bench_audit.audit.section import verify as _compare_audit

    from faceedit_bench.leaderboard.reproduction import Comparer as _Comparer

    def audit(rate, gap, by="race"):
        return {"rates": {"soft_erasure_rate": {"rate": rate, "ci_low": 0.1, "ci_high": 0.3, "n": 40}},
                "disparity": {"soft_erasure_rate": [{"max_minus_min_pp": gap, "by": by}]}}

    same = _Comparer()
    _compare_audit(same, audit(0.200, 10.0), audit(0.205, 10.6))
    assert same.mismatches == [] and same.compared == 8
    off = _Comparer()
    _compare_audit(off, audit(0.20, 10.0), audit(0.25, 13.0))
    assert [m.field for m in off.mismatches] == ["audit.rates.soft_erasure_rate.rate",
                                                 "audit.disparity.soft_erasure_rate.race"]
    hostile = _Comparer()
    _compare_audit(hostile, audit("0.2", 10.0), audit(0.2, 10.0))  # text where a number belongs: a mismatch
    assert [m.field for m in hostile.mismatches] == ["audit.rates.soft_erasure_rate.rate"]
    missing = _Comparer()
    _compare_audit(missing, audit(0.2, 10.0), None)  # stated but not reproduced
    assert "audit.rates (names)" in [m.field for m in missing.mismatches]
    nothing = _Comparer()
    _compare_audit(nothing, None, audit(0.2, 10.0))  # a submission without the audit: nothing to compare
    assert nothing.compared == 0


def test_a_k_group_attribute_shows_its_spread_and_kruskal_wallis_beside_the_groups(tmp_path, plugins):
    import json as _json

    run = write_named_run(tmp_path / "ws", editor="raced", group_tests=True)
    report = _json.loads((run / "report.json").read_text())
    report["groups"]["race"] = {race: {"sessions_included": 3, "sessions_excluded": {},
                                       "metrics": {"drop_fss": g}}
                                for race, g in report["group_tests"]["k_groups"]["race"]["drop_fss"]["groups"].items()}
    (run / "report.json").write_text(_json.dumps(report))
    submit(str(run), out=tmp_path / "lb" / "submissions", plugins=plugins)
    (view,) = build_views(collect_submissions(tmp_path / "lb").entries, {})
    race = _section(view, "race")
    cells = _cells(race, race.rows[0])
    assert cells["drop_fss · White"].text.startswith("4.000")
    assert cells["max−min · drop_fss"].text == "2.000 [0.500, 3.500]" and cells["max−min · drop_fss"].sub == "worst: White"
    assert cells["Kruskal–Wallis · drop_fss"].text == "p = 0.061" and cells["Kruskal–Wallis · drop_fss"].sub == "H 5.600, df 2"
    assert cells["bias · drop_fss"].text == "not tested"  # two-group WD tests are for two-group contrasts
    gender = _section(view, "gender")
    assert not any(c.title.startswith("max−min") for c in gender.columns)


def test_markup_in_a_submissions_labels_and_audit_stays_text(tmp_path, plugins):
    from tests.test_leaderboard_support import rewrite_record

    hostile = '<script>alert(1)</script>'
    sub = _submit(tmp_path, plugins, editor="sly", soft_erasure=0.2, creval=50.0, panel=True, group_tests=True)

    def inject(record):
        record["measures"]["creval"]["label"] = hostile
        record["measures"]["soft_erasure_rate"]["label"] = hostile
        record["audit"]["disparity"]["soft_erasure_rate"]["max_group"] = hostile
        record["judge_panel"]["rule"]["primary"] = hostile
        record["audit"]["rates"]["soft_erasure_rate"]["rate"] = "0.2"  # text where a number belongs

    rewrite_record(sub, inject)
    result = build_leaderboard(tmp_path / "lb", plugins=plugins)
    assert not result.collection.rejected
    page = result.page.read_text()
    assert hostile not in page and "&lt;script&gt;alert(1)&lt;/script&gt;" in page
    assert "<script>" not in result.table.read_text()
    (view,) = build_views(result.collection.entries, {})
    audit = _section(view, "audit")
    assert audit.columns[3].title == f"{hostile} (%)"  # shown as text (escaped above)
    assert audit.rows[0].cells[3].text == "n/a"  # not a number: no value, never a made-up one


def test_a_metric_this_installation_lacks_gets_the_tolerance_its_report_states(tmp_path, plugins):
    sub = _submit(tmp_path, plugins, editor="hats", plugin_score=3.0)
    record = json.loads((sub / "submission.json").read_text())
    assert record["measures"]["hat_present"]["requires"] == ["judge"]  # not registered here: the report says so
    assert record["metrics"]["hat_present"]["tolerance"] == 2.5 and record["metrics"]["drop_fss"]["tolerance"] == 1e-4


def test_the_shapes_read_here_follow_the_run_report_schema(tmp_path):
    """The audit's rates and disparities, measures with labels and bounds, group tests and panel counts, as
    docs/leaderboard_views.md states them, validate against run_report.schema.json (1.3)."""

    import jsonschema

    schema = installed_report_schema()  # the audit's part is plugins/audit's section
    run = write_named_run(tmp_path / "ws", editor="all", soft_erasure=0.2, race_change=0.1, creval=50.0,
                          plugin_score=3.0, panel=True, group_tests=True)
    report = json.loads((run / "report.json").read_text())
    jsonschema.validate(report, schema)
    assert report["measures"]["soft_erasure_rate"]["section"] == "audit"
    assert report["measures"]["creval"]["bounds"] == [0.0, 100.0]
    report["audit"]["disparity"]["race_change_rate"] = {"max_minus_min_pp": 3.0}  # no "by": which groups?
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate(report, schema)
