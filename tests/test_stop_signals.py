"""SIGTERM (SLURM preemption, ``timeout``, ``kill``) and SIGHUP stop a run the way Ctrl-C does: a clean
stop, the resume hint, exit 128 + the signal, the MLflow run KILLED, and a rerun that resumes it."""

from __future__ import annotations

import json
import signal
import subprocess

import pytest

from faceedit_bench.run.signals import RunStopped, exit_code, stopped_by, stopping_on_signals
from tests.module_runs import run_here
from tests.test_kill_resume import app_command, gemini_overrides, stop_mid_run, wait_for
from tests.test_worker_orphans import alive, children


def test_sigterm_and_sighup_raise_run_stopped_and_the_old_handlers_come_back():
    # A process that does not ignore them: the suite itself may run under `nohup`, which ignores SIGHUP (the
    # next test is about that case).
    started_with = {s: signal.signal(s, signal.SIG_DFL) for s in (signal.SIGTERM, signal.SIGHUP)}
    try:
        before = {s: signal.getsignal(s) for s in started_with}
        for number, code in ((signal.SIGTERM, 143), (signal.SIGHUP, 129)):
            with pytest.raises(RunStopped) as stopped, stopping_on_signals():
                signal.raise_signal(number)  # to this thread: its handler runs before the next line
            assert isinstance(stopped.value, KeyboardInterrupt) and stopped.value.signum == number
            assert exit_code(stopped.value) == code and stopped_by(stopped.value) == f"Stopped by {number.name}."
            assert {s: signal.getsignal(s) for s in before} == before
    finally:
        for number, handler in started_with.items():
            signal.signal(number, handler)
    assert exit_code(KeyboardInterrupt()) == 130 and stopped_by(KeyboardInterrupt()) == "Interrupted."


def test_a_signal_the_run_was_started_to_ignore_stays_ignored():
    """``nohup`` ignores SIGHUP so that a run outlives its terminal: closing the terminal must not stop it."""
    before = signal.signal(signal.SIGHUP, signal.SIG_IGN)
    try:
        with stopping_on_signals():
            assert signal.getsignal(signal.SIGHUP) is signal.SIG_IGN
            signal.raise_signal(signal.SIGHUP)  # nothing happens
        assert signal.getsignal(signal.SIGHUP) is signal.SIG_IGN
    finally:
        signal.signal(signal.SIGHUP, before)


@pytest.mark.slow(seconds=9)
def test_sigterm_to_the_whole_job_stops_cleanly_marks_the_run_killed_and_a_rerun_resumes_it(tmp_path, monkeypatch,
                                                                                            new_mlflow_store):
    """What SLURM does on preemption: SIGTERM to every process of the job (the run and its workers)."""
    from mlflow import MlflowClient

    from tests.fakes.gemini import gemini_server

    key = "test-sigterm-key"
    new_mlflow_store(tmp_path / "ws")
    with gemini_server(api_key=key, latency_s=0.05) as server:
        # 20 of the 24 edits answered, then both concurrency slots are held: the run is busy, with its workers
        # up, until the signal is delivered. However the engine interleaves the 6 sessions, 20 edits finish at
        # least 2 of them: with the 2 base images, 10 images to embed, past the pool's start (8) with 2 left
        # for it, so both workers start.
        release = server.hold_after(20)
        overrides = gemini_overrides(tmp_path, server, "run.workers=2")
        args, env = app_command(*overrides)
        env.update(FACEEDIT_BENCH_HOME=str(tmp_path / "ws"), GEMINI_API_KEY=key)
        env.pop("MLFLOW_TRACKING_URI", None)
        spawned: dict[int, str] = {}

        def busy_with_workers(proc: subprocess.Popen) -> bool:
            if server.calls < 22:
                return False
            spawned.update(children(proc.pid))
            return sum("spawn_main" in cmd for cmd in spawned.values()) >= 2  # and the image metrics' two

        stopped = stop_mid_run(args, env, tmp_path, busy_with_workers, release, signal.SIGTERM, group=True)
        err = stopped.stderr
        assert stopped.returncode == 143, err[-3000:]
        assert "Stopped by SIGTERM." in err and "run the same command again to resume" in err
        for noise in ("Traceback", "leaked semaphore", "Event loop is closed", "Task was destroyed"):
            assert noise not in err, err[-3000:]
        wait_for(lambda: not any(alive(p) for p in spawned), "the workers and the resource tracker to end",
                 timeout_s=30)

        client = MlflowClient(tracking_uri=f"sqlite:///{tmp_path / 'ws' / 'mlflow.db'}")
        (stopped,) = client.search_runs([e.experiment_id for e in client.search_experiments()])
        assert stopped.info.status == "KILLED" and stopped.data.tags["faceedit.stopped_by"] == "SIGTERM"
        assert "faceedit.error" not in stopped.data.tags

        monkeypatch.setenv("GEMINI_API_KEY", key)
        monkeypatch.delenv("MLFLOW_TRACKING_URI", raising=False)
        run_here(tmp_path / "ws", *overrides)  # the rerun, in this process
        (report,) = [json.loads(p.read_text()) for p in (tmp_path / "ws" / "runs").glob("*/report.json")]
        assert report["counts"]["steps"] == {"ok": 24}
        (resumed,) = client.search_runs([e.experiment_id for e in client.search_experiments()])
        assert resumed.info.run_id == stopped.info.run_id and resumed.info.status == "FINISHED"
        assert "faceedit.stopped_by" not in resumed.data.tags


def test_a_faceedit_bench_command_stopped_by_sigterm_exits_143_and_says_so(monkeypatch, capsys):
    from faceedit_bench import cli
    from faceedit_bench.cli import runs

    def stopped_while_running(args) -> int:  # e.g. a merge writing its run
        signal.raise_signal(signal.SIGTERM)
        raise AssertionError("SIGTERM did not stop the command")

    monkeypatch.setattr(runs, "_merge_command", stopped_while_running)
    before = signal.getsignal(signal.SIGTERM)
    assert cli.main(["merge", "/nonexistent"]) == 143
    assert "Stopped by SIGTERM." in capsys.readouterr().err
    assert signal.getsignal(signal.SIGTERM) is before  # the handler before the command is back
