"""A run killed midway (SIGKILL: no cleanup at all) or interrupted (Ctrl-C) resumes without
redoing finished steps; a run killed every few seconds still gets done."""

from __future__ import annotations

import csv
import io
import json
import os
import signal
import sqlite3
import subprocess
import sys
import textwrap
import time
from pathlib import Path
from typing import Any

import pytest

from tests.module_runs import run_here

ROOT = Path(__file__).resolve().parent.parent

SCRIPT = textwrap.dedent("""
    import json, sys
    from faceedit_bench.collector import collect_less_often
    collect_less_often()  # as in a command's process
    from hydra import compose, initialize_config_dir
    from faceedit_bench.run.experiment import build_experiment, run_experiment
    from faceedit_bench.run.hydra_app import conf_dir, register_configs
    from faceedit_bench.plugin.manager import load_plugins
    from tests import fake_plugin

    plugins = load_plugins()
    plugins.add(fake_plugin, name="fake")
    register_configs(plugins)
    with initialize_config_dir(config_dir=str(conf_dir()), version_base="1.3"):
        cfg = compose(config_name="config", overrides=sys.argv[2:])
    report = run_experiment(build_experiment(cfg, plugins), plugins)
    open(sys.argv[1], "w").write(json.dumps(report))
""")


def command(tmp: Path, name: str, *overrides: str) -> tuple[list[str], dict[str, str]]:
    """The command line of one run of the experiment (its report goes to ``<name>.json``) and its environment."""
    script = tmp / "run.py"
    script.write_text(SCRIPT)
    env = {**os.environ, "PYTHONPATH": f"{ROOT}{os.pathsep}{os.environ.get('PYTHONPATH', '')}"}
    return [sys.executable, str(script), str(tmp / f"{name}.json"), *overrides], env


def gemini_overrides(tmp: Path, server: Any, *extra: str) -> list[str]:
    """A run of 3 pose sessions of 2 synthetic faces (the test plugin's, with its pixel embedder: for runs where
    dlib and the sample photos are not what a test checks) edited through the fake Gemini ``server``, two calls
    at a time."""
    return ["dataset=synthetic", f"+dataset.params.root={tmp / 'faces'}", "embedder=pixel", "editor=nano_banana",
            f"editor.params.base_url={server.url}", "editor.params.limits.max_concurrency=2", "testset=pose",
            "run.max_faces=2", "run.max_sessions=3", "run.progress=false", *extra]


def app_command(*overrides: str) -> tuple[list[str], dict[str, str]]:
    """``python -m faceedit_bench <overrides>`` with the test plugin added (tests/bench_with_test_plugin.py),
    and its environment."""
    env = {**os.environ, "PYTHONPATH": f"{ROOT}{os.pathsep}{os.environ.get('PYTHONPATH', '')}"}
    return [sys.executable, "-m", "tests.bench_with_test_plugin", *overrides], env


def run(tmp: Path, name: str, *overrides: str) -> subprocess.CompletedProcess[str]:
    args, env = command(tmp, name, *overrides)
    return subprocess.run(args, capture_output=True, text=True, env=env, cwd=tmp, timeout=300)


def finished_work(ledger: Path) -> int:
    """Edits, embeddings and judge answers committed to the ledger (read as another process would)."""
    if not ledger.exists():
        return 0
    db = sqlite3.connect(f"file:{ledger}?mode=ro", uri=True, timeout=30)
    try:
        return sum(db.execute(f"SELECT count(*) FROM {table}").fetchone()[0]
                   for table in ("edits", "embeddings", "judgments"))
    except sqlite3.OperationalError:  # killed before the schema was created
        return 0
    finally:
        db.close()


