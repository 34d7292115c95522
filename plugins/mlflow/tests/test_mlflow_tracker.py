"""The tracker against a real sqlite store, driven through pluggy hook calls."""

from __future__ import annotations

import dataclasses
import hashlib
import importlib
import importlib.metadata
import logging
import math
import shutil
import signal
from pathlib import Path
from typing import Any

import pytest
from faceedit_bench_mlflow.tracker import MlflowTracker, MlflowTrackerError
from mlflow import MlflowClient
from mlflow_helpers import lifecycle, make_pm, only_run, run_end, step

from faceedit_bench.api import Outcome
from faceedit_bench.api.testing import TrackerContract
from faceedit_bench.testing import RunStopped


def _artifact_paths(client: Any, run_id: str, path: str | None = None) -> set[str]:
    found: set[str] = set()
    for info in client.list_artifacts(run_id, path):
        found |= _artifact_paths(client, run_id, info.path) if info.is_dir else {info.path}
    return found


def test_run_recorded_with_tags_params_metrics_artifacts(tracker, make_run, client, experiment, tmp_path):
    (tmp_path / "report.json").write_text('{"ok": true}')
    sheets = tmp_path / "sheets"
    (sheets / "by_axis").mkdir(parents=True)
    (sheets / "s1.png").write_bytes(b"png1")
    (sheets / "by_axis" / "hair.png").write_bytes(b"png2")
    run = make_run()
    lifecycle(
        make_pm(tracker),
        run,
        outcomes=["ok", "ok", "ok", "refused"],
        metrics={"fss_mean": 0.8, "edit_success_rate": 0.5},
        artifacts={"report": str(tmp_path / "report.json"), "contact_sheets": str(sheets)},
    )

    mlrun = only_run(client, experiment)
    assert mlrun.info.status == "FINISHED"
    assert mlrun.info.run_name == "dummy@tiny"
    tags = mlrun.data.tags
    assert tags["faceedit.run_key"] == "key-1"
    assert tags["mlflow.runName"] == "dummy@tiny"
    # the component's own version from describe(), and the plugin distribution's version beside it
    assert (tags["editor"], tags["editor.version"]) == ("dummy", "1")
    assert (tags["editor.provider"], tags["editor.provider_version"]) == ("builtin", "0.1.0")
    assert (tags["embedder"], tags["embedder.provider"]) == ("dlib", "faceedit-bench-dlib")
    assert "embedder.version" not in tags  # its describe() states none: nothing invented
    assert tags["testset"] == "tiny" and tags["faceedit_bench.version"] == "0.1.0"
    assert "faceedit.params_truncated" not in tags and "faceedit.error" not in tags
    assert mlrun.data.params == {"editor.name": "dummy", "limits.faces": "3"}

    metrics = mlrun.data.metrics
    assert metrics["fss_mean"] == pytest.approx(0.8) and metrics["edit_success_rate"] == 0.5
    assert (metrics["steps_ok"], metrics["steps_refused"], metrics["steps_api_error"]) == (3, 1, 0)
    stamps = {client.get_metric_history(mlrun.info.run_id, k)[0].timestamp for k in metrics}
    assert len(stamps) == 1, "all metrics of one run_end share one timestamp"

    assert _artifact_paths(client, mlrun.info.run_id) == {
        "report.json", "contact_sheets/s1.png", "contact_sheets/by_axis/hair.png"
    }
    local = client.download_artifacts(mlrun.info.run_id, "contact_sheets/by_axis/hair.png", str(tmp_path))
    assert Path(local).read_bytes() == b"png2"
    assert mlrun.info.artifact_uri.startswith((tmp_path / "artifacts").resolve().as_uri())


