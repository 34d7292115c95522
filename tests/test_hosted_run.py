"""Hosted editors and judges end to end: the real SDKs against fake servers on 127.0.0.1.

The headline command (`editor=nano_banana`, `editor=gpt_image`) runs through Hydra's
composition, the engine's execution layer, the ledger and MLflow. Every fault ends as
its outcome and is counted; nothing is paid twice; the key never reaches an output.
"""

from __future__ import annotations

import asyncio
import csv
import json
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from faceedit_bench.execution.secrets import MissingSecretError
from faceedit_bench.report.run_report import results_digest
from faceedit_bench.run.experiment import build_experiment, run_experiment
from tests.cli_in_process import bench_in_process
from tests.fakes.gemini import gemini_server
from tests.fakes.openai import openai_server

GEMINI_KEY = "AIzaPLANTED-gemini-7f3a9c1e5b"
OPENAI_KEY = "sk-PLANTED-openai-5d2b8e4f1a"
FAST_LIMITS = ["limits.max_attempts=3", "limits.requests_per_minute=6000",
               "limits.tokens_per_minute=null", "limits.backoff_initial_s=0.01", "limits.backoff_max_s=0.05",
               "limits.timeout_s=5"]


def params(group: str, *settings: str) -> list[str]:
    return [f"{group}.params.{s}" for s in settings]


@pytest.fixture
def gemini(monkeypatch: pytest.MonkeyPatch) -> Any:
    monkeypatch.setenv("GEMINI_API_KEY", GEMINI_KEY)
    with gemini_server(api_key=GEMINI_KEY, retry_after=0.01) as server:
        yield server


@pytest.fixture
def openai(monkeypatch: pytest.MonkeyPatch) -> Any:
    monkeypatch.setenv("OPENAI_API_KEY", OPENAI_KEY)
    with openai_server(api_key=OPENAI_KEY, retry_after=0.01) as server:
        yield server


def nano_banana(server: Any) -> list[str]:
    return ["editor=nano_banana", f"editor.params.base_url={server.url}", *params("editor", *FAST_LIMITS)]


def gemini_judge(server: Any) -> list[str]:
    return ["judge=gemini", f"judge.params.base_url={server.url}", *params("judge", *FAST_LIMITS)]


def run(plugins: Any, compose: Any, *overrides: str) -> dict[str, Any]:
    return run_experiment(build_experiment(compose(*overrides), plugins), plugins)


def steps_csv(report: dict[str, Any], workspace: Path) -> list[dict[str, str]]:
    (run_dir,) = [p for p in (workspace / "runs").iterdir() if report["run"]["key"][:12] in p.name]
    with open(run_dir / "steps.csv") as fh:
        return [r for r in csv.DictReader(fh) if r["k"] != "0"]


def test_nano_banana_runs_end_to_end_and_a_rerun_makes_no_call(plugins, compose, synthetic, gemini, tmp_path):
    overrides = [*synthetic, *nano_banana(gemini), "testset=multi_axis", "run.max_faces=2", "run.max_sessions=3"]
    report = run(plugins, compose, *overrides)
    assert report["counts"]["steps"] == {"ok": 2 * 3 * 4}
    assert report["metrics"]["drop_fss"]["n"] == 6
    assert gemini.calls == 24 and report["run"]["computed"]["edit_calls"] == 24
    assert report["cost"]["estimated_usd"] > 0 and report["cost"]["prices"]["editor"]["as_of"]
    # 2 of the dataset's 4 faces were run: the rest is priced from what they cost.
    assert report["cost"]["per_face_usd"] == pytest.approx(report["cost"]["estimated_usd"] / 2)
    assert report["cost"]["projected_dataset_usd"] == pytest.approx(report["cost"]["estimated_usd"] * 2)
    calls = report["calls"]
    (provider,) = calls
    assert provider.startswith("gemini:") and calls[provider]["succeeded"] == 24
    # Named by role for people and trackers: no endpoint, port or key variable in a metric name.
    assert calls[provider]["roles"] == [{"role": "editor", "component": "nano_banana",
                                         "model": "gemini-2.5-flash-image"}]
    from faceedit_bench.report.run_report import metrics_for_tracking

    tracked = {k: v for k, v in metrics_for_tracking(report).items() if k.startswith("calls_")}
    assert tracked["calls_editor"] == 24 and tracked["calls_editor_succeeded"] == 24
    assert not [k for k in tracked if "127" in k or "api_key" in k or "http" in k]
    # The model the provider says it served is recorded with every output.
    sent = gemini.gemini_calls[0]
    assert sent.model == "gemini-2.5-flash-image"

    rerun = run(plugins, compose, *overrides)
    assert gemini.calls == 24, "a finished experiment must make zero provider calls when rerun"
    assert rerun["run"]["computed"]["edit_calls"] == 0
    assert rerun["metrics"]["drop_fss"]["mean"] == pytest.approx(report["metrics"]["drop_fss"]["mean"])
    assert rerun["cost"]["estimated_usd"] == pytest.approx(report["cost"]["estimated_usd"])
    assert rerun["cost"]["new_usd"] == 0
    # The two launches differ only in what describes a launch (a tracker holding the first logs nothing again);
    # the re-report keeps the wall time and calls of the launch that did the work.
    assert rerun["calls"] == report["calls"] and rerun["run"]["wall_time_s"] == report["run"]["wall_time_s"]
    assert rerun["run"]["computed"] != report["run"]["computed"] and "re_reported" in rerun["run"]
    assert results_digest(rerun) == results_digest(report)
    assert results_digest({**rerun, "metrics": {}}) != results_digest(report)


