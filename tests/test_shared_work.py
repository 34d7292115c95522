"""Runs that share a workspace pay each call once: identical runs started at once (2 and 4 processes), and two
different experiments that share the judge's anchors, against fake hosted providers (the real SDKs)."""

from __future__ import annotations

import json
import subprocess
import threading
import time
from pathlib import Path
from typing import Any

import pytest

from faceedit_bench.report.run_report import results_digest
from tests.fakes.gemini import gemini_server
from tests.module_runs import run_here
from tests.test_kill_resume import command

KEY = "test-shared-work-key"
FAST = ["limits.max_attempts=3", "limits.requests_per_minute=60000", "limits.tokens_per_minute=null",
        "limits.backoff_initial_s=0.01", "limits.backoff_max_s=0.05", "limits.timeout_s=30"]


def overrides(tmp: Path, workspace: str, editor: Any, judge: Any, testset: str = "hair") -> list[str]:
    return ["dataset=synthetic", f"+dataset.params.root={tmp / 'faces'}", "+dataset.params.n=3", "embedder=pixel",
            "tracking=none", "run.workers=1", "run.progress=false", f"testset={testset}", "run.max_sessions=2",
            "analysis.n_resamples=99", f"run.workspace={tmp / workspace}",
            "editor=nano_banana", f"editor.params.base_url={editor.url}", *[f"editor.params.{s}" for s in FAST],
            "judge=gemini", f"judge.params.base_url={judge.url}", *[f"judge.params.{s}" for s in FAST]]


def run_at_once(tmp: Path, runs: list[tuple[str, list[str]]]) -> list[dict[str, Any]]:
    """Start every run at the same moment; each one's report."""
    procs = []
    # Every command made (each writes the same script) before any starts: a process must never read it half written.
    for argv, env in [command(tmp, name, *args) for name, args in runs]:
        env["GEMINI_API_KEY"] = KEY
        procs.append(subprocess.Popen(argv, env=env, cwd=tmp, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                                      text=True))
    for proc in procs:
        _, err = proc.communicate(timeout=900)
        assert proc.returncode == 0, err[-3000:]
    return [json.loads((tmp / f"{name}.json").read_text()) for name, _ in runs]


def run_alone(monkeypatch: pytest.MonkeyPatch, tmp: Path, workspace: str, *args: Any) -> dict[str, Any]:
    """One run by itself, for reference, in this process (what is compared is its report and the calls it paid;
    the runs started at once are the real processes): its report as the runs' own ``<name>.json`` has it."""
    monkeypatch.setenv("GEMINI_API_KEY", KEY)
    return json.loads(json.dumps(run_here(tmp / workspace, *overrides(tmp, workspace, *args))))


def paid(server: Any) -> tuple[int, int]:
    """(edit calls, judge calls) the fake provider answered."""
    edits = sum(1 for call in server.gemini_calls if call.wants_image)
    return edits, len(server.gemini_calls) - edits


@pytest.mark.slow(seconds=45)
@pytest.mark.timeout(1800)
def test_identical_runs_started_at_once_pay_each_call_once_and_report_the_same(tmp_path, monkeypatch):
    with gemini_server(api_key=KEY, latency_s=0.05) as server:
        alone = run_alone(monkeypatch, tmp_path, "ws1", server, server)
        one = paid(server)
        assert one[0] == 3 * 2 * 4 and one[1] > one[0]  # every step judged, and the anchors
        for n in (2, 4):
            server.reset()
            reports = run_at_once(tmp_path, [(f"run{n}-{i}", overrides(tmp_path, f"ws{n}", server, server))
                                             for i in range(n)])
            edits, judged = paid(server)
            assert edits <= 1.05 * one[0] and judged <= 1.05 * one[1], (n, (edits, judged), one)
            assert {results_digest(r) for r in reports} == {results_digest(alone)}
            assert sum(r["run"]["computed"]["edit_calls"] for r in reports) == edits


@pytest.mark.slow(seconds=20)
@pytest.mark.timeout(1800)
def test_two_experiments_sharing_judge_anchors_ask_them_once(tmp_path, monkeypatch):
    with gemini_server(api_key=KEY) as hair, gemini_server(api_key=KEY) as pose, \
            gemini_server(api_key=KEY) as judge:
        alone = [run_alone(monkeypatch, tmp_path, "solo-hair", hair, judge, "hair"),
                 run_alone(monkeypatch, tmp_path, "solo-pose", pose, judge, "pose")]
        solo = paid(judge)[1]
        anchors = len(alone[0]["judge_reliability"]["anchors"])
        assert anchors == len(alone[1]["judge_reliability"]["anchors"]) > 0
        for server in (hair, pose, judge):
            server.reset()
        # Both experiments have opened the workspace before any editor answers: the anchors are asked while
        # both are running (afresh for both), whatever the machine's speed.
        gates = [hair.hold_after(0), pose.hold_after(0)]
        runs = [("hair2", overrides(tmp_path, "ws", hair, judge, "hair")),
                ("pose2", overrides(tmp_path, "ws", pose, judge, "pose"))]
        released = threading.Thread(target=_release_when_both_called, args=(hair, pose, gates), daemon=True)
        released.start()
        together = run_at_once(tmp_path, runs)
        assert paid(judge)[1] <= solo - anchors  # the anchors once (and any other question both ask)
        for a, b in zip(alone, together):
            assert a["judge_reliability"]["anchors"] == b["judge_reliability"]["anchors"]
            assert a["metrics"] == b["metrics"]


def _release_when_both_called(hair: Any, pose: Any, gates: list[Any]) -> None:
    deadline = time.monotonic() + 600
    while (hair.calls == 0 or pose.calls == 0) and time.monotonic() < deadline:
        time.sleep(0.05)
    for gate in gates:
        gate.set()