def test_rerun_of_same_key_reports_into_same_run(tracker, make_run, client, experiment):
    pm = make_pm(tracker)
    run = make_run("key-same")
    lifecycle(pm, run, outcomes=["ok", "api_error"], metrics={"fss_mean": 0.5})
    first = only_run(client, experiment)

    pm.hook.faceedit_run_start(run=run)
    tracker.opened(run)
    resumed = only_run(client, experiment)
    assert resumed.info.run_id == first.info.run_id
    assert resumed.info.status == "RUNNING"
    for outcome in ["ok", "ok"]:
        pm.hook.faceedit_step_done(run=run, step=step(outcome))
    run_end(pm, run=run, report={"metrics": {"fss_mean": 0.75}}, artifacts={})

    final = only_run(client, experiment)
    assert final.info.run_id == first.info.run_id and final.info.status == "FINISHED"
    assert final.data.metrics["fss_mean"] == 0.75
    assert final.data.metrics["steps_ok"] == 2
    assert final.data.metrics["steps_api_error"] == 0, "a count from the earlier attempt must not linger"


def test_new_key_creates_new_run(tracker, make_run, client, experiment):
    pm = make_pm(tracker)
    lifecycle(pm, make_run("key-a"))
    lifecycle(pm, make_run("key-b", run_name="other@tiny"))
    exp = client.get_experiment_by_name(experiment)
    runs = client.search_runs([exp.experiment_id])
    assert sorted(r.data.tags["faceedit.run_key"] for r in runs) == ["key-a", "key-b"]
    assert len({r.info.run_id for r in runs}) == 2


def test_changed_param_on_resume_becomes_tag(tracker, make_run, client, experiment, caplog):
    pm = make_pm(tracker)
    lifecycle(pm, make_run("key-p", params={"a": "1", "same": "x"}))
    with caplog.at_level(logging.WARNING):
        lifecycle(pm, make_run("key-p", params={"a": "2", "same": "x", "b": "3"}))
    mlrun = only_run(client, experiment)
    assert mlrun.info.status == "FINISHED"
    assert mlrun.data.params == {"a": "1", "same": "x", "b": "3"}
    assert mlrun.data.tags["faceedit.param_changed.a"] == "2"
    assert "faceedit.param_changed.same" not in mlrun.data.tags
    assert "param a changed" in caplog.text


def test_param_policy_truncates_renames_redacts_and_batches(tracker, make_run, client, experiment):
    long_value = "v" * 5990 + "0123456789" * 10  # 6090 characters, over MLflow's 6000
    params = {"prompt.template": long_value, "short": "ok", "weird key[0]/x": "1", "editor.api_key": "sk-123"}
    params.update({f"many.p{i:03d}": str(i) for i in range(250)})  # several batches of 100
    lifecycle(make_pm(tracker), make_run(params=params))
    mlrun = only_run(client, experiment)
    stored = mlrun.data.params["prompt.template"]
    assert len(stored) == 6000
    assert stored.endswith(f"…[truncated sha256:{hashlib.sha256(long_value.encode()).hexdigest()[:8]}]")
    assert stored.startswith("v" * 5900)
    assert mlrun.data.tags["faceedit.params_truncated"] == "prompt.template"
    assert mlrun.data.params["short"] == "ok"
    assert mlrun.data.params["weird key_0_/x"] == "1"
    assert mlrun.data.params["editor.api_key"] == "<redacted>"
    assert len(mlrun.data.params) == 254


def test_metric_keys_made_snake_case_and_non_numbers_skipped(tracker, make_run, client, experiment, caplog):
    metrics = {"FSS-mean": 0.5, "identity.drift rate": 2, "count": True, "nan_metric": math.nan, "text": "x"}
    with caplog.at_level(logging.WARNING):
        lifecycle(make_pm(tracker), make_run(), metrics=metrics)
    logged = only_run(client, experiment).data.metrics
    assert logged["FSS_mean"] == 0.5 and logged["identity_drift_rate"] == 2 and logged["count"] == 1
    assert math.isnan(logged["nan_metric"])
    assert "text" not in logged and "metric text is not a number" in caplog.text