def test_every_fault_ends_as_its_outcome(plugins, compose, synthetic, gemini):
    # One call at a time, so scripted faults meet known steps: sessions take turns step by step
    # (s1k1, s2k1, s3k1, s1k2 ...). A call backing off gives its slot to the next session, so
    # the rate-limited retry runs alone first.
    serial = [*synthetic, *nano_banana(gemini), "editor.params.limits.max_concurrency=1", "testset=multi_axis",
              "run.max_faces=1"]
    gemini.script(["429", None])  # session 1, step 1: rate limited, then ok on the retry
    alone = run(plugins, compose, *serial, "run.max_sessions=1")
    assert alone["counts"]["steps"] == {"ok": 4}
    (stats,) = alone["calls"].values()
    assert stats["retries"] == {"rate_limited": 1}
    gemini.script([
        "block",  # session 2, step 1: prompt blocked
        "text_only",  # session 3, step 1: an answer without an image
    ])
    report = run(plugins, compose, *serial, "run.max_sessions=3")
    steps = report["counts"]["steps"]
    assert steps == {"ok": 4, "refused": 1, "no_image": 1, "skipped": 6}
    assert report["counts"]["sessions"]["excluded"] == {"step_no_image": 1, "step_refused": 1}

    gemini.script(["image_safety"])
    more = run(plugins, compose, *serial, "run.max_sessions=4")
    assert more["counts"]["steps"]["refused"] == 2  # session 4's IMAGE_SAFETY stop

    gemini.script(["bad_request"] + ["500"] * 3)  # session 5: a 400; session 6: 5xx on every attempt
    last = run(plugins, compose, *serial, "run.max_sessions=6")
    assert last["counts"]["steps"]["api_error"] == 2
    (stats,) = last["calls"].values()
    assert stats["gave_up"] == {"server_error": 1}
    assert last["metrics"]["drop_fss"]["n"] == 1, "failed sessions are excluded, never scored"


def test_missing_key_fails_before_any_work_and_names_the_variable(plugins, compose, synthetic, monkeypatch,
                                                                    tmp_path):
    monkeypatch.delenv("GEMINI_API_KEY", raising=False)
    monkeypatch.delenv("GOOGLE_API_KEY", raising=False)
    with pytest.raises(MissingSecretError, match="GEMINI_API_KEY"):
        build_experiment(compose(*synthetic, "editor=nano_banana"), plugins)
    assert not (tmp_path / "ws").exists()


def test_budget_stops_cleanly_and_the_rerun_resumes(plugins, compose, synthetic, gemini):
    overrides = [*synthetic, *nano_banana(gemini), "testset=multi_axis", "run.max_faces=2", "run.max_sessions=2"]
    # One image costs about 0.039 USD: the budget allows a few calls, then no new call starts.
    stopped = run(plugins, compose, *overrides, "run.budget_usd=0.1")
    assert stopped["run"]["complete"] is False and stopped["cost"]["stopped_by_budget"]
    assert "budget_usd" in stopped["run"]["stopped"]
    made = gemini.calls
    assert 0 < made < 16
    assert stopped["counts"]["sessions"]["excluded"].get("stopped_by_budget", 0) >= 1

    finished = run(plugins, compose, *overrides)
    assert finished["run"]["complete"] is True
    assert gemini.calls == 16, "calls made before the stop are not paid again"
    assert finished["counts"]["steps"] == {"ok": 16}


