"""The default experiment leaves a complete MLflow run in an embedded SQLite store."""

from __future__ import annotations

from pathlib import Path

import pytest

from faceedit_bench.run.experiment import build_experiment, run_experiment


@pytest.mark.slow
def test_default_experiment_is_tracked_in_mlflow(plugins, compose, tmp_path):
    from mlflow.tracking import MlflowClient

    cfg = compose("testset=pose", "run.max_faces=2", "run.max_sessions=2")  # default editor, dataset, tracking
    assert cfg.tracking.name == "mlflow" and cfg.embedder.name == "dlib" and cfg.dataset.name == "sample"
    report = run_experiment(build_experiment(cfg, plugins), plugins)
    rerun = run_experiment(build_experiment(cfg, plugins), plugins)  # the same results: nothing new to log

    db = Path(cfg.run.workspace) / "mlflow.db"
    client = MlflowClient(tracking_uri=f"sqlite:///{db}")
    experiment = client.get_experiment_by_name("faceedit/pose")
    (run,) = client.search_runs([experiment.experiment_id])
    assert run.info.status == "FINISHED"
    metrics, tags, params = run.data.metrics, run.data.tags, run.data.params
    assert metrics["drop_fss"] == pytest.approx(report["metrics"]["drop_fss"]["mean"]) == pytest.approx(0.0)
    history = client.get_metric_history(run.info.run_id, "fss")  # the trajectory: one metric, step = k
    assert sorted(m.step for m in history) == [0, 1, 2, 3, 4]  # logged once: the rerun had nothing new
    assert {m.step: m.value for m in history} == pytest.approx({p["k"]: p["mean"] for p in report["trajectory"]["fss"]})
    assert {m.step for m in client.get_metric_history(run.info.run_id, "gender_female_fss")} == {0, 1, 2, 3, 4}
    assert run.info.run_name == "identity@pose/sample/dlib max_faces=2 max_sessions=2"
    assert tags["mlflow.note.content"].startswith("faceedit_bench run **identity@pose")
    assert {d.dataset.name for d in run.inputs.dataset_inputs} == {"sample", "pose"}
    assert metrics["sessions_included"] == 4 and metrics["steps_ok"] == 16
    assert "gender_female_drop_fss" in metrics
    assert tags["testset.content_hash"] == report["testset"]["content_hash"]
    assert tags["embedder.provider"] == "dlib" and tags["embedder.provider_version"] and tags["faceedit_bench.git_sha"]
    assert tags["embedder.version"] == report["scales"]["embedder_version"]
    assert params["editor.name"] == "identity" and params["run.max_faces"] == "2"
    artifacts = {a.path for a in client.list_artifacts(run.info.run_id)}
    assert {"report.json", "steps.csv", "sessions.csv", "config.yaml", "contact_sheets"} <= artifacts
    sheets = client.list_artifacts(run.info.run_id, "contact_sheets")
    assert len(sheets) == 4
    assert rerun["run"]["computed"]["embeddings"] == 0