def test_metrics_go_in_batches(tracker, make_run, client, experiment, monkeypatch):
    calls: list[tuple[int, int, int]] = []
    original = MlflowClient.log_batch

    def spy(self, run_id, metrics=(), params=(), tags=(), synchronous=None):
        calls.append((len(metrics), len(params), len(tags)))
        return original(self, run_id, metrics=metrics, params=params, tags=tags, synchronous=synchronous)

    def forbidden(*args, **kwargs):
        raise AssertionError("one call per metric")

    monkeypatch.setattr(MlflowClient, "log_batch", spy)
    monkeypatch.setattr(MlflowClient, "log_metric", forbidden)
    metrics = {f"metric_{i:04d}": i / 3 for i in range(1500)}
    lifecycle(make_pm(tracker), make_run(), metrics=metrics)
    metric_batches = [m for m, _, _ in calls if m]
    outcomes = len(list(Outcome))  # steps_<outcome> for every outcome
    assert metric_batches == [1000, 500 + outcomes]  # 1500 report metrics + the step outcomes
    assert len(only_run(client, experiment).data.metrics) == 1500 + outcomes


def test_step_done_makes_no_mlflow_call(tracker, make_run, monkeypatch):
    pm = make_pm(tracker)
    run = make_run()
    pm.hook.faceedit_run_start(run=run)
    tracker.opened(run)

    def forbidden(*args, **kwargs):
        raise AssertionError("MLflow called from step_done")

    for name in ("log_batch", "log_metric", "set_tag", "log_param", "update_run", "get_run"):
        monkeypatch.setattr(MlflowClient, name, forbidden)
    for k in range(200):
        pm.hook.faceedit_step_done(run=run, step=step("ok", k))
    assert tracker._outcomes[run.run_key] == {"ok": 200}


def test_run_error_marks_failed_and_rerun_clears_it(tracker, make_run, client, experiment):
    pm = make_pm(tracker)
    run = make_run("key-e")
    pm.hook.faceedit_run_start(run=run)
    pm.hook.faceedit_run_error(run=run, error=ValueError("boom\nsecond line\n" + "x" * 2000))
    failed = only_run(client, experiment)
    assert failed.info.status == "FAILED"
    assert failed.data.tags["faceedit.error"] == "ValueError: boom"

    lifecycle(pm, run)
    again = only_run(client, experiment)
    assert again.info.run_id == failed.info.run_id and again.info.status == "FINISHED"
    assert "faceedit.error" not in again.data.tags


def test_run_error_never_raises_even_if_mlflow_fails(tracker, make_run, client, experiment):
    pm = make_pm(tracker)
    run = make_run("key-broken")
    pm.hook.faceedit_run_error(run=run, error=RuntimeError("before start"))  # nothing started: no raise
    pm.hook.faceedit_run_start(run=run)
    tracker.opened(run)

    def broken(*args, **kwargs):
        raise ConnectionError("tracking store is down")

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(MlflowClient, "set_tag", broken)
        patch.setattr(MlflowClient, "set_terminated", broken)
        pm.hook.faceedit_run_error(run=run, error=KeyboardInterrupt())
    assert only_run(client, experiment).info.status == "RUNNING"  # MLflow really refused both calls


def test_run_end_failure_marks_failed_and_raises(tracker, make_run, client, experiment, monkeypatch):
    def failing(*args, **kwargs):
        raise KeyError("missing aggregate")

    monkeypatch.setattr(importlib.import_module("faceedit_bench_mlflow.tracker"), "_series", failing)
    pm = make_pm(tracker)
    run = make_run()
    pm.hook.faceedit_run_start(run=run)
    with pytest.raises(KeyError):
        run_end(pm, run=run, report={}, artifacts={})
    mlrun = only_run(client, experiment)
    assert mlrun.info.status == "FAILED"
    assert mlrun.data.tags["faceedit.error"] == "KeyError: 'missing aggregate'"