@pytest.mark.slow
def test_killed_run_resumes_and_matches_uninterrupted(tmp_path):
    common = ["dataset=synthetic", f"+dataset.params.root={tmp_path / 'faces'}", "embedder=pixel",
              "tracking=none", "run.workers=1", "run.progress=false", "testset=hair", "editor=scripted",
              "+editor.params.noise=30"]
    # The same experiment through an editor that kills its own process after 50 calls.
    calls = tmp_path / "calls.txt"
    killing = [*common, f"+editor.params.calls_file={calls}", f"run.workspace={tmp_path / 'ws'}"]
    # 0.02 s an edit: the 50 span several of the ledger's commits however fast the machine
    # (on an idle one they could all fall in the first, and then every one is rightly edited again).
    first = run(tmp_path, "killed", *killing, "+editor.params.die_after=50", "+editor.params.seconds_per_edit=0.02")
    assert first.returncode == -signal.SIGKILL, first.stderr
    assert len(calls.read_text().splitlines()) == 50
    (run_dir,) = (tmp_path / "ws" / "runs").iterdir()
    assert list(run_dir.glob(".steps.csv.*.tmp"))  # the killed run's half-written table, never in place
    assert not (run_dir / "steps.csv").exists()
    # The resumed and the uninterrupted runs in this process: the killed one above is the real process.
    a = run_here(tmp_path / "ws", *killing)
    assert not list(run_dir.glob(".*.tmp")) and not list((run_dir / "contact_sheets").glob(".*.tmp"))
    done = calls.read_text().splitlines()
    assert len(set(done)) == 4 * 10 * 4  # every step edited
    # Edited twice: at most those finished in the killed run's last commit window, never all its 50.
    assert len(done) - 4 * 10 * 4 < 50, len(done)

    # Resumed and uninterrupted runs (seeded noise edits) give identical results.
    b = run_here(tmp_path / "ws2", *common, f"run.workspace={tmp_path / 'ws2'}")
    assert a["metrics"]["drop_fss"]["mean"] > 0.1  # non-trivial scores, not all zeros
    for key in ("metrics", "trajectory", "groups", "counts"):
        assert a[key] == b[key]
    assert a["run"]["key"] == b["run"]["key"]


@pytest.mark.slow
def test_ctrl_c_stops_cleanly_and_says_how_to_resume(tmp_path, monkeypatch):
    from tests.fakes.gemini import gemini_server

    key = "test-interrupt-key"
    with gemini_server(api_key=key, latency_s=0.2) as server:
        # 6 edits are answered, then the next 2 (both concurrency slots) are held: the run is certainly
        # busy, however loaded the machine, until the signal has been delivered.
        release = server.hold_after(6)
        overrides = gemini_overrides(tmp_path, server, "tracking=none")
        args, env = app_command(*overrides)
        env.update(FACEEDIT_BENCH_HOME=str(tmp_path / "ws"), GEMINI_API_KEY=key)
        stopped = stop_mid_run(args, env, tmp_path, lambda _: server.calls >= 8, release, signal.SIGINT)
        err = stopped.stderr
        assert stopped.returncode == 130, err[-3000:]
        assert "Interrupted." in err and "run the same command again to resume" in err
        for noise in ("Traceback", "Event loop is closed", "Task was destroyed"):
            assert noise not in err, err[-3000:]
        assert server.calls == 8  # nothing was sent after the interrupt

        monkeypatch.setenv("GEMINI_API_KEY", key)
        run_here(tmp_path / "ws", *overrides)  # the rerun, in this process
        (report,) = [json.loads(p.read_text()) for p in (tmp_path / "ws" / "runs").glob("*/report.json")]
        assert report["counts"]["steps"] == {"ok": 24}
        # Paid twice: the two calls held at the interrupt, and at most the two answered just before it
        # whose results were still being checked (not yet in the ledger).
        assert 24 + 2 <= server.calls <= 24 + 4


def stop_mid_run(args: list[str], env: dict[str, str], cwd: Path, busy, release, signum: int, *,
                 group: bool = False) -> subprocess.CompletedProcess[str]:
    """Run ``args``; once ``busy(process)`` holds, send it ``signum`` (to its whole process group with
    ``group``, as SLURM does) and return how it ended. ``release`` (the fake provider's held calls) is set
    whatever happens."""
    proc = subprocess.Popen(args, cwd=cwd, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            start_new_session=group)
    try:
        wait_for(lambda: busy(proc), "the run to be busy", proc)
        if group:
            os.killpg(proc.pid, signum)
        else:
            proc.send_signal(signum)
        out, err = proc.communicate(timeout=120)
    finally:
        release.set()
        if proc.poll() is None:
            proc.kill()
            proc.communicate()
    return subprocess.CompletedProcess(args, proc.returncode, out, err)


def wait_for(condition, what: str, proc: subprocess.Popen | None = None, timeout_s: float = 300) -> None:
    """Wait until ``condition()`` holds; fail if it never does, or if ``proc`` exits first (with its output)."""
    deadline = time.monotonic() + timeout_s
    while not condition():
        if proc is not None and proc.poll() is not None:
            raise AssertionError(f"the run exited ({proc.returncode}) before {what}: {proc.communicate()[1][-3000:]}")
        if time.monotonic() > deadline:
            raise AssertionError(f"no {what} within {timeout_s:g} s")
        time.sleep(0.05)


