"""The tracker's SQLite store: built beside its place and moved in complete; a store that holds records is
never rebuilt, whatever its state; two processes opening a new store at once both log to it."""

from __future__ import annotations

import os
import sqlite3
import subprocess
import sys
import textwrap

import pytest
from faceedit_bench_mlflow.store import StoreState, prepare_store, store_state
from faceedit_bench_mlflow.tracker import MlflowTracker
from mlflow import MlflowClient
from mlflow_helpers import lifecycle, make_pm


def test_a_new_store_is_built_beside_its_place_and_leaves_nothing_else(tmp_path):
    db = tmp_path / "mlflow.db"
    assert prepare_store(f"sqlite:///{db}") is StoreState.MISSING
    assert store_state(db) is StoreState.READY and sorted(p.name for p in tmp_path.iterdir()) == ["mlflow.db"]
    assert prepare_store(f"sqlite:///{db}") is StoreState.READY  # opened as it is
    assert prepare_store("http://127.0.0.1:1") is StoreState.IN_USE  # a server keeps its own store


def test_a_store_that_holds_runs_is_never_rebuilt_even_below_the_schema_head(make_run, tmp_path):
    db = tmp_path / "ws" / "mlflow.db"
    uri = f"sqlite:///{db}"
    lifecycle(make_pm(MlflowTracker(tracking_uri=uri)), make_run("key-kept"), outcomes=["ok"])
    con = sqlite3.connect(db)
    con.execute("UPDATE alembic_version SET version_num = 'an-older-revision'")  # as after an MLflow upgrade
    con.commit()
    con.close()
    before = db.read_bytes()
    assert prepare_store(uri) is StoreState.IN_USE and db.read_bytes() == before
    # A new process opening it gets MLflow's own message, which says what to do with the user's data.
    opened = open_store(tmp_path, "key-new", go=tmp_path)
    assert opened.returncode != 0 and "mlflow db upgrade" in opened.stderr and db.read_bytes() == before


def test_a_file_that_is_no_store_is_left_to_mlflow(tmp_path):
    db = tmp_path / "mlflow.db"
    db.write_text("my notes, not a database")
    assert prepare_store(f"sqlite:///{db}") is StoreState.IN_USE and db.read_text() == "my notes, not a database"


OPEN_AT_ONCE = textwrap.dedent("""
    import sys, time
    from pathlib import Path
    from faceedit_bench_mlflow.tracker import MlflowTracker
    from faceedit_bench.plugin.payloads import RunInfo

    workspace, key, go = Path(sys.argv[1]), sys.argv[2], Path(sys.argv[3])
    while not go.exists():  # both processes are started and imported: open the new store together
        time.sleep(0.01)
    run = RunInfo(run_key=key, run_name=key, experiment_name="faceedit/at-once", components={}, config={},
                  params={}, tags={}, workspace=workspace, output_dir=workspace / "runs" / key)
    MlflowTracker().faceedit_run_start(run=run)
""")


def _opening(tmp_path, key: str, go) -> subprocess.Popen[str]:
    """A process that starts a run in the workspace ``tmp_path/ws`` once the file ``go`` exists."""
    script = tmp_path / "open.py"
    script.write_text(OPEN_AT_ONCE)
    env = {**os.environ, "MLFLOW_DISABLE_TELEMETRY": "true", "DO_NOT_TRACK": "true"}
    env.pop("MLFLOW_TRACKING_URI", None)
    return subprocess.Popen([sys.executable, str(script), str(tmp_path / "ws"), key, str(go)], env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def open_store(tmp_path, key: str, go) -> subprocess.CompletedProcess[str]:
    proc = _opening(tmp_path, key, go)
    out, err = proc.communicate(timeout=300)
    return subprocess.CompletedProcess(proc.args, proc.returncode, out, err)


@pytest.mark.slow
def test_two_processes_opening_a_new_store_at_once_both_log_to_it(tmp_path):
    go = tmp_path / "go"
    procs = [_opening(tmp_path, key, go) for key in ("a", "b")]
    go.touch()
    outs = [p.communicate(timeout=300) for p in procs]
    assert [p.returncode for p in procs] == [0, 0], [err[-2000:] for _, err in outs]
    client = MlflowClient(tracking_uri=f"sqlite:///{tmp_path / 'ws' / 'mlflow.db'}")
    runs = client.search_runs([e.experiment_id for e in client.search_experiments()])
    assert sorted(r.data.tags["faceedit.run_key"] for r in runs) == ["a", "b"]
    assert sorted(p.name for p in (tmp_path / "ws").iterdir()) == [".locks", "mlflow.db"]