def test_contact_sheets_skipped_when_disabled(store_uri, make_run, client, experiment, tmp_path, caplog):
    (tmp_path / "sheets").mkdir()
    (tmp_path / "sheets" / "s1.png").write_bytes(b"png")
    (tmp_path / "table.jsonl").write_text("{}\n")
    tracker = MlflowTracker(tracking_uri=store_uri, log_contact_sheets=False)
    artifacts = {
        "contact_sheets": str(tmp_path / "sheets"),
        "samples": "table.jsonl",  # relative: taken from the run's output_dir
        "missing": str(tmp_path / "nope.json"),
    }
    (tmp_path / "ws" / "out").mkdir(parents=True)
    (tmp_path / "ws" / "out" / "table.jsonl").write_text("{}\n")
    with caplog.at_level(logging.WARNING):
        lifecycle(make_pm(tracker), make_run(), artifacts=artifacts)
    mlrun = only_run(client, experiment)
    assert _artifact_paths(client, mlrun.info.run_id) == {"table.jsonl"}
    assert mlrun.info.status == "FINISHED"
    assert "nope.json does not exist" in caplog.text


def test_default_store_is_absolute_sqlite_under_workspace(make_run, tmp_path, monkeypatch, experiment):
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    monkeypatch.chdir(elsewhere)
    run = make_run()
    run = dataclasses.replace(run, workspace=Path("..") / "ws")  # relative on purpose
    (tmp_path / "r.json").write_text("{}")
    tracker = MlflowTracker()
    lifecycle(make_pm(tracker), run, artifacts={"report": str(tmp_path / "r.json")})

    db = (tmp_path / "ws" / "mlflow.db").resolve()
    assert db.is_file() and not (elsewhere / "mlflow.db").exists()
    uri = f"sqlite:///{db.as_posix()}"
    assert tracker.describe()["tracking_uri"] == uri
    client = MlflowClient(tracking_uri=uri)
    exp = client.get_experiment_by_name(experiment)
    assert exp.artifact_location == (tmp_path / "ws" / "mlartifacts").resolve().as_uri()
    assert list((tmp_path / "ws" / "mlartifacts").rglob("r.json"))
    assert only_run(client, experiment).info.status == "FINISHED"


def test_tracking_uri_from_env_unless_given(monkeypatch, store_uri):
    monkeypatch.setenv("MLFLOW_TRACKING_URI", store_uri)
    assert MlflowTracker().tracking_uri == store_uri
    assert MlflowTracker(tracking_uri="http://127.0.0.1:1").tracking_uri == "http://127.0.0.1:1"


def test_describe_removes_password():
    described = MlflowTracker(tracking_uri="http://alice:s3cret@127.0.0.1:5000/path").describe()
    assert described == {
        "name": "mlflow",
        "tracking_uri": "http://alice@127.0.0.1:5000/path",
        "mlflow_version": importlib.metadata.version("mlflow"),
    }
    assert "s3cret" not in repr(described)


@pytest.mark.parametrize("stop, signal_name", [(KeyboardInterrupt(), "SIGINT"),
                                               (RunStopped(signal.SIGTERM), "SIGTERM"),
                                               (RunStopped(signal.SIGHUP), "SIGHUP")])
def test_a_run_stopped_by_a_signal_is_killed_not_failed_and_resumes_as_the_same_run(
        tracker, make_run, client, experiment, stop, signal_name):
    pm = make_pm(tracker)
    run = make_run("key-stopped")
    pm.hook.faceedit_run_start(run=run)
    pm.hook.faceedit_run_error(run=run, error=stop)
    killed = only_run(client, experiment)
    assert killed.info.status == "KILLED" and killed.data.tags["faceedit.stopped_by"] == signal_name
    assert "faceedit.error" not in killed.data.tags

    lifecycle(pm, run)
    again = only_run(client, experiment)
    assert again.info.run_id == killed.info.run_id and again.info.status == "FINISHED"
    assert "faceedit.stopped_by" not in again.data.tags