def test_gemini_judge_yields_sc_oer_and_the_overediting_matrix(plugins, compose, synthetic, gemini):
    report = run(plugins, compose, *synthetic, *nano_banana(gemini), *gemini_judge(gemini), "testset=hair",
                 "run.max_faces=2", "run.max_sessions=2", "analysis.n_resamples=99")
    assert report["metrics"]["sc"]["n"] == 4 and report["metrics"]["oer"]["n"] == 4
    # The fake judge answers the middle of every range: success 5, overediting 5 -> SC_k = 0.5.
    assert report["metrics"]["sc"]["mean"] == pytest.approx(50.0)
    assert [p["k"] for p in report["trajectory"]["sc"]] == [1, 2, 3, 4]
    assert len(report["overediting"]["matrix"]) == 35
    assert report["counts"]["judge"]["viescore-tie-sc@1"] == {"ok": 16}
    assert report["prompts"]["sc"]["hash"] and "sc" not in report["skipped_metrics"]
    anchors = report["judge_reliability"]["anchors"]
    assert {a["name"] for a in anchors} == {"unchanged", "blank", "done"}
    # A middling judge fails the anchors: reported, not hidden.
    assert report["judge_reliability"]["failed"] >= 1


def test_unparsable_judge_answers_are_parse_errors_never_scores(plugins, compose, synthetic, monkeypatch):
    monkeypatch.setenv("GEMINI_API_KEY", GEMINI_KEY)
    with gemini_server(api_key=GEMINI_KEY, judge_answer=lambda request: "The edit looks fine, 8/10.") as server:
        report = run(plugins, compose, *synthetic, *nano_banana(server), *gemini_judge(server), "testset=hair",
                     "run.max_faces=1", "run.max_sessions=1", "analysis.n_resamples=99")
    assert report["metrics"]["sc"]["n"] == 0 and report["metrics"]["sc"]["mean"] is None
    assert report["metrics"]["sc"]["undefined_sessions"] == 1
    assert report["counts"]["judge"]["viescore-tie-sc@1"] == {"parse_error": 4}
    assert report["metrics"]["drop_fss"]["n"] == 1  # identity is still measured


def test_gpt_image_runs_end_to_end_with_an_openai_judge(plugins, compose, synthetic, openai):
    overrides = [*synthetic, "editor=gpt_image", f"editor.params.base_url={openai.url}/v1",
                 *params("editor", *FAST_LIMITS), "judge=openai", f"judge.params.base_url={openai.url}/v1",
                 *params("judge", *FAST_LIMITS), "testset=pose", "run.max_faces=1", "run.max_sessions=2",
                 "analysis.n_resamples=99"]
    report = run(plugins, compose, *overrides)
    assert report["counts"]["steps"] == {"ok": 8}
    assert report["metrics"]["sc"]["n"] == 2
    assert report["cost"]["by_component"]["editor"] > 0 and report["cost"]["by_component"]["judge"] > 0
    calls = openai.calls
    rerun = run(plugins, compose, *overrides)
    assert openai.calls == calls, "a finished judged run re-reports without a provider call"
    assert rerun["judge_reliability"]["asked_now"] is False
    assert rerun["judge_reliability"]["anchors"] == report["judge_reliability"]["anchors"]
    assert results_digest(rerun) == results_digest(report)  # a tracker holding the first logs nothing again


def test_a_planted_key_reaches_no_output(plugins, compose, synthetic, gemini, tmp_path, capfd, new_mlflow_store):
    new_mlflow_store(tmp_path / "ws")
    gemini.script(["bad_request"])
    report = run(plugins, compose, *synthetic, *nano_banana(gemini), *gemini_judge(gemini), "tracking=mlflow",
                 "testset=hair", "run.max_faces=1", "run.max_sessions=2", "analysis.n_resamples=99")
    assert report["counts"]["steps"]["api_error"] == 1
    captured = capfd.readouterr()
    leaks = [name for name, text in (("stdout", captured.out), ("stderr", captured.err)) if GEMINI_KEY in text]
    for path in (tmp_path / "ws").rglob("*"):
        if path.is_file() and GEMINI_KEY.encode() in path.read_bytes():
            leaks.append(str(path.relative_to(tmp_path)))
    assert not leaks, f"the API key leaked into {leaks}"
    assert GEMINI_KEY not in json.dumps(report)

    # The run is in MLflow with its outcome counts, SC and the cost with the price table used.
    from mlflow.tracking import MlflowClient

    client = MlflowClient(tracking_uri=f"sqlite:///{tmp_path / 'ws' / 'mlflow.db'}")
    (tracked,) = client.search_runs([client.get_experiment_by_name("faceedit/hair").experiment_id])
    metrics = tracked.data.metrics
    assert metrics["steps_api_error"] == 1 and metrics["cost_estimated_usd"] > 0 and "sc" in metrics
    assert metrics["judge_viescore_tie_sc_ok"] == 4
    assert tracked.data.tags["faceedit.complete"] == "true"
    assert {"report.json", "report.html", "cost"} <= {a.path for a in client.list_artifacts(tracked.info.run_id)}


