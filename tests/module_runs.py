"""The ``plugins`` and ``compose`` fixtures' set and config, for module-scoped fixtures that run an experiment
once for several tests (the function-scoped fixtures cannot serve them)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from faceedit_bench.plugin.manager import Plugins


def plugins_for_tests() -> Plugins:
    """The installed plugins plus the test plugin, their config entries registered."""
    from faceedit_bench.plugin.manager import load_plugins
    from faceedit_bench.run.hydra_app import register_configs
    from tests import fake_plugin

    plugins = load_plugins()
    plugins.add(fake_plugin, name="fake", distribution="faceedit-bench-tests")
    register_configs(plugins)
    return plugins


def composed(workspace: Path, *overrides: str) -> Any:
    """The real Hydra config with ``overrides``, its workspace at ``workspace``."""
    from hydra import compose, initialize_config_dir

    from faceedit_bench.run.hydra_app import conf_dir

    with initialize_config_dir(config_dir=str(conf_dir()), version_base="1.3"):
        return compose(config_name="config",
                       overrides=[f"run.workspace={workspace}", "run.progress=false", *overrides])


def run_here(workspace: Path, *overrides: str) -> dict[str, Any]:
    """The run ``python -m faceedit_bench <overrides>`` makes (with the test plugin), made in this process: its
    report. For a rerun or a reference run whose process boundary is not what a test checks (a new interpreter
    pays Python's, Hydra's and MLflow's start-up again, about 3 s of CPU)."""
    from faceedit_bench.run.experiment import build_experiment, run_experiment

    plugins = plugins_for_tests()
    return run_experiment(build_experiment(composed(workspace, *overrides), plugins), plugins)
