"""``faceedit-bench human report`` against a real run: the section lands in the run's report.json and
report.html, the human_* metrics in its MLflow run; a bad CSV exits 2 with the line and column."""

from __future__ import annotations

import csv
import json

import jsonschema
from audit_helpers import SCHEMA

from faceedit_bench.testing import run_cli
from tests.test_protocols import run, write_testset


def test_human_report_against_a_tracked_run(plugins, compose, synthetic, tmp_path, capsys):
    uri = f"sqlite:///{tmp_path / 'mlflow.db'}"
    path = write_testset(tmp_path / "k1.json", [
        {"session_id": "O-01", "steps": [{"instruction": "Present the person as a senior executive"}]},
        {"session_id": "V-05", "steps": [{"instruction": "Show the person thirty years later"}]}])
    report = run(plugins, compose, synthetic, path, "editor=noise", "tracking=mlflow",
                 f"tracking.params.tracking_uri={uri}")
    (run_dir,) = (tmp_path / "ws" / "runs").glob("noise-*")
    with (run_dir / "sessions.csv").open() as fh:
        sessions = list(csv.DictReader(fh))
    lines = ["item,rater,axis,score,condition"]
    for n, s in enumerate(sessions):
        for rater in range(3):
            lines.append(f"{s['face_id']}|{s['session_id']},r{rater},edit_success,{1 + (n + rater) % 5},baseline")
    ratings = tmp_path / "ratings.csv"
    ratings.write_text("\n".join(lines) + "\n")
    assert run_cli(["human", "report", str(ratings), "--run", str(run_dir), "--metric", "drop_fss",
                 "--tracking-uri", uri]) == 0
    out = capsys.readouterr()
    assert "Fleiss kappa" in out.out and "agreement with people" in out.out
    assert "human metrics logged to tracker run" in out.err
    section = json.loads((run_dir / "human_agreement.json").read_text())
    assert section["axes"]["edit_success"]["outputs"] == 8 == len(sessions)
    (agreement,) = section["metric_agreement"]  # no VLM axis in this run: drop_fss against people only
    assert agreement["metric"] == "drop_fss" and agreement["items"] == 8 and not agreement["same_direction"]
    stored = json.loads((run_dir / "report.json").read_text())
    assert stored["human_agreement"] == section and stored["metrics"] == report["metrics"]
    jsonschema.validate(stored["human_agreement"], SCHEMA["properties"]["human_agreement"])
    assert 'id="human-agreement"' in (run_dir / "report.html").read_text()
    from mlflow import MlflowClient

    client = MlflowClient(tracking_uri=uri)
    (mlflow_run,) = client.search_runs([e.experiment_id for e in client.search_experiments()])
    logged = mlflow_run.data.metrics
    assert logged["human_edit_success_mean"] == section["axes"]["edit_success"]["human"]["mean"]
    assert logged["human_edit_success_krippendorff_alpha"] == section["axes"]["edit_success"]["krippendorff_alpha"][
        "value"]
    assert "drop_fss" in logged  # the run's own metrics are still there
    # Rerunning the run (make run) keeps the evaluation attached to it, and the tracker logs nothing again.
    again = run(plugins, compose, synthetic, path, "editor=noise", "tracking=mlflow",
                f"tracking.params.tracking_uri={uri}")
    assert again["human_agreement"] == section == json.loads((run_dir / "report.json").read_text())["human_agreement"]
    assert 'id="human-agreement"' in (run_dir / "report.html").read_text()
    assert "already holds these results" in capsys.readouterr().out
    (same,) = client.search_runs([e.experiment_id for e in client.search_experiments()])
    assert same.info.run_id == mlflow_run.info.run_id and "human_edit_success_mean" in same.data.metrics


def test_a_bad_ratings_csv_exits_2_naming_the_line(tmp_path, capsys):
    ratings = tmp_path / "ratings.csv"
    ratings.write_text("item,rater,axis,score\na,r1,edit_success,3\na,r2,edit_success,high\n")
    assert run_cli(["human", "report", str(ratings), "--out", str(tmp_path / "out")]) == 2
    err = capsys.readouterr().err
    assert "line 3, column score: 'high' is not a number" in err and "Traceback" not in err
    assert not (tmp_path / "out").exists()  # nothing written before the input is known good


def test_human_report_alone_writes_the_section(tmp_path, capsys):
    ratings = tmp_path / "ratings.csv"
    ratings.write_text("item,rater,axis,score\na,r1,edit_success,3\na,r2,edit_success,4\nb,r1,edit_success,2\n"
                       "b,r2,edit_success,2\n")
    assert run_cli(["human", "report", str(ratings), "--out", str(tmp_path / "out"), "--json"]) == 0
    printed = json.loads(capsys.readouterr().out)
    assert printed["axes"]["edit_success"]["fleiss_kappa"]["units"] == 2
    assert "metric_agreement" not in printed  # no run to compare with
    assert (tmp_path / "out" / "human_agreement.html").is_file()