def test_refusals_are_counted_per_demographic_group(plugins, compose, synthetic, gemini):
    gemini.script(["block"] * 3)
    report = run(plugins, compose, *synthetic, *nano_banana(gemini), "editor.params.limits.max_concurrency=1",
                 "testset=pose", "run.max_faces=4", "run.max_sessions=1")
    by_group = report["counts"]["steps_by_group"]
    assert by_group, "the synthetic faces carry demographic labels"
    refused = Counter()
    for labels in by_group.values():
        for outcomes in labels.values():
            refused["refused"] += outcomes.get("refused", 0)
    assert refused["refused"] == 3 * len(by_group)


def test_judge_human_agreement_on_a_labelled_set(plugins, compose, synthetic, gemini, tmp_path):
    from faceedit_bench.testing import gradient_image

    labels = tmp_path / "labels"
    labels.mkdir()
    for i in range(3):
        (labels / f"{i}.png").write_bytes(gradient_image(i))
    # The fake judge names each key's first category: black hair, buzz cut, ..., looking left.
    judged = ("black hair", "buzz cut", "straight hair", "clean shaven", "handlebar mustache", "cowboy hat",
              "round glasses", "looking left")
    keys = ("hair-color", "hair-style", "hair-type", "beard", "mustache", "hats", "glasses", "head position")
    header = "kind,image,original,instruction,sc," + ",".join(keys)
    agree = ",".join(judged)
    disagree = ",".join(["brown hair;black hair", *judged[1:7], ""])  # hair-color set differs; pose None
    (labels / "labels.csv").write_text("\n".join([
        header, f"state,0.png,,,,{agree}", f"state,1.png,,,,{disagree}",
        "sc,1.png,0.png,make the hair red,7," + "," * 7, "sc,2.png,0.png,add a hat,2," + "," * 7]) + "\n")
    report = run(plugins, compose, *synthetic, *nano_banana(gemini), *gemini_judge(gemini), "testset=pose",
                 "run.max_faces=1", "run.max_sessions=1", "analysis.n_resamples=99",
                 f"analysis.human_labels={labels / 'labels.csv'}")
    agreement = report["judge_reliability"]["agreement"]
    tracker = agreement["tracker"]
    assert tracker["per_key"]["hair-color"] == {"n": 2, "accuracy": 0.5}
    assert tracker["per_key"]["hats"] == {"n": 2, "accuracy": 1.0}
    assert tracker["per_key"]["head position"] == {"n": 2, "accuracy": 0.5}
    assert tracker["accuracy"] == pytest.approx(14 / 16)
    # The fake judge scores every edit 5: a constant judge has no rank correlation, reported as such.
    assert agreement["sc"] == {"n": 2, "spearman": None}


def test_a_missing_labels_file_fails_before_any_work(plugins, compose, synthetic, gemini, tmp_path):
    from faceedit_bench.errors import ConfigError

    with pytest.raises(ConfigError, match="human_labels"):
        build_experiment(compose(*synthetic, *nano_banana(gemini), *gemini_judge(gemini),
                                 f"analysis.human_labels={tmp_path / 'nope.csv'}"), plugins)


