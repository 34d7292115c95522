"""A new MLflow store for a test workspace, copied from one built once per test session.

MLflow builds a new SQLite store by migrating it through about a hundred schema revisions (2 to 6 s, more
under load). Tests that track a run in a new workspace, and are not about how a store is created, start
from a copy of one complete, empty store instead: ``prepare_store`` finds it at the schema's head and holding
nothing, exactly what a first run leaves after creating it, and opens it as it is. The tests of store
creation itself (``test_first_time_kills``, ``test_concurrent_runs``, ``plugins/mlflow/tests/test_mlflow_store``)
do not use this. A ``conftest.py`` makes the fixtures available by importing them
(``from tests.mlflow_store import mlflow_store_template, new_mlflow_store  # noqa: F401``)."""

from __future__ import annotations

import shutil
from collections.abc import Callable
from pathlib import Path

import pytest

from tests.session_folder import made_once


@pytest.fixture(scope="session")
def mlflow_store_template(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One complete, empty MLflow SQLite store for the test session (shared by the xdist workers)."""
    from faceedit_bench_mlflow.store import StoreState, prepare_store

    def build(folder: Path) -> None:
        assert prepare_store(f"sqlite:///{(folder / 'mlflow.db').as_posix()}") is StoreState.MISSING

    return made_once(tmp_path_factory, "mlflow-template", "the MLflow store template", build) / "mlflow.db"


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
