"""SeedEdit, Seedream (BytePlus ModelArk) and any Replicate model end to end: the real SDKs
against fake servers on 127.0.0.1, through Hydra's composition, the engine's execution layer
and the ledger. Every fault ends as its outcome and is counted, nothing crashes, the planted
key reaches no output, and an immediate rerun makes zero provider calls.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from faceedit_bench.errors import ConfigError
from faceedit_bench.run.experiment import build_experiment, run_experiment
from tests.cli_in_process import bench_in_process
from tests.fakes.byteplus import ark_server
from tests.fakes.replicate import KONTEXT_VERSION, replicate_server

ARK_KEY = "ark-PLANTED-byteplus-91c3e7a2d4"
REPLICATE_TOKEN = "r8_PLANTED_replicate_6b1f0d9e2c"
FAST = ["limits.max_attempts=3", "limits.requests_per_minute=6000", "limits.backoff_initial_s=0.01",
        "limits.backoff_max_s=0.05", "limits.timeout_s=5", "limits.max_concurrency=1"]
#: pose has 5 sessions; with one call at a time they take turns step by step (s1k1, s2k1 ... s5k1,
#: s1k2 ...), and a retry keeps its slot (kept through the backoff), so scripted faults meet known steps.
ONE_FACE = ["testset=pose", "run.max_faces=1", "+editor.params.limits.keep_slot_in_backoff=true"]


def editor_params(*settings: str) -> list[str]:
    return [f"editor.params.{s}" for s in settings]


def run(plugins: Any, compose: Any, *overrides: str) -> dict[str, Any]:
    return run_experiment(build_experiment(compose(*overrides), plugins), plugins)


def assert_no_leak(secret: str, workspace: Path, report: dict[str, Any], capfd: pytest.CaptureFixture[str]) -> None:
    captured = capfd.readouterr()
    leaks = [name for name, text in (("stdout", captured.out), ("stderr", captured.err)) if secret in text]
    leaks += [str(p) for p in workspace.rglob("*") if p.is_file() and secret.encode() in p.read_bytes()]
    assert not leaks and secret not in json.dumps(report), f"the key leaked into {leaks}"


def assert_rerun_is_free(plugins: Any, compose: Any, overrides: list[str], server: Any,
                         report: dict[str, Any]) -> None:
    made = server.calls
    rerun = run(plugins, compose, *overrides, "run.retry_outcomes=[]")
    assert server.calls == made, "an immediate rerun must make zero provider calls"
    assert rerun["run"]["computed"]["edit_calls"] == 0
    assert rerun["counts"]["steps"] == report["counts"]["steps"]


@pytest.fixture
def ark(monkeypatch: pytest.MonkeyPatch) -> Any:
    monkeypatch.setenv("ARK_API_KEY", ARK_KEY)
    with ark_server(api_key=ARK_KEY, retry_after=0.01) as server:
        yield server


@pytest.fixture
def replicate(monkeypatch: pytest.MonkeyPatch) -> Any:
    monkeypatch.setenv("REPLICATE_API_TOKEN", REPLICATE_TOKEN)
    with replicate_server(token=REPLICATE_TOKEN, retry_after=0.01, slow_s=0.3, sync_wait_s=0.05) as server:
        server.add_version(KONTEXT_VERSION)
        yield server


def test_seededit_faults_end_as_their_outcomes(plugins, compose, synthetic, ark, tmp_path, capfd):
    overrides = [*synthetic, "editor=seededit", f"editor.params.base_url={ark.url}/api/v3",
                 *editor_params(*FAST), *ONE_FACE]
    ark.script(["429", None,  # s1k1: rate limited (Retry-After), ok on the retry
                "moderation_input",  # s2k1: moderated at submit time
                "moderation_output",  # s3k1: moderated at result time
                "500", "500", "500",  # s4k1: a server error on every attempt
                "truncated", None])  # s5k1: the answer cut short, ok on the retry
    report = run(plugins, compose, *overrides)
    assert report["counts"]["steps"] == {"ok": 8, "refused": 2, "api_error": 1, "skipped": 9}
    assert report["counts"]["sessions"]["excluded"] == {"step_refused": 2, "step_api_error": 1}
    (stats,) = report["calls"].values()
    assert stats["retries"] == {"rate_limited": 1, "server_error": 2, "truncated": 1}
    assert stats["gave_up"] == {"server_error": 1}
    assert report["cost"]["estimated_usd"] == pytest.approx(8 * 0.03)
    assert report["cost"]["prices"]["editor"]["as_of"]
    assert ark.received[0].body["model"] == "seededit-3-0-i2i-250628"
    assert_no_leak(ARK_KEY, tmp_path / "ws", report, capfd)
    assert_rerun_is_free(plugins, compose, overrides, ark, report)


def test_seedream_faults_end_as_their_outcomes(plugins, compose, synthetic, ark, tmp_path, capfd):
    overrides = [*synthetic, "editor=seedream", f"editor.params.base_url={ark.url}/api/v3",
                 *editor_params(*FAST), *ONE_FACE]
    ark.script(["moderation_partial",  # s1k1: the generated image moderated (a 200 with a per-image error)
                "no_image",  # s2k1: an answer without an image
                "quota",  # s3k1: 429 QuotaExceeded: waiting cannot help
                "bad_request",  # s4k1: a 400 InvalidParameter
                "503", None])  # s5k1: unavailable once, then ok
    report = run(plugins, compose, *overrides)
    assert report["counts"]["steps"] == {"ok": 4, "refused": 1, "no_image": 1, "api_error": 2, "skipped": 12}
    (stats,) = report["calls"].values()
    assert stats["retries"] == {"server_error": 1} and stats["gave_up"] == {}
    assert ark.received[0].body["sequential_image_generation"] == "disabled"
    assert_no_leak(ARK_KEY, tmp_path / "ws", report, capfd)
    assert_rerun_is_free(plugins, compose, overrides, ark, report)


def test_replicate_faults_end_as_their_outcomes(plugins, compose, synthetic, replicate, tmp_path, capfd):
    overrides = [*synthetic, "editor=replicate", f"editor.params.model={KONTEXT_VERSION}",
                 f"editor.params.base_url={replicate.url}", "editor.params.poll_interval_s=0.02",
                 "editor.params.max_wait_s=0.5", *editor_params(*FAST), *ONE_FACE]
    replicate.script(["429"])  # s1k1's create is throttled once (generic faults hit the next request)
    replicate.plan(["slow",  # s1k1: polled until it ends
                    "nsfw_submit",  # s2k1: flagged as sensitive at submit time (E005)
                    "nsfw_result",  # s3k1: NSFW at result time
                    "never",  # s4k1: never finishes: canceled after max_wait_s
                    "expired", None,  # s5k1: the result URL expired; the retry makes a new prediction
                    "truncated_download"])  # s1k2: the download cut short; the retry resumes that prediction
    report = run(plugins, compose, *overrides)
    assert report["counts"]["steps"] == {"ok": 8, "refused": 2, "api_error": 1, "skipped": 9}
    (stats,) = report["calls"].values()
    assert stats["retries"] == {"rate_limited": 1, "server_error": 1, "truncated": 1}
    # Predictions created: 8 ok steps, 3 failed ones and the one whose URL expired (the throttled create made none).
    assert len(replicate.submissions) == 8 + 3 + 1
    never = next(p for p in replicate.predictions.values() if p.plan == "never")
    assert never.canceled
    assert_no_leak(REPLICATE_TOKEN, tmp_path / "ws", report, capfd)
    assert_rerun_is_free(plugins, compose, overrides, replicate, report)


@pytest.mark.parametrize("model", ["black-forest-labs/flux-kontext-pro", "black-forest-labs/flux-kontext-pro:latest"])
def test_an_unpinned_replicate_model_stops_before_any_work(plugins, compose, synthetic, replicate, tmp_path, model):
    with pytest.raises(ConfigError, match="not pinned to an immutable version"):
        build_experiment(compose(*synthetic, "editor=replicate", f"editor.params.model={model}",
                                 f"editor.params.base_url={replicate.url}"), plugins)
    assert replicate.calls == 0 and not (tmp_path / "ws" / "runs").exists()


@pytest.mark.slow(seconds=6)
@pytest.mark.parametrize("editor", ["seededit", "replicate"])
def test_the_command_line_runs_against_the_fakes_and_reruns_for_free(editor, tmp_path, monkeypatch, capfd):
    """The headline command, ``python -m faceedit_bench editor=<editor> testset=pose``, as a user runs it, for
    each provider: Seedream's command is SeedEdit's (one ModelArk server, key and config path) with another
    model, whose requests, faults, free rerun and unleaked key the in-process test above checks. The rerun
    runs the command's entry function in this process (tests/cli_in_process.py: the same code, from the same
    workspace on disk); one session: the faults are met in its steps."""
    env = {**os.environ, "FACEEDIT_BENCH_HOME": str(tmp_path / "ws"), "ARK_API_KEY": ARK_KEY,
           "REPLICATE_API_TOKEN": REPLICATE_TOKEN}
    with ark_server(api_key=ARK_KEY, retry_after=0.01) as ark, \
            replicate_server(token=REPLICATE_TOKEN, retry_after=0.01, sync_wait_s=0.05) as rep:
        rep.add_version(KONTEXT_VERSION)
        server, extra = {
            "seededit": (ark, [f"editor.params.base_url={ark.url}/api/v3"]),
            "replicate": (rep, [f"editor.params.model={KONTEXT_VERSION}", f"editor.params.base_url={rep.url}",
                                "editor.params.poll_interval_s=0.05"]),
        }[editor]
        server.script(["429", None, "500"])
        args = [sys.executable, "-m", "faceedit_bench", f"editor={editor}", "testset=pose", *extra,
                "editor.params.limits.backoff_initial_s=0.01", "editor.params.limits.backoff_max_s=0.05",
                "run.max_faces=1", "run.max_sessions=1", "tracking=none", "run.workers=1", "run.progress=false"]
        first = subprocess.run(args, cwd=tmp_path, env=env, capture_output=True, text=True, timeout=300)
        assert first.returncode == 0, first.stderr[-3000:]
        made = server.calls
        rerun = bench_in_process(monkeypatch, capfd, tmp_path, *args[3:],
                                 env={"ARK_API_KEY": ARK_KEY, "REPLICATE_API_TOKEN": REPLICATE_TOKEN})
        assert rerun.returncode == 0, rerun.stderr[-3000:]
        assert server.calls == made, "an immediate rerun must make zero provider calls"
    (report_file,) = (tmp_path / "ws" / "runs").glob("*/report.json")
    report = json.loads(report_file.read_text())
    assert report["counts"]["steps"] == {"ok": 4}
    for secret in (ARK_KEY, REPLICATE_TOKEN):
        assert secret not in first.stdout + first.stderr + rerun.stdout + rerun.stderr
        assert not [p for p in (tmp_path / "ws").rglob("*") if p.is_file() and secret.encode() in p.read_bytes()]
