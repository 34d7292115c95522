"""The tracker's SQLite store: built beside its place and moved in complete; a store that holds records is
never rebuilt, whatever its state. (Two processes creating one store at once: tests/test_concurrent_runs.py;
kills while it is created: tests/test_first_time_kills.py.)"""

from __future__ import annotations

import os
import sqlite3
import subprocess
import sys
import textwrap

from faceedit_bench_mlflow.store import StoreState, prepare_store, store_state
from faceedit_bench_mlflow.tracker import MlflowTracker
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
    opened = start_a_run(tmp_path / "ws", "key-new")
    assert opened.returncode != 0 and "mlflow db upgrade" in opened.stderr and db.read_bytes() == before


def test_a_file_that_is_no_store_is_left_to_mlflow(tmp_path):
    db = tmp_path / "mlflow.db"
    db.write_text("my notes, not a database")
    assert prepare_store(f"sqlite:///{db}") is StoreState.IN_USE and db.read_text() == "my notes, not a database"


START_A_RUN = textwrap.dedent("""
    import sys
    from pathlib import Path
    from faceedit_bench_mlflow.tracker import MlflowTracker
    from faceedit_bench.api import RunInfo

    workspace, key = Path(sys.argv[1]), sys.argv[2]
    run = RunInfo(run_key=key, run_name=key, experiment_name="faceedit/store", components={}, config={},
                  params={}, tags={}, workspace=workspace, output_dir=workspace / "runs" / key)
    tracker = MlflowTracker()
    tracker.faceedit_run_start(run=run)
    tracker.opened(run)
""")


def start_a_run(workspace, key: str) -> subprocess.CompletedProcess[str]:
    """The tracker starting a run in ``workspace``'s store, in a new process (MLflow caches stores per process)."""
    env = {**os.environ, "MLFLOW_DISABLE_TELEMETRY": "true", "DO_NOT_TRACK": "true"}
    env.pop("MLFLOW_TRACKING_URI", None)
    return subprocess.run([sys.executable, "-c", START_A_RUN, str(workspace), key], env=env, capture_output=True,
                          text=True, timeout=300)