@pytest.mark.slow(seconds=8)
def test_two_runs_sharing_the_cache_at_once_do_not_corrupt_it(tmp_path, monkeypatch, capfd, plugins):
    """Two processes at once (the command with the test plugin's pixel embedder: the ledger, not dlib, is under
    test); the rerun in this process (tests/cli_in_process.py: the same command code)."""
    import os
    import sqlite3
    import subprocess
    import sys

    with gemini_server(api_key=GEMINI_KEY, latency_s=0.05) as server:
        env = {**os.environ, "FACEEDIT_BENCH_HOME": str(tmp_path / "ws"), "GEMINI_API_KEY": GEMINI_KEY,
               "PYTHONPATH": os.pathsep.join([str(Path(__file__).resolve().parent.parent),
                                              os.environ.get("PYTHONPATH", "")])}
        args = [sys.executable, "-m", "tests.bench_with_test_plugin", "editor=nano_banana",
                f"editor.params.base_url={server.url}", "testset=pose", "run.max_faces=1", "run.max_sessions=3",
                "embedder=pixel", "tracking=none", "run.workers=1", "run.progress=false"]
        procs = [subprocess.Popen(args, cwd=tmp_path, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                  text=True) for _ in range(2)]
        outs = [p.communicate(timeout=300) for p in procs]
        assert [p.returncode for p in procs] == [0, 0], [err[-2000:] for _, err in outs]
        reports = [json.loads(p.read_text()) for p in (tmp_path / "ws" / "runs").glob("*/report.json")]
        assert len(reports) == 1 and reports[0]["counts"]["steps"] == {"ok": 12}
        db = sqlite3.connect(tmp_path / "ws" / "ledger.sqlite")
        assert db.execute("PRAGMA integrity_check").fetchone() == ("ok",)
        assert db.execute("SELECT count(*), count(DISTINCT edit_key) FROM edits").fetchone() == (12, 12)
        db.close()
        made = server.calls
        assert 12 <= made <= 24  # each run may have paid for a step the other was still making
        rerun = bench_in_process(monkeypatch, capfd, tmp_path, *args[3:], env={"GEMINI_API_KEY": GEMINI_KEY},
                                 plugins=plugins)
        assert rerun.returncode == 0 and server.calls == made, rerun.stderr[-3000:]


@pytest.mark.slow(seconds=7)
def test_a_chunk_is_embedded_and_judged_while_the_next_is_edited(plugins, compose, synthetic, monkeypatch):
    from tests.fake_plugin import SlowPixelEmbedder

    monkeypatch.setenv("GEMINI_API_KEY", GEMINI_KEY)
    SlowPixelEmbedder.spans.clear()
    # The judge is the slow stage: judging a chunk (36 questions, 4 at a time, 0.2 s each) takes
    # longer than editing the next (16 edits, 2 at a time, 0.05 s each), so the next chunk's
    # edits all fall inside it.
    with gemini_server(api_key=GEMINI_KEY, latency_s=0.05) as editor, \
            gemini_server(api_key=GEMINI_KEY, latency_s=0.2) as judge:
        # max_concurrency=2 and one session: chunks of 4 faces, so 8 faces make two chunks.
        report = run(plugins, compose, *synthetic, "embedder=pixel_slow", *nano_banana(editor),
                     "editor.params.limits.max_concurrency=2", *gemini_judge(judge),
                     "judge.params.limits.max_concurrency=4", "testset=pose", "+dataset.params.n=8",
                     "run.max_sessions=1", "analysis.n_resamples=99")
    assert report["counts"]["steps"] == {"ok": 32}
    assert report["performance"]["score_stage_s"] > 0
    timeline = sorted([(r.received_at, "edit") for r in editor.requests]
                      + [(r.received_at, "judge") for r in judge.requests])
    turns = sum(a[1] != b[1] for a, b in zip(timeline, timeline[1:]))
    # Taking turns would give edit, judge, edit, judge (+ the anchors): 3 changes of provider.
    assert turns > 3, [kind for _, kind in timeline]
    edits_while_embedding = [r for r in editor.requests
                             if any(start < r.received_at < end for start, end in SlowPixelEmbedder.spans)]
    assert edits_while_embedding, "the embedder and the editor took turns"


# Edits left running on a closed event loop would surface as unraisable "Event loop is closed" errors.
@pytest.mark.filterwarnings("error::pytest.PytestUnraisableExceptionWarning")
def test_a_scoring_failure_stops_the_edits_in_flight_and_a_rerun_resumes(plugins, compose, synthetic, monkeypatch):
    from faceedit_bench.scoring.identity import EmbeddingService

    monkeypatch.setenv("GEMINI_API_KEY", GEMINI_KEY)
    real_aget = EmbeddingService.aget

    async def broken_aget(self, hashes):  # fails while later sessions are being edited
        await asyncio.sleep(0.1)
        raise RuntimeError("embedding workers died")

    with gemini_server(api_key=GEMINI_KEY, latency_s=0.05) as editor:
        overrides = (*synthetic, *nano_banana(editor), "editor.params.limits.max_concurrency=2", "testset=pose",
                     "+dataset.params.n=24", "run.max_sessions=1")
        monkeypatch.setattr(EmbeddingService, "aget", broken_aget)
        with pytest.raises(RuntimeError, match="embedding workers died"):
            run(plugins, compose, *overrides)
        first = editor.calls
        assert 4 <= first < 96  # the first session was edited, the others stopped part way
        monkeypatch.setattr(EmbeddingService, "aget", real_aget)
        report = run(plugins, compose, *overrides)
    assert report["counts"]["steps"] == {"ok": 96}
    assert editor.calls <= 96 + 2  # at most the calls in flight when it stopped were paid twice