def test_experiments_are_runs_experiments_unless_the_user_chose_another_kind(tracker, make_run, client, experiment):
    lifecycle(make_pm(tracker), make_run("key-kind"))
    assert client.get_experiment_by_name(experiment).tags["mlflow.experimentKind"] == "custom_model_development"
    older = client.create_experiment(f"{experiment}-older")  # made by an earlier version: no kind yet
    chosen = client.create_experiment(f"{experiment}-chosen", tags={"mlflow.experimentKind": "genai_development"})
    for name in (f"{experiment}-older", f"{experiment}-chosen"):
        lifecycle(make_pm(MlflowTracker(tracking_uri=client.tracking_uri, experiment_name=name)), make_run("k"))
    assert client.get_experiment(older).tags["mlflow.experimentKind"] == "custom_model_development"
    assert client.get_experiment(chosen).tags["mlflow.experimentKind"] == "genai_development"


def test_deleted_experiment_is_a_clear_error(tracker, make_run, client, experiment):
    client.delete_experiment(client.create_experiment(experiment))
    run = make_run()
    make_pm(tracker).hook.faceedit_run_start(run=run)
    with pytest.raises(MlflowTrackerError, match="mlflow experiments restore"):
        tracker.opened(run)


def test_run_start_leaves_mlflow_to_a_thread_that_waits_for_the_first_step(tracker, make_run, client, experiment):
    pm = make_pm(tracker)
    run = make_run("key-later")
    tracker.start_after_s = 600.0  # only the first step starts it here
    pm.hook.faceedit_run_start(run=run)
    assert client.get_experiment_by_name(experiment) is None, "MLflow was opened before any work was under way"
    # A resumed run replays its stored steps first: they made no call, so they do not open MLflow...
    pm.hook.faceedit_step_done(run=run, step=dataclasses.replace(step("ok", k=1), resumed=True))
    assert not tracker._opening[run.run_key]._go.is_set(), "a replayed step opened MLflow"
    pm.hook.faceedit_step_done(run=run, step=step("ok", k=2))  # ...the first new step does
    assert tracker.opened(run).run_id == only_run(client, experiment).info.run_id
    run_end(pm, run=run, report={"metrics": {}}, artifacts={})
    assert only_run(client, experiment).data.metrics["steps_ok"] == 2


def test_a_store_that_cannot_be_opened_stops_the_run_at_its_next_hook(make_run, tmp_path):
    """The opening's error reaches the run: the next step done raises it (the flow then stops), and so
    does the run's end; the error says which store and how to go on."""
    db = tmp_path / "mlflow.db"
    db.write_text("my notes, not a database")
    tracker = MlflowTracker(tracking_uri=f"sqlite:///{db}")
    pm = make_pm(tracker)
    run = make_run("key-broken-store")
    pm.hook.faceedit_run_start(run=run)
    with pytest.raises(MlflowTrackerError, match="could not open the store .*tracking=none"):
        tracker.opened(run)
    with pytest.raises(MlflowTrackerError, match="could not open the store"):
        pm.hook.faceedit_step_done(run=run, step=step("ok"))
    with pytest.raises(MlflowTrackerError, match="could not open the store"):
        run_end(pm, run=run, report={"metrics": {}}, artifacts={})
    pm.hook.faceedit_run_error(run=run, error=RuntimeError("after"))  # nothing opened: nothing to mark, no raise
    assert db.read_text() == "my notes, not a database"


def test_experiment_name_param_overrides_run(store_uri, make_run, client):
    tracker = MlflowTracker(tracking_uri=store_uri, experiment_name="faceedit/override-test")
    lifecycle(make_pm(tracker), make_run("key-override"))
    runs = client.search_runs([client.get_experiment_by_name("faceedit/override-test").experiment_id])
    assert [r.data.tags["faceedit.run_key"] for r in runs] == ["key-override"]


