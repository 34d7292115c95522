"""The arena attached to real tracked runs: each editor's MLflow run (a real sqlite store, recorded by the MLflow
tracker through the run hooks) gets the arena's metrics, the rewritten report.json and report.html, and the
arena's files."""

from __future__ import annotations

import json
import sys
from dataclasses import replace
from pathlib import Path

import pytest
from faceedit_bench_arena.arena import ArenaSettings, run_arena
from faceedit_bench_arena.attach import attach
from faceedit_bench_arena.stored_runs import build_pool
from faceedit_bench_arena.verify import LOG, log_record

from faceedit_bench.api import FaceEditBenchError, create_registered, registered
from faceedit_bench.api.judging import JudgeSession
from faceedit_bench.testing import end_run, hook_manager
from faceedit_bench.testing.tracking import contract_report, contract_run

sys.path.insert(0, str(Path(__file__).parent))
from stored_runs_fixture import write_runs  # noqa: E402
from test_arena_runs import KEY, KEY_ENV, brighter_wins  # noqa: E402

from tests.fakes.openai import openai_server

FAST = {"requests_per_minute": None, "tokens_per_minute": None, "backoff_initial_s": 0.01, "backoff_max_s": 0.05}


@pytest.fixture
def server(monkeypatch):
    monkeypatch.setenv(KEY_ENV, KEY)
    with openai_server(api_key=KEY, judge_answer=brighter_wins) as fake:
        yield fake


def test_the_arena_lands_on_each_editors_tracked_run(tmp_path, server, new_mlflow_store, monkeypatch):
    monkeypatch.setenv("MLFLOW_DISABLE_TELEMETRY", "true")
    ws = tmp_path / "ws"
    uri = new_mlflow_store(ws)
    judge = registered("judges", "openai")(base_url=f"{server.url}/v1", api_key_env=KEY_ENV, limits=FAST)
    with JudgeSession.open(judge, "openai", ws) as wj:
        paths = write_runs(ws, wj.put_image, editors={"a": 100, "b": 160, "c": 220})
    tracker = create_registered("trackers", "mlflow", {"tracking_uri": uri,
                                                       "artifact_location": (tmp_path / "artifacts").as_uri()})
    pm = hook_manager(tracker)
    for editor in ("a", "b", "c"):  # each editor's run, tracked as a run records it (run key as in report.json)
        run = replace(contract_run(tmp_path), run_key=f"key-{editor}", run_name=f"{editor}@t")
        pm.hook.faceedit_run_start(run=run)
        end_run(pm, run, contract_report())

    part, log = run_arena(paths, judge, "openai", ArenaSettings(budget_calls=60, batch=10, warmup=5, n_resamples=50,
                                                                n_permutations=19, min_group_battles=5))
    out = tmp_path / "out"
    out.mkdir()
    text = "".join(json.dumps(b, sort_keys=True) + "\n" for b in log)
    (out / LOG).write_text(text)
    part["battle_log"] = log_record(text)
    (out / "arena.json").write_text(json.dumps(part))
    lines = attach(part, build_pool(paths).runs, uri, files=(out / "arena.json", out / LOG))
    assert len(lines) == 3 and all("logged to tracker run" in line for line in lines)

    import mlflow

    client = mlflow.MlflowClient(uri)
    ids = [e.experiment_id for e in client.search_experiments()]
    runs = {r.data.tags["faceedit.run_key"]: r for r in client.search_runs(ids)}
    ratings = {e["editor"]: e for e in part["criteria"]["overall"]["ratings"]["editors"]}
    for editor in ("a", "b", "c"):
        run = runs[f"key-{editor}"]
        metrics = run.data.metrics
        assert metrics["arena_rating"] == pytest.approx(ratings[editor]["rating"])
        assert metrics["arena_rank"] == ratings[editor]["rank"]
        assert metrics["arena_battles"] == ratings[editor]["battles"]
        assert "arena_gender_female_rating" in metrics and "arena_first_position_share" in metrics
        assert metrics["fss_mean"] == 0.8  # what the run logged is kept
        files = {f.path for f in client.list_artifacts(run.info.run_id)}
        assert {"report.json", "report.html", "arena"} <= files
        assert {f.path for f in client.list_artifacts(run.info.run_id, "arena")} == {"arena/arena.json",
                                                                                      f"arena/{LOG}"}
        report = json.loads(Path(client.download_artifacts(run.info.run_id, "report.json", str(tmp_path / editor)))
                            .read_text())
        assert report["arena"]["editor"] == editor and report["arena"]["battle_log"] == part["battle_log"]


def test_a_run_the_store_does_not_hold_is_an_error_that_names_the_fix(tmp_path, new_mlflow_store, server):
    ws = tmp_path / "ws"
    uri = new_mlflow_store(ws)
    judge = registered("judges", "openai")(base_url=f"{server.url}/v1", api_key_env=KEY_ENV, limits=FAST)
    with JudgeSession.open(judge, "openai", ws) as wj:
        paths = write_runs(ws, wj.put_image, editors={"a": 100, "b": 160})
    part, _ = run_arena(paths, judge, "openai", ArenaSettings(budget_calls=20, batch=10, warmup=5, n_resamples=20,
                                                              n_permutations=19, min_group_battles=5))
    with pytest.raises(FaceEditBenchError, match="no MLflow run with run key key-a.*--tracking-uri"):
        attach(part, build_pool(paths).runs, uri)
