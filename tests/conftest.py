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

from faceedit_bench.collector import collect_less_often
from faceedit_bench.plugin.manager import Plugins, load_plugins
from tests.mlflow_store import mlflow_store_template, new_mlflow_store  # noqa: F401 - shared fixtures

# The test processes collect garbage at the pace a command does (faceedit_bench/collector.py): the default
# pace took 6.6% of a test process's CPU, traversing the same imported objects again and again (measured).
collect_less_often()


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


#: What a test marked ``slow`` without ``seconds=`` is taken to cost (``slow``: more than a few seconds).
SLOW_TEST_S = 5


@pytest.hookimpl(trylast=True)  # after `-m` deselected (`make test` leaves the stress tests out)
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Each worker starts with its share of the slow tests. ``--dist worksteal`` (pyproject's addopts) hands
    worker k the next ``len(pending) // (workers - k)`` tests in order, and an idle worker later takes the
    tail of a busy one's queue. So the modules holding tests marked ``slow`` (each module whole and in its
    own order: its module-scoped fixtures are made once) are dealt out longest first to the worker with
    the least slow time so far (``slow(seconds=...)``, as measured on 2 cores), and each worker's share
    is filled up with the other tests: the long tests all start at once, and the tails that are stolen
    are short ones. Without pytest-xdist (one worker) the slow modules simply run first."""
    workers = max(1, int(os.environ.get("PYTEST_XDIST_WORKER_COUNT", "1")))
    modules: dict[str, list[pytest.Item]] = {}
    for item in items:
        modules.setdefault(item.nodeid.split("::", 1)[0], []).append(item)
    cost = {name: sum(_slow_seconds(item) for item in tests) for name, tests in modules.items()}
    shares: list[list[pytest.Item]] = [[] for _ in range(workers)]
    slow_s = [0.0] * workers
    for name in sorted((m for m in modules if cost[m]), key=lambda m: -cost[m]):
        least = slow_s.index(min(slow_s))
        shares[least] += modules[name]
        slow_s[least] += cost[name]
    others = [item for name, tests in modules.items() if not cost[name] for item in tests]
    ordered: list[pytest.Item] = []
    end = 0
    for k, share in enumerate(shares):
        end += (len(items) - end) // (workers - k)  # where worker k's first tests end
        ordered += share
        fill = max(0, end - len(ordered))
        ordered += others[:fill]
        others = others[fill:]
    items[:] = ordered + others


#: A test marked ``slow`` may take this many times its measured seconds (``slow(seconds=...)``, on 2 quiet cores)
#: before its timeout calls it a hang: a kill loop measured at 55 s took over 300 s beside a CPU hog on every core
#: of a machine already loaded by other work, and a busy machine must fail no test.
SLOW_TIMEOUT_FACTOR = 30


def pytest_itemcollected(item: pytest.Item) -> None:
    """A slow test's timeout (pyproject's ``timeout``, 300 s) grows with its measured time, unless it sets its own."""
    base = float(item.config.getini("timeout") or 0)
    seconds = _slow_seconds(item)
    if base and seconds and item.get_closest_marker("timeout") is None:
        item.add_marker(pytest.mark.timeout(max(base, SLOW_TIMEOUT_FACTOR * seconds)))


def _slow_seconds(item: pytest.Item) -> float:
    marker = item.get_closest_marker("slow")
    return 0.0 if marker is None else float(marker.kwargs.get("seconds", SLOW_TEST_S))


def pytest_configure(config: pytest.Config) -> None:
    # A shell starts a background job (`make test &`) with Ctrl-C ignored, and every child inherits that: the
    # tests that press Ctrl-C on a run must get the default a user's terminal gives it.
    if signal.getsignal(signal.SIGINT) is signal.SIG_IGN:
        signal.signal(signal.SIGINT, signal.default_int_handler)