def _full_run(make_run: Any, **config: Any) -> Any:
    """A run with every kind of component, a judge and limits, as the engine builds it."""
    from faceedit_bench.testing import ComponentInfo

    run = make_run(run_name="nano_banana@pose/sample/dlib")
    components = {
        "editor": ComponentInfo("editor", "nano_banana", "gemini", "0.3.0",
                                {"model": "gemini-2.5-flash-image", "version": "gemini-2.5-flash-image"}),
        "testset": ComponentInfo("testset", "pose", "builtin", "0.1.0",
                                 {"name": "pose", "version": "1.0.0", "content_hash": "f3d7" * 16}),
        "dataset": ComponentInfo("dataset", "sample", "builtin", "0.1.0", {"name": "sample", "n_faces": 8}),
        "embedder": ComponentInfo("embedder", "dlib", "dlib", "0.2.0", {"version": "19.24+abc", "similarity": "s"}),
        "judge": ComponentInfo("judge", "gemini", "gemini", "0.3.0", {"model": "gemini-2.5-flash"}),
    }
    return dataclasses.replace(run, components=components, config={"run": {"max_faces": 2, "seed": 0, **config}})


def _trajectory(values: list[float]) -> list[dict[str, Any]]:
    return [{"k": k, "mean": v, "ci_low": v - 0.01, "ci_high": v + 0.01, "n": 3, "sd": 0.01}
            for k, v in enumerate(values)]


def test_fss_trajectory_is_one_metric_with_a_step_per_edit(tracker, make_run, client, experiment):
    """One metric ``fss`` at steps k = 0..4 (drawn as a line), for the run and for every group."""
    report = {"metrics": {}, "trajectory": {"fss": _trajectory([0.9, 0.8, 0.7, 0.6, 0.5])},
              "groups": {"gender": {"female": {"trajectory": {"fss": _trajectory([0.9, 0.85, 0.8, 0.75, 0.7])}}}}}
    pm, run = make_pm(tracker), make_run()
    pm.hook.faceedit_run_start(run=run)
    run_end(pm, run=run, report=report, artifacts={})
    mlrun = only_run(client, experiment)

    def history(key: str) -> list[tuple[int, float]]:
        return sorted((m.step, round(m.value, 6)) for m in client.get_metric_history(mlrun.info.run_id, key))

    assert history("fss") == [(0, 0.9), (1, 0.8), (2, 0.7), (3, 0.6), (4, 0.5)]
    assert history("fss_ci_low")[1] == (1, 0.79)
    assert history("gender_female_fss") == [(0, 0.9), (1, 0.85), (2, 0.8), (3, 0.75), (4, 0.7)]
    assert not [k for k in mlrun.data.metrics if "step" in k and not k.startswith("steps_")]  # no fss_step_k


def test_run_name_description_versions_and_inputs(tracker, make_run, client, experiment, capsys):
    run = _full_run(make_run)
    lifecycle(make_pm(tracker), run)
    mlrun = only_run(client, experiment)
    assert mlrun.info.run_name == "nano_banana@pose/sample/dlib judge=gemini max_faces=2"
    tags = mlrun.data.tags
    assert tags["mlflow.runName"] == mlrun.info.run_name
    note = tags["mlflow.note.content"]
    assert "**nano_banana**" in note and "gemini-2.5-flash-image" in note and "max_faces=2" in note
    assert "f3d7f3d7" in note and "judged" in note
    assert (tags["editor.version"], tags["judge.version"], tags["testset.version"]) == (
        "gemini-2.5-flash-image", "gemini-2.5-flash", "1.0.0")
    assert tags["embedder.version"] == "19.24+abc" and tags["editor.provider_version"] == "0.3.0"

    inputs = {d.dataset.name: d for d in mlrun.inputs.dataset_inputs}
    assert set(inputs) == {"sample", "pose"}
    assert inputs["sample"].dataset.digest == tags["dataset.identity"][:36]
    assert inputs["pose"].dataset.digest == ("f3d7" * 16)[:36]
    assert {t.key: t.value for t in inputs["pose"].tags}["mlflow.data.context"] == "testset"
    assert inputs["sample"].dataset.source_type == "code" and "dataset/sample" in inputs["sample"].dataset.source
    printed = capsys.readouterr().out
    assert f"MLflow: new run {mlrun.info.run_id}" in printed and "tracking URI:\n  sqlite:///" in printed
    assert f"MLflow: run {mlrun.info.run_id} FINISHED" in printed
    # at most 100 columns, as the rest of the console; a link or a path alone on its line stays whole
    assert all(len(line) <= 100 or len(line.split()) == 1 for line in printed.splitlines()), printed
    assert "  --backend-store-uri sqlite:///" in printed and "?workflowType=machine_learning" in printed


