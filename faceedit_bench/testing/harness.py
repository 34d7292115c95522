"""What a plugin's tests need from the core to drive its component the way a run does, beyond
:mod:`faceedit_bench.api`: the plugin manager as a run loads it, a registry to call a registration hook
on, the execution layer's executor (retries, limits, timeouts), the judge service with the core's prompts,
Hydra's composition of the run config, a whole run, and the interruption a signal raises.

Plugin tests import the core only through ``faceedit_bench.api`` and ``faceedit_bench.testing`` (a check in
``tests/test_layers.py``); these names are here so that they need nothing private. They follow the core:
they are for tests, not for a plugin's own code."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import pluggy

import faceedit_bench.plugin.hookspecs as hookspecs
from faceedit_bench.execution.calls import Executor
from faceedit_bench.plugin.manager import Plugins, load_plugins
from faceedit_bench.plugin.registry import Registry
from faceedit_bench.run.signals import RunStopped
from faceedit_bench.scoring.judge.prompts import SC_TEMPLATE, STATE_TEMPLATE
from faceedit_bench.scoring.judge.service import JudgeService

__all__ = ["SC_TEMPLATE", "STATE_TEMPLATE", "Executor", "JudgeService", "Plugins", "Registry", "RunStopped",
           "compose_config", "hook_manager", "load_plugins", "run_config"]


def hook_manager(*plugins: object) -> pluggy.PluginManager:
    """A bare plugin manager with the core's hook specifications and ``plugins`` registered, every hook
    implementation validated against its specification (as a run registers its tracker)."""
    pm = pluggy.PluginManager("faceedit_bench")
    pm.add_hookspecs(hookspecs)
    for plugin in plugins:
        pm.register(plugin)
    pm.check_pending()
    return pm


def compose_config(plugins: Plugins, overrides: Iterable[str] = ()) -> Any:
    """The run config Hydra composes, as ``faceedit-bench run`` does, from the core's and every loaded plugin's
    config entries with ``overrides`` (``["editor=my_editor", "editor.params.x=1"]``)."""
    from hydra import compose, initialize_config_dir

    from faceedit_bench.run.hydra_app import conf_dir, register_configs

    register_configs(plugins)
    with initialize_config_dir(config_dir=str(conf_dir()), version_base="1.3"):
        return compose(config_name="config", overrides=list(overrides))


def run_config(cfg: Any, plugins: Plugins) -> dict[str, Any]:
    """Run the composed config to the end; its ``report.json`` content."""
    from faceedit_bench.run.experiment import build_experiment, run_experiment

    return run_experiment(build_experiment(cfg, plugins), plugins)