#: Each restart is killed once it has finished this share of the experiment's work (or it ends).
KILL_EVERY = 0.2


@pytest.mark.stress
@pytest.mark.slow(seconds=19)
def test_a_run_killed_repeatedly_progresses_on_every_restart_and_reports_as_if_uninterrupted(tmp_path):
    common = ["dataset=synthetic", f"+dataset.params.root={tmp_path / 'faces'}", "+dataset.params.n=8",
              "embedder=pixel", "tracking=none", "run.workers=1", "run.progress=false", "testset=hair",
              "editor=scripted", "+editor.params.noise=30", "+editor.params.seconds_per_edit=0.02",
              "analysis.n_resamples=99"]
    calls = tmp_path / "calls.txt"
    # The uninterrupted run first: it also leaves the bytecode of every module imported, as an
    # installed package has, so that each restart below starts as a user's would. (`make test` writes
    # bytecode caches in place; where the environment forbids it, this test keeps its own.)
    args, env = command(tmp_path, "uninterrupted", *common, f"run.workspace={tmp_path / 'ws2'}")
    if env.pop("PYTHONDONTWRITEBYTECODE", None):
        env.setdefault("PYTHONPYCACHEPREFIX", str(tmp_path / "pycache"))
    uninterrupted = subprocess.run(args, capture_output=True, text=True, env=env, cwd=tmp_path, timeout=600)
    assert uninterrupted.returncode == 0, uninterrupted.stderr[-3000:]

    ledger = tmp_path / "ws" / "ledger.sqlite"
    all_work = finished_work(tmp_path / "ws2" / "ledger.sqlite")
    args, _ = command(tmp_path, "killed", *common, f"+editor.params.calls_file={calls}",
                      f"run.workspace={tmp_path / 'ws'}")
    done, kills = [0], 0
    # Killed by work done, not by time: on a loaded machine a restart may take longer to start than
    # any fixed interval, and then a kill every few seconds tests nothing.
    while done[-1] < all_work:  # killed while there is work left; each restart must add some
        log = tmp_path / f"restart-{kills}.log"
        with log.open("wb") as err:
            proc = subprocess.Popen(args, env=env, cwd=tmp_path, stdout=subprocess.DEVNULL, stderr=err)
        target, deadline = done[-1] + KILL_EVERY * all_work, time.monotonic() + 300
        while proc.poll() is None and finished_work(ledger) < target and time.monotonic() < deadline:
            time.sleep(0.05)
        if proc.poll() is None:
            proc.kill()  # SIGKILL: no cleanup at all
            proc.wait()
            kills += 1
            done.append(finished_work(ledger))
            assert done[-1] > done[-2], f"restart {kills} made no progress: finished work after each kill {done}"
            continue
        assert proc.returncode == 0, log.read_text()[-3000:]
        break
    assert kills >= 2, f"the run was too short to be killed twice: {done}"
    if not (tmp_path / "killed.json").exists():  # every edit and score is in: the report is all that is left
        finished = subprocess.run(args, capture_output=True, text=True, env=env, cwd=tmp_path, timeout=600)
        assert finished.returncode == 0, finished.stderr[-3000:]
    assert finished_work(ledger) == all_work
    edits = calls.read_text().splitlines()
    # Lost at each kill: the edit in flight and those finished in the last commit window.
    assert len(edits) - 8 * 10 * 4 <= 8 * kills, (len(edits), kills)
    assert len(set(edits)) == 8 * 10 * 4

    a = json.loads((tmp_path / "killed.json").read_text())
    b = json.loads((tmp_path / "uninterrupted.json").read_text())
    assert a["counts"]["steps"] == {"ok": 8 * 10 * 4}
    for section in ("metrics", "trajectory", "groups", "counts"):
        assert a[section] == b[section], section
    assert a["run"]["key"] == b["run"]["key"]
    tables = [_without_resumed((next((tmp_path / ws / "runs").iterdir()) / "steps.csv").read_text())
              for ws in ("ws", "ws2")]
    assert tables[0] == tables[1]  # the same rows in the same order


def _without_resumed(table: str) -> list[list[str]]:
    """steps.csv rows without the column that says whether a step came from the ledger."""
    rows = list(csv.DictReader(io.StringIO(table)))
    return [[v for k, v in row.items() if k != "resumed"] for row in rows]