def _interrupt() -> None:
    raise KeyboardInterrupt


# Ctrl-C usually lands while the loop waits for the network (outside any task), sometimes
# inside a task's code; either way nothing may be left running into a closed loop.
@pytest.mark.filterwarnings("error::pytest.PytestUnraisableExceptionWarning")
@pytest.mark.parametrize("inside_a_task", [False, True])
def test_an_interrupted_run_stops_cleanly_and_a_rerun_resumes(plugins, compose, synthetic, monkeypatch,
                                                              inside_a_task):
    from faceedit_bench_gemini.editor import NanoBananaEditor

    monkeypatch.setenv("GEMINI_API_KEY", GEMINI_KEY)
    real_aedit, started = NanoBananaEditor.aedit, []

    async def interrupted_aedit(self, request):  # Ctrl-C while the fifth edit is being made
        started.append(request)
        if len(started) == 5:
            if inside_a_task:
                raise KeyboardInterrupt
            asyncio.get_running_loop().call_soon(_interrupt)
        return await real_aedit(self, request)

    with gemini_server(api_key=GEMINI_KEY, latency_s=0.05) as editor:
        overrides = (*synthetic, *nano_banana(editor), "testset=pose", "run.max_sessions=1")
        monkeypatch.setattr(NanoBananaEditor, "aedit", interrupted_aedit)
        with pytest.raises(KeyboardInterrupt):
            run(plugins, compose, *overrides)
        monkeypatch.setattr(NanoBananaEditor, "aedit", real_aedit)
        report = run(plugins, compose, *overrides)
    assert report["counts"]["steps"] == {"ok": 16}
    assert editor.calls <= 16 + 4  # what was in flight at the interrupt, at most, was paid twice


def test_anchors_catch_a_judge_that_changed_between_runs(plugins, compose, synthetic, monkeypatch):
    monkeypatch.setenv("GEMINI_API_KEY", GEMINI_KEY)
    score = {"value": 1}

    def judge(request: dict) -> str:
        schema = request["generationConfig"].get("responseJsonSchema") or {}
        if "editing_success" not in schema.get("properties", {}):
            from tests.fakes.answers import example_from_schema

            return json.dumps(example_from_schema(schema))
        return json.dumps({"editing_success": score["value"], "overediting": score["value"], "reasoning": "-"})

    with gemini_server(api_key=GEMINI_KEY, judge_answer=judge) as server:
        base = [*synthetic, *nano_banana(server), *gemini_judge(server), "testset=hair", "run.max_faces=1",
                "analysis.n_resamples=99"]
        first = run(plugins, compose, *base, "run.max_sessions=1")
        anchors = {a["name"]: a["passed"] for a in first["judge_reliability"]["anchors"]}
        assert anchors == {"unchanged": True, "blank": True, "done": False}  # a judge that always says 1
        score["value"] = 9  # the provider silently changed its model
        second = run(plugins, compose, *base, "run.max_sessions=2")  # new work: the anchors are asked again
        calls = server.calls
        again = run(plugins, compose, *base, "run.max_sessions=2")  # a re-report: the last check, reused
        assert server.calls == calls
    reliability = second["judge_reliability"]
    assert reliability["asked_now"] is True
    assert {a["name"]: a["passed"] for a in reliability["anchors"]} == {"unchanged": False, "blank": False,
                                                                         "done": True}
    drifted = {(d["name"], d["field"]) for d in reliability["drift"]}
    assert ("unchanged", "editing_success") in drifted and len(drifted) == 6
    # The re-report repeats the check it reuses, drift included: only whether and when it asked differ.
    assert again["judge_reliability"]["asked_now"] is False and again["judge_reliability"]["checked_at"] is None
    assert again["judge_reliability"]["drift"] == reliability["drift"]
    assert results_digest(again) == results_digest(second)
