from __future__ import annotations

import os
import signal

os.environ.setdefault("MLFLOW_DISABLE_TELEMETRY", "true")
os.environ.setdefault("DO_NOT_TRACK", "true")
os.environ.setdefault("RAY_USAGE_STATS_ENABLED", "0")
# Console output is fitted to the terminal (COLUMNS wins): the tests read it at one width, whatever runs them
# (pytest-xdist's workers see COLUMNS=80, a terminal its own size).
os.environ["COLUMNS"] = "100"

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from faceedit_bench.plugin.manager import Plugins, load_plugins
from tests.mlflow_store import mlflow_store_template, new_mlflow_store  # noqa: F401 - shared fixtures


@pytest.fixture
def plugins() -> Plugins:
    """A fresh plugin set with the installed plugins plus the test plugin."""
    from tests import fake_plugin

    p = load_plugins()
    p.add(fake_plugin, name="fake", distribution="faceedit-bench-tests")
    return p


@pytest.fixture
def compose(plugins: Plugins, tmp_path: Path) -> Callable[..., Any]:
    """Compose the real Hydra config with overrides; the workspace lives under tmp_path."""
    from hydra import compose as hydra_compose
    from hydra import initialize_config_dir

    from faceedit_bench.run.hydra_app import conf_dir, register_configs

    register_configs(plugins)

    def _compose(*overrides: str) -> Any:
        with initialize_config_dir(config_dir=str(conf_dir()), version_base="1.3"):
            return hydra_compose(
                config_name="config",
                overrides=[f"run.workspace={tmp_path / 'ws'}", "run.progress=false", *overrides],
            )

    return _compose


@pytest.fixture
def synthetic(tmp_path: Path) -> list[str]:
    """Overrides selecting the synthetic dataset, pixel embedder and no tracker."""
    return ["dataset=synthetic", f"+dataset.params.root={tmp_path / 'faces'}", "embedder=pixel",
            "tracking=none", "run.workers=1"]


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """The modules that hold a test marked ``slow`` run first, each module whole and in its own order (its
    module-scoped fixtures are made once). ``--dist worksteal`` (pyproject's addopts) splits the tests
    in order between the workers and lets an idle worker take the tail of a busy one's queue, so the
    long tests start early, the short ones fill in around them, and no long test starts last to hold
    up the run."""
    slow = {item.nodeid.split("::", 1)[0] for item in items if item.get_closest_marker("slow")}
    items.sort(key=lambda item: item.nodeid.split("::", 1)[0] not in slow)


def pytest_configure(config: pytest.Config) -> None:
    # A shell starts a background job (`make test &`) with Ctrl-C ignored, and every child inherits that: the
    # tests that press Ctrl-C on a run must get the default a user's terminal gives it.
    if signal.getsignal(signal.SIGINT) is signal.SIG_IGN:
        signal.signal(signal.SIGINT, signal.default_int_handler)