def test_resumed_run_prints_its_id_and_keeps_one_input_per_dataset(tracker, make_run, client, experiment, capsys,
                                                                   tmp_path):
    root = tmp_path / "faces"
    root.mkdir()
    run = _full_run(make_run)
    run.components["dataset"] = dataclasses.replace(run.components["dataset"], name="folder",
                                                    description={"name": "folder", "root": str(root)})
    lifecycle(make_pm(tracker), run)
    lifecycle(make_pm(tracker), run, outcomes=["ok"])  # a new step: the resumed run has work to log
    mlrun = only_run(client, experiment)
    printed = capsys.readouterr().out
    assert f"MLflow: resuming run {mlrun.info.run_id}" in printed
    names = sorted(d.dataset.name for d in mlrun.inputs.dataset_inputs)
    assert names == ["folder", "pose"]
    folder = next(d.dataset for d in mlrun.inputs.dataset_inputs if d.dataset.name == "folder")
    assert root.as_uri() in folder.source


def test_a_trajectory_never_overwrites_the_session_metric_of_the_same_name(tracker, make_run, client, experiment):
    report = {"metrics": {"sc": 61.0}, "trajectory": {"fss": _trajectory([1.0] * 5),
                                                       "sc": _trajectory([70.0, 60.0, 50.0, 40.0])[:4]}}
    pm, run = make_pm(tracker), make_run()
    pm.hook.faceedit_run_start(run=run)
    run_end(pm, run=run, report=report, artifacts={})
    mlrun = only_run(client, experiment)
    assert mlrun.data.metrics["sc"] == 61.0
    assert [m.value for m in client.get_metric_history(mlrun.info.run_id, "sc")] == [61.0]
    assert len(client.get_metric_history(mlrun.info.run_id, "sc_k")) == 4


class TestMlflowTrackerContract(TrackerContract):
    """The tracker passes the contract every tracker must, against the real sqlite store."""

    @pytest.fixture
    def run_info(self, make_run):
        return make_run("contract-run")

    @pytest.fixture
    def recorded(self, client, experiment):
        def ended(run_key: str) -> bool:
            exp = client.get_experiment_by_name(experiment)
            runs = client.search_runs([exp.experiment_id], f"tags.`faceedit.run_key` = '{run_key}'") if exp else []
            return len(runs) == 1 and runs[0].info.status in ("FINISHED", "FAILED")
        return ended


def _relaunch(tracker: MlflowTracker, run: Any, outcomes: list[str], report: dict[str, Any],
              resumed: bool = True, artifacts: dict[str, str] | None = None) -> None:
    """A launch of ``run`` whose steps are all replayed from the ledger (none makes a call), or all new."""
    pm = make_pm(tracker)
    pm.hook.faceedit_run_start(run=run)
    for k, outcome in enumerate(outcomes):
        pm.hook.faceedit_step_done(run=run, step=dataclasses.replace(step(outcome, k), resumed=resumed))
    run_end(pm, run=run, report=report, artifacts=artifacts or {})


