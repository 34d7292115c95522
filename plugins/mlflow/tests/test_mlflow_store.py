"""The tracker's SQLite store: built beside its place and moved in complete; a store that holds records is
never rebuilt, whatever its state. (Two processes creating one store at once: tests/test_concurrent_runs.py;
kills while it is created: tests/test_first_time_kills.py.)"""

from __future__ import annotations

import os
import sqlite3
import subprocess
import sys
import textwrap
import threading

from faceedit_bench_mlflow import store
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


def schema_and_rows(db) -> tuple[list, dict]:
    """A store's tables, indexes and rows. The order of a table's clauses is left out: MLflow's own builds
    differ in it (the first build in a process lists one CHECK constraint elsewhere than later ones)."""
    con = sqlite3.connect(db)
    schema = sorted((kind, name, sorted(line.strip().rstrip(",") for line in (sql or "").splitlines()))
                    for kind, name, sql in con.execute("SELECT type, name, sql FROM sqlite_master"))
    rows = {name: sorted(con.execute(f'SELECT * FROM "{name}"')) for kind, name, _ in schema if kind == "table"}
    con.close()
    return schema, rows


def counted_builds(monkeypatch) -> list:
    builds, build = [], store._build
    monkeypatch.setattr(store, "_build", lambda path: (builds.append(path), build(path))[1])
    return builds


def test_new_stores_are_copies_of_one_template_built_once_and_equal_a_store_built_in_place(tmp_path, monkeypatch):
    monkeypatch.setattr(store, "TEMPLATES", tmp_path / "templates")
    builds = counted_builds(monkeypatch)
    dbs = [tmp_path / f"ws{i}" / "mlflow.db" for i in range(3)]
    for db in dbs:
        assert prepare_store(f"sqlite:///{db}") is StoreState.MISSING and store_state(db) is StoreState.READY
    (template,) = (tmp_path / "templates").glob("*.db")
    assert len(builds) == 1 and builds[0].parent == template.parent  # the template, once; the stores are copies
    assert all(db.read_bytes() == template.read_bytes() for db in dbs)
    monkeypatch.setattr(store, "TEMPLATES", tmp_path / "unwritable" / "file")  # no template possible: built in place
    (tmp_path / "unwritable").write_text("a file where a folder should be")
    in_place = tmp_path / "in-place" / "mlflow.db"
    assert prepare_store(f"sqlite:///{in_place}") is StoreState.MISSING and len(builds) == 2
    assert builds[1].parent == in_place.parent and schema_and_rows(in_place) == schema_and_rows(dbs[0])


def test_a_damaged_template_is_built_again(tmp_path, monkeypatch):
    monkeypatch.setattr(store, "TEMPLATES", tmp_path / "templates")
    prepare_store(f"sqlite:///{tmp_path / 'ws0' / 'mlflow.db'}")
    (template,) = (tmp_path / "templates").glob("*.db")
    template.write_bytes(template.read_bytes()[:5000])  # cut short (not as we write it, but a disk may)
    db = tmp_path / "ws1" / "mlflow.db"
    assert prepare_store(f"sqlite:///{db}") is StoreState.MISSING and store_state(db) is StoreState.READY
    assert store_state(template) is StoreState.READY


def test_stores_made_at_once_with_no_template_yet_build_it_once(tmp_path, monkeypatch):
    """Several new workspaces at once (threads: the template's lock is a file lock, which threads contend
    for as processes do): one builds the template, the others wait for it and copy it."""
    monkeypatch.setattr(store, "TEMPLATES", tmp_path / "templates")
    builds = counted_builds(monkeypatch)
    dbs = [tmp_path / f"ws{i}" / "mlflow.db" for i in range(4)]
    threads = [threading.Thread(target=prepare_store, args=(f"sqlite:///{db}",)) for db in dbs]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=300)
    assert len(builds) == 1 and all(store_state(db) is StoreState.READY for db in dbs)
    names = sorted(p.name for p in (tmp_path / "templates").iterdir())  # no temporaries left
    assert len(names) == 2 and names[0] == ".locks" and names[1].startswith("mlflow-") and names[1].endswith(".db")


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
