"""A new MLflow store for a test workspace, copied from one built once per test session.

MLflow builds a new SQLite store by migrating it through about a hundred schema revisions (2 to 6 s, more
under load). Tests that track a run in a new workspace, and are not about how a store is created, start
from a copy of one complete, empty store instead: ``prepare_store`` finds it at the schema's head and holding
nothing, exactly what a first run leaves after creating it, and opens it as it is. The tests of store
creation itself (``test_first_time_kills``, ``test_concurrent_runs``, ``plugins/mlflow/tests/test_mlflow_store``)
do not use this. A ``conftest.py`` makes the fixtures available by importing them
(``from tests.mlflow_store import mlflow_store_template, new_mlflow_store  # noqa: F401``)."""

from __future__ import annotations

import os
import shutil
from collections.abc import Callable
from pathlib import Path

import pytest


@pytest.fixture(scope="session")
def mlflow_store_template(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One complete, empty MLflow SQLite store for the test session: the xdist workers share one base folder,
    and the first to need the store builds it under a lock while the others wait (it is only copied)."""
    from faceedit_bench_mlflow.store import StoreState, prepare_store

    from faceedit_bench.storage.locks import directory_lock

    base = tmp_path_factory.getbasetemp()
    shared = base.parent if os.environ.get("PYTEST_XDIST_WORKER") else base  # one folder for every worker
    folder = shared / "mlflow-template"
    with directory_lock(shared, "mlflow-template", what="the MLflow store template shared by the test workers",
                        timeout=900):
        if not (folder / "done").exists():
            shutil.rmtree(folder, ignore_errors=True)  # what a worker that failed to build it left
            folder.mkdir()
            assert prepare_store(f"sqlite:///{(folder / 'mlflow.db').as_posix()}") is StoreState.MISSING
            (folder / "done").touch()
    return folder / "mlflow.db"


@pytest.fixture
def new_mlflow_store(mlflow_store_template: Path) -> Callable[[Path], str]:
    """``new_mlflow_store(workspace)`` puts a new store at ``workspace/mlflow.db`` (the default tracker's
    place) and returns its tracking URI."""
    return lambda workspace: copy_store(mlflow_store_template, workspace)


def copy_store(template: Path, workspace: Path) -> str:
    """A copy of ``template`` at ``workspace/mlflow.db`` (for module-scoped fixtures); its tracking URI."""
    workspace.mkdir(parents=True, exist_ok=True)
    db = workspace / "mlflow.db"
    assert not db.exists(), f"{db} exists already: a new store goes into a new workspace"
    shutil.copyfile(template, db)
    return f"sqlite:///{db.as_posix()}"
