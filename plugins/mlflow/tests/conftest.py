"""Fixtures: one sqlite store per session (a fresh store costs about 2 s of migrations),
one experiment per test, and hooks called through a real pluggy manager."""

from __future__ import annotations

import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from faceedit_bench_mlflow.tracker import MlflowTracker

from faceedit_bench.api import RunInfo
from faceedit_bench.testing import ComponentInfo
from tests.browser.support import browser  # noqa: F401 - headless Chromium, for the MLflow UI test


@pytest.fixture(autouse=True)
def _no_tracking_env(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("MLFLOW_TRACKING_URI", raising=False)


@pytest.fixture(scope="session")
def store_uri(tmp_path_factory: pytest.TempPathFactory) -> str:
    return f"sqlite:///{(tmp_path_factory.mktemp('mlflow') / 'store.db').resolve().as_posix()}"


@pytest.fixture
def client(store_uri: str) -> Any:
    from mlflow import MlflowClient

    return MlflowClient(tracking_uri=store_uri)


@pytest.fixture
def tracker(store_uri: str, tmp_path: Path) -> MlflowTracker:
    return MlflowTracker(tracking_uri=store_uri, artifact_location=str(tmp_path / "artifacts"))


@pytest.fixture
def experiment() -> str:
    return f"faceedit/test-{uuid.uuid4().hex[:12]}"


@pytest.fixture
def make_run(tmp_path: Path, experiment: str) -> Callable[..., RunInfo]:
    def make(
        run_key: str = "key-1",
        *,
        params: dict[str, str] | None = None,
        tags: dict[str, str] | None = None,
        run_name: str = "dummy@tiny",
    ) -> RunInfo:
        components = {
            "editor": ComponentInfo("editor", "dummy", "builtin", "0.1.0", {"version": "1"}),
            "embedder": ComponentInfo("embedder", "dlib", "faceedit-bench-dlib", "0.2.0"),
        }
        return RunInfo(
            run_key=run_key,
            run_name=run_name,
            experiment_name=experiment,
            components=components,
            config={"editor": {"name": "dummy"}},
            params={"editor.name": "dummy", "limits.faces": "3"} if params is None else params,
            tags={"testset": "tiny", "faceedit_bench.version": "0.1.0"} if tags is None else tags,
            workspace=tmp_path / "ws",
            output_dir=tmp_path / "ws" / "out",
        )

    return make
