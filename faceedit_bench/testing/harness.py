"""What a plugin's tests need from the core to drive its component the way a run does, beyond
:mod:`faceedit_bench.api`: the plugin manager as a run loads it, a registry to call a registration hook
on, the execution layer's executor (retries, limits, timeouts), the judge service with the core's prompts,
Hydra's composition of the run config, a run built (its config checked) and run, the ``faceedit-bench`` command
in-process, a run's console summary and report.html, and the interruption a signal raises.

Plugin tests import the core only through ``faceedit_bench.api`` and ``faceedit_bench.testing`` (a check in
``tests/test_layers.py``); these names are here so that they need nothing private. They follow the core:
they are for tests, not for a plugin's own code."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

import pluggy

import faceedit_bench.plugin.hookspecs as hookspecs
from faceedit_bench.execution.calls import Executor
from faceedit_bench.plugin.manager import Plugins, load_plugins, using_plugins
from faceedit_bench.plugin.registry import Registry
from faceedit_bench.run.signals import RunStopped
from faceedit_bench.scoring.judge.prompts import SC_TEMPLATE, STATE_TEMPLATE
from faceedit_bench.scoring.judge.service import JudgeService

__all__ = ["SC_TEMPLATE", "STATE_TEMPLATE", "Executor", "JudgeService", "Plugins", "Registry", "RunStopped",
           "build_run", "compose_config", "hook_manager", "html_report", "load_plugins", "register_configs",
           "using_plugins",
           "run_built", "run_cli", "run_config", "summary_text"]


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

    from faceedit_bench.run.hydra_app import conf_dir

    register_configs(plugins)
    with initialize_config_dir(config_dir=str(conf_dir()), version_base="1.3"):
        return compose(config_name="config", overrides=list(overrides))


def register_configs(plugins: Plugins) -> None:
    """Register the core's and ``plugins``' config entries with Hydra's config store, as a run does (again after
    a plugin is added to the set, so that its entries compose)."""
    from faceedit_bench.run.hydra_app import register_configs as register

    register(plugins)


def build_run(cfg: Any, plugins: Plugins, preset: str | None = None) -> Any:
    """The run ``cfg`` describes, built as ``faceedit-bench run`` builds it before any work starts: every
    setting checked (a bad one raises the ConfigError the command reports), components made, the run's identity
    in ``.info`` (a :class:`~faceedit_bench.api.RunInfo`). ``preset`` is the ``experiment=`` choice Hydra's
    runtime hands a run. Run it with :func:`run_built`."""
    from faceedit_bench.run.experiment import build_experiment

    return build_experiment(cfg, plugins, preset=preset)


def run_built(run: Any, plugins: Plugins) -> dict[str, Any]:
    """Run a run made by :func:`build_run` to the end; its ``report.json`` content."""
    from faceedit_bench.run.experiment import run_experiment

    return run_experiment(run, plugins)


def run_config(cfg: Any, plugins: Plugins, preset: str | None = None) -> dict[str, Any]:
    """Run the composed config to the end; its ``report.json`` content."""
    return run_built(build_run(cfg, plugins, preset), plugins)


def run_cli(argv: Sequence[str]) -> int:
    """The ``faceedit-bench`` command with ``argv`` (``["questions", "check", path]``), in this process, with the
    installed plugins' commands: its exit code (0 done, 1 a check failed, 2 bad input). The function is the
    installed console script's entry point, so the test runs what a user runs (and the command layer, above
    this one, stays out of this module's imports)."""
    from importlib.metadata import entry_points

    (script,) = entry_points(group="console_scripts", name="faceedit-bench")
    return script.load()(list(argv))


def summary_text(report: Mapping[str, Any], output_dir: Path, width: int | None = None) -> str:
    """The console summary a run prints for ``report`` (its files under ``output_dir``), ``width`` columns."""
    from faceedit_bench.report.summary import format_summary

    return format_summary(dict(report), output_dir, width)


def html_report(report: Mapping[str, Any], **options: Any) -> str:
    """The report.html a run writes for ``report`` (``run_dir=``, ``store=`` for its images), as text."""
    from faceedit_bench.report.html import render_html_report

    return render_html_report(report, **options)