def test_a_launch_with_the_results_its_run_holds_logs_nothing_and_any_change_is_logged(
        store_uri, make_run, client, experiment, tmp_path, capsys):
    """A rerun of a finished run logs nothing (no MLflow client is made): its report differs only in what
    describes the launch. A changed result, or a run no longer FINISHED, is logged as before."""
    def report(fss: float, launch: float) -> dict[str, Any]:
        return {"metrics": {"fss_mean": fss}, "performance": {"score_stage_s": launch},
                "run": {"key": "key-again", "created_at": f"2026-01-01T00:00:{launch:02.0f}Z", "wall_time_s": launch,
                        "computed": {"edit_calls": int(launch)}, "complete": True},
                "cost": {"new_usd": launch, "estimated_usd": 1.0}, "calls": {"editor": {"requests": int(launch)}}}

    def tracker() -> MlflowTracker:
        return MlflowTracker(tracking_uri=store_uri, artifact_location=str(tmp_path / "artifacts"))

    class NoMlflow(MlflowTracker):
        def _client(self, uri: str) -> Any:
            raise AssertionError("MLflow was opened for a launch with nothing new to log")

    run, outcomes = make_run("key-again"), ["ok", "refused"]
    _relaunch(tracker(), run, outcomes, report(0.5, 3.0), resumed=False)
    first = only_run(client, experiment)
    capsys.readouterr()

    quiet = NoMlflow(tracking_uri=store_uri, artifact_location=str(tmp_path / "artifacts"))
    _relaunch(quiet, run, outcomes, report(0.5, 7.0))  # the launch differs, the results do not
    again = only_run(client, experiment)
    assert (again.info.status, again.info.end_time) == ("FINISHED", first.info.end_time)
    assert f"MLflow: run {first.info.run_id} already holds these results (FINISHED)" in capsys.readouterr().out

    _relaunch(tracker(), run, outcomes, report(0.75, 8.0))  # a changed result is logged
    changed = only_run(client, experiment)
    assert changed.info.run_id == first.info.run_id and changed.data.metrics["fss_mean"] == 0.75

    _relaunch(tracker(), run, outcomes[:1], report(0.75, 9.0))  # so are changed step counts
    assert only_run(client, experiment).data.metrics["steps_refused"] == 0

    client.set_terminated(first.info.run_id, "FAILED")  # e.g. a later launch's logging failed
    _relaunch(tracker(), run, outcomes[:1], report(0.75, 10.0))
    assert only_run(client, experiment).info.status == "FINISHED"
    _relaunch(quiet, run, outcomes[:1], report(0.75, 11.0))
    with pytest.raises(MlflowTrackerError, match="MLflow was opened"):  # a changed tracker setting is a change too
        _relaunch(NoMlflow(tracking_uri=store_uri, artifact_location=str(tmp_path / "elsewhere")), run,
                  outcomes[:1], report(0.75, 12.0))


def test_a_launch_logs_again_when_the_runs_local_artifact_folder_is_gone(store_uri, make_run, client, experiment,
                                                                        tmp_path):
    (tmp_path / "report.json").write_text('{"ok": true}')
    artifacts, report = {"report": str(tmp_path / "report.json")}, {"metrics": {"fss_mean": 0.5}}
    tracker = MlflowTracker(tracking_uri=store_uri, artifact_location=str(tmp_path / "artifacts"))
    run = make_run("key-artifacts")
    _relaunch(tracker, run, ["ok"], report, resumed=False, artifacts=artifacts)
    first = only_run(client, experiment)
    shutil.rmtree(tmp_path / "artifacts")
    _relaunch(tracker, run, ["ok"], report, artifacts=artifacts)
    again = only_run(client, experiment)
    assert again.info.end_time > first.info.end_time and _artifact_paths(client, again.info.run_id) == {"report.json"}


def test_a_preliminary_run_is_tagged_so(tracker, make_run, client, experiment):
    pm, run = make_pm(tracker), make_run()
    pm.hook.faceedit_run_start(run=run)
    report = {"metrics": {}, "sample_size": {"sessions": 10, "identities": 2, "preliminary": True}}
    run_end(pm, run=run, report=report, artifacts={})
    assert only_run(client, experiment).data.tags["faceedit.preliminary"] == "true"
