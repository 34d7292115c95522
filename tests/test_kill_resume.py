"""A run killed midway (SIGKILL: no cleanup at all) or interrupted (Ctrl-C) resumes without
redoing finished steps; a run killed every few seconds still gets done."""

from __future__ import annotations

import json
import os
import signal
import sqlite3
import subprocess
import sys
import textwrap
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

SCRIPT = textwrap.dedent("""
    import json, sys
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


def test_killed_run_resumes_and_matches_uninterrupted(tmp_path):
    common = ["dataset=synthetic", f"+dataset.params.root={tmp_path / 'faces'}", "embedder=pixel",
              "tracking=none", "run.workers=1", "run.progress=false", "testset=hair", "editor=scripted",
              "+editor.params.noise=30"]
    # The same experiment through an editor that kills its own process after 50 calls.
    calls = tmp_path / "calls.txt"
    killing = [*common, f"+editor.params.calls_file={calls}", f"run.workspace={tmp_path / 'ws'}"]
    first = run(tmp_path, "killed", *killing, "+editor.params.die_after=50")
    assert first.returncode == -signal.SIGKILL, first.stderr
    assert len(calls.read_text().splitlines()) == 50
    (run_dir,) = (tmp_path / "ws" / "runs").iterdir()
    assert list(run_dir.glob(".steps.csv.*.tmp"))  # the killed run's half-written table, never in place
    assert not (run_dir / "steps.csv").exists()
    second = run(tmp_path, "resumed", *killing)
    assert second.returncode == 0, second.stderr
    assert not list(run_dir.glob(".*.tmp")) and not list((run_dir / "contact_sheets").glob(".*.tmp"))
    done = calls.read_text().splitlines()
    assert len(done) == 4 * 10 * 4  # every step edited exactly once across both attempts
    assert len(set(done)) == len(done)

    # Resumed and uninterrupted runs (seeded noise edits) give identical results.
    uninterrupted = run(tmp_path, "uninterrupted", *common, f"run.workspace={tmp_path / 'ws2'}")
    assert uninterrupted.returncode == 0, uninterrupted.stderr
    a = json.loads((tmp_path / "resumed.json").read_text())
    b = json.loads((tmp_path / "uninterrupted.json").read_text())
    assert a["metrics"]["drop_fss"]["mean"] > 0.1  # non-trivial scores, not all zeros
    for key in ("metrics", "trajectory", "groups", "counts"):
        assert a[key] == b[key]
    assert a["run"]["key"] == b["run"]["key"]


def test_ctrl_c_stops_cleanly_and_says_how_to_resume(tmp_path):
    from tests.fakes.gemini import gemini_server

    key = "test-interrupt-key"
    with gemini_server(api_key=key, latency_s=0.2) as server:
        env = {**os.environ, "FACEEDIT_BENCH_HOME": str(tmp_path / "ws"), "GEMINI_API_KEY": key}
        args = [sys.executable, "-m", "faceedit_bench", "editor=nano_banana", f"editor.params.base_url={server.url}",
                "editor.params.limits.max_concurrency=2", "testset=pose", "run.max_faces=2", "run.max_sessions=3",
                "tracking=none", "run.progress=false"]
        proc = subprocess.Popen(args, cwd=tmp_path, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                text=True)
        deadline = time.monotonic() + 120
        while server.calls < 6 and time.monotonic() < deadline and proc.poll() is None:
            time.sleep(0.05)
        proc.send_signal(signal.SIGINT)
        _, err = proc.communicate(timeout=120)
        assert proc.returncode == 130, err[-3000:]
        assert "run the same command again to resume" in err
        for noise in ("Traceback", "Event loop is closed", "Task was destroyed"):
            assert noise not in err, err[-3000:]
        interrupted_at = server.calls
        assert 6 <= interrupted_at < 24

        rerun = subprocess.run(args, cwd=tmp_path, env=env, capture_output=True, text=True, timeout=300)
        assert rerun.returncode == 0, rerun.stderr[-3000:]
        (report,) = [json.loads(p.read_text()) for p in (tmp_path / "ws" / "runs").glob("*/report.json")]
        assert report["counts"]["steps"] == {"ok": 24}
        assert server.calls <= 24 + 2  # only the calls in flight at the interrupt were paid twice


KILL_EVERY_S = 5.0


def test_a_run_killed_every_5_s_progresses_on_every_restart_and_reports_as_if_uninterrupted(tmp_path):
    from tests.fakes.gemini import gemini_server

    key = "test-kill-loop-key"
    limits = ["limits.requests_per_minute=6000", "limits.tokens_per_minute=null", "limits.max_concurrency=4",
              "limits.backoff_initial_s=0.05"]
    with gemini_server(api_key=key, latency_s=0.15, seed=7) as editor, \
            gemini_server(api_key=key, latency_s=0.05, seed=8) as judge:
        common = ["dataset=synthetic", f"+dataset.params.root={tmp_path / 'faces'}", "+dataset.params.n=8",
                  "embedder=pixel", "tracking=none", "run.workers=1", "run.progress=false", "testset=hair",
                  "editor=nano_banana", f"editor.params.base_url={editor.url}",
                  *(f"editor.params.{s}" for s in limits), "judge=gemini", f"judge.params.base_url={judge.url}",
                  *(f"judge.params.{s}" for s in limits), "analysis.n_resamples=99"]
        os.environ["GEMINI_API_KEY"] = key
        ledger = tmp_path / "ws" / "ledger.sqlite"
        args, env = command(tmp_path, "killed", *common, f"run.workspace={tmp_path / 'ws'}")
        done, kills = [finished_work(ledger)], 0
        while True:
            proc = subprocess.Popen(args, env=env, cwd=tmp_path, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
            try:
                _, err = proc.communicate(timeout=KILL_EVERY_S)
            except subprocess.TimeoutExpired:
                proc.kill()  # SIGKILL: no cleanup at all
                proc.communicate()
                kills += 1
                done.append(finished_work(ledger))
                assert done[-1] > done[-2], f"restart {kills} made no progress: {done}"
                assert kills < 60, done
                continue
            assert proc.returncode == 0, err.decode()[-3000:]
            break
        assert kills >= 2, f"the run was too short to be killed twice: {done}"
        edit_calls = editor.calls
        uninterrupted = run(tmp_path, "uninterrupted", *common, f"run.workspace={tmp_path / 'ws2'}")
        assert uninterrupted.returncode == 0, uninterrupted.stderr[-3000:]
    assert edit_calls - (editor.calls - edit_calls) <= 4 * kills  # at most the calls in flight at each kill twice
    a = json.loads((tmp_path / "killed.json").read_text())
    b = json.loads((tmp_path / "uninterrupted.json").read_text())
    assert a["counts"]["steps"] == {"ok": 8 * 10 * 4} and a["metrics"]["sc"]["n"] == 80
    for section in ("metrics", "trajectory", "groups", "counts", "disparity"):
        assert a[section] == b[section], section
    assert a["run"]["key"] == b["run"]["key"]
    killed_steps = (next((tmp_path / "ws" / "runs").iterdir()) / "steps.csv").read_text()
    uninterrupted_steps = (next((tmp_path / "ws2" / "runs").iterdir()) / "steps.csv").read_text()
    assert killed_steps.splitlines()[1:] == uninterrupted_steps.splitlines()[1:] or \
        _without_resumed(killed_steps) == _without_resumed(uninterrupted_steps)


def _without_resumed(table: str) -> list[list[str]]:
    """steps.csv rows without the column that says whether a step came from the ledger."""
    import csv
    import io

    rows = list(csv.DictReader(io.StringIO(table)))
    return [[v for k, v in row.items() if k != "resumed"] for row in rows]
