"""BFL's editors end to end: the plugin's HTTP client against the fake BFL API on 127.0.0.1,
through Hydra's composition, the engine's execution layer, the ledger and the report.

Every fault of the fake ends as its outcome and is counted; polls are counted apart from
submissions; nothing is paid twice; the key never reaches an output.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from faceedit_bench.run.experiment import build_experiment, run_experiment
from tests.cli_in_process import bench_in_process
from tests.fakes.bfl import bfl_server

BFL_KEY = "bfl_PLANTED-key-3c9e1f7a2b"
FAST = ["poll_interval_s=0.02", "poll_timeout_s=1.0", "request_timeout_s=2.0", "limits.timeout_s=5",
        "limits.max_attempts=3", "limits.backoff_initial_s=0.01", "limits.backoff_max_s=0.05"]


@pytest.fixture
def bfl(monkeypatch: pytest.MonkeyPatch) -> Any:
    monkeypatch.setenv("BFL_API_KEY", BFL_KEY)
    with bfl_server(api_key=BFL_KEY, generation_s=0.05, retry_after=0.01, poll_latency_s=0.1, hang_s=3.0) as server:
        yield server


def kontext(server: Any, editor: str = "kontext_pro") -> list[str]:
    return [f"editor={editor}", f"editor.params.base_url={server.url}", *(f"editor.params.{s}" for s in FAST)]


def run(plugins: Any, compose: Any, *overrides: str) -> dict[str, Any]:
    return run_experiment(build_experiment(compose(*overrides), plugins), plugins)


def submissions(server: Any) -> int:
    return sum(1 for r in server.requests if r.method == "POST")


def test_kontext_pro_runs_end_to_end_and_a_rerun_makes_no_call(plugins, compose, synthetic, bfl):
    overrides = [*synthetic, *kontext(bfl), "testset=pose", "run.max_faces=2", "run.max_sessions=3"]
    report = run(plugins, compose, *overrides)
    assert report["counts"]["steps"] == {"ok": 2 * 3 * 4}
    assert report["metrics"]["drop_fss"]["n"] == 6
    assert submissions(bfl) == 24 == len(bfl.submissions) and report["run"]["computed"]["edit_calls"] == 24
    (key, stats), = report["calls"].items()
    assert key == f"bfl:{bfl.url}:BFL_API_KEY:flux-kontext-pro" and stats["succeeded"] == stats["attempts"] == 24
    # Polls and downloads are counted apart from the 24 submissions the limiter admitted.
    assert stats["other_requests"] == {"poll": bfl.polls, "download": 24} and bfl.polls >= 24
    from faceedit_bench.report.run_report import metrics_for_tracking

    tracked = metrics_for_tracking(report)  # the tracker (MLflow) gets them as metrics too
    assert [tracked[k] for k in sorted(tracked) if k.startswith("calls_") and "_other_" in k] == [24, bfl.polls]
    assert report["cost"]["estimated_usd"] == pytest.approx(24 * 0.04)
    assert report["cost"]["prices"]["editor"] == {"images_out": 0.04, "as_of": "2026-12-01"}

    calls = bfl.calls
    rerun = run(plugins, compose, *overrides)
    assert bfl.calls == calls, "a finished experiment must make zero provider calls when rerun"
    assert rerun["run"]["computed"]["edit_calls"] == 0 and rerun["cost"]["new_usd"] == 0
    assert rerun["metrics"]["drop_fss"]["mean"] == pytest.approx(report["metrics"]["drop_fss"]["mean"])


def test_every_fault_ends_as_its_outcome_and_a_rerun_makes_no_call(plugins, compose, synthetic, bfl, capfd,
                                                                   tmp_path):
    # One task at a time, so scripted faults meet known steps: sessions take turns step by step
    # (s1k1 ... s8k1, then the sessions still going, k2 ...), and a retry keeps its slot (through the backoff).
    serial = [*synthetic, *kontext(bfl), "editor.params.limits.max_concurrency=1", "testset=multi_axis",
              "run.max_faces=1", "run.max_sessions=8", "+editor.params.limits.keep_slot_in_backoff=true"]
    bfl.script([
        "429", None,  # s1k1: rate limited at submission, ok on the retry
        "request_moderated",  # s2k1: refused (the input)
        "content_moderated",  # s3k1: refused (the output)
        "error",  # s4k1: api_error
        "never_ready",  # s5k1: api_error after poll_timeout_s, never resubmitted
        "expired_url",  # s6k1: ok from a fresh URL
        "truncated_download",  # s7k1: ok on the second download
        "slow_poll",  # s8k1: ok
        "500", None,  # s1k2: 5xx at submission, ok on the retry
        "task_not_found",  # s6k2: api_error
        "expired_url_always",  # s7k2: api_error
        "poll_500",  # s8k2: ok
        "poll_429",  # s1k3: ok
        "truncated", None,  # s8k3: the submission's answer cut short, ok on the retry
        "bad_request",  # s1k4: api_error (422)
        "slow",  # s8k4: ok
    ])
    report = run(plugins, compose, *serial)
    assert report["counts"]["steps"] == {"ok": 9, "refused": 2, "api_error": 5, "skipped": 16}
    excluded = report["counts"]["sessions"]["excluded"]
    assert excluded == {"step_refused": 2, "step_api_error": 5}
    (stats,) = report["calls"].values()
    assert stats["retries"] == {"rate_limited": 1, "server_error": 1, "truncated": 1} and stats["gave_up"] == {}
    assert stats["attempts"] == submissions(bfl) == 16 + 3
    assert stats["other_requests"] == {"poll": bfl.polls, "download": bfl.downloads}
    # One task per step, nothing after an accepted submission resubmitted: the 422 made no task, the
    # submission whose answer was cut short made one that nobody polls (BFL would charge it).
    assert len(bfl.submissions) == 16 and stats["calls"] == 16
    assert bfl.key_sent_to_delivery == 0
    reasons = {r["reason"] for r in _ledger_rows(tmp_path)}
    assert any(r.startswith("Request Moderated:") for r in reasons)
    assert any("poll_timeout_s" in r for r in reasons)
    assert report["cost"]["estimated_usd"] == pytest.approx(9 * 0.04)  # images delivered, at the list price

    calls = bfl.calls
    rerun = run(plugins, compose, *serial, "run.retry_outcomes=[]")
    assert bfl.calls == calls, "an immediate rerun makes zero provider calls"
    assert rerun["counts"]["steps"] == report["counts"]["steps"]

    captured = capfd.readouterr()
    leaks = [name for name, text in (("stdout", captured.out), ("stderr", captured.err)) if BFL_KEY in text]
    leaks += [str(p) for p in (tmp_path / "ws").rglob("*") if p.is_file() and BFL_KEY.encode() in p.read_bytes()]
    assert not leaks and BFL_KEY not in json.dumps(report), f"the API key leaked into {leaks}"


def _ledger_rows(tmp_path: Path) -> list[dict[str, Any]]:
    import sqlite3

    db = sqlite3.connect(tmp_path / "ws" / "ledger.sqlite")
    db.row_factory = sqlite3.Row
    try:
        return [dict(r) for r in db.execute("SELECT reason FROM edits")]
    finally:
        db.close()


def test_kontext_max_and_flux2_editors_run_through_the_engine(plugins, compose, synthetic, bfl):
    for editor, price in (("kontext_max", 0.08), ("flux2_pro", 0.045), ("flux2_flex", 0.10)):
        report = run(plugins, compose, *synthetic, *kontext(bfl, editor), "testset=pose", "run.max_faces=1",
                     "run.max_sessions=1")
        assert report["counts"]["steps"] == {"ok": 4}, editor
        assert report["cost"]["estimated_usd"] == pytest.approx(4 * price)
    assert [b.get("disable_pup") for b in bfl.submissions[4:8]] == [True] * 4  # flux-2-pro's field
    assert [b.get("steps") for b in bfl.submissions[8:]] == [50] * 4  # flux-2-flex's


@pytest.mark.slow(seconds=7)
def test_the_command_runs_the_fault_mix_with_no_crash_and_no_leak(tmp_path, new_mlflow_store, monkeypatch, capfd):
    """`python -m faceedit_bench editor=kontext_pro testset=pose` against the fake, as a user runs it; the rerun
    runs the command's entry function in this process (tests/cli_in_process.py: the same code and workspace)."""
    new_mlflow_store(tmp_path / "ws")  # the default tracker's store, already made (test_first_time_kills makes one)
    with bfl_server(api_key=BFL_KEY, generation_s=0.05, retry_after=0.01, poll_latency_s=0.1) as server:
        server.script([
            "429", None,  # s1k1: ok on the retry
            "request_moderated",  # s2k1: refused
            "content_moderated",  # s3k1: refused
            "never_ready",  # s4k1: api_error
            "expired_url",  # s5k1: ok
            "500", None,  # s1k2: ok on the retry
            "truncated_download",  # s5k2: ok
            "slow_poll",  # s1k3: ok
            "error",  # s5k3: api_error
            "task_not_found",  # s1k4: api_error
        ])
        env = {**os.environ, "FACEEDIT_BENCH_HOME": str(tmp_path / "ws"), "BFL_API_KEY": BFL_KEY,
               "MLFLOW_DISABLE_TELEMETRY": "true"}
        args = [sys.executable, "-m", "faceedit_bench", *kontext(server), "editor.params.limits.max_concurrency=1",
                "testset=pose", "run.max_faces=1", "run.progress=false"]
        first = subprocess.run(args, cwd=tmp_path, env=env, capture_output=True, text=True, timeout=300)
        assert first.returncode == 0, first.stderr[-3000:]
        assert "HTTP Request" not in first.stdout + first.stderr, "no log line per poll"
        assert "besides" in first.stdout and "poll " in first.stdout  # polls and downloads, counted apart
        (report_path,) = (tmp_path / "ws" / "runs").glob("*/report.json")
        report = json.loads(report_path.read_text())
        assert report["counts"]["steps"] == {"ok": 5, "refused": 2, "api_error": 3, "skipped": 10}
        assert "failed" not in report["counts"]["steps"], "no crash: every outcome is categorised"
        made = server.calls
        rerun = bench_in_process(monkeypatch, capfd, tmp_path, *args[3:], "run.retry_outcomes=[]",
                                 env={"BFL_API_KEY": BFL_KEY, "MLFLOW_DISABLE_TELEMETRY": "true"})
        assert rerun.returncode == 0, rerun.stderr[-3000:]
        assert server.calls == made, "an immediate rerun makes zero provider calls"
    leaks = [name for name, out in (("stdout", first.stdout + rerun.stdout), ("stderr", first.stderr + rerun.stderr))
             if BFL_KEY in out]
    leaks += [str(p) for p in tmp_path.rglob("*") if p.is_file() and BFL_KEY.encode() in p.read_bytes()]
    assert not leaks, f"the API key leaked into {leaks}"
